#!/usr/bin/env bash
# Property-based API tests of the verification server against docs/verification-api.yaml.
# Starts a verification server (SQLite in a temp dir, one trusted portal key from `portal
# keygen`) on free ports, runs schemathesis against the app-facing listener and against the
# internal one (teleTAN creation, status and revocation with a valid bearer token, TAN
# verification), then stops the server with SIGTERM. Checks: no 5xx (not_a_server_error) and every response as documented
# (response_schema_conformance). Exits non-zero on any failure. Takes well under 3 minutes.
# Usage: scripts/schemathesis.sh
# Environment: PORTAL_BIN, VERIFICATION_BIN (default .build/debug/...), SCHEMATHESIS_MAX_EXAMPLES (50),
# SCHEMATHESIS_SEED (default 20261122: CI generates the same inputs every run, so a failure is a
# change in the server or the document, never the luck of the draw; set another to explore).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

schemathesis_version=4.32.5
portal_bin=${PORTAL_BIN:-$repo/.build/debug/portal}
verification_bin=${VERIFICATION_BIN:-$repo/.build/debug/verification-server}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-50}
seed=${SCHEMATHESIS_SEED:-20261122}

# The pinned version (its option and check names are the ones used below).
installed=$(python3 -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null || true)
if [[ $installed != "$schemathesis_version" ]]; then
  echo "Installing schemathesis $schemathesis_version (found: ${installed:-none})"
  python3 -m pip install --quiet --root-user-action=ignore "schemathesis==$schemathesis_version"
fi
# Next to this python3, whatever PATH says (pyenv shims may not know a fresh install yet).
schemathesis=$(python3 -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "schemathesis"))')

work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$portal_bin" keygen --out "$work/keys" >/dev/null
read -r port internal_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

"$verification_bin" serve --database "sqlite:$work/verification.sqlite" --secret-file "$work/verification.secret" \
  --trusted-portal-key "$work/keys/portal-key.pub.pem" --port "$port" --internal-port "$internal_port" \
  >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 150); do  # at most 30 s
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "verification server did not start" >&2; exit 1; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null || { cat "$work/server.log"; echo "verification server not ready" >&2; exit 1; }

run_schemathesis() {  # listener-url tag [extra options...]
  local url=$1 tag=$2
  shift 2
  # From the temp dir, so that nothing schemathesis writes lands in the repository.
  # At most 240 s: the internal run's token lives 300 s. (The app-facing run's invalid teleTANs
  # make the guessing protection delay it by some 20 s in all.)
  (cd "$work" && timeout 240 "$schemathesis" run "$repo/docs/verification-api.yaml" \
    --url "$url" --include-tag "$tag" --seed "$seed" \
    --checks not_a_server_error,response_schema_conformance \
    --max-examples "$max_examples" --generation-database none --request-timeout 10 --no-color "$@")
}

status=0
echo "== schemathesis: app-facing listener"
# No stateful phase here: the document's links (teleTAN creation -> status, revocation) are
# between internal operations, which schemathesis counts as an error when they are filtered out.
run_schemathesis "http://127.0.0.1:$port" app --phases examples,coverage,fuzzing || status=1
echo "== schemathesis: internal listener"
# A token of the trusted portal with both roles, made just before the internal run: valid for
# 300 s (the longest the server accepts), more than that run may take (240 s). Its stateful phase
# follows the document's links: a created teleTAN's reference into status and revocation.
token=$(PYTHONPATH=Tests/e2e:Tests python3 -c '
import sys
from pathlib import Path
from e2e_support import PortalKeyPair
print(PortalKeyPair(Path(sys.argv[1]), generate=False).token(["c19hotline", "c19hotline_event"], sub="schemathesis", lifetime=300))
' "$work/keys")
run_schemathesis "http://127.0.0.1:$internal_port" internal -H "Authorization: Bearer $token" || status=1
# Not vacuous: the token was accepted, so the handlers behind it ran.
created=$(curl -sf "http://127.0.0.1:$internal_port/metrics" | awk '/^verification_teletans_created_total/ { n += $2 } END { print n + 0 }')
echo "teleTANs created during the run: $created"
if ((created == 0)); then
  echo "no teleTAN was created: the bearer token was not accepted" >&2
  status=1
fi
# The same token reached the revocation endpoint (each attempt counts, found or not).
revocations=$(curl -sf "http://127.0.0.1:$internal_port/metrics" | awk '/^verification_teletan_revocations_total/ { n += $2 } END { print n + 0 }')
echo "revocation attempts during the run: $revocations"
if ((revocations == 0)); then
  echo "no revocation was attempted: the bearer token was not accepted by /tan/teletan/revoke" >&2
  status=1
fi

kill -TERM "$server_pid"
for _ in $(seq 1 100); do  # at most 10 s
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
  echo "verification server did not stop within 10 s of SIGTERM" >&2
  status=1
else
  server_status=0
  wait "$server_pid" || server_status=$?
  if ((server_status != 0)); then
    echo "verification server exited with $server_status after SIGTERM:" >&2
    tail -n 20 "$work/server.log" >&2
    status=1
  fi
fi
server_pid=
if grep -q ' error ' "$work/server.log"; then
  echo "the verification server logged errors:" >&2
  grep ' error ' "$work/server.log" >&2
  status=1
fi
exit "$status"
