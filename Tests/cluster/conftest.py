"""The PostgreSQL cluster of docs/deployment.md section 16, run for real on the loopback address:
etcd, two Patroni nodes with PostgreSQL 15 and a synchronous standby (docs/deploy/patroni.yml as
shipped, its addresses, ports and folders replaced), and portals on the cluster's URL.

Run from the repository root, as root (Patroni and PostgreSQL as user postgres, the PAM test stack):

    PORTAL_BIN=.build/debug/portal python3 -m pytest -q Tests/cluster

Environment: PORTAL_BIN (default .build/debug/portal), CLUSTER_NGINX_PORT (default 18300; nginx
also takes the port 5 above it).

Needs the packages patroni, etcd-server, etcd-client and nginx (scripts/install-deps.sh) and the PAM
test stack (scripts/install-pam-stack.sh).
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
