#!/usr/bin/env bash
# One command for a demo on a fresh Debian 12 machine (as root): installs what is missing,
# builds the portal, creates demo accounts for every role in a real PAM stack (local Unix
# accounts checked by pam_unix through the `teletan-portal` PAM service), and starts the portal
# on its embedded defaults (SQLite file portal.sqlite and secret portal.secret in this folder).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/install-pam-stack.sh >/dev/null
swift build --product portal

port="${PORTAL_PORT:-8080}"
cat <<TXT

  teleTAN portal demo: http://127.0.0.1:${port}/

  Demo accounts (password for all: Demo-Pass-2026)
    demo-officer   officer: issues TEST teleTANs
    demo-hotline   hotline agent: guided calls, callback queue, TEST teleTANs
    demo-event     officer and event role: TEST and EVENT teleTANs
    demo-event2    event role: approves demo-event's EVENT teleTANs under
                   PORTAL_EVENT_APPROVAL=two-person
    demo-admin     administrator: audit trail (search, teleTAN lookup, export, charts,
                   tamper evidence), sessions, lockouts, hotline overview
    demo-norole    signed in, but no role

  Stop with Ctrl-C. The accounts are real local accounts on this machine: demo only.

TXT
exec .build/debug/portal serve --port "$port" --pam-service teletan-portal \
  --health-authorities docs/health-authorities.example.csv
