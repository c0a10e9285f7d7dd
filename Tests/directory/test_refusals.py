"""Accounts the directory refuses.

- Expired (shadowExpire in the past): the right password gets 403 "Your account cannot sign in
  right now" (German: "Ihr Konto kann sich gerade nicht anmelden"), audit reason
  account_refused, and never counts toward the lock (more attempts than
  --signin-failures-per-user allows: never a 429). A wrong password is a wrong password.
- Locked by the directory (ppolicy, pwdAccountLockedTime): slapd refuses the bind for the right
  and a wrong password alike (invalidCredentials), and both pam_ldap and pam_sss (SSSD 2.8) say
  PAM_AUTH_ERR, so the portal cannot tell it from a wrong password. What must hold: it never
  signs in.
- Expired password (shadowLastChange + shadowMax; nslcd checks it, SSSD with ldap_pwd_policy =
  none does not): no session without a new password.
"""

from __future__ import annotations

from directory_support import ACCOUNT_REFUSED, FAILURES_PER_USER, SIGN_IN_FAILED


def test_expired_account_gets_its_message_and_is_not_counted(portal):
    before = portal.last_seq()
    for attempt in range(FAILURES_PER_USER + 2):
        language = "de" if attempt % 2 else "en"
        answer = portal.client(language).sign_in("ldap-expired", "Ldap-Expired-1")
        assert answer.status == 403, f"attempt {attempt + 1}: {answer.describe()}"
        assert ACCOUNT_REFUSED[language] in answer.body, answer.describe()
        assert SIGN_IN_FAILED[language] not in answer.body, answer.describe()
        assert "portal_session" not in answer.headers.get("set-cookie", ""), answer.describe()
    entries = portal.sign_ins(after=before)
    assert [(actor, outcome, details.get("reason")) for _, actor, outcome, details in entries] == \
        [("ldap-expired", "failure", "account_refused")] * (FAILURES_PER_USER + 2), entries
    # A wrong password for the expired account is an ordinary wrong password.
    wrong = portal.client().sign_in("ldap-expired", "not-the-password")
    assert wrong.status == 401 and SIGN_IN_FAILED["en"] in wrong.body, wrong.describe()


def test_locked_account_never_signs_in(portal):
    before = portal.last_seq()
    answer = portal.client().sign_in("ldap-locked", "Ldap-Locked-1")
    assert answer.status in (401, 403), answer.describe()
    assert "portal_session" not in answer.headers.get("set-cookie", ""), answer.describe()
    entries = portal.sign_ins(after=before)
    assert [(actor, outcome) for _, actor, outcome, _ in entries] == [("ldap-locked", "failure")], entries
    assert not portal.db().scalar("SELECT COUNT(*) FROM sessions WHERE lower(username) = 'ldap-locked'")


def test_expired_password_gives_no_session(portal):
    client = portal.client()
    answer = client.sign_in("ldap-pwexpired", "Ldap-Pwexpired-1")
    if portal.route == "sss":
        # ldap_pwd_policy = none: SSSD does not look at shadowMax.
        assert answer.status == 303, answer.describe()
        return
    # nslcd: PAM_NEW_AUTHTOK_REQD; the portal asks for a new password first.
    assert answer.status == 200 and answer.h1 == "Change your password", answer.describe()
    assert 'type="password"' in answer.body, answer.describe()
    assert client.get("/").status in (303, 302), "signed in without changing the expired password"
