#!/usr/bin/env bash
# Installs the system packages and Python test tools the portal needs for
# building, testing, the browser tests and the benchmarks.
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
  libreoffice-calc-nogui  # Tests/security opens the CSV export in Calc, headless (~60 packages, ~300 MB)
  patroni etcd-server etcd-client iptables  # the PostgreSQL cluster of deployment.md section 16 (Tests/cluster)
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

# The German locale Tests/security opens the CSV export in (LibreOffice Calc as a German user
# has it: `;` between cells). localedef writes it into the locale archive once.
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  echo "Generating the locale de_DE.UTF-8"
  localedef -i de_DE -f UTF-8 de_DE.UTF-8
fi

# Python test tools (python3 comes from pyenv on the project machines), pinned in
# Tests/requirements.txt: the browser, end-to-end, fuzz, fault, backup, deployment and directory
# suites and the tools under scripts/ import them (the file says why some pins matter).
# scripts/schemathesis.sh installs its own pinned schemathesis. pip is only run when an installed
# version differs from its pin, so a machine that has them all needs no network.
requirements="$(dirname "$0")/../Tests/requirements.txt"
if python3 - "$requirements" <<'PYTHON'
import importlib.metadata, sys
for line in open(sys.argv[1]):
    requirement = line.split("#")[0].strip()
    if requirement:
        name, version = requirement.split("==")
        try:
            if importlib.metadata.version(name) != version:
                sys.exit(1)
        except importlib.metadata.PackageNotFoundError:
            sys.exit(1)
PYTHON
then
  echo "Python modules of Tests/requirements.txt already present at their pinned versions."
else
  # Debian's own python3 refuses pip outside a virtual environment (PEP 668, "externally
  # managed"); these are test tools for this machine only, so install them beside the system's.
  pip_flags=()
  if [[ -n $(python3 -c 'import sys, sysconfig, os; print(sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) or "")') ]]; then
    pip_flags+=(--break-system-packages)
  fi
  python3 -m pip install --quiet --root-user-action=ignore "${pip_flags[@]}" -r "$requirements"
fi

# Swift is a prerequisite, not installed here (it lives in /opt/swift).
if command -v swift >/dev/null 2>&1; then
  swift --version 2>&1 | head -n 1
else
  echo "ERROR: 'swift' not found on PATH. Swift 6 is a prerequisite: install the" >&2
  echo "toolchain (expected at /opt/swift) and add /opt/swift/usr/bin to PATH." >&2
  exit 1
fi
