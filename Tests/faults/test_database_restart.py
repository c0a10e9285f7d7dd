"""Fault 1: PostgreSQL restarts (stop, 5 s, start) while officers issue. The portal keeps running,
answers the localised 503 page (Retry-After: 5) while the database is away, recovers by itself
within a few seconds of its return, and afterwards nothing is half-written: every teleTAN shown
is stored and audited, and `portal audit verify` passes."""

from __future__ import annotations

import threading
import time

from faults_support import (ADMIN, Load, Probe, admin_finds, bench_officer, check_nothing_half_written,
                            check_unavailable_page)

OFFICERS = 4
UNDISTURBED_SECONDS = 3.0
DOWN_SECONDS = 5.0
# "Recovers by itself within a few seconds of its return": from the moment PostgreSQL accepts
# connections again to /health/ready 200 and to a teleTAN on every officer's screen.
RECOVERY_LIMIT = 5.0
AFTER_SECONDS = 2.0


def test_postgresql_restart_while_officers_issue(postgres_cluster, portals):
    portal = portals(database=postgres_cluster.create_database("faults_restart"))
    portal.start()
    admin = portal.client().signed_in(*ADMIN)
    officers = {f"officer-{n}": portal.client().signed_in(*bench_officer(n)) for n in range(1, OFFICERS + 1)}
    german = portal.client("de").signed_in(*bench_officer(OFFICERS + 1))

    load = Load(officers).start()
    probe = Probe(portal.base_url, german).start()
    signin_during_outage = {}
    try:
        time.sleep(UNDISTURBED_SECONDS)
        down_at = time.monotonic()
        postgres_cluster.stop("fast")
        stopped_at = time.monotonic()

        # A sign-in while the database is away, in a thread: it must not keep the test waiting.
        def sign_in() -> None:
            try:
                signin_during_outage["response"] = portal.client().sign_in(*bench_officer(OFFICERS + 2))
            except Exception as error:  # reported below
                signin_during_outage["error"] = error
        signing_in = threading.Thread(target=sign_in, daemon=True)
        time.sleep(1.0)
        signing_in.start()

        time.sleep(DOWN_SECONDS - 1.0)
        assert portal.is_running(), f"the portal exited while PostgreSQL was away:\n{portal.log_tail()}"
        restart_at = time.monotonic()
        postgres_cluster.start()
        back_at = time.monotonic()  # pg_ctl -w: accepting connections
        time.sleep(RECOVERY_LIMIT + AFTER_SECONDS)
        # Under load each statement and transaction takes milliseconds: one for seconds is stuck.
        stuck = postgres_cluster.psql(
            "SELECT pid, state, now() - state_change, query FROM pg_stat_activity WHERE datname = 'faults_restart' "
            "AND pid <> pg_backend_pid() AND state <> 'idle' AND now() - state_change > interval '2 seconds'")
        signing_in.join(30)
        assert not signing_in.is_alive(), "the sign-in during the outage never ended"
    finally:
        load.stop()
        probe.stop()
        if not postgres_cluster.is_running():
            postgres_cluster.start()

    assert portal.is_running(), f"the portal exited:\n{portal.log_tail()}"
    # No transaction of the portal's left open on the restarted server (a request stuck half-way
    # holds its row locks; every issuance waits for the audit chain's head row).
    assert not stuck, f"transactions of the portal left open after the restart:\n{stuck}"

    # Never a dropped connection or anything but the pages of the cycle and the 503 page.
    errors = load.errors() + probe.errors
    assert not errors, f"requests without an answer: {errors[:5]}"
    german_responses = [r for _, _, _, r in probe.records if r is not None]
    for responses, language in ((load.responses(), "en"), (german_responses, "de")):
        unexpected = [r for r in responses if r.status not in (200, 303, 503)]
        assert not unexpected, f"{len(unexpected)} unexpected answers, first: {unexpected[0].describe()}"
        for response in responses:
            if response.status == 503:
                check_unavailable_page(response, language)

    # While the database was away: the 503 page for the officers (German for the German one),
    # /health/ready 503, /health/live 200 throughout.
    away = [a.response for a in load.attempts
            if a.response is not None and stopped_at <= a.started and a.ended <= restart_at]
    assert any(r.status == 503 for r in away), \
        f"no 503 page for an officer while PostgreSQL was away ({len(away)} answers: {sorted({r.status for r in away})})"
    assert not any(r.teletan for r in away), "a teleTAN was shown while PostgreSQL was away"
    german_away = [r for moment, path, _, r in probe.records
                   if r is not None and stopped_at <= moment and moment + r.seconds <= restart_at]
    assert any(r.status == 503 for r in german_away), "no German 503 page while PostgreSQL was away"
    assert 503 in probe.statuses("/health/ready", stopped_at, restart_at), \
        f"/health/ready never answered 503 while PostgreSQL was away: {probe.statuses('/health/ready', stopped_at, restart_at)}"
    assert set(probe.statuses("/health/live")) == {200}, f"/health/live: {set(probe.statuses('/health/live'))}"
    assert "response" in signin_during_outage, f"the sign-in during the outage failed: {signin_during_outage}"
    check_unavailable_page(signin_during_outage["response"], "en")

    # Back by itself, without a restart of the portal.
    ready_again = probe.first("/health/ready", 200, back_at)
    assert ready_again is not None and ready_again - back_at <= RECOVERY_LIMIT, \
        f"/health/ready not 200 within {RECOVERY_LIMIT} s of PostgreSQL's return: {probe.statuses('/health/ready', back_at)}"
    for name in officers:
        again = [moment for who, _, moment in load.successes_after(back_at) if who == name]
        assert again and again[0] - back_at <= RECOVERY_LIMIT, \
            f"{name} got no teleTAN within {RECOVERY_LIMIT} s of PostgreSQL's return " \
            f"({'after %.1f s' % (again[0] - back_at) if again else 'none at all'})"
    before = [t for _, t, moment in load.shown if moment < down_at]
    assert before, "no teleTAN before the restart"

    # Afterwards: every teleTAN shown is stored and audited; nothing half-written.
    load.drain()
    shown = [t for _, t, _ in load.shown]
    after = [t for _, t, moment in load.successes_after(back_at)]
    admin_finds(admin, [before[-1], after[0], after[-1]])
    portal.stop_cleanly()
    counts = check_nothing_half_written(portal, shown)
    assert counts["pending_displays"] == 0, counts
    print(f"restart: {counts}, down {restart_at - stopped_at:.1f} s")
