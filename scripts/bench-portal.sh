#!/usr/bin/env bash
# Benchmark: concurrent signed-in officers issuing teleTANs through the portal against
# PostgreSQL, compared with the floor for this design: PostgreSQL doing exactly the portal's own
# database work. See docs/benchmarks.md. One run, one portal process, in this order:
#
#   1. Capture: one officer runs BENCH_CAPTURE_CYCLES cycles (GET /, POST /teletan,
#      GET /teletan/result); pg_stat_statements, read before and after, gives the statements
#      and calls of one cycle as PostgreSQL received them.
#   2. Portal, BENCH_OFFICERS officers (default 50): cycles/s, p50/p99 of each request, CPU
#      per cycle, peak RSS; pg_stat_statements around it gives each statement's mean time.
#   3. Portal, BENCH_P99_OFFICERS officers (default 10): the same, for the p99 target.
#   4. The portal is stopped; `portal audit verify` checks the hash chain.
#   5. Floor: pgbench replays one cycle (scripts/bench/officer-cycle.sql: the same statements,
#      parameters, transaction boundaries, on the portal's own tables, -M extended like the
#      portal's driver) with BENCH_OFFICERS clients, then with BENCH_P99_OFFICERS clients.
#      pg_stat_statements gives what pgbench sent; the report puts it next to the capture
#      and warns loudly where they differ (a changed portal needs officer-cycle.sql changed).
#      Informational: the replay once more with BENCH_POOL_SIZE clients, the concurrency the
#      portal's connection pool lets through to PostgreSQL.
#   6. Report: targets at BENCH_OFFICERS: portal >= 70 % of the floor; at BENCH_P99_OFFICERS:
#      p99 of POST /teletan < 50 ms; peak RSS while issuing < 100 MB.
#
# A measurement, not a test: the exit status is 0 whatever the figures are, non-zero only when
# the run itself fails (portal does not start, sign-in or capture fails, pgbench fails or aborts,
# more than 1 % failed portal requests, the audit chain is broken after the portal's runs).
#
# Needs: PostgreSQL on 127.0.0.1:5432 with db teletan_bench and pg_stat_statements loaded
# (scripts/start-test-postgres.sh), the accounts tt-bench-01..50 and PAM service
# teletan-portal-test (scripts/install-pam-stack.sh), pgbench, psql, curl, python3 (3.11+).
# Run as root: the portal checks passwords with pam_unix (needs /etc/shadow), and re-creating
# the pg_stat_statements view after the reset and CHECKPOINT need the superuser postgres.
#
# WARNING: drops and recreates everything in database teletan_bench (schema public). Everything
# runs on 127.0.0.1 only, and stops by itself. A default run takes about 2 minutes.
#
# Environment (defaults):
#   PORTAL_BIN                  .build-release/release/portal if present, else .build/debug/portal
#   BENCH_OFFICERS=50           officers = pgbench clients for the ratio target (1..50)
#   BENCH_P99_OFFICERS=10       officers = pgbench clients for the p99 target (0: skip that run)
#   BENCH_SECONDS=20            measured seconds of each portal and pgbench run (1..600)
#   BENCH_WARMUP=3              warm-up seconds before each measurement (0..60)
#   BENCH_CAPTURE_CYCLES=200    cycles of the capture (1..10000), after 20 warm-up cycles
#   BENCH_CLIENT_PROCESSES=1    load-generator processes the officers are spread over (1..8)
#   BENCH_POOL_SIZE=8           the portal's --database-pool-size (8 measured best on 2 cores)
#   BENCH_REPLAY_AT_POOL=1      also replay with BENCH_POOL_SIZE clients (informational; 0: skip)
#   BENCH_VERIFY_AUDIT=1        `portal audit verify` after the portal's runs and after the replay
#   BENCH_PERF=0                1: profile the portal with perf (499 Hz, call graphs) from the end of
#                               the BENCH_OFFICERS sign-in to the end of the window; the report
#                               prints the top libraries and symbols (perf adds a few % of CPU)
#   BENCH_MALLOC_COUNT=1        count the portal's heap allocations (scripts/bench/malloc_count.c, LD_PRELOAD;
#                               needs cc); the report gives allocations per cycle. 0: run without it
#   BENCH_KEEP_DIR              copy the run's raw files (JSON, pgbench logs, perf.data) to this directory
#   BENCH_PORT                  portal port on 127.0.0.1 (default: a free one)
#   BENCH_JSON                  append the results as one JSON line to this file
set -euo pipefail

