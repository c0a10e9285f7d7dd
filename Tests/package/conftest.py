"""The Debian packages (scripts/package-deb.sh): built, checked with lintian, installed with dpkg on
this machine, the portal started as its systemd unit does, removed and purged.

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

import pytest


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the package tests run as root (dpkg, system users, the unit's sandbox)")
