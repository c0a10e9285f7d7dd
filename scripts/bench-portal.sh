#!/usr/bin/env bash
# Benchmark: concurrent signed-in officers issuing teleTANs through the portal against
# PostgreSQL, next to what pgbench reaches on the same server for the equivalent
# transaction (insert teleTAN hash + insert audit row). A measurement, not a test: the
# exit status is 0 whatever the figures are, non-zero only when the run itself fails
# (including more than 1 % failed portal requests). See docs/benchmarks.md.
#
# Needs: PostgreSQL on 127.0.0.1:5432 with db teletan_bench (scripts/start-test-postgres.sh),
# the accounts tt-bench-01..50 and PAM service teletan-portal-test
# (scripts/install-pam-stack.sh), pgbench, psql, curl, python3 (3.11+). Run as root:
# the portal checks passwords with pam_unix, which needs /etc/shadow.
#
# WARNING: drops and recreates everything in database teletan_bench (schema public and
# pgbench_eq). Everything runs on 127.0.0.1 only, and stops by itself.
#
# Environment (defaults):
#   PORTAL_BIN                  .build-release/release/portal if present, else .build/debug/portal
#   BENCH_OFFICERS=50           concurrent signed-in officers = pgbench clients (1..50)
#   BENCH_SECONDS=20            measured seconds, portal and pgbench each (1..600)
#   BENCH_WARMUP=3              warm-up seconds before each measurement (0..60)
#   BENCH_CLIENT_PROCESSES=1    load-generator processes the officers are spread over (1..8)
#   BENCH_TELETAN_INTERVAL=0s   the portal's --teletan-interval (0s: per-officer interval off)
#   BENCH_POOL_SIZE=8           the portal's --database-pool-size (8 measured best on 2 cores)
#   BENCH_PACE=0                minimum seconds between two issuances of one officer
#   BENCH_PGBENCH_CHAINED=1     also run pgbench with the audit-chain row lock (informational)
#   BENCH_VERIFY_AUDIT=1        run `portal audit verify` on the bench database afterwards
#   BENCH_PORT                  portal port on 127.0.0.1 (default: a free one)
#   BENCH_JSON                  append the results as one JSON line to this file
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=$repo/scripts/bench

die() { echo "bench-portal: $*" >&2; exit 1; }
note() { echo "bench-portal: $*" >&2; }

