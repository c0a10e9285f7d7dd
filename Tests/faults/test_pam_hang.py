"""Fault 2: PAM hangs (a directory that stopped answering: the PAM service
teletan-portal-hang-test runs pam_exec with a script that sleeps for the seconds in
/etc/teletan-portal-test/hang-seconds before pam_unix is asked). Sign-ins end at the configured
wait (--pam-timeout) with the sign-in page's "unavailable" text and 503, in the request's
language; officers already signed in keep issuing; a PAM answer that comes after the wait signs
nobody in. (The p99 comparison with an undisturbed run is a benchmark, not this test.)"""

from __future__ import annotations

import threading
import time

from faults_support import (HANG_PAM_SERVICE, HANG_SECONDS_FILE, OFFICER, SIGN_IN_UNAVAILABLE, bench_officer,
                            check_nothing_half_written, wait_until)

PAM_TIMEOUT = 2.0
# A sign-in may end this much later than the configured wait (a debug build on two shared CPUs).
MARGIN = 2.0
# The hang: clearly longer than the wait plus the margin, short enough to wait for its end.
HANG_SECONDS = 8
HANGING = [(bench_officer(14), "en"), (bench_officer(15), "en"), (bench_officer(16), "de")]


def set_hang(seconds: int | None) -> None:
    if seconds is None:
        HANG_SECONDS_FILE.unlink(missing_ok=True)
    else:
        HANG_SECONDS_FILE.parent.mkdir(parents=True, exist_ok=True)
        HANG_SECONDS_FILE.write_text(f"{seconds}\n")


def test_hanging_pam(portals):
    portal = portals(pam_service=HANG_PAM_SERVICE, extra_arguments=["--pam-timeout", f"{int(PAM_TIMEOUT)}s"])
    previous = HANG_SECONDS_FILE.read_text() if HANG_SECONDS_FILE.exists() else None
    try:
        set_hang(0)
        portal.start()
        officer = portal.client().signed_in(*OFFICER)
        shown = []
        for _ in range(5):
            issued = officer.issue()
            assert issued.teletan, issued.last.describe()
            shown.append(issued.teletan)

        set_hang(HANG_SECONDS)
        hang_started = time.monotonic()
        results: dict[str, tuple[float, object]] = {}

        def sign_in(username: str, password: str, language: str) -> None:
            started = time.monotonic()
            response = portal.client(language).sign_in(username, password)
            results[username] = (time.monotonic() - started, response)

        threads = [threading.Thread(target=sign_in, args=(*account, language), daemon=True)
                   for account, language in HANGING]
        for thread in threads:
            thread.start()
        # Meanwhile the signed-in officer issues as usual.
        during = []
        while any(thread.is_alive() for thread in threads) and time.monotonic() - hang_started < PAM_TIMEOUT + MARGIN + 5:
            issued = officer.issue()
            during.append(issued)
            time.sleep(0.05)
        for thread in threads:
            thread.join(HANG_SECONDS + 10)
            assert not thread.is_alive(), "a sign-in did not end"

        for (username, _), language in HANGING:
            seconds, response = results[username]
            assert seconds < PAM_TIMEOUT + MARGIN, f"{username}'s sign-in took {seconds:.1f} s (--pam-timeout {PAM_TIMEOUT:.0f}s)"
            assert seconds >= PAM_TIMEOUT - 0.5, f"{username}'s sign-in ended after {seconds:.1f} s, before the wait was over"
            assert response.status == 503, response.describe()
            assert response.lang == language, response.describe()
            assert SIGN_IN_UNAVAILABLE[language] in response.body, response.describe()
            assert 'action="/signin"' in response.body, f"not the sign-in page: {response.describe()}"
            assert "portal_session" not in response.headers.get("set-cookie", ""), response.describe()

        assert during, "the officer issued nothing while PAM hung"
        refused = [i.last for i in during if not i.teletan]
        assert not refused, f"{len(refused)} of {len(during)} issuances failed while PAM hung: {refused[0].describe()}"
        shown += [i.teletan for i in during]

        # The hanging PAM calls end (pam_unix then accepts the password): that must sign nobody in.
        wait_until(lambda: time.monotonic() - hang_started > HANG_SECONDS + 1.5, HANG_SECONDS + 5)
        set_hang(0)
        db = portal.db()
        names = ", ".join(f"'{username}'" for (username, _), _ in HANGING)
        late = db.scalar(f"SELECT COUNT(*) FROM sessions WHERE username IN ({names})")
        assert late == 0, f"{late} sessions for sign-ins that had already been refused"
        audited = db.scalar(f"SELECT COUNT(*) FROM audit_log WHERE action = 'signin' AND outcome = 'failure' "
                            f"AND actor IN ({names})")
        assert audited == len(HANGING), f"{audited} sign-in failures audited for {len(HANGING)} timed-out sign-ins"
        assert db.scalar(f"SELECT COUNT(*) FROM audit_log WHERE action = 'signin' AND outcome = 'success' "
                         f"AND actor IN ({names})") == 0

        # PAM answers again: the same people sign in.
        for (account, language) in HANGING:
            portal.client(language).signed_in(*account)
        issued = officer.issue()
        assert issued.teletan, issued.last.describe()
        shown.append(issued.teletan)

        portal.stop_cleanly()
        check_nothing_half_written(portal, shown)
    finally:
        portal.kill()
        if previous is None:
            set_hang(None)
        else:
            HANG_SECONDS_FILE.write_text(previous)
