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

bench_name=bench-portal
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"

# --- Settings ------------------------------------------------------------------------------
officers=${BENCH_OFFICERS:-50};         int_in BENCH_OFFICERS "$officers" 1 50
seconds=${BENCH_SECONDS:-20};           int_in BENCH_SECONDS "$seconds" 1 600
warmup=${BENCH_WARMUP:-3};              int_in BENCH_WARMUP "$warmup" 0 60
processes=${BENCH_CLIENT_PROCESSES:-1}; int_in BENCH_CLIENT_PROCESSES "$processes" 1 8
pool_size=${BENCH_POOL_SIZE:-8};        int_in BENCH_POOL_SIZE "$pool_size" 2 256
interval=${BENCH_TELETAN_INTERVAL:-0s}
[[ $interval =~ ^[0-9]+[smhd]?$ ]] || die "BENCH_TELETAN_INTERVAL must look like 0s or 1s, got '$interval'"
pace=${BENCH_PACE:-0}
[[ $pace =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BENCH_PACE must be a number of seconds, got '$pace'"
chained=${BENCH_PGBENCH_CHAINED:-1}
verify_audit=${BENCH_VERIFY_AUDIT:-1}

PORTAL_BIN=${PORTAL_BIN:-$(pick_bin portal)}
[[ -x $PORTAL_BIN ]] || die "portal binary '$PORTAL_BIN' not found; build it or set PORTAL_BIN"
build=$(build_of "$PORTAL_BIN")

require_tools
[[ $EUID -eq 0 ]] || note "warning: not root; pam_unix cannot check other users' passwords, sign-in will likely fail"
getent passwd tt-bench-01 >/dev/null || die "account tt-bench-01 missing (scripts/install-pam-stack.sh)"
[[ -f /etc/pam.d/teletan-portal-test ]] || die "PAM service teletan-portal-test missing (scripts/install-pam-stack.sh)"
port=$(listen_port BENCH_PORT)

export BENCH_PORTAL_BIN=$PORTAL_BIN BENCH_BUILD=$build BENCH_TELETAN_INTERVAL=$interval BENCH_POOL_SIZE=$pool_size
record_run_facts

note "resetting database $pg_db (schemas public and pgbench_eq)"
reset_database "$bench/pgbench_schema.sql"

# --- Portal ----------------------------------------------------------------------------------
portal=$(private_copy "$PORTAL_BIN")
note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port"
start_server "the portal" "$tmp/portal.log" "http://127.0.0.1:$port/health/ready" \
  "$portal" serve --host 127.0.0.1 --port "$port" --metrics-port "$((port + 1))" --database "$db_url" \
  --secret-file "$tmp/secret" --audit-checkpoint-key "$tmp/audit-checkpoint-key.pem" --pam-service teletan-portal-test \
  --teletan-interval "$interval" --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 \
  --database-pool-size "$pool_size" --log-level warning || {
    [[ $interval == 0* ]] && note "hint: if --teletan-interval 0s is refused, this portal predates it; try BENCH_TELETAN_INTERVAL=1s"
    die "the portal exited during start-up"; }
idle_rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status" 2>/dev/null || true)
checkpoint

# --- Load ------------------------------------------------------------------------------------
note "load: $officers officers, warm-up ${warmup}s, measuring ${seconds}s"
load_status=0
timeout --kill-after=10 $((warmup + seconds + 300)) \
  python3 "$bench/portal_load.py" --port "$port" --officers "$officers" --warmup "$warmup" \
    --duration "$seconds" --processes "$processes" --pace "$pace" --portal-pid "$server_pid" \
    --json-out "$tmp/load.json" || load_status=$?
peak_rss_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$server_pid/status" 2>/dev/null || true)
if (( load_status != 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  die "the load generator failed (status $load_status)"
fi
# Problems the portal logged under load (not what it prints while being stopped).
problems=$(log_problems "$tmp/portal.log")
stop_server

rows="teletans $(psql_bench -c 'SELECT count(*) FROM teletans'), audit_log $(psql_bench -c 'SELECT count(*) FROM audit_log')"
audit_result="not run"
if [[ $verify_audit == 1 ]]; then
  if audit_out=$(timeout 300 "$portal" audit verify --database "$db_url" --log-level error 2>&1); then
    audit_result=$(tail -n 1 <<<"$audit_out")
  else
    audit_result="FAILED: $(tail -n 1 <<<"$audit_out")"
    note "audit verify: $audit_out"
  fi
fi

# --- pgbench ---------------------------------------------------------------------------------
pgbench_clients "$officers"
checkpoint
note "pgbench: $pg_clients clients, warm-up ${warmup}s, measuring ${seconds}s (issue.sql)"
if (( warmup > 0 )); then run_pgbench "$bench/issue.sql" "$warmup" "$tmp/pgbench-warmup.txt"; fi
run_pgbench "$bench/issue.sql" "$seconds" "$tmp/pgbench.txt"
chained_args=()
if [[ $chained == 1 ]]; then
  checkpoint
  note "pgbench: $pg_clients clients, measuring ${seconds}s (issue-chained.sql)"
  run_pgbench "$bench/issue-chained.sql" "$seconds" "$tmp/pgbench-chained.txt"
  chained_args=(--pgbench-chained "$tmp/pgbench-chained.txt")
fi

# --- Report ----------------------------------------------------------------------------------
python3 "$bench/report.py" --load "$tmp/load.json" --pgbench "$tmp/pgbench.txt" "${chained_args[@]}" \
  ${peak_rss_kib:+--peak-rss-kib "$peak_rss_kib"} ${idle_rss_kib:+--idle-rss-kib "$idle_rss_kib"} --portal-log-problems "$problems" \
  --audit-verify "$audit_result" --rows "$rows"