bench_name=bench-portal
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"

# --- Settings ------------------------------------------------------------------------------
officers=${BENCH_OFFICERS:-50};          int_in BENCH_OFFICERS "$officers" 1 50
p99_officers=${BENCH_P99_OFFICERS:-10};  int_in BENCH_P99_OFFICERS "$p99_officers" 0 50
seconds=${BENCH_SECONDS:-20};            int_in BENCH_SECONDS "$seconds" 1 600
warmup=${BENCH_WARMUP:-3};               int_in BENCH_WARMUP "$warmup" 0 60
capture_cycles=${BENCH_CAPTURE_CYCLES:-200}; int_in BENCH_CAPTURE_CYCLES "$capture_cycles" 1 10000
processes=${BENCH_CLIENT_PROCESSES:-1};  int_in BENCH_CLIENT_PROCESSES "$processes" 1 8
pool_size=${BENCH_POOL_SIZE:-8};         int_in BENCH_POOL_SIZE "$pool_size" 2 256
verify_audit=${BENCH_VERIFY_AUDIT:-1}
replay_at_pool=${BENCH_REPLAY_AT_POOL:-1}
perf=${BENCH_PERF:-0}
malloc_count=${BENCH_MALLOC_COUNT:-1}
for unsupported in BENCH_TELETAN_INTERVAL BENCH_PACE BENCH_PGBENCH_CHAINED; do
  [[ -z ${!unsupported:-} ]] || note "warning: $unsupported is no longer supported and is ignored (see the header of $0)"
done

use_portal_binary

require_tools
[[ $EUID -eq 0 ]] || die "run as root (pam_unix needs /etc/shadow; the pg_stat_statements view and CHECKPOINT need the superuser)"
require_test_stack tt-bench-01
[[ $(psql_superuser -c "SHOW shared_preload_libraries") == *pg_stat_statements* ]] ||
  die "PostgreSQL does not load pg_stat_statements (scripts/start-test-postgres.sh sets it up)"
[[ $(psql_bench -c "SHOW pg_stat_statements.track_utility") == on ]] ||
  die "pg_stat_statements.track_utility is off; the capture needs BEGIN and COMMIT counted"
if [[ $perf == 1 ]]; then command -v perf >/dev/null || die "BENCH_PERF=1 needs perf (linux-perf)"; fi
port=$(listen_port BENCH_PORT)

export BENCH_PORTAL_BIN=$PORTAL_BIN BENCH_BUILD=$build BENCH_POOL_SIZE=$pool_size
record_run_facts

note "resetting database $pg_db (schema public)"
reset_database "$bench/pgbench_schema.sql"
psql_bench -c "SELECT 1 FROM pg_stat_statements LIMIT 1" >/dev/null 2>&1 ||
  die "cannot read pg_stat_statements in $pg_db (CREATE EXTENSION pg_stat_statements failed?)"
capture() { python3 "$bench/capture_cycle.py" --psql "psql -h $pg_host -p $pg_port -U $pg_user -d $pg_db" "$@"; }
helpers=()   # background samplers (perf, CPU) of the current load run, stopped if the run stops early
trap 'for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done; stop_server; rm -rf "$tmp"' EXIT

# --- Portal ----------------------------------------------------------------------------------
portal=$(private_copy "$PORTAL_BIN")
malloc_env=()
if [[ $malloc_count == 1 ]]; then
  malloc_env=($(malloc_counter_env "$tmp/malloc-count"))
fi
note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port"
start_server "the portal" "$tmp/portal.log" "http://127.0.0.1:$port/health/ready" \
  env "${malloc_env[@]}" "$portal" serve --host 127.0.0.1 --port "$port" --metrics-port "$((port + 1))" --database "$db_url" \
  --secret-file "$tmp/secret" --audit-checkpoint-key "$tmp/audit-checkpoint-key.pem" --pam-service teletan-portal-test \
  --teletan-interval 0s --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 --daily-quota 10000000 \
  --database-pool-size "$pool_size" --log-level warning || die "the portal exited during start-up"
