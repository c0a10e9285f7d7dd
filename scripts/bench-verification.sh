#!/usr/bin/env bash
# Benchmark: the verification server's app-facing chain (registrationToken + tan + verify)
# under concurrency against PostgreSQL, next to what pgbench reaches on the same server for
# the equivalent SQL (scripts/bench/verification-chain.sql). A measurement, not a test: the
# exit status is 0 whatever the figures are, non-zero only when the run itself fails (server
# does not start, setup fails, pgbench fails, more than 1 % failed requests).
# See docs/benchmarks.md, "Verification server: app-facing chain".
#
# Needs: PostgreSQL on 127.0.0.1:5432 with db teletan_bench (scripts/start-test-postgres.sh),
# pgbench, psql, curl, python3 (3.11+) with the `cryptography` package (signs the portal
# tokens of the setup phase), a portal binary for `portal keygen`.
#
# WARNING: drops and recreates everything in database teletan_bench (schema public and
# pgbench_ver). Everything runs on 127.0.0.1 only, and stops by itself.
#
# Environment (defaults):
#   VERIFICATION_BIN           .build-release/release/verification-server if present, else .build/debug/verification-server
#   PORTAL_BIN                 .build-release/release/portal if present, else .build/debug/portal (keygen only)
#   BENCH_CLIENTS=100          concurrent app clients = pgbench clients (1..200)
#   BENCH_SECONDS=20           measured seconds, server and pgbench each (1..600)
#   BENCH_WARMUP=3             warm-up seconds before each measurement (0..60)
#   BENCH_TELETANS=20000       teleTANs created (not measured) before the load; one per chain
#   BENCH_CLIENT_PROCESSES=1   load-generator processes the clients are spread over (1..8)
#   BENCH_PGBENCH_ROWS=300000  pre-filled teleTAN rows for pgbench (one per pgbench chain)
#   BENCH_PORT, BENCH_INTERNAL_PORT   ports on 127.0.0.1 (default: free ones)
#   BENCH_JSON                 append the results as one JSON line to this file
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=$repo/scripts/bench

die() { echo "bench-verification: $*" >&2; exit 1; }
note() { echo "bench-verification: $*" >&2; }

int_in() { # NAME VALUE MIN MAX
  [[ $2 =~ ^[0-9]+$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )) || die "$1 must be a whole number from $3 to $4, got '$2'"
}
clients=${BENCH_CLIENTS:-100};           int_in BENCH_CLIENTS "$clients" 1 200
seconds=${BENCH_SECONDS:-20};            int_in BENCH_SECONDS "$seconds" 1 600
warmup=${BENCH_WARMUP:-3};               int_in BENCH_WARMUP "$warmup" 0 60
teletans=${BENCH_TELETANS:-20000};       int_in BENCH_TELETANS "$teletans" "$clients" 200000
processes=${BENCH_CLIENT_PROCESSES:-1};  int_in BENCH_CLIENT_PROCESSES "$processes" 1 8
pg_rows=${BENCH_PGBENCH_ROWS:-300000};   int_in BENCH_PGBENCH_ROWS "$pg_rows" 1000 5000000

