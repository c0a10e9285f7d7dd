"""Key rotation with the real `portal` binary (issue 21, item 7; docs/deployment.md section 12a),
the steps of the runbook in order: `portal secret init`, a checkpoint, `portal secret rotate`,
`portal audit rotate-key`, a checkpoint under the new key, `portal audit verify` with both keys,
`portal secret retire` refused within retention and forced. The running portal's side (sessions,
waiting teleTANs, lookups across a rotation) is covered by Tests/PortalTests/KeyRotationTests.swift.
No server is started: a few seconds."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from e2e_support import PORTAL_BIN


def portal(workdir: Path, *args: str, expect: int = 0) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PORTAL_DATABASE": f"sqlite:{workdir / 'portal.sqlite'}",
           "PORTAL_SECRET_FILE": str(workdir / "portal.secret"),
           "PORTAL_AUDIT_CHECKPOINT_KEY": str(workdir / "audit-checkpoint-key.pem")}
    done = subprocess.run([PORTAL_BIN, *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == expect, f"portal {' '.join(args)}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_rotating_the_server_secret_and_the_checkpoint_key_as_documented(tmp_path: Path):
    secret, key = tmp_path / "portal.secret", tmp_path / "audit-checkpoint-key.pem"
    out = portal(tmp_path, "secret", "init")
    assert "created" in out and mode(secret) == 0o600 and mode(key) == 0o600
    original = secret.read_text()
    assert original.strip() not in out, "never prints a secret"
    assert "existed, left as it is" in portal(tmp_path, "secret", "init") and secret.read_text() == original

    portal(tmp_path, "migrate")
    first = portal(tmp_path, "audit", "checkpoint", "--sign")
    old_key_id = first.split("key ")[1].split()[0]

    out = portal(tmp_path, "secret", "rotate", "--take-over-after", "0s")
    assert "added key 2" in out, out
    assert mode(secret) == 0o600
    listed = portal(tmp_path, "secret", "list")
    assert "key 1:" in listed and "key 2:" in listed and "(current)" in listed.split("key 2:")[1], listed
    assert original.strip() in secret.read_text(), "key 1 is kept"
    for line in secret.read_text().splitlines():
        if not line.startswith("#") and line.strip():
            assert line.split()[1] not in listed + out

    out = portal(tmp_path, "audit", "rotate-key")
    kept = tmp_path / f"audit-checkpoint-key.{old_key_id}.pub.pem"
    assert kept.exists(), out
    assert mode(key) == 0o600
    second = portal(tmp_path, "audit", "checkpoint", "--sign")
    new_key_id = second.split("key ")[1].split()[0]
    assert new_key_id != old_key_id

    # Both keys' checkpoints verify; without the kept public key the old one vouches for nothing.
    assert "intact" in portal(tmp_path, "audit", "verify", "--full")
    assert "intact" in portal(tmp_path, "audit", "verify")
    (tmp_path / "first.checkpoint").write_text(first)
    assert "checkpoint signature good" not in portal(
        tmp_path, "audit", "verify", "--export", "/dev/null", "--checkpoint", str(tmp_path / "first.checkpoint"),
        "--public-key", str(tmp_path / "audit-checkpoint-key.pub.pem"), expect=1)

    refused = portal(tmp_path, "secret", "retire", "1", expect=1)
    assert "may still be needed until" in refused and "audit retention" in refused, refused
    assert "current key" in portal(tmp_path, "secret", "retire", "2", expect=1)
    assert "retired key 1" in portal(tmp_path, "secret", "retire", "1", "--force")
    assert original.strip() not in secret.read_text()
    assert "key 1:" not in portal(tmp_path, "secret", "list")
    # The audit trail is not keyed by the server secret: it still verifies.
    assert "intact" in portal(tmp_path, "audit", "verify", "--full")
