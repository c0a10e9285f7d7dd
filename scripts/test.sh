#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root):
#   installs what is missing, installs the PAM test stack, starts PostgreSQL, builds, runs the
#   Swift tests against SQLite and PostgreSQL (while a static build of the executables runs), builds,
#   checks and installs the Debian packages (Tests/package), then the browser tests in headless
#   Chromium and Firefox ESR, the end-to-end tests (portal + verification server + app-like client)
#   against SQLite and PostgreSQL, the security tests (sign-in timing, CSV in LibreOffice Calc, HTTP),
#   the fault, backup and deployment tests (nginx, two instances),
#   the alert rules (promtool), the directory tests (slapd through nslcd and SSSD), and
#   schemathesis against docs/verification-api.yaml.
# Usage: scripts/test.sh            (CI runs exactly this through .ci/run)
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
  for i in "${!step_names[@]}"; do printf '%6d  %s\n' "${step_seconds[$i]}" "${step_names[$i]%% (*}"; done
  printf '%6d  in all\n' "$SECONDS"
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

step "building"
swift build --build-tests

step "static build of the executables for the Debian packages (in the background during the Swift tests)"
# The test build above cannot take --static-swift-stdlib (the static runtime has no XCTest), so
# the packaged executables get a build of their own (docs/deployment.md section 1). It overlaps
# the Swift tests, which mostly wait on PAM and the databases.
mkdir -p .build-static
swift build --static-swift-stdlib --scratch-path .build-static >.build-static/build.log 2>&1 &
static_build=$!

step "Swift tests (SQLite and PostgreSQL, real PAM)"
# Required flags turn "not installed" into failures instead of skips.
PORTAL_PAM_TESTS=1 \
PORTAL_TEST_POSTGRES_URL="$postgres_url" \
PORTAL_TEST_REQUIRE_POSTGRES=1 \
  swift test --disable-swift-testing 2>&1 | tee .build/swift-test.log
echo "slowest Swift tests (seconds):"
sed -nE "s/^Test Case '([^']+)' passed \(([0-9.]+) seconds\).*/\2 \1/p" .build/swift-test.log | sort -rn | head -n 10

step "Debian packages (scripts/package-deb.sh of the static build, lintian, dpkg install, the portal run as its unit runs it, purge; Tests/package)"
if ! wait "$static_build"; then
  tail -n 60 .build-static/build.log
  echo "the static build failed" >&2
  exit 1
fi
PACKAGE_BIN_DIR=.build-static/debug python3 -m pytest -q Tests/package

step "Python support tests (the independent audit-chain checker, no portal needed)"
python3 -m pytest -q Tests/support/test_audit_chain.py
step "phone-number data and fixture (regenerated from the pinned phonenumbers, compared with the committed ones)"
python3 -m pytest -q Tests/support/test_phone_numbers.py
step "form fuzz (hypothesis, every portal form and query string)"
python3 -m pytest -q Tests/fuzz

step "browser tests (headless Chromium and Firefox ESR, real PAM, SQLite and PostgreSQL)"
export SE_AVOID_STATS=true
# A missing firefox-esr fails the Firefox tests instead of skipping them.
export PORTAL_REQUIRE_FIREFOX=1
export PORTAL_BIN="$PWD/.build/debug/portal"
python3 -m pytest -q Tests/browser
# A clean schema: the Swift tests leave whatever their last test wrote (tampered audit rows included).
psql -q "$postgres_url" -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public'
BROWSER_TEST_DATABASE="$postgres_url" python3 -m pytest -q Tests/browser

step "end-to-end tests (portal -> verification server -> app client; SQLite, then PostgreSQL with mutual TLS)"
export VERIFICATION_BIN="$PWD/.build/debug/verification-server"
python3 -m pytest -q Tests/e2e
# Its own database (created by start-test-postgres.sh), reset: the suite expects an empty one.
e2e_url="${postgres_url%/*}/teletan_e2e"
psql -q "$e2e_url" -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public'
# This run also puts the internal listener behind mutual TLS (client-certificate allow-list);
# every test applies to it, so none may be skipped.
E2E_DATABASE="$e2e_url" E2E_INTERNAL_TLS=1 E2E_NO_SKIPS=1 python3 -m pytest -q Tests/e2e

step "security tests (failed sign-in timing on the nodelay PAM stack, the CSV export in German LibreOffice Calc, HTTP details; ~2 min)"
python3 -m pytest -q Tests/security

step "fault tests (database restart and read-only, disk full, hanging PAM, SIGTERM under load)"
python3 -m pytest -q Tests/faults
step "backup tests (checkpoint file, SQLite online backup, PostgreSQL point-in-time recovery on its own cluster 15/teletan_pitr, restore detection)"
python3 -m pytest -q Tests/backup
step "deployment test (docs/deploy: nginx with TLS, two instances on PostgreSQL, SIGKILL, rolling restart; ~1 min)"
# Its own database (created by start-test-postgres.sh); the test drops and remakes its schema.
DEPLOY_DATABASE="${postgres_url%/*}/teletan_deploy" python3 -m pytest -q Tests/deploy
step "alert rules (promtool: syntax, and when each alert fires)"
promtool check rules docs/deploy/alerts.yml
promtool test rules docs/deploy/alerts.test.yml
step "directory tests (sign-in through slapd by nslcd and by SSSD, SQLite)"
python3 -m pytest -q Tests/directory
step "schemathesis (property-based tests of both listeners against the OpenAPI document)"
bash scripts/schemathesis.sh
echo "all test suites passed (Swift on SQLite and PostgreSQL, browser x2, end to end x2, security, faults, backup, deployment, alert rules, directory, schemathesis)"
