#!/usr/bin/env bash
# Fault runs (issue 11, measured): signed-in officers issue teleTANs through the portal while
# something goes wrong, each run with an undisturbed baseline phase measured first in the same
# run. A measurement, not a test: the exit status is 0 whatever the verdicts, non-zero only when
# the run itself fails (portal does not start, officers cannot sign in, a client process fails).
# See docs/benchmarks.md ("Fault runs").
#
#   scripts/faults.sh pam-hang     PAM hangs (test service teletan-portal-hang-test: pam_exec
#                                  sleeps FAULT_HANG_SECONDS) while sign-ins keep coming: every
#                                  sign-in ends at the portal's PAM wait with the 503 page
#                                  "Sign-in is unavailable right now" (or at once once all PAM
#                                  threads are stuck); officers' p99 stays within 2x of baseline.
#   scripts/faults.sh storm        Failing sign-ins from many addresses and names, as fast as the
#                                  portal answers them, while officers issue: officers' p99 under
#                                  100 ms, locked names/addresses get 429 + Retry-After, the audit
#                                  trail aggregates refused attempts (entries per 1000, DB growth).
#   scripts/faults.sh pg-restart   PostgreSQL stops and starts again while officers issue: time
#                                  from its return to the first issuance. Uses a PRIVATE cluster
#                                  (initdb in a temporary directory, own port), never the shared
#                                  one on 5432.
#   scripts/faults.sh all          the three, one after the other (each with its own portal;
#                                  about 2.5 min with the defaults).
#   (FAULT_SCENARIO=storm scripts/faults.sh works too.)
#
# Needs: PostgreSQL on 127.0.0.1:5432 (scripts/start-test-postgres.sh; this script creates
# database teletan_faults, owner teletan, if missing), the accounts tt-bench-01..50 and the PAM
# services teletan-portal-test and teletan-portal-hang-test (scripts/install-pam-stack.sh),
# psql, curl, python3 (3.11+); pg-restart also initdb/pg_ctl (postgresql-15) and the user
# postgres. Run as root: the portal checks passwords with pam_unix (/etc/shadow), pam-hang
# writes /etc/teletan-portal-test/hang-seconds (deleted again on exit), pg-restart runs the
# private cluster as postgres.
#
# WARNING: drops and recreates schema public of database teletan_faults for every scenario.
# Everything runs on 127.0.0.1 only and stops by itself.
#
# Environment (defaults):
#   PORTAL_BIN                  .build-release/release/portal if present, else .build/debug/portal
#   FAULT_OFFICERS=10           signed-in officers issuing (tt-bench-01..), 1..40
#   FAULT_PACE=0.25             seconds between two issuances of one officer (0: closed loop)
#   FAULT_WARMUP=3              seconds before the baseline phase (not counted)
#   FAULT_BASELINE=20           baseline phase, seconds
#   FAULT_SECONDS               fault phase, seconds (pam-hang: 20, or PAM wait + 10 if longer;
#                               storm: 20)
#   FAULT_POOL_SIZE=8           the portal's --database-pool-size
#   FAULT_PAM_TIMEOUT=2s        the portal's --pam-timeout, if the binary has that flag; a binary
#                               without it waits 20 s (its built-in wait), which is then expected
#   FAULT_PAM_THREADS=16        the portal's --pam-threads
#   FAULT_HANG_SECONDS=30       how long PAM hangs in pam-hang's fault phase
#   FAULT_SIGNIN_CLIENTS=20     pam-hang: concurrent sign-in clients (each its own address)
#   FAULT_SIGNIN_PAUSE=0.2      pam-hang: seconds each client waits after an answer
#   FAULT_STORM_CLIENTS=32      storm: concurrent keep-alive clients (1..256, at most 64 per process)
#   FAULT_STORM_PROCESSES=1     storm: client processes they are spread over (1..8)
#   FAULT_STORM_ADDRESSES=64    storm: X-Forwarded-For addresses 10.77.x.y the storm rotates over
#   FAULT_STORM_NAMES=400       storm: made-up names it picks from (plus the last 10 real accounts,
#                               tt-bench-41..50, for 10 % of the attempts)
#   FAULT_SETTLE=0              pam-hang, storm: seconds to keep the portal running after the fault
#                               phase and then list the audit entries written meanwhile (the
#                               portal sums PAM-busy refusals up once a minute: 65 shows that entry;
#                               a lock's refusals are summed up when it ends, see FAULT_SIGNIN_LOCKOUT)
#   FAULT_SIGNIN_LOCKOUT        the portal's --signin-lockout (default: the portal's, 15m); with a
#                               short one (e.g. 30s) locks end during the run and the audit trail's
#                               summing-up entries ("refused": N) show up
#   FAULT_SYNCHRONOUS_COMMIT    on | off: synchronous_commit for database teletan_faults (ALTER
#                               DATABASE; default: the server's). A diagnostic: off shows how much
#                               of the officers' latency under a storm is waiting for WAL flushes
#   FAULT_OUTAGE=5              pg-restart: seconds PostgreSQL stays down
#   FAULT_AFTER=15              pg-restart: seconds measured after its return
#   FAULT_PG_STOP_MODE=fast     pg-restart: pg_ctl stop mode (fast, or immediate = crash + recovery)
#   FAULT_PG_PORT               pg-restart: port of the private cluster (default: a free one)
#   FAULT_PORT                  portal port on 127.0.0.1 (default: a free one)
#   FAULT_METRICS_PORT          the portal's metrics port (default: another free one)
#   FAULT_JSON                  append each scenario's result as one JSON line to this file
set -euo pipefail

