"""Fixtures of the fault tests: portals on SQLite files or on a private PostgreSQL cluster that the
tests stop, start and switch to read-only (never the shared cluster on port 5432), driven by plain
HTTP clients. Each test takes well under a minute.

Run from the repository root, as root (tmpfs mounts, PAM with pam_unix, the cluster as user
postgres, the hanging PAM service's control file):

    python3 -m pytest -q Tests/faults

Environment:
    PORTAL_BIN  portal binary (default: .build/debug/portal of this repository)

Needs the PAM test stack (scripts/install-pam-stack.sh: the accounts tt-officer, tt-admin,
tt-bench-NN and the services teletan-portal-test and teletan-portal-hang-test) and PostgreSQL's
server binaries (scripts/install-deps.sh). See docs (the fault tests section) for what each test
does and asserts.
"""

from __future__ import annotations

import os

import pytest

from faults_support import Portal, PostgresCluster


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the fault tests run as root (tmpfs mounts, pam_unix, PostgreSQL as user postgres)")


@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL cluster of the session's own (initdb in a temporary directory, a free port of
    127.0.0.1); tests may stop and start it. Removed at the end."""
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def portals(tmp_path):
    """Makes portals (not started): `portals(database=..., pam_service=..., extra_arguments=[...])`,
    each in a directory of its own under the test's tmp_path. One still running at the end of the
    test (the test failed before stopping it) is killed."""
    made: list[Portal] = []

    def make(**options) -> Portal:
        workdir = tmp_path / f"portal-{len(made) + 1}"
        workdir.mkdir()
        portal = Portal(workdir, **options)
        made.append(portal)
        return portal

    yield make
    for portal in made:
        portal.kill()
