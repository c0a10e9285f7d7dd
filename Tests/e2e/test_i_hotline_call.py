"""(i) A hotline call in the portal (headless Chromium) against the standalone verification
server: every check ticked, the teleTAN issued in the call, read back and passed on; the "app"
then redeems it like any other, and the portal's "My recent teleTANs" learns from the server
that it was redeemed."""

from __future__ import annotations

import re

from selenium.webdriver.common.by import By

from e2e_support import (UUID4_PATTERN, app_accepts, click_and_wait, last_document_status, path_of, read_teletan,
                         sign_in)

HOTLINE = ("tt-hotline", "Hotline-Pass-1")
CALL_PATH = re.compile(r"/hotline/calls/[0-9a-f-]{36}")


def recent_rows(driver, portal) -> dict[str, object]:
    driver.get(portal.base_url + "/teletan/recent")
    assert path_of(driver) == "/teletan/recent"
    assert not driver.find_elements(By.ID, "status-unknown"), "the portal cannot ask the server for statuses"
    return {row.get_attribute("id"): row for row in driver.find_elements(By.CSS_SELECTOR, "#recent-teletans tbody tr")}


def test_a_teletan_issued_in_a_hotline_call_is_redeemed_by_the_app(browser, portal, api, secrets_ledger):
    secrets_ledger.add_password(HOTLINE[1])
    sign_in(browser, portal, *HOTLINE)
    listed_before = set(recent_rows(browser, portal))

    browser.get(portal.base_url + "/hotline")
    click_and_wait(browser, browser.find_element(By.ID, "start-call"))
    call = path_of(browser)
    assert CALL_PATH.fullmatch(call), f"starting a call ended on {browser.current_url}"
    for box in browser.find_elements(By.CSS_SELECTOR, "#checks input[name='checks[]']"):
        box.click()
    browser.get_log("performance")  # drop what came before
    click_and_wait(browser, browser.find_element(By.ID, "issue-teletan"))
    assert last_document_status(browser) == 200
    teletan = read_teletan(browser, secrets_ledger)
    # What the app checks before it contacts the server, typed as a caller might.
    assert app_accepts(teletan) and app_accepts(teletan.lower()), "not a valid teleTAN"

    # The call goes on: the caller reads it back right, the agent passes it on.
    click_and_wait(browser, browser.find_element(By.ID, "continue-call"))
    assert path_of(browser) == call
    browser.find_element(By.ID, "read-back").send_keys(f"{teletan[:3]} {teletan[3:6]} {teletan[6:]}")
    click_and_wait(browser, browser.find_element(By.ID, "check-read-back"))
    assert browser.find_element(By.ID, "read-back-result").text == "Matches: the caller has the right teleTAN."
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    assert path_of(browser) == "/hotline"

    # Listed as not used yet, as the server says.
    new = {key: row for key, row in recent_rows(browser, portal).items() if key not in listed_before}
    assert len(new) == 1, f"expected one new teleTAN in the list, found {len(new)}"
    row_id, row = new.popitem()
    assert "status-unused" in row.find_element(By.CSS_SELECTOR, ".status").get_attribute("class").split()

    # The app: teleTAN -> registration token -> TAN and a positive test result; the submission
    # server verifies the TAN as one of a TEST teleTAN.
    registration = api.registration_token(teletan)
    assert registration.status == 201, registration.body
    registration_token = registration.json()["registrationToken"]
    assert UUID4_PATTERN.fullmatch(registration_token)
    assert api.registration_token(teletan).status == 400, "redeemed twice"
    tan = api.tan(registration_token)
    assert tan.status == 201, tan.body
    result = api.test_result(registration_token)
    assert result.status == 200 and result.json()["testResult"] == 2, result.body
    verified = api.verify_tan(tan.json()["tan"])
    assert verified.status == 200, verified.body
    assert verified.headers.get("x-cwa-teletan-type") == "TEST"

    # The portal now lists it as redeemed, with nothing left to revoke.
    row = recent_rows(browser, portal)[row_id]
    status = row.find_element(By.CSS_SELECTOR, ".status")
    assert "status-redeemed" in status.get_attribute("class").split(), status.text
    assert status.text == "Redeemed"
    assert not row.find_elements(By.CSS_SELECTOR, ".revoke")
