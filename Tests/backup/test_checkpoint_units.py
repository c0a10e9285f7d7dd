"""docs/deploy/teletan-portal-checkpoint.{service,timer}: systemd accepts them
(`systemd-analyze verify`, nothing to complain about), the service runs the command
test_checkpoint_file.py tests, as the main service's user with its environment file, and the
timer starts it hourly."""

from __future__ import annotations

import shutil
import subprocess

from backup_support import DEPLOY, PORTAL_BIN

SERVICE = DEPLOY / "teletan-portal-checkpoint.service"
TIMER = DEPLOY / "teletan-portal-checkpoint.timer"


def settings(path) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith(("#", "[")):
            name, value = line.split("=", 1)
            values.setdefault(name.strip(), []).append(value.strip())
    return values


def test_systemd_accepts_the_units(tmp_path):
    # The binary where the package puts it is not installed here: this build's stands in.
    (tmp_path / SERVICE.name).write_text(SERVICE.read_text().replace("/usr/bin/portal", PORTAL_BIN))
    shutil.copy(TIMER, tmp_path / TIMER.name)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", TIMER.name, SERVICE.name],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "" and result.stdout == "", result


def test_the_service_runs_the_tested_command_as_the_portal():
    service = settings(SERVICE)
    assert service["Type"] == ["oneshot"]
    assert service["ExecStart"] == ["/usr/bin/portal audit checkpoint --sign --out /var/lib/teletan-portal/checkpoint.txt"]
    assert service["User"] == ["teletan-portal"]
    assert service["EnvironmentFile"] == ["/etc/teletan-portal/portal.env"]
    main = DEPLOY / "teletan-portal.service"
    if main.exists():  # written by the package's work (docs/deploy/teletan-portal.service)
        assert settings(main)["User"] == service["User"]
        assert settings(main)["EnvironmentFile"] == service["EnvironmentFile"]
    timer = settings(TIMER)
    assert timer["OnCalendar"] == ["hourly"] and timer["Persistent"] == ["yes"]
