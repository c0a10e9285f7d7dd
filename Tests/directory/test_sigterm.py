"""A clean stop after sign-ins through the directory: SIGTERM ends the portal with exit status 0
within 10 s, through pam_sss as through pam_ldap. (Before the fix, pam_end unloaded pam_sss.so
while SSSD's client code had a pthread-key destructor registered; the portal's PAM threads ran
it at their exit: SIGSEGV, exit status 139, every time.)"""

from __future__ import annotations

import re


def test_clean_sigterm_after_directory_sign_ins(new_portal):
    portal = new_portal()
    portal.start()
    officer = portal.signed_in("ldap-officer")
    assert officer.issue().teletan
    portal.signed_in("ldap-hotline")
    portal.signed_in("ldap-norole")
    assert portal.client().sign_in("ldap-officer", "not-the-password").status == 401
    assert portal.client().sign_in("ldap-expired", "Ldap-Expired-1").status == 403
    code = portal.stop()
    assert code == 0, f"exit status {code} after SIGTERM (139: SIGSEGV):\n{portal.log_tail()}"
    assert re.search(r"portal stopped", portal.log_text()), portal.log_tail()
