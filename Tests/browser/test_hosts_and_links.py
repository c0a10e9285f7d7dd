"""Host names, origins and links from elsewhere, as a browser and a rebinding attacker send them."""

from __future__ import annotations

import requests
from selenium.webdriver.common.by import By

from test_portal_browser import OFFICER, click_and_wait, path_of, sign_in, signed_in_user


def test_only_the_public_host_gets_pages(portal):
    """The portal's public URL defaults to its own loopback address and port; a name rebound to
    that address (or any other Host) gets 421, except the health checks load balancers use."""
    port = portal.port
    own = requests.get(portal.base_url + "/signin", timeout=30)
    assert own.status_code == 200
    for host in ("evil.example", f"localhost:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1"):
        page = requests.get(portal.base_url + "/signin", headers={"Host": host}, timeout=30)
        assert page.status_code == 421, host
        assert "Wrong address" in page.text, host
        static = requests.get(portal.base_url + "/css/portal.css", headers={"Host": host}, timeout=30)
        assert static.status_code == 421, host
    health = requests.get(portal.base_url + "/health/ready", headers={"Host": "10.0.0.5:8080"}, timeout=30)
    assert health.status_code == 200


def test_metrics_are_not_on_the_public_listener(portal):
    assert requests.get(portal.base_url + "/metrics", timeout=30).status_code == 404
    metrics = requests.get(f"http://127.0.0.1:{portal.metrics_port}/metrics", timeout=30)
    assert metrics.status_code == 200
    assert "portal_http_requests_total" in metrics.text


def test_a_link_from_another_site_lands_signed_in(browser, portal, secrets_ledger):
    """An officer follows a link to the portal from the intranet or an e-mail (a page of another
    origin): the session cookie goes along with that top-level navigation."""
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    assert path_of(browser) == "/"
    browser.get(f"data:text/html,<a id=go href='{portal.base_url}/'>portal</a>")
    click_and_wait(browser, browser.find_element(By.ID, "go"))
    assert path_of(browser) == "/"
    assert signed_in_user(browser) == OFFICER[0]
