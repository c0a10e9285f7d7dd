#!/usr/bin/env bash
# Soak: officers and hotline agents doing their whole flows against one portal for minutes
# (default 50 + 50 for 10 minutes), with think time; every response checked; the portal's RSS,
# open file descriptors and database connections sampled every 5 s. Prints a table per minute
# and the verdicts (PASS/FAIL): zero failed requests; the last minute's RSS peak within 10 % of
# the second minute's; the last minute's fds and database connections not above the second
# minute's; `portal audit verify --full` passes afterwards. See docs/benchmarks.md, "Soak".
# Exit status: 0 when the run completed, whatever the verdicts; non-zero when the run itself
# broke (the portal did not start or died, the load generator failed).
#
# Usage (as root: the portal checks passwords with pam_unix, which needs /etc/shadow, and the
# RSS high-water mark is reset through /proc/PID/clear_refs):
#   scripts/soak.sh                        # PostgreSQL, database teletan_soak
#   scripts/soak.sh --database sqlite      # SQLite file in a temp directory
#   SOAK_SECONDS=60 SOAK_PERIOD=10 scripts/soak.sh     # a short try, a row every 10 s
#
# Needs: PostgreSQL on 127.0.0.1:5432 with role teletan/teletan (scripts/start-test-postgres.sh;
# the database teletan_soak is created if missing, as the postgres superuser), the accounts
# tt-bench-01..50 and tt-hotbench-01..50 (Bench-Pass-1) and PAM service teletan-portal-test
# (scripts/install-pam-stack.sh), psql, curl, python3 (3.11+) with locust (Tests/requirements.txt,
# scripts/install-deps.sh): soak_load.py runs the people on it.
#
# WARNING: drops and recreates schema public of database teletan_soak at every run.
# Everything runs on 127.0.0.1 only, and stops by itself.
#
# The portal runs with the limits raised so that the flows are not refused:
#   --teletan-interval 1s (the load generator keeps an account's issuances >= 1.5 s apart)
#   --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 --daily-quota 10000000
# and with --audit-checkpoint-interval SOAK_CHECKPOINT_INTERVAL (the hourly checkpoint job
# runs during the soak too), --log-level warning; everything else is the portal's default.
#
# Environment (defaults):
#   PORTAL_BIN                 .build-release/release/portal if present, else .build/debug/portal
#   SOAK_SECONDS=600           length of the run after the sign-in phase (a multiple of SOAK_PERIOD)
#   SOAK_OFFICERS=50           officers tt-bench-01.. (0..50)
#   SOAK_AGENTS=50             hotline agents tt-hotbench-01.. (0..50)
#   SOAK_DATABASE=postgres     postgres or sqlite (or --database on the command line)
#   SOAK_PERIOD=60             seconds per report row; the verdicts compare the second and the last row
#   SOAK_THINK=1               scale of every think time (0.2: five times the request rate)
#   SOAK_POOL_SIZE=16          the portal's --database-pool-size (16 is its default)
#   SOAK_CHECKPOINT_INTERVAL=5m  the portal's --audit-checkpoint-interval
#   SOAK_SEED=2026             seed of the people's random choices and pauses
#   SOAK_PORT                  portal port on 127.0.0.1 (default: a free one)
#   SOAK_JSON                  append the result (without the 5 s samples) as one JSON line here
#   SOAK_KEEP                  a directory to copy the run's files to (load JSON, portal log)
set -euo pipefail

bench_name=soak
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"
# The load tools import the shared Python toolkit (Tests/support, the package `support`).
export PYTHONPATH="$repo/Tests${PYTHONPATH:+:$PYTHONPATH}"

# --- Settings ------------------------------------------------------------------------------
database=${SOAK_DATABASE:-postgres}
while (( $# )); do
  case $1 in
    --database) [[ $# -ge 2 ]] || die "--database needs postgres or sqlite"; database=$2; shift 2 ;;
    --database=*) database=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ $database == postgres || $database == sqlite ]] || die "--database must be postgres or sqlite, got '$database'"
seconds=${SOAK_SECONDS:-600};   int_in SOAK_SECONDS "$seconds" 10 3600
officers=${SOAK_OFFICERS:-50};  int_in SOAK_OFFICERS "$officers" 0 50
agents=${SOAK_AGENTS:-50};      int_in SOAK_AGENTS "$agents" 0 50
(( officers + agents > 0 )) || die "SOAK_OFFICERS and SOAK_AGENTS are both 0"
period=${SOAK_PERIOD:-60};      int_in SOAK_PERIOD "$period" 5 3600
(( period % 5 == 0 && seconds % period == 0 )) || die "SOAK_PERIOD must be a multiple of 5 and SOAK_SECONDS a multiple of SOAK_PERIOD"
pool_size=${SOAK_POOL_SIZE:-16}; int_in SOAK_POOL_SIZE "$pool_size" 2 64
seed=${SOAK_SEED:-2026};        int_in SOAK_SEED "$seed" 0 999999999
think=${SOAK_THINK:-1}
[[ $think =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v t="$think" 'BEGIN { exit !(t > 0 && t <= 10) }' \
  || die "SOAK_THINK must be a number above 0 and at most 10, got '$think'"
checkpoint_interval=${SOAK_CHECKPOINT_INTERVAL:-5m}
[[ $checkpoint_interval =~ ^[0-9]+[smhd]$ ]] || die "SOAK_CHECKPOINT_INTERVAL must look like 5m, got '$checkpoint_interval'"

use_portal_binary
[[ $build == release ]] || note "warning: $PORTAL_BIN is a $build build; memory and latency figures differ from a release build"

for tool in psql curl python3; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh)"; done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 must be 3.11 or newer"
python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("locust") is None)' \
  || die "the Python module locust is missing (scripts/install-deps.sh installs Tests/requirements.txt)"
