"""The PostgreSQL cluster of docs/deployment.md section 16, run for real on the loopback address:
etcd, two Patroni nodes with PostgreSQL 15 and a synchronous standby (docs/deploy/patroni.yml as
shipped, its addresses, ports and folders replaced), and portals on the cluster's URL.

Run from the repository root, as root (Patroni and PostgreSQL as user postgres, the PAM test stack):

    PORTAL_BIN=.build/debug/portal python3 -m pytest -q Tests/cluster

Needs the packages patroni, etcd-server and etcd-client (scripts/install-deps.sh).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The fault tests' portal, clients and checks (Tests/faults/faults_support.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))

from cluster_support import Cluster  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the cluster tests run as root (Patroni and PostgreSQL as user postgres, pam_unix)")


@pytest.fixture(scope="module")
def cluster():
    made = Cluster()
    try:
        made.start()
        yield made
    finally:
        made.remove()
