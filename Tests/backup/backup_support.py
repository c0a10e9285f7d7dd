"""Helpers of the backup tests (Tests/backup): the portal and officer client every suite shares,
the `portal` commands beside serve, and the runbook's scripts (docs/deploy/)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "docs" / "deploy"

from support import portal_client
from support.portal_client import OFFICER, PORTAL_BIN, Client  # noqa: F401
from support.processes_and_browsers import retry_text_file_busy


class Portal(portal_client.Portal):
    """The shared limits-off portal (support.portal_client) on fixed ports of this suite's range (18400-18499)."""

    def __init__(self, workdir: Path, port: int, **options):
        super().__init__(workdir, **options)
        self.port, self.metrics_port = port, port + 1
        self.base_url = f"http://127.0.0.1:{port}"

    def run(self, *arguments: str, database: bool = True, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`portal ARGUMENTS` with this portal's key (audit commands) and database (, unless `database` is False),
        in an environment without PORTAL_* variables."""
        command = [PORTAL_BIN, *arguments]
        if arguments[0] == "audit":
            command += ["--audit-checkpoint-key", str(self.checkpoint_key)]
        if database:
            command += ["--database", self.database]
        return run_portal(command, env=env, cwd=cwd or self.workdir)

    def issue(self, client: Client, count: int) -> list[str]:
        teletans = []
        for _ in range(count):
            issuance = client.issue()
            assert issuance.teletan, issuance.last.describe()
            teletans.append(issuance.teletan)
        return teletans


def run_portal(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    return retry_text_file_busy(lambda: subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=cwd, env={**clean, **(env or {})}))


def script(name: str, *arguments: str, user: str | None = None) -> subprocess.CompletedProcess:
    """Runs docs/deploy/NAME as written (as `user` through runuser, like the runbook)."""
    command = [str(DEPLOY / name), *arguments]
    if user:
        command = ["runuser", "-u", user, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd="/")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def checkpoint_seq(path: Path) -> int:
    """The seq a checkpoint file signed (its second line, "seq N")."""
    lines = path.read_text().splitlines()
    assert lines[0] == "teletan-portal audit checkpoint" and lines[1].startswith("seq "), lines
    return int(lines[1].removeprefix("seq "))


def missing_report(checkpoint: int, first_missing: int) -> str:
    """What `portal audit verify --checkpoint` says after a restore from an older backup."""
    count = checkpoint - first_missing + 1
    return (f"restored from a backup older than checkpoint {checkpoint}: "
            f"entries {first_missing}..{checkpoint} ({count} entries) are missing")
