#!/usr/bin/env python3
"""A stand-in for systemctl in the upgrade test's sandbox (Tests/package/test_upgrade.py), where no
systemd runs: it keeps which units are enabled and active in files under STATE and logs every
start, stop, restart and daemon-reload as a line "ACTION UNIT", so the test can see what the
maintainer scripts (directly or through deb-systemd-invoke) did to the units.

Answers what deb-systemd-invoke asks: `is-enabled UNIT`, `is-active UNIT`, `--version`."""

import fnmatch
import sys
from pathlib import Path

STATE = Path("/run/systemd/fake")


def units(name: str) -> list[str]:
    path = STATE / name
    return path.read_text().split() if path.exists() else []


def save(name: str, values: list[str]) -> None:
    (STATE / name).write_text("".join(f"{value}\n" for value in values))


def log(line: str) -> None:
    with (STATE / "log").open("a") as output:
        output.write(line + "\n")


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("systemd 252 (252.0)")
        return 0
    words = [word for word in argv if not word.startswith("-")]
    if not words:
        return 0
    action, names = words[0], words[1:]
    active = units("active")
    if action == "is-enabled":
        enabled = all(name in units("enabled") for name in names)
        print("enabled" if enabled else "disabled")
        return 0 if enabled else 1
    if action == "is-active":
        return 0 if all(name in active for name in names) else 3
    if action == "daemon-reload":
        log("daemon-reload")
        return 0
    # A pattern matches the loaded units, as systemctl's does (here: the active ones).
    matched = [unit for name in names for unit in (fnmatch.filter(active, name) if "*" in name else [name])]
    for unit in matched:
        if action == "try-restart" and unit not in active:
            continue
        log(f"{action} {unit}")
        if action in ("start", "restart", "try-restart") and unit not in active:
            active.append(unit)
        if action == "stop" and unit in active:
            active.remove(unit)
    save("active", active)
    return 0


sys.exit(main(sys.argv[1:]))
