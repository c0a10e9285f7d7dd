#!/usr/bin/env bash
# Installs the system packages and Python test tools the portal needs for
# building, testing, the browser tests and the benchmark.
# Idempotent: apt is only touched when a package is missing, because
# `apt-get update` alone takes a while. Run as root on Debian 12.
set -euo pipefail

packages=(
  libpam0g-dev            # PAM headers for the CPAM module
  libpam-oath oathtool    # one-time passwords (pam_oath.so) and a code generator
  pamtester               # exercise a PAM service by hand when debugging
  libsqlite3-dev sqlite3  # SQLite storage backend
  postgresql postgresql-contrib  # PostgreSQL storage backend (tests)
  systemd                 # systemd-analyze verify of the checkpoint units (Tests/backup)
  chromium chromium-driver       # Selenium browser tests
  firefox-esr             # the browser many authorities standardise on (driven over WebDriver BiDi)
  wrk                     # HTTP benchmark
  passwd procps curl      # useradd/chpasswd/chage, pgrep/ps, HTTP checks
  openssl                 # test certificates for TLS and mutual TLS
  python3-pip
  # Debian packages of the portal (scripts/package-deb.sh, Tests/package): dpkg-shlibdeps for
  # Depends, help2man for the manual pages, lintian to check them, bubblewrap for the unit's
  # sandbox in the package test.
  dpkg-dev help2man lintian bubblewrap
)
# Installed without recommends (they are not needed and would pull in far more):
no_recommends=(
  nginx                   # the reverse proxy of docs/deploy/nginx (Tests/deploy)
  prometheus              # promtool: checks and unit-tests docs/deploy/alerts.yml (~12 s to install)
)

if [[ $EUID -ne 0 ]]; then
  echo "install-deps.sh: run as root (it installs packages)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  # `dpkg -s` also succeeds for removed-but-configured packages; check the status.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may still hold the dpkg lock (boot-time updates), and a mirror may hiccup:
  # wait for the lock and retry downloads rather than fail the run.
  apt_options=(-o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)
  apt-get "${apt_options[@]}" update -q
  # Recommends are kept: chromium needs them for fonts in headless mode.
  apt-get "${apt_options[@]}" install -y -q "${missing[@]}"
else
  echo "All Debian packages already installed."
fi
missing=()
for p in "${no_recommends[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "Installing (without recommends): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3 update -q
  apt-get -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3 install -y -q --no-install-recommends "${missing[@]}"
fi

# Python test tools (python3 comes from pyenv on the project machines): the browser tests, and
# the end-to-end tests (JWT signing, PyJWT for the Keycloak-like realm stub, the OpenAPI document
# and response schemas), and axe-core for
# the accessibility test (axe-selenium-python ships axe.min.js).
# scripts/schemathesis.sh installs its own pinned schemathesis. hypothesis (pinned: the form fuzz,
# Tests/fuzz, generates the same inputs every run only with the same version) is the one
# schemathesis 4.32.5 runs on too. phonenumbers (pinned: Google's libphonenumber metadata) is the
# oracle for the callback-number tests and the source of Sources/Hotline's number plan. PyJWT
# (pinned) is what the CWA-like verification stub of the end-to-end tests validates tokens with.
if python3 -c 'import selenium, pytest, requests, cryptography, yaml, jsonschema, openapi_spec_validator, axe_selenium_python' 2>/dev/null \
   && [[ $(python3 -c 'import jwt; print(jwt.__version__)' 2>/dev/null) == 2.15.1 ]] \
   && [[ $(python3 -c 'import hypothesis; print(hypothesis.__version__)' 2>/dev/null) == 6.155.2 ]] \
   && [[ $(python3 -c 'import phonenumbers; print(phonenumbers.__version__)' 2>/dev/null) == 9.0.43 ]] \
   && [[ $(python3 -c 'import jwt; print(jwt.__version__)' 2>/dev/null) == 2.15.1 ]]; then
  echo "Python modules selenium, pytest, requests, cryptography, PyYAML, jsonschema, openapi-spec-validator, axe-selenium-python, hypothesis, phonenumbers, PyJWT already present."
else
  python3 -m pip install --quiet --root-user-action=ignore \
    selenium pytest requests cryptography PyYAML jsonschema openapi-spec-validator axe-selenium-python==2.1.6 hypothesis==6.155.2 phonenumbers==9.0.43 PyJWT==2.15.1
fi

# Swift is a prerequisite, not installed here (it lives in /opt/swift).
if command -v swift >/dev/null 2>&1; then
  swift --version 2>&1 | head -n 1
else
  echo "ERROR: 'swift' not found on PATH. Swift 6 is a prerequisite: install the" >&2
  echo "toolchain (expected at /opt/swift) and add /opt/swift/usr/bin to PATH." >&2
  exit 1
fi
