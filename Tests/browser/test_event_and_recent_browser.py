"""Browser tests of issue #18, items 5 and 8: "My recent teleTANs" says which teleTAN is which
(the reference on the result page and in the list; revoking is a second page with a reason, also
without JavaScript), and the event officers' four-eyes flow (a reason or case reference the
approver sees, withdrawing, the count of waiting requests and the approval notice on the start
page, a repeated Issue that says the teleTAN was already issued). The new and changed pages are
checked with axe at 1280 px and 390 px.
"""

from __future__ import annotations

import re
import secrets

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from test_accessibility import AxeAudit
from test_hotline_browser import AUTHORITY_ID, AUTHORITY_NAME, EVENT, EVENT2, UUID, text_of
from test_portal_browser import (
    OFFICER, assert_teletan_not_on_page, click_and_wait, issue_teletan, mark_for_navigation, note_issue, path_of, present,
    read_teletan, sign_in, wait_for_new_document, wait_issue_interval,
)

WIDTHS = [(1280, 900), (390, 844)]


def recent_row(driver, reference: str):
    rows = [row for row in driver.find_elements(By.CSS_SELECTOR, "#recent-teletans tbody tr")
            if row.find_element(By.CSS_SELECTOR, ".reference").text == reference]
    assert len(rows) == 1, f"expected one row with reference {reference}, found {len(rows)}"
    return rows[0]


def test_revoke_is_a_second_page_with_a_reason_without_javascript(browser_without_js, portal, secrets_ledger):
    browser = browser_without_js
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    issue_teletan(browser, username)
    teletan = read_teletan(browser, secrets_ledger)
    # The reference is shown beside the teleTAN, to be noted on the call sheet.
    reference = text_of(browser, "result-reference")
    assert re.fullmatch(r"[0-9A-F]{4}-[0-9A-F]{4}", reference), reference
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    browser.get(portal.base_url + "/teletan/recent")
    row = recent_row(browser, reference)
    assert row.find_element(By.CSS_SELECTOR, ".status").text == "Not used yet"

    # Revoke leads to a page of its own (no script dialog): which teleTAN, a reason, a note.
    click_and_wait(browser, row.find_element(By.CSS_SELECTOR, ".revoke"))
    assert re.fullmatch(f"/teletan/recent/{UUID}/revoke", path_of(browser)), browser.current_url
    assert text_of(browser, "revoke-reference") == reference
    assert "No personal data" in text_of(browser, "revoke-note-hint")
    radios = browser.find_elements(By.CSS_SELECTOR, "#revoke-reasons input[type=radio]")
    assert [radio.get_attribute("value") for radio in radios] == [
        "wrong_person", "not_received", "issued_by_mistake", "suspected_misuse", "other"]
    assert radios[0].get_attribute("required") is not None
    assert browser.find_element(By.ID, "revoke-note").get_attribute("maxlength") == "80"

    # Cancel keeps it.
    click_and_wait(browser, browser.find_element(By.ID, "cancel-revoke"))
    assert path_of(browser) == "/teletan/recent"
    row = recent_row(browser, reference)
    assert row.find_element(By.CSS_SELECTOR, ".status").text == "Not used yet"

    click_and_wait(browser, row.find_element(By.CSS_SELECTOR, ".revoke"))
    browser.find_element(By.CSS_SELECTOR, "label[for=reason-wrong_person]").click()
    browser.find_element(By.ID, "revoke-note").send_keys("Vorgang 4711")
    click_and_wait(browser, browser.find_element(By.ID, "confirm-revoke"))
    assert path_of(browser) == "/teletan/recent"
    assert text_of(browser, "revoke-result") == "The teleTAN was revoked. The app can no longer use it."
    row = recent_row(browser, reference)
    assert row.find_element(By.CSS_SELECTOR, ".status").text == "Revoked"
    assert row.find_element(By.CSS_SELECTOR, ".revoke-reason").text == "Read to the wrong person: Vorgang 4711"
    assert not row.find_elements(By.CSS_SELECTOR, ".revoke")
    assert_teletan_not_on_page(browser, teletan)


