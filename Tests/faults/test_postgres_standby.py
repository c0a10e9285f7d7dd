"""A cluster's URL (docs/configuration.md, "Database URL"): several hosts and
`target_session_attrs=read-write`, read as libpq reads them. A primary and a hot standby
(pg_basebackup) on the loopback address; the URL names the standby first.

- With `target_session_attrs=read-write` the portal skips the standby and works on the primary;
  with libpq's default (`any`) it would take the standby and cannot write (what the setting is for).
- The primary stops and the standby is promoted (what a cluster manager does in a failover):
  the portal, not restarted, gets the 503 page while no primary answers, never a 500, and issues
  again on the new primary; nothing shown is missing there and the audit chain is intact."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from faults_support import (ADMIN, OFFICER, PORTAL_BIN, PostgresCluster, bench_officer, check_recovered,
                            check_unavailable_page, wait_until)
from support.processes_and_browsers import free_ports

RECOVERY_LIMIT = 15.0


@pytest.fixture
def primary_and_standby():
    primary, standby = PostgresCluster(), PostgresCluster()
    try:
        primary.start()
        primary.create_database("faults_standby")
        shutil.rmtree(standby.data)
        primary._as_postgres("pg_basebackup", "-h", "127.0.0.1", "-p", primary.port, "-U", "postgres",
                             "-D", standby.data, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
        standby.start()
        wait_until(lambda: standby.psql("SELECT pg_is_in_recovery()") == "t", 30, what="the standby in recovery")
        yield primary, standby
    finally:
        standby.remove()
        primary.remove()


def cluster_url(primary, standby, target: str) -> str:
    return (f"postgres://teletan:teletan@127.0.0.1:{standby.port},127.0.0.1:{primary.port}/faults_standby"
            f"?sslmode=disable&target_session_attrs={target}")


def migrate(url: str) -> subprocess.CompletedProcess:
    return subprocess.run([PORTAL_BIN, "migrate", "--database", url], capture_output=True, text=True, timeout=120, cwd="/")


def test_the_standby_is_skipped_and_a_promoted_one_is_found(primary_and_standby, portals):
    primary, standby = primary_and_standby
    # libpq's default would take the standby (the first host): refused before anything is written.
    taken = migrate(cluster_url(primary, standby, "any"))
    assert taken.returncode != 0, "with target_session_attrs=any the standby (the first host) was written to?"
    assert "not target_session_attrs=read-write" in taken.stdout + taken.stderr, taken.stderr

    url = cluster_url(primary, standby, "read-write")
    portal = portals(database=url)
    portal.start()
    admin = portal.client().signed_in(*ADMIN)
    officer = portal.client().signed_in(*OFFICER)
    german = portal.client("de").signed_in(*bench_officer(12))
    shown = []
    for client in (officer, german):
        issued = client.issue()
        assert issued.teletan, issued.last.describe()
        shown.append(issued.teletan)
    stored = primary.psql("SELECT COUNT(*) FROM issued_teletans", database="faults_standby")
    assert stored == "2", f"the primary holds {stored} teleTANs, not the 2 shown"

    # A failover: the primary goes, the standby is promoted. Until then, the 503 page.
    primary.stop("immediate")
    refused = officer.issue()
    assert refused.teletan is None, refused.last.describe()
    check_unavailable_page(refused.last, "en")
    standby._as_postgres(standby.bin / "pg_ctl", "-D", standby.data, "-w", "promote")
    check_recovered(portal, admin, officer, german, shown, bench_officer(13), RECOVERY_LIMIT,
                    "a teleTAN on the promoted standby")


@pytest.fixture
def silent_port():
    """A port of 127.0.0.1 whose packets are dropped, as when the primary's machine is gone: a
    connection attempt is neither accepted nor refused, it gets no answer at all."""
    port = str(free_ports(1)[0])
    rule = ["OUTPUT", "-o", "lo", "-p", "tcp", "--dport", port, "-j", "DROP"]
    subprocess.run(["iptables", "-I", *rule], check=True)
    try:
        yield port
    finally:
        subprocess.run(["iptables", "-D", *rule], check=True)


def test_a_host_that_does_not_answer_is_passed_over_within_seconds(primary_and_standby, portals, silent_port):
    primary, _ = primary_and_standby
    url = (f"postgres://teletan:teletan@127.0.0.1:{silent_port},127.0.0.1:{primary.port}/faults_standby"
           f"?sslmode=disable&target_session_attrs=read-write")
    start = time.monotonic()
    migrated = migrate(url)
    took = time.monotonic() - start
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    # One connect timeout (3 s for each host of a cluster) and the migrations, not the pool's wait
    # repeated for every statement.
    assert took < 15, f"migrate took {took:.1f} s"

    portal = portals(database=url)
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    start = time.monotonic()
    issued = officer.issue()
    assert issued.teletan, issued.last.describe()
    # The host that led to the primary is tried first from then on: no wait on the silent one.
    assert time.monotonic() - start < 3, f"issuing took {time.monotonic() - start:.1f} s"
    assert primary.psql("SELECT COUNT(*) FROM issued_teletans", database="faults_standby") == "1"
