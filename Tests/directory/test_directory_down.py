"""The directory down (slapd stopped, not hanging): a sign-in gets the sign-in page's
"unavailable" answer, 503; the audit trail's reason and the metrics' outcome say
authinfo_unavailable (not pam_error_9); the log has a warning naming it; it never counts as a
wrong password (more attempts than --signin-failures-per-user: never a 429); people signed in
before keep working; sign-in works again by itself once slapd is back (nslcd at once, SSSD
after going back online, 15-35 s).

Through SSSD the account must be one SSSD has seen (signed in before): for a name it never saw,
an offline SSSD says PAM_USER_UNKNOWN, which is an unknown name like any other."""

from __future__ import annotations

import time

from directory_support import FAILURES_PER_USER, SIGN_IN_UNAVAILABLE, Slapd, password

RECOVERY_LIMIT = 90.0


def test_directory_down(portal):
    user = "ldap-officer"
    officer = portal.signed_in(user)  # also puts the account into SSSD's cache
    before = portal.last_seq()
    unavailable_before = portal.metric("portal_signins_total", outcome="authinfo_unavailable")
    log_offset = portal.log_size()
    Slapd.stop()
    try:
        for attempt in range(FAILURES_PER_USER + 1):
            language = "de" if attempt % 2 else "en"
            started = time.monotonic()
            answer = portal.client(language).sign_in(user, password(user))
            assert answer.status == 503, f"attempt {attempt + 1}: {answer.describe()}"
            assert SIGN_IN_UNAVAILABLE[language] in answer.body, answer.describe()
            assert 'action="/signin"' in answer.body, answer.describe()
            assert time.monotonic() - started < 15, f"the answer took {time.monotonic() - started:.1f} s"
        # A wrong password cannot be checked either: the same answer.
        wrong = portal.client().sign_in(user, "not-the-password")
        assert wrong.status == 503, wrong.describe()
        attempts = FAILURES_PER_USER + 2

        entries = portal.sign_ins(after=before)
        assert [(actor, outcome, details.get("reason")) for _, actor, outcome, details in entries] == \
            [(user, "failure", "authinfo_unavailable")] * attempts, entries
        unavailable = portal.metric("portal_signins_total", outcome="authinfo_unavailable") - unavailable_before
        assert unavailable == attempts, f"portal_signins_total{{outcome=\"authinfo_unavailable\"}} grew by {unavailable}"
        warnings = [line for line in portal.log_since(log_offset).splitlines()
                    if " warning " in line and "authinfo_unavailable" in line]
        assert warnings, "no warning naming authinfo_unavailable in the log:\n" + portal.log_tail()

        # Whoever is signed in keeps working (the session needs no directory).
        assert officer.get("/teletan/recent").status == 200
    finally:
        Slapd.start()

    # Back by itself, without a restart of the portal, and nothing was counted meanwhile.
    started = time.monotonic()
    while True:
        answer = portal.client().sign_in(user, password(user))
        if answer.status == 303:
            break
        assert answer.status == 503, f"while the directory comes back: {answer.describe()}"
        assert time.monotonic() - started < RECOVERY_LIMIT, f"sign-in not back within {RECOVERY_LIMIT} s of slapd's start"
        time.sleep(1)
    print(f"{portal.route}: sign-in back {time.monotonic() - started:.1f} s after slapd's start")