def waiting_count(driver) -> int:
    text = text_of(driver, "approvals-waiting")
    if text.startswith("No request"):
        return 0
    match = re.match(r"(\d+) requests? waits? for your approval\.", text)
    assert match, text
    return int(match.group(1))


def request_event_teletan(driver, reason: str) -> None:
    Select(driver.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY_ID)
    driver.find_element(By.ID, "event-reason").send_keys(reason)
    click_and_wait(driver, driver.find_element(By.ID, "request-event-teletan"))
    assert text_of(driver, "event-notice") == "Your request was recorded. Another event officer must approve it."


def own_row(driver, reason: str):
    rows = [row for row in driver.find_elements(By.CSS_SELECTOR, "#own-requests tbody tr")
            if row.find_element(By.CSS_SELECTOR, ".request-reason").text == reason]
    assert len(rows) == 1, f"expected one own request with reason {reason!r}, found {len(rows)}"
    return rows[0]


def test_event_reason_count_approval_notice_withdraw_and_repeated_issue(browser, second_browser, two_person_portal, secrets_ledger):
    portal = two_person_portal
    requester, approver = second_browser, browser
    sign_in(approver, portal, secrets_ledger, *EVENT2)
    sign_in(requester, portal, secrets_ledger, *EVENT)
    before = waiting_count(approver)
    hint = text_of(requester, "event-reason-hint")
    assert "No personal data" in hint and "80 characters" in hint
    assert requester.find_element(By.ID, "event-reason").get_attribute("required") is not None

    tag = secrets.token_hex(3).upper()
    reason, withdrawn_reason = f"AZ 53-{tag}/1", f"AZ 53-{tag}/2"
    request_event_teletan(requester, reason)
    request_event_teletan(requester, withdrawn_reason)

    # The approver's start page counts them and shows the reason.
    approver.get(portal.base_url + "/")
    assert waiting_count(approver) == before + 2
    rows = {row.find_elements(By.TAG_NAME, "td")[2].text: row
            for row in approver.find_elements(By.CSS_SELECTOR, "#requests-to-approve tbody tr")}
    assert reason in rows and withdrawn_reason in rows
    assert rows[reason].find_elements(By.TAG_NAME, "td")[0].text == EVENT[0]

    # The requester withdraws the second one: it is gone from the approver's list.
    requester.get(portal.base_url + "/")
    click_and_wait(requester, own_row(requester, withdrawn_reason).find_element(By.CSS_SELECTOR, ".withdraw"))
    assert text_of(requester, "event-notice") == "Your request was withdrawn; it can no longer be approved or issued."
    assert own_row(requester, withdrawn_reason).find_element(By.CSS_SELECTOR, ".request-status").text == "Withdrawn"
    approver.get(portal.base_url + "/")
    assert waiting_count(approver) == before + 1
    rows = {row.find_elements(By.TAG_NAME, "td")[2].text: row
            for row in approver.find_elements(By.CSS_SELECTOR, "#requests-to-approve tbody tr")}
    assert withdrawn_reason not in rows

    # Approved: the requester's start page says so, first thing.
    click_and_wait(approver, rows[reason].find_element(By.CSS_SELECTOR, ".approve"))
    requester.get(portal.base_url + "/")
    notices = [element.text for element in requester.find_elements(By.CSS_SELECTOR, "#event-summary .own-approved")]
    assert any(f"({AUTHORITY_ID}) was approved by {EVENT2[0]}" in notice for notice in notices), notices

    # Issued, shown once; the same form sent again says it was already issued.
    row = own_row(requester, reason)
    form = row.find_element(By.CSS_SELECTOR, "form[action$='/issue']")
    action = form.get_attribute("action")
    nonce = form.find_element(By.CSS_SELECTOR, "input[name=nonce]").get_attribute("value")
    wait_issue_interval(EVENT[0])
    click_and_wait(requester, row.find_element(By.CSS_SELECTOR, ".issue-approved"))
    note_issue(EVENT[0])
    assert path_of(requester) == "/teletan/result"
    teletan = re.sub(r"\s+", "", requester.find_element(By.ID, "teletan").text)
    secrets_ledger.add_teletan(teletan)
    assert text_of(requester, "result-authority") == AUTHORITY_NAME
    click_and_wait(requester, requester.find_element(By.ID, "passed-on"))
    mark_for_navigation(requester)
    requester.execute_script("""
        const form = document.createElement('form');
        form.method = 'post'; form.action = arguments[0];
        for (const [name, value] of [['csrf', document.querySelector('input[name=csrf]').value], ['nonce', arguments[1]]]) {
            const input = document.createElement('input');
            input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input);
        }
        document.body.appendChild(form);
        form.submit();
    """, action, nonce)
    wait_for_new_document(requester)
    assert path_of(requester) == "/"
    assert "was already issued" in text_of(requester, "event-notice")
    assert own_row(requester, reason).find_element(By.CSS_SELECTOR, ".request-status").text == "Issued"
    assert_teletan_not_on_page(requester, teletan)