idle_rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status" 2>/dev/null || true)

portal_failed() { # MESSAGE
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  die "$1"
}

# 1. Capture.
note "capture: tt-bench-01 runs 20 + $capture_cycles cycles alone; pg_stat_statements around the last $capture_cycles"
capture capture --port "$port" --cycles "$capture_cycles" --warmup-cycles 20 --json-out "$tmp/capture.json" ||
  portal_failed "the capture failed"

# 2./3. Load. VmHWM is reset after each sign-in (portal_load.py), so each run's peak is its own.
load_run() { # OFFICERS NAME [perf]
  local status=0 perf_pid=
  checkpoint
  note "load: $1 officers, warm-up ${warmup}s, measuring ${seconds}s"
  capture snapshot --json-out "$tmp/pgss-$2-before.json"
  : >"$tmp/load-$2.err"
  if [[ ${3:-} == perf ]]; then
    # From the end of the sign-in (PAM's yescrypt left out) for the warm-up and the window.
    (for _ in $(seq 1 1200); do grep -q 'signed in' "$tmp/load-$2.err" && break; sleep 0.1; done
     exec perf record -F 499 -g -o "$tmp/perf.data" -p "$server_pid" -- sleep $((warmup + seconds))) >"$tmp/perf.log" 2>&1 &
    perf_pid=$!
    helpers+=("$perf_pid")
  fi
  capture cpu-window --log "$tmp/load-$2.err" --warmup "$warmup" --seconds "$seconds" --portal-pid "$server_pid" \
    ${malloc_env:+--malloc-count-file "$tmp/malloc-count"} --json-out "$tmp/cpu-$2.json" &
  local cpu_pid=$!
  helpers+=("$cpu_pid")
  timeout --kill-after=10 $((warmup + seconds + 300)) \
    python3 "$bench/portal_load.py" --port "$port" --officers "$1" --warmup "$warmup" \
      --duration "$seconds" --processes "$processes" --portal-pid "$server_pid" \
      --json-out "$tmp/load-$2.json" 2> >(tee -a "$tmp/load-$2.err" >&2) || status=$?
  if (( status != 0 )) || [[ ! -s $tmp/load-$2.json ]]; then portal_failed "the load generator failed (status $status)"; fi
  if [[ -n $perf_pid ]]; then wait "$perf_pid" || note "warning: perf record failed: $(tail -n 2 "$tmp/perf.log")"; fi
  wait "$cpu_pid" || note "warning: no CPU figures of this database's postgres processes (falling back to all postgres processes)"
  helpers=()
  awk '/^VmHWM:/ { print $2 }' "/proc/$server_pid/status" >"$tmp/peak-$2.kib" 2>/dev/null || true
  capture snapshot --json-out "$tmp/pgss-$2-after.json"
  capture diff --before "$tmp/pgss-$2-before.json" --after "$tmp/pgss-$2-after.json" --json-out "$tmp/pgss-$2.json"
}
load_run "$officers" main $([[ $perf == 1 ]] && echo perf)
if (( p99_officers > 0 )); then load_run "$p99_officers" p99; fi

# Problems the portal logged under load (not what it prints while being stopped).
problems=$(log_problems "$tmp/portal.log")
stop_server

# 4. Integrity of what the portal wrote.
rows="teletans $(psql_bench -c 'SELECT count(*) FROM teletans'), audit_log $(psql_bench -c 'SELECT count(*) FROM audit_log')"
verify() { audit_verify 300 --database "$db_url"; }
audit_result="not run"
[[ $verify_audit == 1 ]] && audit_result=$(verify)

