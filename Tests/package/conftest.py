"""The Debian packages (scripts/package-deb.sh): built, checked with lintian, installed with dpkg on
this machine, the portal started as its systemd unit does, removed and purged; and upgraded to
a newer package and rolled back with the units running (test_upgrade.py).

Run from the repository root, as root (dpkg, the system users, the unit's sandbox):

    PACKAGE_BIN_DIR=.build/debug python3 -m pytest -q Tests/package

Environment:
    PACKAGE_BIN_DIR  a build with --static-swift-stdlib whose executables are packaged
                     (scripts/package-deb.sh BIN_DIR); without it the script makes its own
                     release build (slow)

Needs the PAM test stack (scripts/install-pam-stack.sh: tt-officer and the service file
/etc/pam.d/teletan-portal, which the package also ships and which is put back after the purge)
and lintian, bubblewrap, help2man, dpkg-dev (scripts/install-deps.sh). Uses ports 18100-18199.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("teletan-portal", "teletan-verification-server")


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the package tests run as root (dpkg, system users, the unit's sandbox)")


@pytest.fixture(scope="session")
def debs() -> list[Path]:
    """Both packages, built once by scripts/package-deb.sh (of PACKAGE_BIN_DIR if set)."""
    bin_dir = os.environ.get("PACKAGE_BIN_DIR")
    result = subprocess.run(["bash", "scripts/package-deb.sh", *([bin_dir] if bin_dir else [])],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    made = [REPO / line for line in result.stdout.split() if line.endswith(".deb")]
    assert [p.name.split("_")[0] for p in made] == list(PACKAGES), result.stdout
    return made
