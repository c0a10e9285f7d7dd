#!/usr/bin/env bash
# Starts Debian's PostgreSQL cluster on 127.0.0.1:5432 (creating it if there
# is none) and creates role "teletan" (password "teletan") with the databases
# teletan_test, teletan_test_w1 to _w4 (one per worker of scripts/swift-test-parallel.py),
# teletan_bench, teletan_e2e and teletan_deploy. Idempotent; run as root (e.g. from CI).
# Prints the URL the tests use.
set -euo pipefail

port=5432
as_postgres() { (cd / && runuser -u postgres -- "$@"); }   # cd: postgres can't read /root

if [[ $EUID -ne 0 ]]; then
  echo "start-test-postgres.sh: run as root" >&2
  exit 1
fi
command -v pg_lsclusters >/dev/null || {
  echo "PostgreSQL is not installed; run scripts/install-deps.sh" >&2; exit 1; }

# The cluster listening on port 5432, if any: "version name status".
cluster=$(pg_lsclusters --no-header | awk -v p="$port" '$3 == p { print $1, $2, $4; exit }')
if [[ -z $cluster ]]; then
  # Newest installed server version (directories /usr/lib/postgresql/NN).
  versions=(/usr/lib/postgresql/*/bin/postgres)
  version=$(printf '%s\n' "${versions[@]}" | cut -d/ -f5 | sort -V | tail -n 1)
  name=main
  # "main" may exist already, listening on another port: use a second cluster.
  [[ -d /etc/postgresql/$version/main ]] && name=teletan
  echo "Creating PostgreSQL $version cluster '$name' on port $port"
  pg_createcluster --port "$port" "$version" "$name"
  cluster="$version $name down"
fi
read -r version name status <<<"$cluster"

if [[ $status != online* ]]; then
  echo "Starting PostgreSQL cluster $version/$name"
  pg_ctlcluster "$version" "$name" start
fi

wait_for_connections() { # over TCP (the tests connect to 127.0.0.1), at most 30 s
  for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.5
  done
  pg_isready -h 127.0.0.1 -p "$port"
}
wait_for_connections

psql_admin() { as_postgres psql -p "$port" -v ON_ERROR_STOP=1 -qAtX "$@"; }

# pg_stat_statements: the issuance benchmark captures the statements of one officer cycle with it
# (docs/benchmarks.md). Loading a library needs a restart, once.
if [[ $(psql_admin -c "SHOW shared_preload_libraries") != *pg_stat_statements* ]]; then
  psql_admin -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
  echo "Restarting PostgreSQL cluster $version/$name to load pg_stat_statements"
  pg_ctlcluster "$version" "$name" restart
  wait_for_connections
fi

# Role: create once, reset the password every time.
if [[ -z $(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'teletan'") ]]; then
  psql_admin -c "CREATE ROLE teletan LOGIN"
fi
psql_admin -c "ALTER ROLE teletan WITH LOGIN PASSWORD 'teletan'"
# The tests' search for secrets at rest checkpoints before reading the cluster's files
# (Tests/support/secrets_at_rest.py); pg_checkpoint exists from PostgreSQL 15.
if [[ -n $(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'pg_checkpoint'") ]]; then
  psql_admin -c "GRANT pg_checkpoint TO teletan"
fi

for db in teletan_test teletan_test_w{1..4} teletan_bench teletan_e2e teletan_deploy; do
  if [[ -z $(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$db'") ]]; then
    # UTF-8 whatever locale the cluster was created under (both servers refuse anything else).
    psql_admin -c "CREATE DATABASE $db OWNER teletan ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' TEMPLATE template0"
  fi
  psql_admin -c "ALTER DATABASE $db OWNER TO teletan"
done
psql_admin -d teletan_bench -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"

echo "postgres://teletan:teletan@127.0.0.1:$port/teletan_test"
