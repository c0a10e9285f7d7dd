"""Browser tests of the hotline's call workflow, EVENT teleTANs under the four-eyes rule and
"My recent teleTANs": a headless Chromium against a real `portal serve`, signing in through the
real PAM test stack.

Every teleTAN read, and every phone number and name typed, goes into the secrets ledger
(conftest.py), which searches the portals' logs and databases and the Chromium profiles for them
once every portal has stopped. The numbers and names are made up and distinctive, so that the
search can neither pass by accident nor fail by collision.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support.processes_and_browsers import last_document_status
from support.secrets_at_rest import phone_number_e164, phone_number_masked, phone_number_readable
from test_portal_browser import (
    ALPHABET, OFFICER, assert_teletan_not_on_page, assert_valid_teletan, click_and_wait, issue_teletan,
    mark_for_navigation, note_issue, path_of, present, read_teletan, sign_in, wait_for_new_document,
    wait_issue_interval,
)

HOTLINE = ("tt-hotline", "Hotline-Pass-1")
HOTLINE2 = ("tt-hotline2", "Hotline-Pass-2")
EVENT = ("tt-event", "Event-Pass-1")
EVENT2 = ("tt-event2", "Event-Pass-2")

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
CALL_PATH = re.compile(f"/hotline/calls/({UUID})")

# Made-up callers, one per language run (the same number twice would bring the repeat-caller
# warning into the second run). Every number used in this suite ends in other digits, so that the
# masked form (+49 ••• ••• •• 45) tells the entries apart on the shared queue page.
CALLERS = {
    "en": {"phone": "030 5550 1234 5", "mistyped": "030 5550 12x4 5", "name": "Erika Testperson-Zeta"},
    "de": {"phone": "0171 5550 9876", "mistyped": "0171 5550 98z6", "name": "Jürgen Prüfling-Omega"},
}
RACE_CALLER = {"phone": "+49 40 5550 2468 1", "name": "Wilma Wettlauf-Sigma"}

# The portal's texts (HotlineStrings.swift, IssuanceStrings.swift).
TEXTS = {
    "en": {
        "start_call": "Start call",
        "issue": "Issue teleTAN",
        "call_back_later": "Call back later",
        "required_error": "A teleTAN can only be issued when every required check is ticked.",
        "phone_error": "Please enter a phone number we can call back, for example 030 1234567 or +49 30 1234567.",
        "callback_queued": "The callback is in the queue. The number is deleted when the callback ends, "
                           "at the latest after one hour.",
        "take": "Take",
        "attempts": "{count} of 3",
        "no_answer": "No answer: the callback is back in the queue.",
        "continue_call": "Continue: read-back",
        "differs": "Does not match: read it again. It differs here:",
        "difference": "Position {position}: heard {heard}, it is {actual}",
        "matches": "Matches: the caller has the right teleTAN.",
        "passed_on": "I have passed it on",
        "done_passed_on": "The call has ended. The teleTAN was passed on.",
        "reached": "Reached",
    },
    "de": {
        "start_call": "Anruf beginnen",
        "issue": "teleTAN erzeugen",
        "call_back_later": "Später zurückrufen",
        "required_error": "Eine teleTAN kann nur erzeugt werden, wenn alle Pflichtfragen angehakt sind.",
        "phone_error": "Bitte geben Sie eine Telefonnummer für den Rückruf ein, zum Beispiel 030 1234567 oder +49 30 1234567.",
        "callback_queued": "Der Rückruf steht in der Liste. Die Nummer wird gelöscht, wenn der Rückruf endet, "
                           "spätestens nach einer Stunde.",
        "take": "Übernehmen",
        "attempts": "{count} von 3",
        "no_answer": "Nicht erreicht: Der Rückruf steht wieder in der Liste.",
        "continue_call": "Weiter: Vorlesen lassen",
        "differs": "Stimmt nicht überein: Lesen Sie sie erneut vor. Hier weicht sie ab:",
        "difference": "Stelle {position}: gehört {heard}, richtig ist {actual}",
        "matches": "Stimmt überein: Die Person hat die richtige teleTAN.",
        "passed_on": "Ich habe sie weitergegeben",
        "done_passed_on": "Der Anruf ist beendet. Die teleTAN wurde weitergegeben.",
        "reached": "Erreicht",
    },
}

# SpellingAlphabet.swift: DIN 5009 (2022) in German, ICAO in English, digits as words.
SPELLING = {
    "de": dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789", (
        "Aachen Berlin Chemnitz Düsseldorf Essen Frankfurt Goslar Hamburg Ingelheim Jena Köln Leipzig München "
        "Nürnberg Offenbach Potsdam Quickborn Rostock Salzwedel Tübingen Unna Völklingen Wuppertal Xanten Ypsilon "
        "Zwickau Zwo Drei Vier Fünf Sechs Sieben Acht Neun").split())),
    "en": dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789", (
        "Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa Quebec "
        "Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu Two Three Four Five Six Seven Eight Niner").split())),
}

AUTHORITY_ID, AUTHORITY_NAME = "1.11.0.01", "Gesundheitsamt Berlin-Mitte"  # docs/health-authorities.example.csv


# ---------------------------------------------------------------------------------------------
# Helpers


def choose_language(driver, portal, lang: str) -> None:
    """The language switch's own route (as in test_accessibility.py, which imports this module)."""
    driver.get(f"{portal.base_url}/language/{lang}?back=/signin")
    assert path_of(driver) == "/signin"


