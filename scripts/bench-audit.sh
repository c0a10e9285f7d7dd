#!/usr/bin/env bash
# Benchmark: the admin audit review over a large audit trail. Seeds the database with N
# realistic entries forming a correct hash chain (scripts/bench/audit_seed.py), starts the
# portal on it, signs in as an admin through the real sign-in form and measures through HTTP:
# p50/p99 of the search's first page (unfiltered, by actor, by action, one day) and of the
# teleTAN lookup, each next to the same query's time in the database itself in the same run
# (PostgreSQL: EXPLAIN ANALYZE through psql; SQLite: the query through Python's sqlite3); and the
# exports (.jsonl and .csv of about 1 M entries): rows/s and the portal's peak RSS. The JSON
# Lines export is re-checked with the independent implementation (Tests/support/audit_chain.py).
# A measurement, not a test: exit 0 whatever the figures, non-zero only when the run fails.
# See docs/benchmarks.md.
#
# Usage: scripts/bench-audit.sh [--database postgres|sqlite] [--rows N] [--reuse] [--seed-only]
#   --database postgres   (default) database teletan_bench on 127.0.0.1:5432, 10,000,000 entries
#   --database sqlite     a SQLite file (in a temp dir, or BENCH_SQLITE_FILE), 1,000,000 entries
#   --rows N              entries to seed (try --rows 100000 first)
#   --reuse               keep the seeded data of an earlier run if it holds at least N entries
#                         (PostgreSQL; SQLite with BENCH_SQLITE_FILE) instead of seeding again
#   --seed-only           seed (and check the chain), print the database's own query times, no portal
#
# Needs: python3 3.11+, psql and PostgreSQL on 127.0.0.1:5432 (scripts/start-test-postgres.sh;
# for --database postgres), openssl, curl, the PAM test stack (scripts/install-pam-stack.sh:
# tt-admin/Admin-Pass-1, tt-officer/Officer-Pass-1, service teletan-portal-test). Run as root
# (pam_unix reads /etc/shadow; the RSS high-water mark is reset through /proc/PID/clear_refs).
#
# WARNING: --database postgres drops and recreates schema public of database teletan_bench
# (unless --reuse finds a large enough seed there). Everything runs on 127.0.0.1 only.
#
# Environment (defaults):
#   PORTAL_BIN              .build/release/portal (swift build -c release --product portal), else
#                           .build-release/release/portal, else .build/debug/portal (with a warning)
#   BENCH_REQUESTS=200      measured requests per figure, after BENCH_WARMUP=20
#   BENCH_BASELINE_REPEATS=50  EXPLAIN ANALYZE / sqlite3 runs per query (after 3 unmeasured)
#   BENCH_EXPORT_ROWS       entries the export's date filter selects: 1000000 on PostgreSQL; on
#                           SQLite 0 = unfiltered (the whole 1 M)
#   BENCH_VERIFY_SEED       run `portal audit verify` on the fresh seed: 1 up to 1 M rows, else 0
#   BENCH_SQLITE_FILE       keep the SQLite database here (for --reuse) instead of a temp dir
#   BENCH_PORT              portal port on 127.0.0.1 (default: a free one)
#   BENCH_JSON              append the full result as one JSON line to this file
set -euo pipefail

bench_name=bench-audit
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"
# The load tools import the shared Python toolkit (Tests/support, the package `support`).
export PYTHONPATH="$repo/Tests${PYTHONPATH:+:$PYTHONPATH}"

# --- Settings ------------------------------------------------------------------------------------
backend=postgres rows= reuse=0 seed_only=0
while (( $# )); do
  case $1 in
    --database) backend=${2:-}; shift 2 ;;
    --database=*) backend=${1#*=}; shift ;;
    --rows) rows=${2:-}; shift 2 ;;
    --rows=*) rows=${1#*=}; shift ;;
    --reuse) reuse=1; shift ;;
    --seed-only) seed_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case $backend in
  postgres) rows=${rows:-10000000}; export_rows=${BENCH_EXPORT_ROWS:-1000000} ;;
  sqlite) rows=${rows:-1000000}; export_rows=${BENCH_EXPORT_ROWS:-0} ;;
  *) die "--database must be postgres or sqlite, got '$backend'" ;;
esac
int_in --rows "$rows" 1000 100000000
int_in BENCH_EXPORT_ROWS "$export_rows" 0 100000000
requests=${BENCH_REQUESTS:-200};   int_in BENCH_REQUESTS "$requests" 1 100000
warmup=${BENCH_WARMUP:-20};        int_in BENCH_WARMUP "$warmup" 0 10000
repeats=${BENCH_BASELINE_REPEATS:-50}; int_in BENCH_BASELINE_REPEATS "$repeats" 1 10000
verify_seed=${BENCH_VERIFY_SEED:-$(( rows <= 1000000 ? 1 : 0 ))}

