"""(d) The portal when its verification server is gone, comes back, or refuses for its global
limit: the officer gets a clear page and never a teleTAN the server did not confirm."""

from __future__ import annotations

import time

from e2e_support import (OFFICER, app_accepts, error_page, last_document_status, press_issue,
                         read_teletan, sign_in)

UNAVAILABLE = "No teleTAN was issued"
PORTAL_TIMEOUT = 10.0  # the portal waits at most --verification-timeout (5 s) for the server
ISSUE_INTERVAL = 1.2  # the portals run with --teletan-interval 1s


def test_server_down_gives_503_and_coming_back_needs_no_portal_restart(own_stack, browser, secrets_ledger):
    server, portal, api = own_stack
    sign_in(browser, portal, *OFFICER)
    press_issue(browser, portal)
    assert app_accepts(read_teletan(browser, secrets_ledger))

    server.stop_cleanly()
    time.sleep(ISSUE_INTERVAL)
    seconds = press_issue(browser, portal)
    assert seconds < PORTAL_TIMEOUT, f"the officer waited {seconds:.1f} s"
    assert last_document_status(browser) == 503
    title, message = error_page(browser)
    assert title == "Service unavailable"
    assert UNAVAILABLE in message, message

    # Same ports, same secret file and database; the portal keeps running.
    server.start()
    time.sleep(ISSUE_INTERVAL)
    press_issue(browser, portal)
    assert last_document_status(browser) == 200
    teletan = read_teletan(browser, secrets_ledger)
    assert app_accepts(teletan)
    # The restarted server knows it (same database and secret).
    redeemed = api.registration_token(teletan)
    assert redeemed.status == 201, redeemed.body


def test_global_limit_of_the_server_gives_429_page(limited_stack, browser, secrets_ledger):
    server, portal, api = limited_stack
    sign_in(browser, portal, *OFFICER)
    press_issue(browser, portal)
    assert app_accepts(read_teletan(browser, secrets_ledger))

    time.sleep(ISSUE_INTERVAL)
    press_issue(browser, portal)
    assert last_document_status(browser) == 429
    title, message = error_page(browser)
    assert title == "Please wait"
    assert "The limit of teleTANs for the whole service is reached" in message, message

    # The same limit, as the server states it on the internal listener.
    refused = api.create_teletan(server.trusted.token(["c19hotline"]))
    assert refused.status == 429, refused.body
    assert int(refused.headers["retry-after"]) >= 1