bench_name=faults
source "$(dirname "${BASH_SOURCE[0]}")/bench/common.sh"
# The load tools import the shared Python toolkit (Tests/support, the package `support`).
export PYTHONPATH="$repo/Tests${PYTHONPATH:+:$PYTHONPATH}"

scenario=${1:-${FAULT_SCENARIO:-}}
case $scenario in
  pam-hang|storm|pg-restart) ;;
  all)
    status=0
    for s in pam-hang storm pg-restart; do
      FAULT_SCENARIO=$s "${BASH_SOURCE[0]}" "$s" || { status=$?; note "$s failed (status $status)"; }
    done
    exit "$status" ;;
  *) die "usage: $0 pam-hang|storm|pg-restart|all (or FAULT_SCENARIO=...)" ;;
esac
bench_name="faults $scenario"

# --- Settings ------------------------------------------------------------------------------
officers=${FAULT_OFFICERS:-10};           int_in FAULT_OFFICERS "$officers" 1 40
pace=${FAULT_PACE:-0.25}
[[ $pace =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "FAULT_PACE must be a number of seconds, got '$pace'"
warmup=${FAULT_WARMUP:-3};                int_in FAULT_WARMUP "$warmup" 0 60
baseline=${FAULT_BASELINE:-20};           int_in FAULT_BASELINE "$baseline" 5 600
pool_size=${FAULT_POOL_SIZE:-8};          int_in FAULT_POOL_SIZE "$pool_size" 2 256
pam_threads=${FAULT_PAM_THREADS:-16};     int_in FAULT_PAM_THREADS "$pam_threads" 1 256
hang_seconds=${FAULT_HANG_SECONDS:-30};   int_in FAULT_HANG_SECONDS "$hang_seconds" 1 600
signin_clients=${FAULT_SIGNIN_CLIENTS:-20}; int_in FAULT_SIGNIN_CLIENTS "$signin_clients" 1 64
signin_pause=${FAULT_SIGNIN_PAUSE:-0.2}
[[ $signin_pause =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "FAULT_SIGNIN_PAUSE must be a number of seconds, got '$signin_pause'"
storm_clients=${FAULT_STORM_CLIENTS:-32}; int_in FAULT_STORM_CLIENTS "$storm_clients" 1 256
storm_processes=${FAULT_STORM_PROCESSES:-1}; int_in FAULT_STORM_PROCESSES "$storm_processes" 1 8
storm_addresses=${FAULT_STORM_ADDRESSES:-64}; int_in FAULT_STORM_ADDRESSES "$storm_addresses" 1 60000
storm_names=${FAULT_STORM_NAMES:-400};    int_in FAULT_STORM_NAMES "$storm_names" 1 100000
outage=${FAULT_OUTAGE:-5};                int_in FAULT_OUTAGE "$outage" 0 120
after=${FAULT_AFTER:-15};                 int_in FAULT_AFTER "$after" 5 600
settle=${FAULT_SETTLE:-0};                int_in FAULT_SETTLE "$settle" 0 1200
stop_mode=${FAULT_PG_STOP_MODE:-fast}
[[ $stop_mode == fast || $stop_mode == immediate ]] || die "FAULT_PG_STOP_MODE must be fast or immediate"
pam_timeout=${FAULT_PAM_TIMEOUT:-2s}
lockout=${FAULT_SIGNIN_LOCKOUT:-}
[[ -z $lockout || $lockout =~ ^[0-9]+[smh]$ ]] || die "FAULT_SIGNIN_LOCKOUT must look like 30s or 15m, got '$lockout'"
sync_commit=${FAULT_SYNCHRONOUS_COMMIT:-}
[[ -z $sync_commit || $sync_commit == on || $sync_commit == off ]] || die "FAULT_SYNCHRONOUS_COMMIT must be on or off"

seconds_of() { # 2s | 2 | 1500ms | 1m -> seconds (decimal)
  case $1 in
    *ms) awk -v v="${1%ms}" 'BEGIN { print v / 1000 }' ;;
    *s) echo "${1%s}" ;;
    *m) echo $(( ${1%m} * 60 )) ;;
    *) echo "$1" ;;
  esac
}
[[ $pam_timeout =~ ^[0-9]+(ms|s|m)?$ ]] || die "FAULT_PAM_TIMEOUT must look like 2s, got '$pam_timeout'"

