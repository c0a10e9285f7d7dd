"""(m) Both halves of issue 20 together: this portal in CWA's token format (`--verification-auth
cwa`) in front of this verification server trusting it as a Keycloak realm (`--trusted-iam` set
to the portal's metrics listener, where the portal serves its certificate in Keycloak's certs
format). That is the arrangement of CWA's own deployment (the server's `jwt.server` pointing at
the realm), with neither side told about the other's internals: an officer's TEST teleTAN and an
event officer's EVENT teleTAN are created by the server from the portal's RS256 tokens, and the
app's chain accepts each as its type. The peers written from CWA's facts are in test_k (a
Keycloak-like issuer against our server) and test_l (a CWA-like server against our portal)."""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from e2e_support import (OFFICER, ApiClient, VerificationServer, app_accepts, click_and_wait, press_issue,
                         read_teletan, sign_in)
from test_l_cwa_server import AUTHORITY, EVENT_OFFICER, CWAKey, CWAPortal


class ServerTrustingThePortalAsARealm(VerificationServer):
    """Trusts no portal key of ours that the portal uses (it signs RS256 only), but the realm."""

    realm_url = ""

    def command(self) -> list[str]:
        return super().command() + ["--trusted-iam", self.realm_url]


def redeemed_as(api: ApiClient, teletan: str) -> str | None:
    """The type the server's app chain reports for `teletan` (registration token, TAN, verify)."""
    registration = api.registration_token(teletan)
    assert registration.status == 201, registration.body
    tan = api.tan(registration.json()["registrationToken"])
    verified = api.verify_tan(tan.json()["tan"])
    assert verified.status == 200, verified.body
    return verified.headers.get("x-cwa-teletan-type")


def test_our_cwa_format_portal_issues_through_our_server_trusting_it_as_a_realm(
        browser, tmp_path, portal_key, response_log, secrets_ledger):
    for name in ("key", "server", "portal"):
        (tmp_path / name).mkdir()
    key = CWAKey(tmp_path / "key")
    secrets_ledger.add_rsa_private_key(key.private_path, "the portal's CWA signing key")
    server = ServerTrustingThePortalAsARealm(tmp_path / "server", portal_key)
    portal = CWAPortal(tmp_path / "portal", server, key)
    server.realm_url = portal.metrics_url
    secrets_ledger.watch(server, server.database, log_marker=b"verification server starting")
    secrets_ledger.watch(portal, portal.database, log_marker=b"[PortalWeb] request")
    server.start()
    try:
        portal.start()
        try:
            api = ApiClient(server, response_log)
            sign_in(browser, portal, *OFFICER)
            press_issue(browser, portal)
            test_teletan = read_teletan(browser, secrets_ledger)
            assert app_accepts(test_teletan)
            assert redeemed_as(api, test_teletan) == "TEST"

            browser.delete_all_cookies()
            secrets_ledger.add_password(EVENT_OFFICER[1])
            sign_in(browser, portal, *EVENT_OFFICER)
            browser.get(portal.base_url + "/")
            Select(browser.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY)
            click_and_wait(browser, browser.find_element(By.ID, "issue-event-teletan"))
            event_teletan = read_teletan(browser, secrets_ledger)
            assert redeemed_as(api, event_teletan) == "EVENT"

            # The server knew the officers from the portal's tokens, and the realm they came from.
            details = server.db.values("audit_log", "details", "actor", EVENT_OFFICER[0], "seq")
            assert details and portal.metrics_url in details[-1], details
        finally:
            portal.stop_cleanly()
    finally:
        server.stop_cleanly()
