"""Upgrade and rollback with the units running (docs/deployment.md section 11): the packages of
this tree as 1.0.x and the same packages relabelled as the next patch release, installed with
dpkg while a systemd stand-in (fake_systemctl.py) says which units are enabled and running.

No systemd runs here, so dpkg runs in a bubblewrap sandbox where /run/systemd/system exists (the
maintainer scripts' test for systemd), systemctl is the stand-in, and policy-rc.d allows actions
(a container's says 101: never). deb-systemd-invoke is Debian's own.

What section 11 promises: an upgrade or rollback stops nothing (running instances keep serving
the old binary until the rolling restart), the checkpoint timer runs on, and `dpkg --remove`
stops every unit of the package, each `teletan-portal@*.service` instance too.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import PACKAGES, REPO

PAM_FILE = Path("/etc/pam.d/teletan-portal")
FAKE_SYSTEMCTL = Path(__file__).with_name("fake_systemctl.py")
PORTAL_UNITS = ["teletan-portal.service", "teletan-portal@a.service", "teletan-portal@b.service",
                "teletan-portal-checkpoint.timer"]
VERIFICATION_UNIT = "teletan-verification.service"


def run(*command: str, **options) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **options)
    if result.returncode != 0:
        pytest.fail(f"{shlex.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def relabelled(deb: Path, version: str, directory: Path) -> Path:
    """The same package with another version: built from the same tree, as the next release would be."""
    root = directory / deb.name.split("_")[0]
    directory.mkdir(exist_ok=True)
    run("dpkg-deb", "-R", str(deb), str(root))
    control = root / "DEBIAN/control"
    control.write_text("".join(f"Version: {version}\n" if line.startswith("Version: ") else line + "\n"
                               for line in control.read_text().splitlines()))
    out = directory / deb.name.replace(deb.name.split("_")[1], version)
    run("dpkg-deb", "--root-owner-group", "-Zxz", "-z1", "--build", str(root), str(out))
    return out


class Host:
    """dpkg with a systemd stand-in: STATE holds the enabled and active units and the log."""

    def __init__(self, state: Path, allow: Path):
        self.state, self.allow = state, allow

    def dpkg(self, *arguments: str) -> str:
        sandbox = ["bwrap", "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
                   "--tmpfs", "/run/systemd", "--dir", "/run/systemd/system", "--bind", str(self.state), "/run/systemd/fake",
                   "--ro-bind", str(FAKE_SYSTEMCTL), "/usr/bin/systemctl", "--ro-bind", str(self.allow), "/usr/sbin/policy-rc.d"]
        command = sandbox + ["--", "dpkg", "--force-confdef", "--force-confold", *arguments]
        run(*command, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdin=subprocess.DEVNULL)
        return self.take_log()

    def take_log(self) -> list[str]:
        path = self.state / "log"
        lines = path.read_text().splitlines() if path.exists() else []
        path.unlink(missing_ok=True)
        return lines

    def enable_and_start(self, units: list[str]) -> None:
        (self.state / "enabled").write_text("".join(f"{unit}\n" for unit in units))
        (self.state / "active").write_text("".join(f"{unit}\n" for unit in units))

    def active(self) -> list[str]:
        return (self.state / "active").read_text().split()


@pytest.fixture
def host(tmp_path):
    pam_backup = PAM_FILE.read_bytes() if PAM_FILE.exists() else None
    subprocess.run(["dpkg", "--purge", *PACKAGES], capture_output=True)
    state = tmp_path / "systemd"
    state.mkdir()
    allow = tmp_path / "policy-rc.d"
    allow.write_text("#!/bin/sh\nexit 0\n")
    allow.chmod(0o755)
    try:
        yield Host(state, allow)
    finally:
        subprocess.run(["dpkg", "--purge", *PACKAGES], capture_output=True)
        if pam_backup is not None:
            PAM_FILE.write_bytes(pam_backup)
            os.chmod(PAM_FILE, 0o644)


def installed_version(package: str) -> str:
    return run("dpkg-query", "--showformat=${Version}", "--show", package).stdout


def test_upgrade_and_rollback_stop_nothing_and_remove_stops_every_unit(debs, host, tmp_path):
    older = [str(deb) for deb in debs]
    version = installed_version_of(debs[0])
    major, minor, patch = version.split(".")
    newer_version = f"{major}.{minor}.{int(patch) + 1}"
    newer = [str(relabelled(deb, newer_version, tmp_path / "newer")) for deb in debs]

    # A fresh install starts nothing: the portal needs its database and portal.env first.
    log = host.dpkg("--install", *older)
    assert [line for line in log if line != "daemon-reload"] == [], log

    # The operator's host: two instances (section 8), the single unit, the timer, the server.
    running = PORTAL_UNITS + [VERIFICATION_UNIT]
    host.enable_and_start(running)

    # Upgrade: nothing stopped, the instances not restarted (section 11 restarts them one after
    # the other after `migrate`), the timer on; the verification server restarted (one unit).
    log = host.dpkg("--install", *newer)
    assert installed_version("teletan-portal") == newer_version
    assert not [line for line in log if line.startswith("stop ")], log
    assert not [line for line in log if line.split()[-1] in PORTAL_UNITS[:3] and line != "daemon-reload"], log
    assert sorted(host.active()) == sorted(running), log
    assert "restart teletan-portal-checkpoint.timer" in log and f"restart {VERIFICATION_UNIT}" in log, log

    # Rollback (section 11): the same.
    log = host.dpkg("--install", *older)
    assert installed_version("teletan-portal") == version
    assert not [line for line in log if line.startswith("stop ")], log
    assert sorted(host.active()) == sorted(running), log

    # Remove: every unit of the packages stops, each instance too.
    log = host.dpkg("--remove", *PACKAGES)
    assert host.active() == [], log
    for unit in running:
        assert f"stop {unit}" in log, log


def installed_version_of(deb: Path) -> str:
    return run("dpkg-deb", "-f", str(deb), "Version").stdout.strip()