pick_bin() { # NAME -> release binary if present, else debug
  if [[ -x $repo/.build-release/release/$1 ]]; then echo "$repo/.build-release/release/$1"; else echo "$repo/.build/debug/$1"; fi
}
VERIFICATION_BIN=${VERIFICATION_BIN:-$(pick_bin verification-server)}
PORTAL_BIN=${PORTAL_BIN:-$(pick_bin portal)}
[[ -x $VERIFICATION_BIN ]] || die "verification server binary '$VERIFICATION_BIN' not found; build it or set VERIFICATION_BIN"
[[ -x $PORTAL_BIN ]] || die "portal binary '$PORTAL_BIN' not found (needed for 'portal keygen'); build it or set PORTAL_BIN"
case $(readlink -f "$VERIFICATION_BIN") in
  */release/*) build=release ;;
  */debug/*) build=debug ;;
  *) build=unknown ;;
esac

pg_host=127.0.0.1 pg_port=5432 pg_db=teletan_bench pg_user=teletan
export PGPASSWORD=teletan   # the local test role of scripts/start-test-postgres.sh
db_url="postgres://$pg_user:$PGPASSWORD@$pg_host:$pg_port/$pg_db"
export PGOPTIONS='-c client_min_messages=warning'
psql_bench() { psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d "$pg_db" -v ON_ERROR_STOP=1 -qAtX "$@"; }

for tool in psql pgbench pg_isready curl python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh)"
done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 must be 3.11 or newer"
python3 -c 'import cryptography' 2>/dev/null || die "python3 package 'cryptography' is missing (pip install cryptography)"
pg_isready -q -h "$pg_host" -p "$pg_port" || die "PostgreSQL is not accepting connections on $pg_host:$pg_port (scripts/start-test-postgres.sh)"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=${BENCH_PORT:-$(free_port)};                int_in BENCH_PORT "$port" 1024 65535
internal_port=${BENCH_INTERNAL_PORT:-$(free_port)}; int_in BENCH_INTERNAL_PORT "$internal_port" 1024 65535
[[ $port != "$internal_port" ]] || die "BENCH_PORT and BENCH_INTERNAL_PORT must differ"
for p in "$port" "$internal_port"; do
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$p/"; then die "something already listens on 127.0.0.1:$p"; fi
done

# --- Cleanup -------------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/bench-verification.XXXXXX)
server_pid=
stop_server() {
  [[ -n $server_pid ]] || return 0
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid" 2>/dev/null || true
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}
cleanup() { stop_server; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Facts about the run ---------------------------------------------------------------------
export BENCH_SERVER_BIN=$VERIFICATION_BIN BENCH_BUILD=$build
BENCH_GIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
[[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && BENCH_GIT+=" (working tree modified)"
export BENCH_GIT
BENCH_MACHINE="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
export BENCH_MACHINE
BENCH_PG_VERSION="PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), synchronous_commit=$(psql_bench -c 'SHOW synchronous_commit'), shared_buffers=$(psql_bench -c 'SHOW shared_buffers'), max_connections=$(psql_bench -c 'SHOW max_connections')"
export BENCH_PG_VERSION
max_conn=$(psql_bench -c 'SHOW max_connections')

read -r load1 _ < /proc/loadavg
if awk -v l="$load1" 'BEGIN { exit !(l > 1.0) }'; then
  note "warning: load average is $load1 before the run; other work on this machine skews the figures:"
  ps -eo pcpu=,comm= --sort=-pcpu | head -n 3 | sed 's/^/    /' >&2
fi

# --- Clean database --------------------------------------------------------------------------
note "resetting database $pg_db (schemas public and pgbench_ver, $pg_rows pre-filled pgbench rows)"
psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public"
psql_bench -v teletans="$pg_rows" -f "$bench/verification_schema.sql"

checkpoint() {  # superuser only; skipped quietly otherwise
  if [[ $EUID -eq 0 ]] && id postgres >/dev/null 2>&1; then
    (cd / && runuser -u postgres -- psql -p "$pg_port" -qAtX -c CHECKPOINT) >/dev/null 2>&1 || true
  fi
}

# --- Server ----------------------------------------------------------------------------------
"$PORTAL_BIN" keygen --out "$tmp/keys" >/dev/null 2>&1 || die "'$PORTAL_BIN keygen --out DIR' failed"
[[ -f $tmp/keys/portal-key.pem && -f $tmp/keys/portal-key.pub.pem ]] || die "keygen wrote no portal-key.pem/portal-key.pub.pem"
cp "$VERIFICATION_BIN" "$tmp/verification-server"   # a rebuild during the run cannot disturb it
note "starting $VERIFICATION_BIN ($build) on 127.0.0.1:$port (app) and :$internal_port (internal)"
"$tmp/verification-server" serve --database "$db_url" --secret-file "$tmp/secret" \
  --trusted-portal-key "$tmp/keys/portal-key.pub.pem" --host 127.0.0.1 --port "$port" \
  --internal-host 127.0.0.1 --internal-port "$internal_port" --teletans-per-hour 100000000 \
  --log-level warning >"$tmp/server.log" 2>&1 &
server_pid=$!
ready=
for _ in $(seq 1 120); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true; server_pid=
    sed 's/^/    /' "$tmp/server.log" >&2
    die "the verification server exited during start-up"
  fi
  if curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/ready"; then ready=1; break; fi
  sleep 0.5
done
[[ -n $ready ]] || die "the verification server did not become ready within 60 s"
checkpoint

# --- Load ------------------------------------------------------------------------------------
note "setup: creating $teletans teleTANs; load: $clients clients, warm-up ${warmup}s, measuring ${seconds}s"
load_status=0
timeout --kill-after=10 $((warmup + seconds + 600)) \
  python3 "$bench/verification_load.py" load --port "$port" --internal-port "$internal_port" \
    --key-dir "$tmp/keys" --clients "$clients" --teletans "$teletans" --warmup "$warmup" \
    --duration "$seconds" --processes "$processes" --server-pid "$server_pid" \
    --json-out "$tmp/load.json" || load_status=$?
peak_rss_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$server_pid/status" 2>/dev/null || true)
problems=$(grep -ciE 'warning|error|critical' "$tmp/server.log" || true)
if (( load_status != 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "server log (last 20 lines):"; tail -n 20 "$tmp/server.log" | sed 's/^/    /' >&2
  die "the load generator failed (status $load_status)"
fi
stop_server
if (( problems > 0 )); then
  note "server logged $problems warning/error line(s); first ones:"
  grep -iE 'warning|error|critical' "$tmp/server.log" | head -n 5 | cut -c1-300 | sed 's/^/    /' >&2
fi
rows=$(psql_bench -c "SELECT 'teletans ' || (SELECT count(*) FROM teletans) || ' (' || (SELECT count(*) FROM teletans WHERE redeemed_at IS NOT NULL) || ' redeemed), registration_tokens ' || (SELECT count(*) FROM registration_tokens) || ', tans ' || (SELECT count(*) FROM tans) || ' (' || (SELECT count(*) FROM tans WHERE redeemed_at IS NOT NULL) || ' verified), lockouts ' || (SELECT count(*) FROM lockouts)")

# --- pgbench ---------------------------------------------------------------------------------
# max_connections=100 keeps 3 slots for superusers, so 100 clients as role teletan do not fit:
# then pgbench runs as the superuser postgres (root only, Unix socket), else with fewer clients.
reserved=$(psql_bench -c 'SHOW superuser_reserved_connections')
pg_clients=$clients pgbench_as=()
if (( clients > max_conn - reserved - 1 )); then
  if [[ $EUID -eq 0 ]] && id postgres >/dev/null 2>&1; then
    pgbench_as=(runuser -u postgres --)
    note "pgbench runs as superuser postgres: $clients clients exceed the $((max_conn - reserved)) non-superuser slots"
  else
    pg_clients=$((max_conn - reserved - 1))
    note "warning: pgbench runs with $pg_clients clients only (max_connections=$max_conn, $reserved reserved)"
  fi
fi
export BENCH_PGBENCH_CLIENTS=$pg_clients
run_pgbench() { # SECONDS OUTPUT
  local conn=(-h "$pg_host" -U "$pg_user")
  (( ${#pgbench_as[@]} )) && conn=()
  (cd / && timeout --kill-after=10 $(($1 + 120)) \
    "${pgbench_as[@]}" pgbench "${conn[@]}" -p "$pg_port" -n -c "$pg_clients" -j 2 -T "$1" \
      -f "$bench/verification-chain.sql" "$pg_db") >"$2" 2>&1 || {
      tail -n 20 "$2" >&2; die "pgbench failed (if a \\gset query returned no row, raise BENCH_PGBENCH_ROWS)"; }
}
checkpoint
note "pgbench: $pg_clients clients, warm-up ${warmup}s, measuring ${seconds}s (verification-chain.sql)"
if (( warmup > 0 )); then run_pgbench "$warmup" "$tmp/pgbench-warmup.txt"; fi
run_pgbench "$seconds" "$tmp/pgbench.txt"
used=$(psql_bench -c "SELECT count(*) FROM pgbench_ver.teletans WHERE redeemed_at IS NOT NULL")
note "pgbench redeemed $used of $pg_rows pre-filled teleTAN rows"

# --- Report ----------------------------------------------------------------------------------
python3 "$bench/verification_load.py" report --load "$tmp/load.json" --pgbench "$tmp/pgbench.txt" \
  ${peak_rss_kib:+--peak-rss-kib "$peak_rss_kib"} --server-log-problems "$problems" --rows "$rows"