# --- Settings ------------------------------------------------------------------------------
int_in() { # NAME VALUE MIN MAX
  [[ $2 =~ ^[0-9]+$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )) || die "$1 must be a whole number from $3 to $4, got '$2'"
}
officers=${BENCH_OFFICERS:-50};        int_in BENCH_OFFICERS "$officers" 1 50
seconds=${BENCH_SECONDS:-20};          int_in BENCH_SECONDS "$seconds" 1 600
warmup=${BENCH_WARMUP:-3};             int_in BENCH_WARMUP "$warmup" 0 60
processes=${BENCH_CLIENT_PROCESSES:-1}; int_in BENCH_CLIENT_PROCESSES "$processes" 1 8
interval=${BENCH_TELETAN_INTERVAL:-0s}
pool_size=${BENCH_POOL_SIZE:-8};       int_in BENCH_POOL_SIZE "$pool_size" 2 256
[[ $interval =~ ^[0-9]+[smhd]?$ ]] || die "BENCH_TELETAN_INTERVAL must look like 0s or 1s, got '$interval'"
pace=${BENCH_PACE:-0}
[[ $pace =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BENCH_PACE must be a number of seconds, got '$pace'"
chained=${BENCH_PGBENCH_CHAINED:-1}
verify_audit=${BENCH_VERIFY_AUDIT:-1}

if [[ -z ${PORTAL_BIN:-} ]]; then
  if [[ -x $repo/.build-release/release/portal ]]; then PORTAL_BIN=$repo/.build-release/release/portal
  else PORTAL_BIN=$repo/.build/debug/portal; fi
fi
[[ -x $PORTAL_BIN ]] || die "portal binary '$PORTAL_BIN' not found; build it or set PORTAL_BIN"
case $(readlink -f "$PORTAL_BIN") in
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
[[ $EUID -eq 0 ]] || note "warning: not root; pam_unix cannot check other users' passwords, sign-in will likely fail"
pg_isready -q -h "$pg_host" -p "$pg_port" || die "PostgreSQL is not accepting connections on $pg_host:$pg_port (scripts/start-test-postgres.sh)"
getent passwd tt-bench-01 >/dev/null || die "account tt-bench-01 missing (scripts/install-pam-stack.sh)"
[[ -f /etc/pam.d/teletan-portal-test ]] || die "PAM service teletan-portal-test missing (scripts/install-pam-stack.sh)"

if [[ -n ${BENCH_PORT:-} ]]; then
  port=$BENCH_PORT; int_in BENCH_PORT "$port" 1024 65535
else
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then die "something already listens on 127.0.0.1:$port"; fi

# --- Cleanup -------------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/bench-portal.XXXXXX)
portal_pid=
stop_portal() {
  [[ -n $portal_pid ]] || return 0
  if kill -0 "$portal_pid" 2>/dev/null; then
    kill -TERM "$portal_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$portal_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$portal_pid" 2>/dev/null && kill -KILL "$portal_pid" 2>/dev/null || true
  fi
  wait "$portal_pid" 2>/dev/null || true
  portal_pid=
}
cleanup() { stop_portal; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Facts about the run ---------------------------------------------------------------------
export BENCH_PORTAL_BIN=$PORTAL_BIN BENCH_BUILD=$build BENCH_TELETAN_INTERVAL=$interval BENCH_POOL_SIZE=$pool_size
BENCH_GIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
[[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && BENCH_GIT+=" (working tree modified)"
export BENCH_GIT
BENCH_MACHINE="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
export BENCH_MACHINE
BENCH_PG_VERSION=$(psql_bench -c "SHOW server_version" | cut -d' ' -f1)
BENCH_PG_VERSION="PostgreSQL $BENCH_PG_VERSION, synchronous_commit=$(psql_bench -c 'SHOW synchronous_commit'), shared_buffers=$(psql_bench -c 'SHOW shared_buffers')"
export BENCH_PG_VERSION

read -r load1 _ < /proc/loadavg
if awk -v l="$load1" 'BEGIN { exit !(l > 1.0) }'; then
  note "warning: load average is $load1 before the run; other work on this machine skews the figures:"
  ps -eo pcpu=,comm= --sort=-pcpu | head -n 3 | sed 's/^/    /' >&2
fi

# --- Clean database --------------------------------------------------------------------------
note "resetting database $pg_db (schemas public and pgbench_eq)"
psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public"
psql_bench -f "$bench/pgbench_schema.sql"

checkpoint() {  # superuser only; skipped quietly otherwise
  if [[ $EUID -eq 0 ]] && id postgres >/dev/null 2>&1; then
    (cd / && runuser -u postgres -- psql -p "$pg_port" -qAtX -c CHECKPOINT) >/dev/null 2>&1 || true
  fi
}

# --- Portal ----------------------------------------------------------------------------------
# Runs a private copy, so a rebuild of the original during the run cannot disturb it.
cp "$PORTAL_BIN" "$tmp/portal"
note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port"
"$tmp/portal" serve --host 127.0.0.1 --port "$port" --database "$db_url" \
  --secret-file "$tmp/secret" --pam-service teletan-portal-test \
  --templates "$repo/Templates" --public-directory "$repo/Public" \
  --teletan-interval "$interval" --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 \
  --database-pool-size "$pool_size" --log-level warning >"$tmp/portal.log" 2>&1 &
portal_pid=$!
ready=
for _ in $(seq 1 120); do
  if ! kill -0 "$portal_pid" 2>/dev/null; then
    wait "$portal_pid" 2>/dev/null || true; portal_pid=
    sed 's/^/    /' "$tmp/portal.log" >&2
    [[ $interval == 0* ]] && note "hint: if --teletan-interval 0s is refused, this portal predates it; try BENCH_TELETAN_INTERVAL=1s"
    die "the portal exited during start-up"
  fi
  if curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/ready"; then ready=1; break; fi
  sleep 0.5
done
[[ -n $ready ]] || die "the portal did not become ready within 60 s"
idle_rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$portal_pid/status" 2>/dev/null || true)
checkpoint

# --- Load ------------------------------------------------------------------------------------
note "load: $officers officers, warm-up ${warmup}s, measuring ${seconds}s"
load_status=0
timeout --kill-after=10 $((warmup + seconds + 300)) \
  python3 "$bench/portal_load.py" --port "$port" --officers "$officers" --warmup "$warmup" \
    --duration "$seconds" --processes "$processes" --pace "$pace" --portal-pid "$portal_pid" \
    --json-out "$tmp/load.json" || load_status=$?
peak_rss_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$portal_pid/status" 2>/dev/null || true)
# Problems the portal logged under load (not what it prints while being stopped).
problems=$(grep -ciE 'warning|error|critical' "$tmp/portal.log" || true)
if (( load_status != 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  die "the load generator failed (status $load_status)"
fi
stop_portal

if (( problems > 0 )); then
  note "portal logged $problems warning/error line(s); first ones:"
  grep -iE 'warning|error|critical' "$tmp/portal.log" | head -n $(( problems < 5 ? problems : 5 )) | cut -c1-300 | sed 's/^/    /' >&2
fi
rows="teletans $(psql_bench -c 'SELECT count(*) FROM teletans'), audit_log $(psql_bench -c 'SELECT count(*) FROM audit_log')"
audit_result="not run"
if [[ $verify_audit == 1 ]]; then
  if audit_out=$(timeout 300 "$tmp/portal" audit verify --database "$db_url" --log-level error 2>&1); then
    audit_result=$(tail -n 1 <<<"$audit_out")
  else
    audit_result="FAILED: $(tail -n 1 <<<"$audit_out")"
    note "audit verify: $audit_out"
  fi
fi

# --- pgbench ---------------------------------------------------------------------------------
run_pgbench() { # SCRIPT SECONDS OUTPUT
  timeout --kill-after=10 $(($2 + 120)) \
    pgbench -h "$pg_host" -p "$pg_port" -U "$pg_user" -n -c "$officers" -j 2 -T "$2" -f "$1" "$pg_db" >"$3" 2>&1 || {
      tail -n 20 "$3" >&2; die "pgbench failed ($1)"; }
}
checkpoint
note "pgbench: $officers clients, warm-up ${warmup}s, measuring ${seconds}s (issue.sql)"
if (( warmup > 0 )); then run_pgbench "$bench/issue.sql" "$warmup" "$tmp/pgbench-warmup.txt"; fi
run_pgbench "$bench/issue.sql" "$seconds" "$tmp/pgbench.txt"
chained_args=()
if [[ $chained == 1 ]]; then
  checkpoint
  note "pgbench: $officers clients, measuring ${seconds}s (issue-chained.sql)"
  run_pgbench "$bench/issue-chained.sql" "$seconds" "$tmp/pgbench-chained.txt"
  chained_args=(--pgbench-chained "$tmp/pgbench-chained.txt")
fi

# --- Report ----------------------------------------------------------------------------------
python3 "$bench/report.py" --load "$tmp/load.json" --pgbench "$tmp/pgbench.txt" "${chained_args[@]}" \
  ${peak_rss_kib:+--peak-rss-kib "$peak_rss_kib"} ${idle_rss_kib:+--idle-rss-kib "$idle_rss_kib"} --portal-log-problems "$problems" \
  --audit-verify "$audit_result" --rows "$rows"