[[ $EUID -eq 0 ]] || die "run as root: pam_unix reads /etc/shadow, and the RSS peak is reset through /proc/PID/clear_refs"
require_test_stack $( (( officers == 0 )) || printf 'tt-bench-%02d ' "$officers"; (( agents == 0 )) || printf 'tt-hotbench-%02d' "$agents")
port=$(listen_port SOAK_PORT)
metrics_port=$(listen_port SOAK_METRICS_PORT)

# --- Database ----------------------------------------------------------------------------------
load_db_args=()
if [[ $database == postgres ]]; then
  pg_db=teletan_soak
  db_url="postgres://$pg_user:$PGPASSWORD@$pg_host:$pg_port/$pg_db"
  pg_isready -q -h "$pg_host" -p "$pg_port" || die "PostgreSQL is not accepting connections on $pg_host:$pg_port (scripts/start-test-postgres.sh)"
  if [[ -z $(psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qAtX -c "SELECT 1 FROM pg_database WHERE datname = '$pg_db'") ]]; then
    note "creating database $pg_db (owner $pg_user)"
    (cd / && runuser -u postgres -- psql -p "$pg_port" -qX -v ON_ERROR_STOP=1 -c \
      "CREATE DATABASE $pg_db OWNER $pg_user ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' TEMPLATE template0") >&2 \
      || die "cannot create database $pg_db"
  fi
  others=$(psql_bench -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$pg_db' AND pid <> pg_backend_pid()")
  (( others == 0 )) || die "$others connection(s) to $pg_db are open: is another soak running?"
  note "resetting database $pg_db (schema public)"
  psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public"
  export PGUSER=$pg_user PGPORT=$pg_port
  load_db_args=(--pg-database "$pg_db")
  record_run_facts
else
  sqlite_file=$tmp/soak.sqlite
  db_url="sqlite:$sqlite_file"
  load_db_args=(--sqlite-file "$sqlite_file")
  BENCH_GIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
  BENCH_MACHINE="$(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
  BENCH_PG_VERSION="SQLite (file in $tmp)"
  export BENCH_GIT BENCH_MACHINE BENCH_PG_VERSION
fi

# --- Portal ----------------------------------------------------------------------------------
portal=$(private_copy "$PORTAL_BIN")
flags=(--teletan-interval 1s --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 --daily-quota 10000000
       --database-pool-size "$pool_size" --audit-checkpoint-interval "$checkpoint_interval" --log-level warning)
export SOAK_BIN=$PORTAL_BIN SOAK_BUILD=$build SOAK_FLAGS="${flags[*]}"
note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port, database $database"
start_server "the portal" "$tmp/portal.log" "http://127.0.0.1:$port/health/ready" \
  "$portal" serve --host 127.0.0.1 --port "$port" --metrics-port "$metrics_port" --database "$db_url" \
  --secret-file "$tmp/secret" --audit-checkpoint-key "$tmp/audit-checkpoint-key.pem" --pam-service teletan-portal-test \
  "${flags[@]}" || die "the portal exited during start-up"
portal_pid=$server_pid

# --- Load ------------------------------------------------------------------------------------
note "$officers officers + $agents hotline agents, ${seconds}s, a row every ${period}s, think time x$think"
load_status=0
timeout --kill-after=10 $((seconds + 600)) \
  python3 "$bench/soak_load.py" run --port "$port" --portal-pid "$portal_pid" --officers "$officers" --agents "$agents" \
    --duration "$seconds" --period "$period" --think "$think" --seed "$seed" "${load_db_args[@]}" \
    --json-out "$tmp/load.json" || load_status=$?
alive=1
kill -0 "$portal_pid" 2>/dev/null || alive=0
problems=$(log_problems "$tmp/portal.log")
if [[ -n ${SOAK_KEEP:-} ]]; then mkdir -p "$SOAK_KEEP" && cp "$tmp/portal.log" "$tmp"/load.json "$SOAK_KEEP"/ 2>/dev/null || true; fi
if (( load_status != 0 || alive == 0 )) || [[ ! -s $tmp/load.json ]]; then
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  (( alive )) || die "the portal died during the run"
  die "the load generator failed (status $load_status)"
fi
stop_server

# --- Afterwards ------------------------------------------------------------------------------
count() { # TABLE
  if [[ $database == postgres ]]; then psql_bench -c "SELECT count(*) FROM $1"
  else python3 -c 'import sqlite3, sys; print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute(f"SELECT count(*) FROM {sys.argv[2]}").fetchone()[0])' "$sqlite_file" "$1"
  fi
}
rows="teletans $(count teletans), audit_log $(count audit_log), hotline_calls $(count hotline_calls), hotline_callbacks $(count hotline_callbacks)" \
  || rows="(not counted)"
audit_result=$(cd "$tmp" && audit_verify 600 --full --database "$db_url" --secret-file "$tmp/secret" \
                 --audit-checkpoint-key "$tmp/audit-checkpoint-key.pem")

python3 "$bench/soak_load.py" report --load "$tmp/load.json" --audit-verify "$audit_result" \
  --portal-log-problems "$problems" --rows "$rows" ${SOAK_JSON:+--json-append "$SOAK_JSON"}
