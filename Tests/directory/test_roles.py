"""Roles from directory groups (dir-teletan-*, mapped with --officer-group etc.), through nslcd
and through SSSD: an officer issues, a hotline agent lands on the hotline, an event officer gets
the EVENT section, an administrator reviews the audit trail, a user in no role group gets the
no-role page; a password with umlauts and a mixed-case name sign in; a role taken away in the
directory is gone at the next sign-in."""

from __future__ import annotations

import time

from directory_support import canonical, set_group_member


def test_roles_from_directory_groups(portal):
    officer = portal.signed_in("ldap-officer")
    issued = officer.issue()
    assert issued.teletan, issued.last.describe()

    hotline = portal.client()
    answer = hotline.sign_in("ldap-hotline", "Ldap-Hotline-1")
    assert answer.status == 303 and answer.location == "/hotline", answer.describe()

    event = portal.signed_in("ldap-event").get("/")
    assert event.status == 200 and 'id="event-section"' in event.body, event.describe()
    plain_officer_home = officer.get("/")
    assert 'id="event-section"' not in plain_officer_home.body, "an officer without the event group sees EVENT"

    admin = portal.signed_in("ldap-admin")
    audit = admin.get("/admin/audit")
    assert audit.status == 200, audit.describe()
    assert officer.get("/admin/audit").status == 403

    norole = portal.signed_in("ldap-norole")
    home = norole.get("/")
    assert 'id="no-role"' in home.body, home.describe()
    assert home.hidden("nonce") is None, "the no-role page offers to issue"


def test_umlaut_password(portal):
    client = portal.client("de")
    answer = client.sign_in("ldap-umlaut", "Grüße-Pass-1")
    assert answer.status == 303, answer.describe()
    issued = client.issue()
    assert issued.teletan, issued.last.describe()
    # The same letters in another normalisation or without them are another password.
    wrong = portal.client().sign_in("ldap-umlaut", "Grusse-Pass-1")
    assert wrong.status == 401, wrong.describe()


def test_mixed_case_name(portal):
    """Ldap-Mixed signs in as typed and in lower case, as one user: the name NSS gives
    (nslcd: Ldap-Mixed; SSSD with case_sensitive = false: ldap-mixed)."""
    name = canonical("Ldap-Mixed")
    before = portal.last_seq()
    for typed in ("Ldap-Mixed", "ldap-mixed"):
        answer = portal.client().sign_in(typed, "Ldap-Mixed-1")
        assert answer.status == 303, f"{typed}: {answer.describe()}"
    actors = {actor for _, actor, outcome, _ in portal.sign_ins(after=before) if outcome == "success"}
    assert actors == {name}, f"sign-in entries under {actors}, expected {name}"


def test_role_removed_in_directory_is_gone_at_next_sign_in(portal):
    user = "ldap-rolechange"
    first = portal.signed_in(user)
    issued = first.issue()
    assert issued.teletan, issued.last.describe()
    set_group_member("dir-teletan-officer", user, member=False)
    try:
        if portal.route == "sss":
            time.sleep(6)  # SSSD answers one user's PAM requests within pam_id_timeout (5 s) alike
        again = portal.signed_in(user)
        home = again.get("/")
        assert 'id="no-role"' in home.body, f"the removed role still works at the next sign-in: {home.describe()}"
    finally:
        set_group_member("dir-teletan-officer", user, member=True)