use_portal_binary
[[ $build == release ]] || note "warning: $PORTAL_BIN is a $build build; latencies and export rates are not representative (swift build -c release --product portal)"

for tool in python3 openssl curl; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh)"; done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 must be 3.11 or newer"
if [[ $backend == postgres ]]; then
  command -v psql >/dev/null || die "psql is missing (scripts/install-deps.sh)"
  pg_isready -q -h "$pg_host" -p "$pg_port" || die "PostgreSQL is not accepting connections on $pg_host:$pg_port (scripts/start-test-postgres.sh)"
  url=$db_url
else
  sqlite_file=${BENCH_SQLITE_FILE:-$tmp/audit-bench.sqlite}
  url="sqlite:$sqlite_file"
fi
if (( ! seed_only )); then
  [[ $EUID -eq 0 ]] || note "warning: not root; pam_unix cannot check other users' passwords, sign-in will likely fail"
  require_test_stack tt-admin
fi

portal=$(private_copy "$PORTAL_BIN")
db_value() { # SQL -> one value
  if [[ $backend == postgres ]]; then psql_bench -c "$1"; else python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$sqlite_file" "$1"; fi
}

# --- Seed ------------------------------------------------------------------------------------------
seed_json=
existing=0
if (( reuse )) && { [[ $backend == postgres ]] || [[ -f ${sqlite_file:-/nonexistent} ]]; }; then
  existing=$(db_value "SELECT seq FROM audit_head WHERE id = 1" 2>/dev/null || echo 0)
fi
if (( reuse )) && (( existing >= rows )); then
  note "reusing the seeded audit trail ($existing entries)"
  "$portal" migrate --database "$url" --log-level warning >/dev/null
else
  if [[ $backend == postgres ]]; then
    note "resetting database $pg_db (schema public)"
    psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public"
  else
    rm -f "$sqlite_file" "$sqlite_file-wal" "$sqlite_file-shm"
  fi
  "$portal" migrate --database "$url" --log-level warning >/dev/null
  note "seeding $rows entries ($backend)"
  seed_json=$(python3 "$bench/audit_seed.py" --database "$url" --rows "$rows")
  note "seeded: $seed_json"
  if [[ $verify_seed == 1 ]]; then
    note "checking the seeded chain with portal audit verify"
    verify_out=$("$portal" audit verify --database "$url" --log-level error 2>&1) || die "the seeded chain does not verify: $verify_out"
    note "$(tail -n 1 <<<"$verify_out")"
  fi
fi

facts="Build: $build ($(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')$([[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && echo ', working tree modified')); machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
[[ $backend == postgres ]] && facts+="; PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), shared_buffers=$(psql_bench -c 'SHOW shared_buffers')"
[[ $backend == sqlite ]] && facts+="; SQLite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)') (Python's; the portal links its own)"

common_load=(--database "$url" --requests "$requests" --warmup "$warmup" --baseline-repeats "$repeats"
             --export-rows "$export_rows" --work-dir "$tmp" --json-out "$tmp/load.json"
             --verify-export "$repo/Tests/support/audit_chain.py")
if (( seed_only )); then
  python3 "$bench/audit_load.py" --baseline-only "${common_load[@]}"
  python3 "$bench/audit_report.py" --load "$tmp/load.json" --seed "$seed_json" --facts "$facts" ${BENCH_JSON:+--json-out "$BENCH_JSON"}
  exit 0
fi

# --- Portal ----------------------------------------------------------------------------------------
port=$(listen_port BENCH_PORT)
help=$("$portal" serve --help 2>&1)
extra=()
# The seed spans 400 days ending now, the portal's default retention: keep it all while measuring.
[[ $help == *--audit-retention* ]] && extra+=(--audit-retention 3650d)
[[ $help == *--audit-checkpoint-key* ]] && extra+=(--audit-checkpoint-key "$tmp/audit-checkpoint-key.pem")
note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port"
start_server "the portal" "$tmp/portal.log" "http://127.0.0.1:$port/health/ready" \
  "$portal" serve --host 127.0.0.1 --port "$port" --metrics-port "$((port + 1))" --database "$url" \
  --secret-file "$tmp/secret" --pam-service teletan-portal-test --log-level warning "${extra[@]}" \
  || die "the portal exited during start-up"

load_status=0
timeout --kill-after=10 7200 python3 "$bench/audit_load.py" --port "$port" --portal-pid "$server_pid" "${common_load[@]}" || load_status=$?
if (( load_status != 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  die "the measurement failed (status $load_status)"
fi
problems=$(log_problems "$tmp/portal.log")
stop_server

audit_result=$(audit_verify 3600 --database "$url")
python3 "$bench/audit_report.py" --load "$tmp/load.json" --seed "$seed_json" --facts "$facts; portal log: $problems warning/error lines" \
  --audit-verify "$audit_result" ${BENCH_JSON:+--json-out "$BENCH_JSON"}
