"""Fixtures of the security tests (issue 28's third look): a portal of the test's own on a SQLite
file, reached over plain HTTP on 127.0.0.1, signing in through the PAM test stack.

Run from the repository root, as root (pam_unix reads /etc/shadow):

    python3 -m pytest -q Tests/security

Environment:
    PORTAL_BIN  portal binary (default: .build/debug/portal of this repository)

Needs the PAM test stack (scripts/install-pam-stack.sh: tt-officer, tt-admin and the service
teletan-portal-test, whose pam_unix has `nodelay`), LibreOffice Calc and the de_DE.UTF-8 locale
(scripts/install-deps.sh).
"""

from __future__ import annotations

import pytest

from support.portal_client import Portal


@pytest.fixture
def portals(tmp_path):
    """Starts portals: `portals(extra_arguments=[...])`, each in a directory of its own under the
    test's tmp_path; each is stopped at the end of the test."""
    started: list[Portal] = []

    def start(**options) -> Portal:
        workdir = tmp_path / f"portal-{len(started) + 1}"
        workdir.mkdir()
        portal = Portal(workdir, **options)
        started.append(portal)
        portal.start()
        return portal

    yield start
    for portal in started:
        portal.kill()
