#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root):
#   installs what is missing, installs the PAM test stack, starts PostgreSQL, builds once (debug,
#   with the tests), then
#   - the Swift tests against SQLite and PostgreSQL in two workers, while the executables the
#     Debian packages ship are built with the static Swift runtime in .build-static;
#   - in three lanes side by side: the browser tests in headless Chromium and Firefox ESR on
#     SQLite, and again on PostgreSQL; the end-to-end tests (portal + verification server +
#     app-like client) on SQLite and PostgreSQL; the form fuzz; the fault, backup and deployment
#     tests (nginx, two instances); the alert rules (promtool); the directory tests (slapd through
#     nslcd and SSSD); the PostgreSQL cluster's failover (Patroni); schemathesis against
#     docs/verification-api.yaml; the Debian packages (Tests/package);
#   - last and alone, the security tests (sign-in timing, CSV in LibreOffice Calc, HTTP): their
#     timing comparison wants a quiet machine.
# Usage: scripts/test.sh            (CI runs exactly this through .ci/run)
# A lane's output is printed when all lanes of its group have ended; .build/lanes/ keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."

# How long each step took, printed at the end (also when a step fails), so that the next
# regression of the suite's time is visible; pytest adds its ten slowest tests of each run.
step_names=() step_seconds=() step_name="" step_start=0
step() { # step "what": ends the step under way and starts this one
  end_step
  step_name=$1 step_start=$SECONDS
  echo "== $1"
}
end_step() {
  [[ -n $step_name ]] || return 0
  step_names+=("$step_name") step_seconds+=($((SECONDS - step_start)))
  step_name=""
}
print_step_times() {
  end_step
  echo "== seconds per step"
  for i in "${!step_names[@]}"; do
    printf '%6d  %s\n' "${step_seconds[$i]}" "${step_names[$i]%% (*}"
    # The parts of the lanes that ran in this step, each with its own seconds.
    for times in "${step_lane_times[@]}"; do
      [[ ${times%%:*} == "$i" && -f ${times#*:} ]] && sed 's/^/        /' "${times#*:}"
    done
  done
  printf '%6d  in all\n' "$SECONDS"
}

# Lanes: suites that run side by side with the step under way. `start_lane NAME FUNCTION` runs
# FUNCTION in the background with its output in .build/lanes/NAME.log; inside it, `part "what"
# COMMAND...` runs one suite and notes its seconds. `finish_lanes` waits for every lane started,
# prints their output and fails if one failed. A lane goes on after a failed part, so that one
# run shows every failure.
lanes_dir=.build/lanes
lane_pids=() lane_names=() step_lane_times=()
start_lane() {
  local name=$1
  mkdir -p "$lanes_dir"
  rm -f "$lanes_dir/$name.log" "$lanes_dir/$name.times"
  (set +e; lane_name=$name lane_failed=0; "$2"; exit $lane_failed) >"$lanes_dir/$name.log" 2>&1 &
  lane_pids+=($!) lane_names+=("$name")
  step_lane_times+=("${#step_names[@]}:$lanes_dir/$name.times")
}
part() {
  local what=$1 start=$SECONDS status=0
  shift
  echo "== $what"
  "$@" || status=$?
  local note=""
  ((status == 0)) || note=" (FAILED)" lane_failed=1
  printf '%6d  %s%s\n' $((SECONDS - start)) "${what%% (*}" "$note" >>"$lanes_dir/$lane_name.times"
  return $status
}
finish_lanes() {
  local failed=() i
  for i in "${!lane_pids[@]}"; do
    wait "${lane_pids[$i]}" || failed+=("${lane_names[$i]}")
  done
  for i in "${!lane_names[@]}"; do
    echo "== output of lane ${lane_names[$i]}"
    cat "$lanes_dir/${lane_names[$i]}.log"
  done
  lane_pids=() lane_names=()
  if ((${#failed[@]})); then
    echo "FAILED lanes: ${failed[*]} (their parts above, marked FAILED in the seconds below)" >&2
    return 1
  fi
}
trap print_step_times EXIT
export PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-} --durations=10 --durations-min=2"

step "installing dependencies"
bash scripts/install-deps.sh
step "installing the PAM test stack (accounts, /etc/pam.d services, OATH token)"
bash scripts/install-pam-stack.sh
step "installing the directory test stack (slapd, nslcd, SSSD; scripts/install-directory-stack.sh)"
bash scripts/install-directory-stack.sh
step "starting PostgreSQL"
postgres_url=$(bash scripts/start-test-postgres.sh | tail -n 1)
base_url=${postgres_url%/*}

step "building (debug, with the tests)"
swift build --build-tests

export SE_AVOID_STATS=true
# A missing firefox-esr fails the Firefox tests instead of skipping them.
export PORTAL_REQUIRE_FIREFOX=1
export PORTAL_BIN="$PWD/.build/debug/portal"
export VERIFICATION_BIN="$PWD/.build/debug/verification-server"

# The executables the packages ship carry the Swift runtime (--static-swift-stdlib), which the
# test build cannot (the static runtime has no XCTest), so they get a build of their own, in the
# background from here on (docs/deployment.md section 1). A static link in the test build's own
# directory is not enough: the objects must be compiled against the static Foundation modules,
# or the link misses CoreFoundation and ICU (docs/benchmarks.md, "The suite's time"). The
# package tests in the third lane wait for it.
mkdir -p .build-static
rm -f .build-static/exit-status
(status=0; swift build --static-swift-stdlib --scratch-path .build-static >.build-static/build.log 2>&1 || status=$?
 echo "$status" >.build-static/exit-status) &
static_build=$!
wait_for_static_build() { # prints the build's log tail and fails if it failed
  while [[ ! -s .build-static/exit-status ]]; do sleep 5; done
  [[ $(cat .build-static/exit-status) == 0 ]] || { tail -n 60 .build-static/build.log; echo "the static build failed" >&2; return 1; }
}

step "Swift tests in two workers (SQLite and PostgreSQL, real PAM), beside them the static build of the packaged executables"
# Required flags turn "not installed" into failures instead of skips. Each worker gets its own
# database (teletan_test_w1, _w2: scripts/swift-test-parallel.py).
swift_status=0
PORTAL_PAM_TESTS=1 \
PORTAL_TEST_POSTGRES_URL="$postgres_url" \
PORTAL_TEST_REQUIRE_POSTGRES=1 \
  python3 scripts/swift-test-parallel.py --workers 2 --log .build/swift-test.log || swift_status=$?
echo "slowest Swift tests (seconds):"
{ sed -nE "s/^Test Case '([^']+)' passed \(([0-9.]+) seconds\).*/\2 \1/p" .build/swift-test.log | sort -rn | head -n 10; } || true
((swift_status == 0)) || { echo "Swift tests failed" >&2; exit 1; }

# Three lanes, balanced by their seconds (docs/benchmarks.md). Each suite has its own database
# and port range; the suites that sign in with tt-otp's one-time codes take them one at a time
# (Tests/support/oath.py).
browser_on_sqlite_and_more() {
  part "browser tests on SQLite (headless Chromium and Firefox ESR, real PAM)" python3 -m pytest -q Tests/browser
  part "backup tests (checkpoint file, SQLite online backup, PostgreSQL point-in-time recovery on its own cluster 15/teletan_pitr, restore detection)" \
    python3 -m pytest -q Tests/backup
  # Its own database (created by start-test-postgres.sh); the test drops and remakes its schema.
  part "deployment test (docs/deploy: nginx with TLS, two instances on PostgreSQL, SIGKILL, rolling restart)" \
    env DEPLOY_DATABASE="$base_url/teletan_deploy" python3 -m pytest -q Tests/deploy
  part "alert rules (promtool: syntax, and when each alert fires)" \
    bash -c 'promtool check rules docs/deploy/alerts.yml && promtool test rules docs/deploy/alerts.test.yml'
  part "schemathesis (property-based tests of both listeners against the OpenAPI document)" bash scripts/schemathesis.sh
}
browser_on_postgres_and_e2e() {
  # Each from a clean schema: the suites expect an empty database.
  part "browser tests on PostgreSQL" bash -c "psql -q '$postgres_url' -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public' &&
    BROWSER_TEST_DATABASE='$postgres_url' python3 -m pytest -q Tests/browser"
  # The e2e suite's own database (created by start-test-postgres.sh). This run also puts the
  # internal listener behind mutual TLS (client-certificate allow-list); every test applies to
  # it, so none may be skipped.
  part "end-to-end tests on PostgreSQL with mutual TLS (portal -> verification server -> app client)" \
    bash -c "psql -q '$base_url/teletan_e2e' -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public' &&
      E2E_DATABASE='$base_url/teletan_e2e' E2E_INTERNAL_TLS=1 E2E_NO_SKIPS=1 python3 -m pytest -q Tests/e2e"
}
fuzz_e2e_faults_packages() {
  part "form fuzz (hypothesis, every portal form and query string)" python3 -m pytest -q Tests/fuzz
  part "end-to-end tests on SQLite" python3 -m pytest -q Tests/e2e
  part "fault tests (database restart and read-only, disk full, hanging PAM, SIGTERM under load)" python3 -m pytest -q Tests/faults
  part "directory tests (sign-in through slapd by nslcd and by SSSD, SQLite)" python3 -m pytest -q Tests/directory
  part "PostgreSQL cluster (Patroni + etcd, two portals behind nginx: SIGKILL of the primary, rejoin, switchover; deployment.md section 16)" \
    python3 -m pytest -q Tests/cluster
  part "waiting for the static build of the packaged executables (begun after the test build)" wait_for_static_build
  part "Debian packages (scripts/package-deb.sh of the static build, lintian, dpkg install, the portal run as its unit runs it, upgrade, purge; Tests/package)" \
    env PACKAGE_BIN_DIR=.build-static/debug python3 -m pytest -q Tests/package
  part "Python support tests (the independent audit-chain checker)" python3 -m pytest -q Tests/support/test_audit_chain.py
  part "phone-number data and fixture (regenerated from the pinned phonenumbers, compared with the committed ones)" \
    python3 -m pytest -q Tests/support/test_phone_numbers.py
}

step "browser, end-to-end, fuzz, fault, backup, deployment, directory, cluster, package and API tests in three lanes"
start_lane browser-sqlite browser_on_sqlite_and_more
start_lane browser-postgres browser_on_postgres_and_e2e
start_lane fuzz-e2e-faults-packages fuzz_e2e_faults_packages
finish_lanes
wait "$static_build" || true

step "security tests, alone (failed sign-in timing on the nodelay PAM stack, the CSV export in German LibreOffice Calc, HTTP details; ~2 min)"
python3 -m pytest -q Tests/security
echo "all test suites passed (Swift on SQLite and PostgreSQL, packages, browser x2, end to end x2, fuzz, faults, backup, deployment, alert rules, directory, cluster, schemathesis, security)"
