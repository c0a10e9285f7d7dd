"""Fault 5 (PostgreSQL): the database turns read-only (`default_transaction_read_only`, as on a
standby or during maintenance; writes fail with SQLSTATE 25006). Issuing and signing in get the
localised 503 page with Retry-After: 5 and no teleTAN, the portal keeps running, and once the
database takes writes again issuing works without a restart. Nothing shown that was not stored."""

from __future__ import annotations

import time

from faults_support import (ADMIN, OFFICER, admin_finds, bench_officer, check_nothing_half_written,
                            check_unavailable_page, health, wait_until)

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
        for client, language in ((officer, "en"), (german, "de")):
            for _ in range(REFUSED_ATTEMPTS):
                refused = client.issue()
                assert refused.teletan is None, f"a teleTAN was shown while the database was read-only: {refused.last.describe()}"
                check_unavailable_page(refused.last, language)
        signing_in = portal.client().sign_in(*bench_officer(11))
        check_unavailable_page(signing_in, "en")
        assert health(portal.base_url, "/health/live") == 200
        assert portal.is_running(), f"the portal exited:\n{portal.log_tail()}"
    finally:
        set_read_only(postgres_cluster, False)

    # Writable again: issuing works without a restart of the portal, and so does signing in.
    def issues() -> bool:
        issued = officer.issue()
        if issued.teletan:
            shown.append(issued.teletan)
            return True
        check_unavailable_page(issued.last, "en")
        time.sleep(0.2)
        return False
    wait_until(issues, RECOVERY_LIMIT, interval=0, what="a teleTAN after the database took writes again")
    german_again = german.issue()
    assert german_again.teletan, german_again.last.describe()
    shown.append(german_again.teletan)
    portal.client().signed_in(*bench_officer(11))

    admin_finds(admin, shown)
    portal.stop_cleanly()
    counts = check_nothing_half_written(portal, shown)
    assert counts["pending_displays"] == 0, counts