use_portal_binary
require_tools
[[ $EUID -eq 0 ]] || die "run as root (pam_unix needs /etc/shadow; pam-hang writes /etc/teletan-portal-test)"
require_test_stack tt-bench-50
port=$(listen_port FAULT_PORT)
metrics_port=$(listen_port FAULT_METRICS_PORT)
[[ $metrics_port != "$port" ]] || die "FAULT_METRICS_PORT must differ from the portal port"

# Our own database, never teletan_bench (other benchmarks use that one).
pg_db=teletan_faults
db_url="postgres://$pg_user:$PGPASSWORD@$pg_host:$pg_port/$pg_db"

# --- Clean-up: the portal's hanging PAM children, the hang file, the private cluster ---------
hang_file=/etc/teletan-portal-test/hang-seconds
wrote_hang=0 pg_dir= pg_bin= priv_port= sync_commit=${sync_commit:-} load_pid=
kill_pam_children() { # pam_exec's sleeps (children of our portal), by pid. KILL: they inherit the
  [[ -n $server_pid ]] || return 0  # PAM thread's signal mask, in which TERM is blocked
  local pid
  for pid in $(ps -o pid= --ppid "$server_pid" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
}
cleanup() {
  if [[ -n $load_pid ]]; then
    kill -TERM "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
  fi
  kill_pam_children
  stop_server
  if (( wrote_hang )); then rm -f "$hang_file" "$hang_file.tmp"; fi
  if [[ -n $sync_commit && $scenario != pg-restart ]]; then
    psql_bench -c "ALTER DATABASE $pg_db RESET synchronous_commit" >/dev/null 2>&1 || true
  fi
  if [[ -n $pg_dir ]]; then
    runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

run_facts_json() {
  jq -nc --arg git "$BENCH_GIT" --arg machine "$BENCH_MACHINE" --arg pg "$BENCH_PG_VERSION" \
    --arg bin "$PORTAL_BIN ($bin_id)" --arg build "$build" --arg when "$(date -Is)" --arg pool "$pool_size" \
    --arg lockout "${lockout:-default}" --arg sync "${sync_commit:-server}" \
    '{git: $git, machine: $machine, postgres: $pg, portal_bin: $bin, build: $build, finished: $when,
      pool_size: ($pool | tonumber), signin_lockout: $lockout, synchronous_commit: $sync}'
}

# --- Database ------------------------------------------------------------------------------
if [[ -z $(psql_bench -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$pg_db'") ]]; then
  note "creating database $pg_db"
  (cd / && runuser -u postgres -- psql -p "$pg_port" -qAtX -v ON_ERROR_STOP=1 -c \
    "CREATE DATABASE $pg_db OWNER $pg_user ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' TEMPLATE template0") \
    || die "cannot create database $pg_db"
fi
record_run_facts
checkpoint
if [[ $scenario == pg-restart ]]; then
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [[ -x $pg_bin/initdb && -x $pg_bin/pg_ctl ]] || die "initdb/pg_ctl not found under /usr/lib/postgresql/*/bin"
  id postgres >/dev/null 2>&1 || die "user postgres missing"
  priv_port=$(listen_port FAULT_PG_PORT)
  pg_dir=$(mktemp -d /tmp/faults-pg.XXXXXX)
  chown postgres: "$pg_dir"
  note "private PostgreSQL cluster in $pg_dir on 127.0.0.1:$priv_port (the shared one on $pg_port is not touched)"
  (cd / && runuser -u postgres -- "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -A trust -E UTF8 \
     --locale=C.UTF-8 >"$pg_dir/initdb.log" 2>&1) || { tail -n 20 "$pg_dir/initdb.log" >&2; die "initdb failed"; }
  pg_start=(runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60
            -o "-p $priv_port -k $pg_dir -c listen_addresses=127.0.0.1 -c max_connections=40" start)
  pg_stop=(runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -m "$stop_mode" -w -t 60 stop)
  (cd / && "${pg_start[@]}") >/dev/null || { tail -n 20 "$pg_dir/server.log" >&2; die "the private cluster did not start"; }
  (cd / && runuser -u postgres -- psql -h "$pg_dir" -p "$priv_port" -qAtX -v ON_ERROR_STOP=1 \
     -c "CREATE ROLE $pg_user LOGIN PASSWORD '$PGPASSWORD'" \
     -c "CREATE DATABASE $pg_db OWNER $pg_user ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' TEMPLATE template0") \
     >/dev/null || die "cannot create role/database in the private cluster"
  db_url="postgres://$pg_user:$PGPASSWORD@127.0.0.1:$priv_port/$pg_db"
else
  note "resetting database $pg_db (schema public)"
  psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public" \
    -c "ALTER DATABASE $pg_db RESET synchronous_commit"
  if [[ -n $sync_commit ]]; then
    note "synchronous_commit=$sync_commit for database $pg_db (diagnostic)"
    psql_bench -c "ALTER DATABASE $pg_db SET synchronous_commit = $sync_commit"
  fi
fi

# --- Portal ----------------------------------------------------------------------------------
portal=$(private_copy "$PORTAL_BIN")
bin_id="$(date -r "$PORTAL_BIN" '+%Y-%m-%d %H:%M:%S'), sha256 $(sha256sum "$portal" | cut -c1-12)"
portal_args=(serve --host 127.0.0.1 --port "$port" --metrics-port "$metrics_port" --database "$db_url"
  --secret-file "$tmp/secret" --audit-checkpoint-key "$tmp/audit-checkpoint-key.pem"
  --teletan-interval 0s --teletans-per-user-per-day 10000000 --teletans-per-hour 100000000 --daily-quota 10000000
  --database-pool-size "$pool_size" --pam-threads "$pam_threads" --log-level warning)
[[ -n $lockout ]] && portal_args+=(--signin-lockout "$lockout")
load_args=()
case $scenario in
  pam-hang)
    [[ -f /etc/pam.d/teletan-portal-hang-test && -x /usr/local/lib/teletan-portal-test/pam-hang ]] \
      || die "PAM service teletan-portal-hang-test missing (scripts/install-pam-stack.sh)"
    # --trust-proxy: each sign-in client comes from its own address, so the per-address cap (a
    # quarter of the PAM threads) does not stop them before the whole pool is stuck.
    portal_args+=(--pam-service teletan-portal-hang-test --trust-proxy)
    if "$portal" serve --help 2>&1 | grep -q -- '--pam-timeout'; then
      portal_args+=(--pam-timeout "$pam_timeout"); pam_wait=$(seconds_of "$pam_timeout")
    else
      note "warning: this portal has no --pam-timeout; its built-in PAM wait (20 s) is expected instead of $pam_timeout"
      pam_wait=20
    fi
    fault_seconds=${FAULT_SECONDS:-$(awk -v w="$pam_wait" 'BEGIN { s = int(w + 10.999); print (s > 20 ? s : 20) }')}
    wrote_hang=1
    printf '0\n' >"$hang_file"
    load_args=(--hang-file "$hang_file" --hang-seconds "$hang_seconds" --pam-wait "$pam_wait"
      --pam-threads "$pam_threads" --signin-clients "$signin_clients" --signin-pause "$signin_pause" --forwarded)
    ;;
  storm)
    portal_args+=(--pam-service teletan-portal-test --trust-proxy)
    fault_seconds=${FAULT_SECONDS:-20}
    load_args=(--storm-clients "$storm_clients" --storm-processes "$storm_processes"
      --storm-addresses "$storm_addresses" --storm-names "$storm_names")
    ;;
  pg-restart)
    portal_args+=(--pam-service teletan-portal-test)
    fault_seconds=0
    load_args=(--pg-stop-cmd "$(printf '%q ' "${pg_stop[@]}")" --pg-start-cmd "$(printf '%q ' "${pg_start[@]}")" --outage "$outage" --after "$after")
    ;;
esac
int_in FAULT_SECONDS "$fault_seconds" 0 600

note "starting $PORTAL_BIN ($build) on 127.0.0.1:$port"
# setsid (no fork: same pid): Ctrl-C in the terminal reaches this script, which stops the load
# generator, ends the hanging pam_exec children and only then the portal; a portal stopped by the
# terminal's signal first would leave those children behind for up to FAULT_HANG_SECONDS.
start_server "the portal" "$tmp/portal.log" "http://127.0.0.1:$port/health/ready" setsid "$portal" "${portal_args[@]}" \
  || die "the portal exited during start-up"
checkpoint

# --- Load ------------------------------------------------------------------------------------
note "$scenario: $officers officers (pace ${pace}s), warm-up ${warmup}s, baseline ${baseline}s, fault ${fault_seconds}s"
# In the background and waited for, so that Ctrl-C (or TERM) stops it at once: timeout runs it in
# a process group of its own, which the terminal's signal does not reach; cleanup sends TERM.
load_status=0
timeout --kill-after=10 $((warmup + baseline + fault_seconds + outage + after + settle + 400)) \
  python3 "$bench/fault_load.py" "$scenario" --port "$port" --portal-pid "$server_pid" --officers "$officers" \
    --pace "$pace" --warmup "$warmup" --baseline "$baseline" --fault "$fault_seconds" --settle "$settle" --db-url "$db_url" \
    "${load_args[@]}" --json-out "$tmp/result.json" >"$tmp/report.txt" &
load_pid=$!
wait "$load_pid" || load_status=$?
load_pid=
problems=$(log_problems "$tmp/portal.log")
if (( load_status != 0 )) || [[ ! -s $tmp/result.json ]]; then
  note "portal log (last 20 lines):"; tail -n 20 "$tmp/portal.log" | sed 's/^/    /' >&2
  die "the load generator failed (status $load_status)"
fi
kill_pam_children
stop_server

audit_result=$(audit_verify 300 --database "$db_url")

# --- Report ----------------------------------------------------------------------------------
echo "faults $scenario: $BENCH_GIT, $PORTAL_BIN ($build, $bin_id); $BENCH_MACHINE; $BENCH_PG_VERSION${sync_commit:+ (synchronous_commit=$sync_commit for $pg_db)}${lockout:+; --signin-lockout $lockout}"
cat "$tmp/report.txt"
echo "  portal log: $problems warning/error line(s)$( ((problems)) && printf ', e.g. %s' "$(grep -iE 'warning|error|critical' "$tmp/portal.log" | head -n 1 | cut -c1-200)")"
echo "  audit verify: $audit_result"
if [[ -n ${FAULT_JSON:-} ]]; then
  jq -c --argjson facts "$(run_facts_json)" --arg problems "$problems" --arg audit "$audit_result" \
    '. + {run: $facts, portal_log_problems: ($problems | tonumber), audit_verify: $audit}' "$tmp/result.json" >>"$FAULT_JSON"
fi