# 5. The floor: pgbench replays the cycle on the portal's tables.
replay_run() { # CLIENTS NAME
  pgbench_clients "$1"
  local conn=(-h "$pg_host" -U "$pg_user")
  (( ${#pgbench_as[@]} )) && conn=()
  local cmd=("${pgbench_as[@]}" pgbench "${conn[@]}" -p "$pg_port" -n -M extended -c "$pg_clients" -j 2
             -D replay_ready=0 -f "$bench/officer-cycle.sql" "$pg_db")
  checkpoint
  note "pgbench: officer-cycle.sql, $pg_clients clients, warm-up ${warmup}s, measuring ${seconds}s"
  if (( warmup > 0 )); then
    (cd / && timeout --kill-after=10 $((warmup + 120)) "${cmd[@]}" -T "$warmup") >"$tmp/pgbench-$2-warmup.txt" 2>&1 || {
      tail -n 20 "$tmp/pgbench-$2-warmup.txt" >&2; die "pgbench failed (officer-cycle.sql, warm-up)"; }
  fi
  # The p99 replay logs every transaction (-l): the report takes the replay's whole-cycle p99 from it.
  local log=()
  [[ $2 == p99 ]] && log=(-l --log-prefix "$tmp/pgbench-log-$2")
  capture pgbench --seconds "$seconds" --output "$tmp/pgbench-$2.txt" --json-out "$tmp/pgbench-$2.json" \
    -- "${cmd[@]}" "${log[@]}" -T "$seconds" || { tail -n 20 "$tmp/pgbench-$2.txt" >&2; die "pgbench failed (officer-cycle.sql)"; }
  if grep -q 'aborted' "$tmp/pgbench-$2.txt"; then
    tail -n 20 "$tmp/pgbench-$2.txt" >&2; die "pgbench aborted a client (officer-cycle.sql)"
  fi
}
replay_run "$officers" main
if (( p99_officers > 0 )); then replay_run "$p99_officers" p99; fi
pool_args=()
# (Not with more clients than officers that have signed in: each client replays one officer.)
if [[ $replay_at_pool == 1 ]] && (( pool_size != officers && pool_size != p99_officers &&
                                    pool_size <= (officers > p99_officers ? officers : p99_officers) )); then
  replay_run "$pool_size" pool
  pool_args=(--pgbench-pool "$tmp/pgbench-pool.txt" --pgbench-pool-json "$tmp/pgbench-pool.json")
fi
replay_audit="not run"
[[ $verify_audit == 1 ]] && replay_audit=$(verify)

# --- Report ----------------------------------------------------------------------------------
# The raw files (pgbench logs, perf data, JSON), for a second look; the directory is replaced.
if [[ -n ${BENCH_KEEP_DIR:-} ]]; then rm -rf "$BENCH_KEEP_DIR" && cp -a "$tmp" "$BENCH_KEEP_DIR"; fi
perf_args=()
if [[ $perf == 1 && -s $tmp/perf.data ]]; then
  { perf report -i "$tmp/perf.data" --no-children --sort dso --stdio --percent-limit 1 2>/dev/null |
      grep -E '^ +[0-9.]+%' | head -n 12
    echo "--"
    perf report -i "$tmp/perf.data" --no-children --sort dso,symbol --stdio --percent-limit 0.5 2>/dev/null |
      grep -E '^ +[0-9.]+%' | head -n 30; } >"$tmp/perf-top.txt" || true
  perf_args=(--perf-top "$tmp/perf-top.txt")
fi
p99_args=()
if (( p99_officers > 0 )); then
  p99_args=(--load-p99 "$tmp/load-p99.json" --cpu-p99 "$tmp/cpu-p99.json" --pgbench-p99 "$tmp/pgbench-p99.txt" --pgbench-p99-json "$tmp/pgbench-p99.json"
            --pgbench-p99-log-prefix "$tmp/pgbench-log-p99"
            --peak-rss-p99-kib "$(cat "$tmp/peak-p99.kib" 2>/dev/null || echo 0)")
fi
python3 "$bench/report.py" --load "$tmp/load-main.json" --cpu "$tmp/cpu-main.json" --pgbench "$tmp/pgbench-main.txt" \
  --pgbench-json "$tmp/pgbench-main.json" --capture "$tmp/capture.json" --portal-statements "$tmp/pgss-main.json" \
  "${p99_args[@]}" "${pool_args[@]}" "${perf_args[@]}" --peak-rss-kib "$(cat "$tmp/peak-main.kib" 2>/dev/null || echo 0)" \
  ${idle_rss_kib:+--idle-rss-kib "$idle_rss_kib"} --portal-log-problems "$problems" \
  --audit-verify "$audit_result" --replay-audit-verify "$replay_audit" --rows "$rows"