@pytest.mark.parametrize("width,height", WIDTHS)
def test_changed_pages_have_no_serious_accessibility_violation(
        browser, second_browser, portal, two_person_portal, secrets_ledger, width, height):
    """The result page with its reference, My recent teleTANs, the revoke page (and its 400 with
    an error), the event start page with the summary, the reason field and the request tables,
    and the request form after a refused reason."""
    audit = AxeAudit(browser, "en")
    browser.set_window_size(width, height)
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    issue_teletan(browser, username)
    read_teletan(browser, secrets_ledger)
    audit.check("teleTAN result page with its reference", "/teletan/result")
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    browser.get(portal.base_url + "/teletan/recent")
    audit.check("my recent teleTANs", "/teletan/recent")
    revoke = browser.find_elements(By.CSS_SELECTOR, "#recent-teletans .revoke")
    assert revoke, "no teleTAN to revoke"
    click_and_wait(browser, revoke[0])
    audit.check("revoke page")
    # A note with a control character (the browser cannot type one: sent by script) gets the 400 page.
    browser.find_element(By.CSS_SELECTOR, "label[for=reason-other]").click()
    mark_for_navigation(browser)
    browser.execute_script("document.getElementById('revoke-note').value = 'a\\u0007b'; document.getElementById('revoke-note').form.submit();")
    wait_for_new_document(browser)
    assert present(browser, "revoke-error")
    audit.check("revoke page with an error")

    event = second_browser
    event_audit = AxeAudit(event, "en")
    event.set_window_size(width, height)
    sign_in(event, two_person_portal, secrets_ledger, *EVENT)
    request_event_teletan(event, f"AZ a11y {secrets.token_hex(2)}")
    event_audit.check("start page, event officer with own requests", "/")
    Select(event.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY_ID)
    mark_for_navigation(event)
    event.execute_script("document.getElementById('event-reason').value = ' '; document.getElementById('event-reason').form.submit();")
    wait_for_new_document(event)
    assert present(event, "event-reason-error")
    event_audit.check("request form after a refused reason", "/teletan/event/requests")
    sign_in(browser, two_person_portal, secrets_ledger, *EVENT2)
    audit.check("start page, event officer with requests to approve", "/")
    for page_audit in (audit, event_audit):
        page_audit.assert_clean(expected_pages=len(page_audit.pages))
    # Nothing overflows the window at this width but the tables' own scroll boxes.
    for driver in (browser, event):
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth;")
        assert overflow <= 0, f"the page is {overflow}px wider than the window at {width}px"
