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

bench_name=bench-verification
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"

# --- Settings ------------------------------------------------------------------------------
clients=${BENCH_CLIENTS:-100};           int_in BENCH_CLIENTS "$clients" 1 200
seconds=${BENCH_SECONDS:-20};            int_in BENCH_SECONDS "$seconds" 1 600
warmup=${BENCH_WARMUP:-3};               int_in BENCH_WARMUP "$warmup" 0 60
teletans=${BENCH_TELETANS:-20000};       int_in BENCH_TELETANS "$teletans" "$clients" 200000
processes=${BENCH_CLIENT_PROCESSES:-1};  int_in BENCH_CLIENT_PROCESSES "$processes" 1 8
pg_rows=${BENCH_PGBENCH_ROWS:-300000};   int_in BENCH_PGBENCH_ROWS "$pg_rows" 1000 5000000

VERIFICATION_BIN=${VERIFICATION_BIN:-$(pick_bin verification-server)}
PORTAL_BIN=${PORTAL_BIN:-$(pick_bin portal)}
[[ -x $VERIFICATION_BIN ]] || die "verification server binary '$VERIFICATION_BIN' not found; build it or set VERIFICATION_BIN"
[[ -x $PORTAL_BIN ]] || die "portal binary '$PORTAL_BIN' not found (needed for 'portal keygen'); build it or set PORTAL_BIN"
build=$(build_of "$VERIFICATION_BIN")

require_tools
python3 -c 'import cryptography' 2>/dev/null || die "python3 package 'cryptography' is missing (pip install cryptography)"
port=$(listen_port BENCH_PORT)
internal_port=$(listen_port BENCH_INTERNAL_PORT)
[[ $port != "$internal_port" ]] || die "BENCH_PORT and BENCH_INTERNAL_PORT must differ"

export BENCH_SERVER_BIN=$VERIFICATION_BIN BENCH_BUILD=$build
record_run_facts

note "resetting database $pg_db (schemas public and pgbench_ver, $pg_rows pre-filled pgbench rows)"
reset_database "$bench/verification_schema.sql" -v teletans="$pg_rows"

# --- Server ----------------------------------------------------------------------------------
"$PORTAL_BIN" keygen --out "$tmp/keys" >/dev/null 2>&1 || die "'$PORTAL_BIN keygen --out DIR' failed"
[[ -f $tmp/keys/portal-key.pem && -f $tmp/keys/portal-key.pub.pem ]] || die "keygen wrote no portal-key.pem/portal-key.pub.pem"
server=$(private_copy "$VERIFICATION_BIN")
note "starting $VERIFICATION_BIN ($build) on 127.0.0.1:$port (app) and :$internal_port (internal)"
start_server "the verification server" "$tmp/server.log" "http://127.0.0.1:$port/health/ready" \
  "$server" serve --database "$db_url" --secret-file "$tmp/secret" \
  --trusted-portal-key "$tmp/keys/portal-key.pub.pem" --host 127.0.0.1 --port "$port" \
  --internal-host 127.0.0.1 --internal-port "$internal_port" --teletans-per-hour 100000000 --trust-proxy \
  --log-level warning || die "the verification server exited during start-up"
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
if (( load_status != 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "server log (last 20 lines):"; tail -n 20 "$tmp/server.log" | sed 's/^/    /' >&2
  die "the load generator failed (status $load_status)"
fi
problems=$(log_problems "$tmp/server.log")
stop_server
rows=$(psql_bench -c "SELECT 'teletans ' || (SELECT count(*) FROM teletans) || ' (' || (SELECT count(*) FROM teletans WHERE redeemed_at IS NOT NULL) || ' redeemed), registration_tokens ' || (SELECT count(*) FROM registration_tokens) || ', tans ' || (SELECT count(*) FROM tans) || ' (' || (SELECT count(*) FROM tans WHERE redeemed_at IS NOT NULL) || ' verified), lockouts ' || (SELECT count(*) FROM lockouts)")

# --- pgbench ---------------------------------------------------------------------------------
pgbench_clients "$clients"
rows_hint="if a \\gset query returned no row, raise BENCH_PGBENCH_ROWS"
export BENCH_PGBENCH_CLIENTS=$pg_clients
checkpoint
note "pgbench: $pg_clients clients, warm-up ${warmup}s, measuring ${seconds}s (verification-chain.sql)"
if (( warmup > 0 )); then run_pgbench "$bench/verification-chain.sql" "$warmup" "$tmp/pgbench-warmup.txt" "$rows_hint"; fi
run_pgbench "$bench/verification-chain.sql" "$seconds" "$tmp/pgbench.txt" "$rows_hint"
used=$(psql_bench -c "SELECT count(*) FROM pgbench_ver.teletans WHERE redeemed_at IS NOT NULL")
note "pgbench redeemed $used of $pg_rows pre-filled teleTAN rows"

# --- Report ----------------------------------------------------------------------------------
python3 "$bench/verification_load.py" report --load "$tmp/load.json" --pgbench "$tmp/pgbench.txt" \
  ${peak_rss_kib:+--peak-rss-kib "$peak_rss_kib"} --server-log-problems "$problems" --rows "$rows"