def text_of(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text.strip()


def queue_entry_ids(driver, portal) -> set[str]:
    """Loads the callback queue; the ids of the waiting entries."""
    driver.get(portal.base_url + "/hotline/callbacks")
    assert path_of(driver) == "/hotline/callbacks"
    return {row.get_attribute("id")[len("callback-"):] for row in driver.find_elements(By.CSS_SELECTOR, "tr.callback-entry")}


def queue_row(driver, callback_id: str):
    rows = driver.find_elements(By.ID, f"callback-{callback_id}")
    assert rows, f"callback {callback_id} is not in the queue"
    return rows[0]


def attempts_of(row) -> str:
    return row.find_elements(By.TAG_NAME, "td")[2].text.strip()


def start_call(driver, portal, lang: str) -> str:
    """From anywhere: the hotline page, **Start call**; returns the call's id."""
    driver.get(portal.base_url + "/hotline")
    button = driver.find_element(By.ID, "start-call")
    assert button.text == TEXTS[lang]["start_call"]
    click_and_wait(driver, button)
    match = CALL_PATH.fullmatch(path_of(driver))
    assert match, f"starting a call ended on {driver.current_url}"
    return match.group(1)


def check_ids(driver) -> tuple[list[str], list[str]]:
    """(all checks, the required ones) of the call page, by id."""
    everything, required = [], []
    for box in driver.find_elements(By.CSS_SELECTOR, "#checks input[name='checks[]']"):
        check = box.get_attribute("value")
        assert box.get_attribute("id") == f"check-{check}"
        everything.append(check)
        if driver.find_elements(By.CSS_SELECTOR, f"label[for='check-{check}'] .required-mark"):
            required.append(check)
    assert required, "the call page has no required check"
    return everything, required


def ticked(driver) -> set[str]:
    return {box.get_attribute("value") for box in driver.find_elements(By.CSS_SELECTOR, "#checks input[name='checks[]']")
            if box.is_selected()}


def tick(driver, checks) -> None:
    for check in checks:
        box = driver.find_element(By.ID, f"check-{check}")
        if not box.is_selected():
            box.click()


def type_into(driver, element_id: str, value: str) -> None:
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(value)


def queue_callback(driver, portal, lang: str, phone: str, name: str, ledger) -> str:
    """Starts a call and asks for a callback with `phone` and `name` (recorded in the ledger
    first); returns the new queue entry's id."""
    ledger.add_phone_number(phone)
    ledger.add_person_name(name)
    before = queue_entry_ids(driver, portal)
    start_call(driver, portal, lang)
    type_into(driver, "phone", phone)
    type_into(driver, "name", name)
    click_and_wait(driver, driver.find_element(By.ID, "call-back-later"))
    assert path_of(driver) == "/hotline", f"call back later ended on {driver.current_url}"
    assert text_of(driver, "hotline-notice") == TEXTS[lang]["callback_queued"]
    new = queue_entry_ids(driver, portal) - before
    assert len(new) == 1, f"expected one new queue entry, found {len(new)}"
    return new.pop()


def number_variants(phone: str) -> list[str]:
    """The ways a number could show in a page: as typed, in E.164, grouped, its digits."""
    e164 = phone_number_e164(phone)
    assert e164, phone
    return [phone, e164, phone_number_readable(e164), e164[1:], re.sub(r"\D", "", phone), e164[3:]]


def masked(phone: str) -> str:
    return phone_number_masked(phone_number_e164(phone))


def assert_contact_not_on_page(driver, phone: str, name: str | None = None) -> None:
    """Neither the number (in any form, also with the markup removed) nor the name is on the
    page. pytest.fail keeps them out of the report's page dump."""
    source = driver.page_source
    flattened = re.sub(r"\s+", "", re.sub(r"<[^>]*>", "", source))
    for variant in number_variants(phone):
        if variant in source or re.sub(r"\s+", "", variant) in flattened:
            pytest.fail(f"the full phone number is on {driver.current_url}")
    if name is not None and name in source:
        pytest.fail(f"the caller's name is on {driver.current_url}")


def read_call_teletan(driver, ledger, lang: str) -> str:
    """The teleTAN on the result page of a call, recorded for the secrets check, checked as the
    app checks it (alphabet, length, check character) and spelled in the page's language."""
    assert path_of(driver) == "/teletan/result", f"issuing ended on {driver.current_url}"
    element = driver.find_element(By.ID, "teletan")
    value = re.sub(r"\s+", "", element.text)
    ledger.add_teletan(value)
    assert_valid_teletan(value)
    groups = [group.text for group in element.find_elements(By.CSS_SELECTOR, ".group")]
    assert groups == [value[0:3], value[3:6], value[6:10]]
    spelled = [item.text.partition(": ")[2] for item in driver.find_elements(By.CSS_SELECTOR, "#teletan-spelled > li")]
    assert spelled == [" - ".join(SPELLING[lang][c] for c in group) for group in groups]
    return value


def spelled(character: str, lang: str) -> str:
    return f"{character} ({SPELLING[lang][character]})"


# ---------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_hotline_call_from_the_checks_through_a_callback_to_the_read_back(browser, portal, secrets_ledger, lang):
    texts, caller = TEXTS[lang], CALLERS[lang]
    phone, name = caller["phone"], caller["name"]
    # The mistyped number and the name go back and forth in a form the portal answers with the
    # page again (to correct the number): the browser keeps that form's body in its session
    # history (see SecretsLedger.add_phone_number). The valid number is posted once and
    # answered with a redirect: it must be nowhere at all.
    secrets_ledger.add_phone_number(phone)
    secrets_ledger.add_phone_number(caller["mistyped"], posted_to_a_page=True)
    secrets_ledger.add_person_name(name, posted_to_a_page=True)
    e164 = phone_number_e164(phone)

    choose_language(browser, portal, lang)
    sign_in(browser, portal, secrets_ledger, *HOTLINE)
    # A hotline-only agent starts at the hotline page, or in their open call (another test's).
    assert path_of(browser) == "/hotline" or CALL_PATH.fullmatch(path_of(browser)), path_of(browser)
    browser.get(portal.base_url + "/")
    click_and_wait(browser, browser.find_element(By.ID, "link-hotline"))
    assert path_of(browser) == "/hotline"
    waiting_before = queue_entry_ids(browser, portal)
    first_call = start_call(browser, portal, lang)

    # Issue teleTAN with one required check unticked: refused, the ticks kept.
    everything, required = check_ids(browser)
    assert not ticked(browser), "a new call starts with no check ticked"
    answered = set(required[:-1])
    tick(browser, answered)
    issue = browser.find_element(By.ID, "issue-teletan")
    assert issue.text == texts["issue"]
    click_and_wait(browser, issue)
    assert path_of(browser) == f"/hotline/calls/{first_call}/issue"
    assert text_of(browser, "call-error") == texts["required_error"]
    assert ticked(browser) == answered
    assert not present(browser, "teletan")

    # Call back later with a mistyped number: a clear message, nothing typed is lost.
    type_into(browser, "phone", caller["mistyped"])
    type_into(browser, "name", name)
    later = browser.find_element(By.ID, "call-back-later")
    assert later.text == texts["call_back_later"]
    click_and_wait(browser, later)
    assert path_of(browser) == f"/hotline/calls/{first_call}/callback"
    assert text_of(browser, "call-error") == texts["phone_error"]
    assert browser.find_element(By.ID, "phone").get_attribute("aria-invalid") == "true"
    assert browser.find_element(By.ID, "phone").get_attribute("value") == caller["mistyped"]
    assert browser.find_element(By.ID, "name").get_attribute("value") == name
    assert ticked(browser) == answered

    # A valid number: the callback is queued and the call ends.
    type_into(browser, "phone", phone)
    click_and_wait(browser, browser.find_element(By.ID, "call-back-later"))
    assert path_of(browser) == "/hotline"
    assert text_of(browser, "hotline-notice") == texts["callback_queued"]

    # The queue shows the number masked, never in full.
    new = queue_entry_ids(browser, portal) - waiting_before
    assert len(new) == 1, f"expected one new queue entry, found {len(new)}"
    callback = new.pop()
    row = queue_row(browser, callback)
    assert row.find_element(By.CSS_SELECTOR, ".masked-number").text.startswith(masked(phone))
    assert attempts_of(row) == texts["attempts"].format(count=0)
    assert_contact_not_on_page(browser, phone, name)

    # Take: the callback page shows the full number and the name.
    take = row.find_element(By.CSS_SELECTOR, ".take")
    assert take.text == texts["take"]
    click_and_wait(browser, take)
    assert path_of(browser) == f"/hotline/callbacks/{callback}"
    assert text_of(browser, "callback-phone") == phone_number_readable(e164)
    assert browser.find_element(By.ID, "callback-phone").get_attribute("href") == f"tel:{e164}"
    assert text_of(browser, "callback-name") == name

    # No answer: back in the queue, one attempt of three used.
    click_and_wait(browser, browser.find_element(By.ID, "outcome-no-answer"))
    assert path_of(browser) == "/hotline/callbacks"
    assert text_of(browser, "queue-notice") == texts["no_answer"]
    row = queue_row(browser, callback)
    assert attempts_of(row) == texts["attempts"].format(count=1)
    assert_contact_not_on_page(browser, phone, name)

    # Taken again, and reached: a new call with the first call's answers ticked.
    click_and_wait(browser, row.find_element(By.CSS_SELECTOR, ".take"))
    assert path_of(browser) == f"/hotline/callbacks/{callback}"
    assert text_of(browser, "callback-attempts") == texts["attempts"].format(count=1)
    click_and_wait(browser, browser.find_element(By.ID, "outcome-reached"))
    match = CALL_PATH.fullmatch(path_of(browser))
    assert match and match.group(1) != first_call, f"reached ended on {browser.current_url}"
    second_call = match.group(1)
    assert ticked(browser) == answered, "the first call's answers are not ticked"

    # Every required check ticked: the teleTAN, on the officer's result page, for this call.
    tick(browser, required)
    wait_issue_interval(HOTLINE[0])
    click_and_wait(browser, browser.find_element(By.ID, "issue-teletan"))
    note_issue(HOTLINE[0])
    teletan = read_call_teletan(browser, secrets_ledger, lang)
    assert not present(browser, "passed-on")
    proceed = browser.find_element(By.ID, "continue-call")
    assert proceed.text == texts["continue_call"]
    click_and_wait(browser, proceed)
    assert path_of(browser) == f"/hotline/calls/{second_call}"
    assert_teletan_not_on_page(browser, teletan)

    # A read-back with one character misheard: does not match, and says where.
    position = 4
    wrong_character = next(c for c in ALPHABET if c != teletan[position - 1] and c.isalpha())
    wrong = teletan[:position - 1] + wrong_character + teletan[position:]
    secrets_ledger.add_secret(wrong, "mistyped read-back")
    type_into(browser, "read-back", wrong)
    click_and_wait(browser, browser.find_element(By.ID, "check-read-back"))
    assert path_of(browser) == f"/hotline/calls/{second_call}"
    assert text_of(browser, "read-back-result") == texts["differs"]
    assert "error" in browser.find_element(By.ID, "read-back-result").get_attribute("class").split()
    differences = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#read-back-differences > li")]
    assert differences == [texts["difference"].format(
        position=position, heard=spelled(wrong_character, lang), actual=spelled(teletan[position - 1], lang))]

    # Read back right, in lower case with spaces between the groups: matches.
    type_into(browser, "read-back", f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}".lower())
    click_and_wait(browser, browser.find_element(By.ID, "check-read-back"))
    assert text_of(browser, "read-back-result") == texts["matches"]
    assert not present(browser, "read-back-differences")
    assert not present(browser, "read-back"), "a matched read-back is still asked for"

    # I have passed it on: the call ends.
    passed_on = browser.find_element(By.ID, "passed-on")
    assert passed_on.text == texts["passed_on"]
    click_and_wait(browser, passed_on)
    assert path_of(browser) == "/hotline"
    assert urlsplit(browser.current_url).query == "done=passed_on"
    assert text_of(browser, "hotline-notice") == texts["done_passed_on"]

    # The callback is closed: listed without any number, masked or not.
    browser.get(portal.base_url + "/hotline/callbacks")
    assert not browser.find_elements(By.ID, f"callback-{callback}")
    closed = [[cell.text.strip() for cell in row.find_elements(By.TAG_NAME, "td")]
              for row in browser.find_elements(By.CSS_SELECTOR, "#closed-callbacks tr.closed-entry")]
    assert [texts["reached"], "2"] in [cells[2:] for cells in closed], closed
    assert masked(phone) not in browser.page_source
    assert_contact_not_on_page(browser, phone, name)


def test_two_agents_take_the_same_callback_only_one_gets_it(browser, second_browser, portal, secrets_ledger):
    first, second = browser, second_browser
    sign_in(first, portal, secrets_ledger, *HOTLINE)
    sign_in(second, portal, secrets_ledger, *HOTLINE2)
    callback = queue_callback(first, portal, "en", RACE_CALLER["phone"], RACE_CALLER["name"], secrets_ledger)

    # Both see it waiting; the first takes it, the second presses Take on the page it still has.
    second.get(portal.base_url + "/hotline/callbacks")
    stale_take = queue_row(second, callback).find_element(By.CSS_SELECTOR, ".take")
    first.get(portal.base_url + "/hotline/callbacks")
    click_and_wait(first, queue_row(first, callback).find_element(By.CSS_SELECTOR, ".take"))
    assert path_of(first) == f"/hotline/callbacks/{callback}"
    assert text_of(first, "callback-name") == RACE_CALLER["name"]

    second.get_log("performance")  # drop what came before
    click_and_wait(second, stale_take)
    assert last_document_status(second) == 409
    assert path_of(second) == f"/hotline/callbacks/{callback}/take"
    assert text_of(second, "queue-notice") == "Another agent has just taken this callback."
    row = queue_row(second, callback)
    assert not row.find_elements(By.CSS_SELECTOR, ".take")
    assert row.find_element(By.CSS_SELECTOR, ".taken").text == f"Taken by {HOTLINE[0]}"
    assert_contact_not_on_page(second, RACE_CALLER["phone"], RACE_CALLER["name"])
    # Nor does the callback's own page show the other agent the number.
    second.get(portal.base_url + f"/hotline/callbacks/{callback}")
    assert last_document_status(second) == 409
    assert not present(second, "callback-phone")
    assert_contact_not_on_page(second, RACE_CALLER["phone"], RACE_CALLER["name"])

    # The taker closes it (the caller refused): it leaves the queue, its contact data deleted.
    click_and_wait(first, first.find_element(By.ID, "outcome-refused"))
    assert path_of(first) == "/hotline/callbacks"
    assert not first.find_elements(By.ID, f"callback-{callback}")
    assert_contact_not_on_page(first, RACE_CALLER["phone"], RACE_CALLER["name"])


def submit_post(driver, action: str) -> None:
    """Posts a form with the page's CSRF token to `action` (as a forged or hand-made form would)
    and waits for the answer."""
    mark_for_navigation(driver)
    driver.execute_script("""
        const form = document.createElement('form');
        form.method = 'post';
        form.action = arguments[0];
        const csrf = document.createElement('input');
        csrf.type = 'hidden'; csrf.name = 'csrf';
        csrf.value = document.querySelector('input[name=csrf]').value;
        form.appendChild(csrf);
        document.body.appendChild(form);
        form.submit();
    """, action)
    wait_for_new_document(driver)


def approve_actions(driver) -> dict[str, list[str]]:
    """The requests awaiting the signed-in event officer's decision on the start page: approve
    form action -> the row's cells."""
    return {row.find_element(By.CSS_SELECTOR, "form[action$='/approve']").get_attribute("action"):
            [cell.text.strip() for cell in row.find_elements(By.TAG_NAME, "td")]
            for row in driver.find_elements(By.CSS_SELECTOR, "#requests-to-approve tbody tr")}


def test_event_teletan_needs_a_second_event_officer(browser, second_browser, two_person_portal, secrets_ledger):
    portal = two_person_portal
    requester, approver = second_browser, browser
    sign_in(approver, portal, secrets_ledger, *EVENT2)
    assert path_of(approver) == "/"
    pending_before = approve_actions(approver)

    # The request.
    sign_in(requester, portal, secrets_ledger, *EVENT)
    assert path_of(requester) == "/"
    assert present(requester, "event-section")
    assert not present(requester, "issue-event-teletan"), "an EVENT teleTAN without approval is offered"
    Select(requester.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY_ID)
    requester.find_element(By.ID, "event-reason").send_keys("AZ 53-2026/117")
    click_and_wait(requester, requester.find_element(By.ID, "request-event-teletan"))
    assert path_of(requester) == "/"
    assert text_of(requester, "event-notice") == "Your request was recorded. Another event officer must approve it."
    statuses = [cell.text for cell in requester.find_elements(By.CSS_SELECTOR, "#own-requests .request-status")]
    assert "Waiting for approval" in statuses
    assert not requester.find_elements(By.CSS_SELECTOR, ".issue-approved")

    approver.get(portal.base_url + "/")
    new = {action: cells for action, cells in approve_actions(approver).items() if action not in pending_before}
    assert len(new) == 1, f"expected one new request to approve, found {len(new)}"
    action, cells = new.popitem()
    assert cells[:2] == [EVENT[0], f"{AUTHORITY_NAME} ({AUTHORITY_ID})"]
    assert re.search(f"/teletan/event/requests/{UUID}/approve$", action)

    # The requester cannot approve their own request, even with a hand-made form: 403.
    assert action not in approve_actions(requester)
    requester.get_log("performance")
    submit_post(requester, action)
    assert last_document_status(requester) == 403
    assert requester.find_element(By.TAG_NAME, "h1").text == "Not allowed"
    assert text_of(requester, "error-message") == \
        "You cannot approve or decline your own request: a second event officer must do it."

    # The second event officer approves; the requester issues and sees the authority's name.
    approve = next(row for row in approver.find_elements(By.CSS_SELECTOR, "#requests-to-approve tbody tr")
                   if row.find_element(By.CSS_SELECTOR, "form[action$='/approve']").get_attribute("action") == action)
    click_and_wait(approver, approve.find_element(By.CSS_SELECTOR, ".approve"))
    assert text_of(approver, "event-notice") == \
        "The request was approved. The requester can now issue the EVENT teleTAN."
    assert action not in approve_actions(approver)

    requester.get(portal.base_url + "/")
    statuses = [cell.text for cell in requester.find_elements(By.CSS_SELECTOR, "#own-requests .request-status")]
    assert f"Approved by {EVENT2[0]}" in statuses
    issue = requester.find_elements(By.CSS_SELECTOR, "#own-requests .issue-approved")
    assert len(issue) == 1
    wait_issue_interval(EVENT[0])
    click_and_wait(requester, issue[0])
    note_issue(EVENT[0])
    teletan = read_call_teletan(requester, secrets_ledger, "en")
    assert text_of(requester, "result-authority") == AUTHORITY_NAME
    assert "EVENT" in requester.find_element(By.CSS_SELECTOR, "#teletan-panel .facts").text
    assert present(requester, "passed-on")

    click_and_wait(requester, requester.find_element(By.ID, "passed-on"))
    statuses = [cell.text for cell in requester.find_elements(By.CSS_SELECTOR, "#own-requests .request-status")]
    assert "Issued" in statuses
    assert not requester.find_elements(By.CSS_SELECTOR, ".issue-approved"), "an issued request can be issued again"
    assert_teletan_not_on_page(requester, teletan)


def recent_rows(driver) -> dict[str, object]:
    return {row.get_attribute("id"): row for row in driver.find_elements(By.CSS_SELECTOR, "#recent-teletans tbody tr")}


def test_my_recent_teletans_show_the_status_and_revoke(browser, portal, secrets_ledger):
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    browser.get(portal.base_url + "/teletan/recent")
    before = set(recent_rows(browser))
    browser.get(portal.base_url + "/")
    issue_teletan(browser, username)
    teletan = read_teletan(browser, secrets_ledger)
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    assert path_of(browser) == "/"
    link = browser.find_element(By.ID, "link-recent")
    assert link.text == "My recent teleTANs"
    click_and_wait(browser, link)
    assert path_of(browser) == "/teletan/recent"
    assert_teletan_not_on_page(browser, teletan)

    new = {key: row for key, row in recent_rows(browser).items() if key not in before}
    assert len(new) == 1, f"expected one new teleTAN in the list, found {len(new)}"
    row_id, row = new.popitem()
    status = row.find_element(By.CSS_SELECTOR, ".status")
    assert status.text == "Not used yet"
    assert "status-unused" in status.get_attribute("class").split()
    revoke = row.find_element(By.CSS_SELECTOR, ".revoke")
    assert revoke.text == "Revoke"

    click_and_wait(browser, revoke)
    # A second page asks for confirmation and a reason.
    browser.find_element(By.CSS_SELECTOR, "label[for=reason-wrong_person]").click()
    click_and_wait(browser, browser.find_element(By.ID, "confirm-revoke"))
    assert path_of(browser) == "/teletan/recent"
    assert text_of(browser, "revoke-result") == "The teleTAN was revoked. The app can no longer use it."
    row = recent_rows(browser)[row_id]
    status = row.find_element(By.CSS_SELECTOR, ".status")
    assert status.text == "Revoked"
    assert "status-revoked" in status.get_attribute("class").split()
    assert not row.find_elements(By.CSS_SELECTOR, ".revoke")
