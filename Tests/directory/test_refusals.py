"""Accounts the directory refuses.

- Expired (shadowExpire in the past): the right password gets 403 "Your account cannot sign in
  right now" (German: "Ihr Konto kann sich gerade nicht anmelden"), audit reason
  account_refused, and never counts toward the lock (more attempts than
  --signin-failures-per-user allows: never a 429). A wrong password is a wrong password.
- Locked by an administrator (pwdAccountLockedTime 000001010000Z, enforced by PAM's account
  management: SSSD's ldap_access_filter, nslcd's pam_authz_search; both answer PAM_PERM_DENIED):
  the same as an expired account. (A lock slapd enforces at the bind, ppolicy with pwdLockout
  TRUE, reaches PAM as PAM_AUTH_ERR from both modules: a wrong password to the portal. The test
  directory's policy therefore leaves the lock to account management; docs/pam/README.md.)
- Expired password (shadowLastChange + shadowMax; nslcd checks it, SSSD with ldap_pwd_policy =
  none does not): no session without a new password.
"""

from __future__ import annotations

import pytest

from directory_support import ACCOUNT_REFUSED, FAILURES_PER_USER, PASSWORDS, SIGN_IN_FAILED


@pytest.mark.parametrize("account", ["ldap-expired", "ldap-locked"])
def test_refused_account_gets_its_message_and_is_not_counted(portal, account):
    password = PASSWORDS[account]
    before = portal.last_seq()
    for attempt in range(FAILURES_PER_USER + 2):
        language = "de" if attempt % 2 else "en"
        answer = portal.client(language).sign_in(account, password)
        assert answer.status == 403, f"attempt {attempt + 1}: {answer.describe()}"
        assert ACCOUNT_REFUSED[language] in answer.body, answer.describe()
        assert SIGN_IN_FAILED[language] not in answer.body, answer.describe()
        assert "portal_session" not in answer.headers.get("set-cookie", ""), answer.describe()
    entries = portal.sign_ins(after=before)
    assert [(actor, outcome, details.get("reason")) for _, actor, outcome, details in entries] == \
        [(account, "failure", "account_refused")] * (FAILURES_PER_USER + 2), entries
    assert not portal.db().scalar(f"SELECT COUNT(*) FROM sessions WHERE lower(username) = '{account}'")
    # A wrong password for the refused account is an ordinary wrong password.
    wrong = portal.client().sign_in(account, "not-the-password")
    assert wrong.status == 401 and SIGN_IN_FAILED["en"] in wrong.body, wrong.describe()


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
