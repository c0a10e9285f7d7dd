"""Fault 5 (PostgreSQL): the database turns read-only (`default_transaction_read_only`, as on a
standby or during maintenance; writes fail with SQLSTATE 25006). Issuing and signing in get the
localised 503 page with Retry-After: 5 and no teleTAN, the portal keeps running, and once the
database takes writes again issuing works without a restart. Nothing shown that was not stored."""

from __future__ import annotations

import time

from faults_support import (ADMIN, OFFICER, bench_officer, check_recovered, check_refused_while_unavailable,
                            wait_until)

RECOVERY_LIMIT = 5.0
REFUSED_ATTEMPTS = 3


def set_read_only(cluster, on: bool) -> None:
    cluster.psql("ALTER SYSTEM SET default_transaction_read_only = on" if on
                 else "ALTER SYSTEM RESET default_transaction_read_only")
    cluster.psql("SELECT pg_reload_conf()")
    expected = "on" if on else "off"
    # Sessions pick the reloaded setting up at their next command; a new one has it at once.
    wait_until(lambda: cluster.psql("SHOW default_transaction_read_only") == expected, 10,
               what=f"default_transaction_read_only = {expected}")
    time.sleep(0.5)


def test_postgresql_read_only(postgres_cluster, portals):
    portal = portals(database=postgres_cluster.create_database("faults_read_only"))
    portal.start()
    admin = portal.client().signed_in(*ADMIN)
    officer = portal.client().signed_in(*OFFICER)
    german = portal.client("de").signed_in(*bench_officer(10))
    shown = []
    for client in (officer, german):
        issued = client.issue()
        assert issued.teletan, issued.last.describe()
        shown.append(issued.teletan)

    try:
        set_read_only(postgres_cluster, True)
        check_refused_while_unavailable(portal, [(officer, "en"), (german, "de")], REFUSED_ATTEMPTS, bench_officer(11),
                                        "while the database was read-only")
    finally:
        set_read_only(postgres_cluster, False)

    check_recovered(portal, admin, officer, german, shown, bench_officer(11), RECOVERY_LIMIT,
                    "a teleTAN after the database took writes again")
