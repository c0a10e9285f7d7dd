"""Backup, restore and checkpoint-file tests (docs/deployment.md section 9): the runbook's
scripts under docs/deploy/ run as written, against portals on SQLite files and on a PostgreSQL
cluster of their own (`pg_createcluster 15 teletan_pitr`, dropped at the end; never 15/main).

Run from the repository root, as root (the cluster and the backups as user postgres):

    python3 -m pytest -q Tests/backup

Environment:
    PORTAL_BIN  portal binary (default: .build/debug/portal of this repository)

Needs the PAM test stack (scripts/install-pam-stack.sh) and Debian's PostgreSQL 15 and sqlite3
(scripts/install-deps.sh). Servers listen on ports 18400-18499.
"""

from __future__ import annotations

import os

import pytest

from backup_support import Portal


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the backup tests run as root (a PostgreSQL cluster, backups as user postgres)")


@pytest.fixture
def portals(tmp_path):
    """Makes portals (not started) in directories of their own under tmp_path; kills any still
    running at the end."""
    made: list[Portal] = []

    def make(**options) -> Portal:
        workdir = tmp_path / f"portal-{len(made) + 1}"
        workdir.mkdir()
        portal = Portal(workdir, port=18400 + 2 * len(made), **options)
        made.append(portal)
        return portal

    yield make
    for portal in made:
        portal.kill()
