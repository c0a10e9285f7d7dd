# Shared by scripts/bench-portal.sh and scripts/bench-verification.sh (sourced, not run):
# settings checks, the PostgreSQL bench database, the server under test (started in the
# background, stopped on exit), pgbench and the facts printed with every result.
# The sourcing script sets bench_name first and `set -euo pipefail`.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench=$repo/scripts/bench

die() { echo "$bench_name: $*" >&2; exit 1; }
note() { echo "$bench_name: $*" >&2; }

int_in() { # NAME VALUE MIN MAX
  [[ $2 =~ ^[0-9]+$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )) || die "$1 must be a whole number from $3 to $4, got '$2'"
}

pick_bin() { # NAME -> the release binary if built (either scratch path), else the debug one
  local candidate
  for candidate in "$repo/.build-release/release/$1" "$repo/.build/release/$1"; do
    [[ -x $candidate ]] && { echo "$candidate"; return; }
  done
  echo "$repo/.build/debug/$1"
}

build_of() { # BINARY -> release | debug | unknown
  case $(readlink -f "$1") in
    */release/*) echo release ;;
    */debug/*) echo debug ;;
    *) echo unknown ;;
  esac
}

# --- PostgreSQL (scripts/start-test-postgres.sh) ----------------------------------------------
pg_host=127.0.0.1 pg_port=5432 pg_db=teletan_bench pg_user=teletan
export PGPASSWORD=teletan   # the local test role of scripts/start-test-postgres.sh
db_url="postgres://$pg_user:$PGPASSWORD@$pg_host:$pg_port/$pg_db"
export PGOPTIONS='-c client_min_messages=warning'
use_portal_binary() { # sets PORTAL_BIN (default: the release build if there is one) and build; dies if missing
  PORTAL_BIN=${PORTAL_BIN:-$(pick_bin portal)}
  [[ -x $PORTAL_BIN ]] || die "portal binary '$PORTAL_BIN' not found; build it (swift build -c release --product portal) or set PORTAL_BIN"
  build=$(build_of "$PORTAL_BIN")
}

require_test_stack() { # ACCOUNT...: the accounts and the PAM service teletan-portal-test of scripts/install-pam-stack.sh
  local account
  for account in "$@"; do
    getent passwd "$account" >/dev/null || die "account $account missing (scripts/install-pam-stack.sh)"
  done
  [[ -f /etc/pam.d/teletan-portal-test ]] || die "PAM service teletan-portal-test missing (scripts/install-pam-stack.sh)"
}

psql_bench() { psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d "$pg_db" -v ON_ERROR_STOP=1 -qAtX "$@"; }

require_tools() { # also python3 3.11+ and a running PostgreSQL
  local tool
  for tool in psql pgbench pg_isready curl python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh)"
  done
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 must be 3.11 or newer"
  pg_isready -q -h "$pg_host" -p "$pg_port" || die "PostgreSQL is not accepting connections on $pg_host:$pg_port (scripts/start-test-postgres.sh)"
}

reset_database() { # SCHEMA_FILE [psql arguments...]: empty public schema plus the pgbench tables
  psql_bench -c "DROP SCHEMA IF EXISTS public CASCADE" -c "CREATE SCHEMA public"
  # Dropping public drops pg_stat_statements' view with it; put it back where
  # scripts/start-test-postgres.sh creates it (superuser only; skipped quietly otherwise).
  if [[ $(psql_superuser -c "SHOW shared_preload_libraries" 2>/dev/null) == *pg_stat_statements* ]]; then
    psql_superuser -d "$pg_db" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1 || true
  fi
  psql_bench "${@:2}" -f "$1"
}

psql_superuser() { # [psql arguments...]: psql as the superuser postgres over the Unix socket (root only)
  [[ $EUID -eq 0 ]] && id postgres >/dev/null 2>&1 || return 1
  (cd / && runuser -u postgres -- psql -p "$pg_port" -qAtX "$@")
}

checkpoint() { # superuser only; skipped quietly otherwise
  psql_superuser -c CHECKPOINT >/dev/null 2>&1 || true
}

# --- Ports -----------------------------------------------------------------------------------
listen_port() { # VARIABLE -> its value, or a free port; refuses one that is already in use
  local port=${!1:-}
  [[ -n $port ]] || port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  int_in "$1" "$port" 1024 65535
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then die "something already listens on 127.0.0.1:$port"; fi
  echo "$port"
}

# --- The server under test -------------------------------------------------------------------
tmp=$(mktemp -d "/tmp/$bench_name.XXXXXX")
server_pid=
stop_server() { # SIGTERM, then SIGKILL after 10 s
  [[ -n $server_pid ]] || return 0
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid" 2>/dev/null || true
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

start_server() { # LABEL LOG READY_URL COMMAND...: background, wait up to 60 s; returns 1 if it exits
  local label=$1 log=$2 url=$3
  shift 3
  "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" 2>/dev/null || true; server_pid=
      sed 's/^/    /' "$log" >&2
      return 1
    fi
    if curl -fs -o /dev/null --max-time 2 "$url"; then return 0; fi
    sleep 0.5
  done
  die "$label did not become ready within 60 s"
}

malloc_counter_env() { # FILE -> the environment that makes the server count its heap allocations into FILE
  command -v cc >/dev/null || die "counting allocations needs cc (or set BENCH_MALLOC_COUNT=0)"
  [[ -e $tmp/malloc_count.so ]] ||
    cc -O2 -shared -fPIC -o "$tmp/malloc_count.so" "$bench/malloc_count.c" -lpthread || die "cannot build malloc_count.so"
  echo "LD_PRELOAD=$tmp/malloc_count.so MALLOC_COUNT_FILE=$1"
}

private_copy() { # BINARY -> a copy in $tmp, so a rebuild during the run cannot disturb it
  cp "$1" "$tmp/$(basename "$1")"
  echo "$tmp/$(basename "$1")"
}

audit_verify() { # SECONDS ARGUMENTS... -> the last line of `$portal audit verify ARGUMENTS`, "FAILED: ..." if it fails (all of it on stderr)
  local seconds=$1 out
  shift
  if out=$(timeout "$seconds" "$portal" audit verify --log-level error "$@" 2>&1); then
    tail -n 1 <<<"$out"
  else
    note "audit verify: $out"
    echo "FAILED: $(tail -n 1 <<<"$out")"
  fi
}

log_problems() { # LOG: number of warning/error lines, and the first five on stderr
  local count
  count=$(grep -ciE 'warning|error|critical' "$1" || true)
  if (( count > 0 )); then
    note "$(basename "$1") has $count warning/error line(s); first ones:"
    grep -iE 'warning|error|critical' "$1" | head -n 5 | cut -c1-300 | sed 's/^/    /' >&2
  fi
  echo "$count"
}

# --- pgbench ---------------------------------------------------------------------------------
# max_connections=100 keeps 3 slots for superusers, so 100 clients as role teletan do not fit:
# then pgbench runs as the superuser postgres (root only, Unix socket), else with fewer clients.
pgbench_clients() { # WANTED -> sets pg_clients and pgbench_as
  local max_conn reserved
  max_conn=$(psql_bench -c 'SHOW max_connections')
  reserved=$(psql_bench -c 'SHOW superuser_reserved_connections')
  pg_clients=$1 pgbench_as=()
  if (( $1 > max_conn - reserved - 1 )); then
    if [[ $EUID -eq 0 ]] && id postgres >/dev/null 2>&1; then
      pgbench_as=(runuser -u postgres --)
      note "pgbench runs as superuser postgres: $1 clients exceed the $((max_conn - reserved)) non-superuser slots"
    else
      pg_clients=$((max_conn - reserved - 1))
      note "warning: pgbench runs with $pg_clients clients only (max_connections=$max_conn, $reserved reserved)"
    fi
  fi
}

run_pgbench() { # SCRIPT SECONDS OUTPUT [HINT] (after pgbench_clients)
  local conn=(-h "$pg_host" -U "$pg_user")
  (( ${#pgbench_as[@]} )) && conn=()
  (cd / && timeout --kill-after=10 $(($2 + 120)) \
    "${pgbench_as[@]}" pgbench "${conn[@]}" -p "$pg_port" -n -c "$pg_clients" -j 2 -T "$2" -f "$1" "$pg_db") >"$3" 2>&1 || {
      tail -n 20 "$3" >&2; die "pgbench failed ($(basename "$1"))${4:+; $4}"; }
}

# --- Facts about the run (read by the report) ------------------------------------------------
record_run_facts() {
  BENCH_GIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
  [[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && BENCH_GIT+=" (working tree modified)"
  BENCH_MACHINE="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
  BENCH_PG_VERSION="PostgreSQL $(psql_bench -c 'SHOW server_version' | cut -d' ' -f1), synchronous_commit=$(psql_bench -c 'SHOW synchronous_commit'), shared_buffers=$(psql_bench -c 'SHOW shared_buffers'), max_connections=$(psql_bench -c 'SHOW max_connections')"
  export BENCH_GIT BENCH_MACHINE BENCH_PG_VERSION
  local load1
  read -r load1 _ < /proc/loadavg
  if awk -v l="$load1" 'BEGIN { exit !(l > 1.0) }'; then
    note "warning: load average is $load1 before the run; other work on this machine skews the figures:"
    ps -eo pcpu=,comm= --sort=-pcpu | head -n 3 | sed 's/^/    /' >&2
  fi
}
