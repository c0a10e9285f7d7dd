"""Accessibility of every page the portal shows: axe-core (bundled with axe-selenium-python) runs
on each page of each role, in English and in German, error pages included, and no violation of
impact "serious" or "critical" may remain. The hotline's pages are checked in the states that
show the most: the call page with an error, the read-back after a wrong read-back, the callback
queue with a waiting and a closed entry, a taken callback; the EVENT section and its result; and
the admin's pages: the audit search with results, with an unreadable filter (400) and after a
verification, one entry, the teleTAN lookup found, not found and refused (422), the charts, the
sessions and the lockouts with a lock.

Violations are collected over all pages of a run and reported together (page, language, rule,
impact, node targets); a page that does not load as expected fails the test at once. The node
HTML axe reports is never put into a message: on the result page it would hold the teleTAN.
"""

from __future__ import annotations

import re
import secrets

import pytest
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By

from selenium.webdriver.support.ui import Select

from conftest import OTP_PAM_SERVICE
from support import oath
from test_hotline_browser import (
    AUTHORITY_ID, AUTHORITY_NAME, EVENT, HOTLINE, check_ids, choose_language, queue_callback, queue_row, start_call, tick, type_into,
)
from test_portal_browser import (
    ADMIN, ALPHABET, NO_ROLE, OFFICER, OTP_USER, TELETAN_PATTERN, assert_no_error_page, check_character, click_and_wait,
    issue_outside_browser, mark_for_navigation, note_issue, path_of, sign_in, wait_for_new_document,
    wait_issue_interval,
)

PASSWORD_CHANGE = ("tt-pwchange", "Change-Pass-1")
# A name no account has: its failed sign-ins lock nobody out who matters.
NOBODY = ("tt-a11y-nobody", "Wrong-Pass-7")

LANGUAGES = ["en", "de"]

# Made-up callers of the queue pages (distinctive, and each number ends in other digits than
# those of test_hotline_browser.py): one is left waiting, one closed, per language.
A11Y_CALLERS = {
    "en": [("030 5550 7777 27", "Anneliese Barrierefrei-Kappa"), ("089 5550 3333 38", "Bruno Kontrastreich-Lambda")],
    "de": [("040 5550 6666 49", "Clara Vorlesbar-Epsilon"), ("0221 5550 4444 50", "Dieter Tastaturfest-Delta")],
}
BLOCKING_IMPACTS = {"serious", "critical"}

# Titles of the error pages (WebStrings.swift), to tell that the intended error page was shown.
FORM_EXPIRED = {"en": "This form has expired.", "de": "Dieses Formular ist abgelaufen."}
ERROR_TITLES = {
    "en": {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Not possible here", 421: "Wrong address"},
    "de": {400: "Ungültige Anfrage", 403: "Nicht erlaubt", 404: "Nicht gefunden", 405: "Hier nicht möglich"},
}

# axe.run's promise, handed back to Selenium either way (a rejection must not become a timeout).
#
# One known false positive is configured away, nothing else: autocomplete="one-time-code" on the
# one-time-code step (a password-type field when PAM asks without echo). The HTML standard puts
# "one-time-code" in the Password control group, allowed on type=password like current-password.
# axe-core 3.1.1 (bundled with axe-selenium-python 2.1.6, the last release for Python < 3.12) does
# not know the token at all (autocomplete-valid; axe-core 4 does), and axe-core's
# autocomplete-appropriate map still lacks it, so it would accept it on type=text only.
RUN_AXE = """
const done = arguments[arguments.length - 1];
if (typeof axe === 'undefined') { done({error: 'axe-core is not on the page'}); return; }
axe.configure({checks: [
  {id: 'autocomplete-valid', options: {standaloneTerms: ['one-time-code']}},
  {id: 'autocomplete-appropriate', options: {'one-time-code': ['text', 'search', 'password']}}
]});
// Only rule, impact and node targets (CSS selectors) come back: never the nodes' HTML, which on
// the result page holds the teleTAN.
axe.run(document).then(
  results => done({
    version: axe.version,
    passes: results.passes.length,
    violations: results.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.map(node => node.target.join(' '))}))}),
  error => done({error: String(error)}));
"""


class AxeAudit:
    """Runs axe on the current page of one browser and collects what must not be there."""

    def __init__(self, driver, lang: str):
        self.driver = driver
        self.lang = lang
        self.axe = Axe(driver)
        self.failures: list[str] = []
        self.pages: list[str] = []
        self.version: str | None = None

    def check(self, page: str, path: str | None = None, error_status: int | None = None) -> None:
        """Checks the page the browser shows: it must have loaded in the expected language, at
        `path` if given, be the error page with `error_status` if given (else no error page), and
        have no serious or critical axe violation."""
        driver = self.driver
        where = f"{page} [{self.lang}]"
        assert driver.execute_script("return document.readyState") == "complete", f"{where}: not loaded"
        if path is not None:
            assert path_of(driver) == path, f"{where}: expected {path}, the browser is at {path_of(driver)}"
        lang = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
        assert lang == self.lang, f"{where}: the page is in {lang!r}"
        if error_status is None:
            assert_no_error_page(driver)
        else:
            title = driver.find_element(By.TAG_NAME, "h1").text
            expected = ERROR_TITLES[self.lang][error_status]
            assert driver.find_elements(By.ID, "error-message") and title == expected, (
                f"{where}: expected the {error_status} error page ({expected!r}), got {title!r}")

        self.axe.inject()
        outcome = driver.execute_async_script(RUN_AXE)
        if "error" in outcome:
            pytest.fail(f"{where}: axe failed: {outcome['error']}")
        # axe really ran: some rules were checked and passed (an empty run would pass vacuously).
        if not outcome["passes"]:
            pytest.fail(f"{where}: axe {outcome.get('version')} reported no passed rule at all")
        for violation in outcome["violations"]:
            if violation["impact"] in BLOCKING_IMPACTS:
                self.failures.append(f"{where}: {violation['id']} ({violation['impact']}): {violation['help']}"
                                     f" -- nodes: {'; '.join(violation['targets'])}")
        self.version = outcome.get("version")
        self.pages.append(where)

    def assert_clean(self, expected_pages: int) -> None:
        problems = list(self.failures)
        if len(self.pages) != expected_pages:
            problems.append(f"axe ran on {len(self.pages)} pages, expected {expected_pages}")
        if problems:
            pytest.fail(f"{len(self.failures)} serious or critical accessibility violations (axe-core {self.version}):\n"
                        + "\n".join(problems), pytrace=False)


def sign_out(driver) -> None:
    click_and_wait(driver, driver.find_element(By.ID, "signout"))
    assert path_of(driver) == "/signin", driver.current_url


def submit_by_script(driver, script: str) -> None:
    """Runs a script that submits a form, and waits for the page it leads to (no error check)."""
    mark_for_navigation(driver)
    driver.execute_script(script)
    wait_for_new_document(driver)


def record_teletan(driver, ledger) -> str:
    """Records the teleTAN on the result page for the secrets check (never printed), and
    returns it."""
    value = re.sub(r"\s+", "", driver.find_element(By.ID, "teletan").text)
    ledger.add_teletan(value)
    assert TELETAN_PATTERN.fullmatch(value), "the result page shows no teleTAN"
    return value


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_has_no_serious_accessibility_violation(browser, portal, secrets_ledger, lang):
    audit = AxeAudit(browser, lang)
    base = portal.base_url
    choose_language(browser, portal, lang)

    # Signed out.
    audit.check("sign-in page", "/signin")
    if lang == "en":
        # Another name for the portal's address (here: localhost) gets the 421 page. The language
        # cookie belongs to the public host, so only the browser's own language (English) shows.
        browser.get(f"http://localhost:{portal.port}/signin")
        audit.check("421 page, another host name", error_status=421)
    browser.get(base + "/signin?expired=1")
    audit.check("sign-in page, session expired notice", "/signin")
    browser.get(base + "/signin?signedout=1")
    audit.check("sign-in page, signed-out notice", "/signin")
    sign_in(browser, portal, secrets_ledger, *NOBODY)
    assert browser.find_elements(By.ID, "signin-error"), "no sign-in error shown"
    audit.check("sign-in page, sign-in failed", "/signin")
    browser.get(base + "/nope")
    audit.check("404 page, signed out", error_status=404)
    browser.get(base + "/teletan")
    audit.check("405 page, signed out", error_status=405)

    # Officer: start page, result page, already shown, hidden notice, error pages signed in.
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    audit.check("start page, officer", "/")
    wait_issue_interval(username)
    click_and_wait(browser, browser.find_element(By.ID, "issue-teletan"))
    note_issue(username)
    officer_teletan = record_teletan(browser, secrets_ledger)
    audit.check("teleTAN result page", "/teletan/result")
    browser.refresh()
    assert browser.find_elements(By.ID, "already-shown"), "reloading did not give the already-shown page"
    audit.check("already-shown page", "/teletan/result")
    browser.get(base + "/?hidden=1")
    assert browser.find_elements(By.ID, "teletan-was-hidden")
    audit.check("start page after the display time (?hidden=1)", "/")
    # A teleTAN whose redirect was lost: the start page offers it.
    issue_outside_browser(browser, portal, username)
    browser.get(base + "/")
    assert browser.find_elements(By.ID, "teletan-waiting"), "the waiting teleTAN is not offered"
    audit.check("start page, a teleTAN waiting", "/")
    click_and_wait(browser, browser.find_element(By.ID, "show-waiting"))
    record_teletan(browser, secrets_ledger)
    # A form whose one-use token is no good any more.
    browser.get(base + "/")
    submit_by_script(browser, "const form = document.querySelector('form[action=\"/teletan\"]');"
                              "form.querySelector('[name=nonce]').value = 'expired'; form.submit();")
    audit.check("400 page, form expired", error_status=400)
    assert FORM_EXPIRED[lang] in browser.find_element(By.ID, "error-message").text
    browser.get(base + "/nope")
    audit.check("404 page, signed in", error_status=404)
    browser.get(base + "/teletan")
    audit.check("405 page, signed in", error_status=405)
    browser.get(base + "/")
    # The issuing form without its one-use token: the form cannot be decoded.
    submit_by_script(browser, "const form = document.querySelector('form[action=\"/teletan\"]');"
                              "form.querySelector('[name=nonce]').remove(); form.submit();")
    audit.check("400 page", error_status=400)
    browser.get(base + "/")
    submit_by_script(browser, "const form = document.querySelector('form[action=\"/signout\"]');"
                              "form.querySelector('[name=csrf]').value = 'not-the-token'; form.submit();")
    audit.check("403 page, bad CSRF token", error_status=403)
    browser.get(base + "/")
    sign_out(browser)

    # The other roles.
    sign_in(browser, portal, secrets_ledger, *HOTLINE)
    browser.get(base + "/")
    assert browser.find_elements(By.ID, "link-hotline") and browser.find_elements(By.ID, "start-call")
    audit.check("start page, hotline", "/")
    check_hotline_pages(audit, browser, portal, secrets_ledger, lang)
    sign_out(browser)

    sign_in(browser, portal, secrets_ledger, *EVENT)
    assert browser.find_elements(By.ID, "event-section") and browser.find_elements(By.ID, "issue-event-teletan")
    audit.check("start page, event (EVENT section)", "/")
    Select(browser.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY_ID)
    wait_issue_interval(EVENT[0])
    click_and_wait(browser, browser.find_element(By.ID, "issue-event-teletan"))
    note_issue(EVENT[0])
    record_teletan(browser, secrets_ledger)
    assert browser.find_element(By.ID, "result-authority").text == AUTHORITY_NAME
    audit.check("teleTAN result page, EVENT", "/teletan/result")
    browser.get(base + "/hotline")
    audit.check("403 page, event user on the hotline page", error_status=403)
    browser.get(base + "/")
    sign_out(browser)

    # A made-up name locked by five failed sign-ins, for the lockouts page.
    locked = f"tt-a11y-locked-{lang}"
    for _ in range(5):
        sign_in(browser, portal, secrets_ledger, locked, NOBODY[1])
        assert path_of(browser) == "/signin"
    sign_in(browser, portal, secrets_ledger, *ADMIN)
    assert browser.find_elements(By.ID, "no-issue-role")
    audit.check("start page, admin", "/")
    check_admin_pages(audit, browser, portal, secrets_ledger, officer_teletan, locked)
    sign_out(browser)

    sign_in(browser, portal, secrets_ledger, *NO_ROLE)
    assert browser.find_elements(By.ID, "no-role")
    audit.check("start page, no role", "/")
    sign_out(browser)

    # Expired password: the password-change step. It is not completed: two different new
    # passwords end the conversation with the failure page, and the password stays as it is.
    sign_in(browser, portal, secrets_ledger, *PASSWORD_CHANGE)
    assert browser.find_elements(By.ID, "new_password"), "no password-change page"
    audit.check("password-change page")
    for field, value in (("new_password", "A11y-New-Pass-7"), ("new_password_repeat", "A11y-Other-Pass-8")):
        secrets_ledger.add_password(value)
        browser.find_element(By.ID, field).send_keys(value)
    mark_for_navigation(browser)
    browser.find_element(By.ID, "change-password").click()
    wait_for_new_document(browser)
    assert browser.find_elements(By.ID, "signin-error"), "mismatched new passwords were not refused"
    audit.check("sign-in page, password change failed")

    audit.assert_clean(expected_pages=48 if lang == "en" else 47)


def made_up_teletan() -> str:
    """A teleTAN of valid form (check character included) that no portal issued."""
    body = "".join(secrets.choice(ALPHABET) for _ in range(9))
    return body + check_character(body)


def look_up(driver, typed: str) -> None:
    """Types into the lookup form of the search page and presses Look up (no error check)."""
    driver.get(driver.current_url.split("/admin/")[0] + "/admin/audit")
    type_into(driver, "lookup-teletan", typed)
    mark_for_navigation(driver)
    driver.find_element(By.ID, "lookup").click()
    wait_for_new_document(driver)


def check_admin_pages(audit: AxeAudit, browser, portal, ledger, teletan: str, locked: str) -> None:
    """The admin's pages (signed in as tt-admin): the audit search with results, with an
    unreadable filter, one entry, the teleTAN lookup found, not found and refused, the charts,
    the sessions, the lockouts with `locked` (lifted again afterwards), and the search page after
    a verification."""
    base = portal.base_url
    browser.get(f"{base}/admin/audit?actor={OFFICER[0]}")
    assert browser.find_elements(By.CSS_SELECTOR, "#audit-results tbody tr"), "no results"
    audit.check("audit search with results", "/admin/audit")
    browser.get(f"{base}/admin/audit?actor={OFFICER[0]}&from=24.11.2026")
    assert browser.find_elements(By.ID, "filter-error"), "no message for an unreadable From"
    audit.check("audit search, unreadable From (400)", "/admin/audit")
    browser.get(f"{base}/admin/audit?actor={OFFICER[0]}")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "#audit-results tbody tr a"))
    assert path_of(browser).startswith("/admin/audit/entries/") and browser.find_elements(By.ID, "entry-hash")
    audit.check("audit entry")

    look_up(browser, f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}".lower())
    assert path_of(browser).startswith("/admin/audit/teletans/") and browser.find_elements(By.ID, "teletan-facts"), \
        "the lookup did not find the officer's teleTAN"
    audit.check("teleTAN lookup, found")
    unknown = made_up_teletan()
    ledger.add_teletan(unknown)
    look_up(browser, unknown)
    assert browser.find_elements(By.ID, "teletan-not-found"), "a teleTAN nobody issued was found"
    audit.check("teleTAN lookup, not found")
    look_up(browser, "12345")
    assert browser.find_elements(By.ID, "lookup-error"), "no error for a text that is no teleTAN"
    audit.check("teleTAN lookup, not a teleTAN (422)", "/admin/audit/lookup")

    browser.get(base + "/admin/audit/charts")
    audit.check("audit charts", "/admin/audit/charts")
    browser.get(base + "/admin/sessions")
    assert browser.find_elements(By.CSS_SELECTOR, "#sessions tr.session"), "no session listed"
    audit.check("sessions", "/admin/sessions")
    browser.get(base + "/admin/lockouts")
    rows = [row for row in browser.find_elements(By.CSS_SELECTOR, "#lockouts tr.lockout")
            if row.find_element(By.CSS_SELECTOR, ".lock-key").text == locked]
    assert len(rows) == 1, f"{locked} is not listed as locked"
    audit.check("lockouts with a lock", "/admin/lockouts")
    click_and_wait(browser, rows[0].find_element(By.CSS_SELECTOR, ".lift-lock"))

    browser.get(base + "/admin/audit")
    click_and_wait(browser, browser.find_element(By.ID, "verify-incremental"))
    assert browser.find_elements(By.ID, "verify-notice") and browser.find_elements(By.ID, "last-verification")
    audit.check("audit search after a verification", "/admin/audit")
    browser.get(base + "/")


def check_hotline_pages(audit: AxeAudit, browser, portal, ledger, lang: str) -> None:
    """The hotline's pages, signed in as a hotline agent on the start page; leaves the queue as
    it found it (the waiting entry made here is closed at the end)."""
    base = portal.base_url
    browser.get(base + "/hotline")
    audit.check("hotline page", "/hotline")

    # The callback queue with a waiting and a closed entry, and a taken callback.
    (waiting_phone, waiting_name), (closed_phone, closed_name) = A11Y_CALLERS[lang]
    waiting = queue_callback(browser, portal, lang, waiting_phone, waiting_name, ledger)
    closed = queue_callback(browser, portal, lang, closed_phone, closed_name, ledger)
    click_and_wait(browser, queue_row(browser, closed).find_element(By.CSS_SELECTOR, ".take"))
    assert browser.find_elements(By.ID, "callback-phone")
    audit.check("taken callback page", f"/hotline/callbacks/{closed}")
    click_and_wait(browser, browser.find_element(By.ID, "outcome-wrong-number"))
    assert queue_row(browser, waiting) and browser.find_elements(By.CSS_SELECTOR, "#closed-callbacks .closed-entry")
    audit.check("callback queue, a waiting and a closed entry", "/hotline/callbacks")
    browser.set_window_size(390, 844)
    try:
        browser.get(base + "/hotline/callbacks")
        audit.check("callback queue at 390 px", "/hotline/callbacks")
    finally:
        browser.set_window_size(1280, 1000)

    # The same number again: refused, it waits already (409). Enter with nothing typed: a notice.
    call = start_call(browser, portal, lang)
    # Answered with the call page (409), not a redirect: Chromium keeps the posted form in its
    # session history, as for any form error.
    ledger.add_phone_number(waiting_phone, posted_to_a_page=True)
    ledger.add_person_name(waiting_name, posted_to_a_page=True)
    type_into(browser, "phone", waiting_phone)
    type_into(browser, "name", waiting_name)
    click_and_wait(browser, browser.find_element(By.ID, "call-back-later"))
    assert browser.find_elements(By.ID, "call-error"), "the same number was queued twice"
    audit.check("call page, number already waiting (409)", f"/hotline/calls/{call}/callback")
    type_into(browser, "phone", "")
    type_into(browser, "name", "")
    submit_by_script(browser, "document.getElementById('enter-default').click()")
    assert browser.find_elements(By.ID, "call-notice"), "no notice after Enter"
    audit.check("call page, Enter with nothing typed", f"/hotline/calls/{call}/callback")
    Select(browser.find_element(By.ID, "outcome")).select_by_value("information_only")
    click_and_wait(browser, browser.find_element(By.ID, "end-call"))

    # A call: Issue teleTAN with no check ticked (the error), then with every required check.
    call = start_call(browser, portal, lang)
    click_and_wait(browser, browser.find_element(By.ID, "issue-teletan"))
    assert browser.find_elements(By.ID, "call-error"), "no error for a teleTAN without the checks"
    audit.check("call page, checks with an error", f"/hotline/calls/{call}/issue")
    browser.set_window_size(390, 844)
    try:
        audit.check("call page, checks with an error, at 390 px", f"/hotline/calls/{call}/issue")
    finally:
        browser.set_window_size(1280, 1000)
    tick(browser, check_ids(browser)[1])
    wait_issue_interval(HOTLINE[0])
    click_and_wait(browser, browser.find_element(By.ID, "issue-teletan"))
    note_issue(HOTLINE[0])
    record_teletan(browser, ledger)
    teletan = re.sub(r"\s+", "", browser.find_element(By.ID, "teletan").text)
    assert browser.find_elements(By.ID, "continue-call")
    audit.check("teleTAN result page, hotline call", "/teletan/result")
    click_and_wait(browser, browser.find_element(By.ID, "continue-call"))
    # A read-back with the first character wrong.
    wrong = ("Z" if teletan[0] != "Z" else "Y") + teletan[1:]
    ledger.add_secret(wrong, "mistyped read-back")
    type_into(browser, "read-back", wrong)
    click_and_wait(browser, browser.find_element(By.ID, "check-read-back"))
    assert browser.find_elements(By.ID, "read-back-differences"), "no differences listed for a wrong read-back"
    audit.check("call page, read-back step after a wrong read-back", f"/hotline/calls/{call}")
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    assert path_of(browser) == "/hotline"

    browser.get(base + "/hotline/overview")
    assert browser.find_elements(By.ID, "calls-by-outcome")
    audit.check("hotline overview", "/hotline/overview")
    browser.get(base + "/teletan/recent")
    assert browser.find_elements(By.CSS_SELECTOR, "#recent-teletans tbody tr"), "no teleTAN listed"
    audit.check("my recent teleTANs", "/teletan/recent")

    # The waiting entry is reached (the call shows number and name), and that call ended, so that
    # the next run finds only its own.
    browser.get(base + "/hotline/callbacks")
    click_and_wait(browser, queue_row(browser, waiting).find_element(By.CSS_SELECTOR, ".take"))
    click_and_wait(browser, browser.find_element(By.ID, "outcome-reached"))
    assert browser.find_elements(By.ID, "caller-name"), "the reached call does not show the caller"
    reached_call = path_of(browser)
    audit.check("call page after Reached, with the caller", reached_call)
    Select(browser.find_element(By.ID, "outcome")).select_by_value("caller_hung_up")
    click_and_wait(browser, browser.find_element(By.ID, "end-call"))
    browser.get(base + "/hotline/callbacks")
    assert not browser.find_elements(By.ID, f"callback-{waiting}")
    browser.get(base + "/")


@pytest.mark.parametrize("portal", [OTP_PAM_SERVICE], indirect=True)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_time_code_step_has_no_serious_accessibility_violation(browser, portal, secrets_ledger, lang):
    audit = AxeAudit(browser, lang)
    choose_language(browser, portal, lang)
    username, password = OTP_USER
    sign_in(browser, portal, secrets_ledger, username, password)
    assert browser.find_elements(By.ID, "answer"), "no one-time-code step"
    audit.check("one-time-code step page")
    # Completed, so that no conversation is left waiting in the portal.
    with oath.code_lock():
        _, code = oath.next_code(username)
        browser.find_element(By.ID, "answer").send_keys(code)
        click_and_wait(browser, browser.find_element(By.ID, "continue"))
    assert path_of(browser) == "/"
    sign_out(browser)
    audit.assert_clean(expected_pages=1)


# The admin's data pages changed by issue 18 (full width, lookup and chain check first, the
# own-views box, the lockouts' failures and links), at a desktop and a phone width.
WIDTHS = [(1280, 800), (390, 844)]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("size", WIDTHS, ids=["1280", "390"])
def test_admin_data_pages_at_desktop_and_phone_width(browser, portal, secrets_ledger, lang, size):
    """axe on each page at the width, and nothing wider than the window (a table scrolls in its
    own box; the page itself never scrolls sideways)."""
    browser.set_window_size(*size)
    audit = AxeAudit(browser, lang)
    base = portal.base_url
    choose_language(browser, portal, lang)
    locked = f"tt-a11y-wide-{lang}-{size[0]}"
    for _ in range(5):
        sign_in(browser, portal, secrets_ledger, locked, NOBODY[1])
        assert path_of(browser) == "/signin"
    sign_in(browser, portal, secrets_ledger, *ADMIN)

    def check(page: str, path: str | None = None) -> None:
        audit.check(f"{page} at {size[0]} px", path)
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth;")
        assert overflow <= 1, f"{page} at {size[0]} px [{lang}] is {overflow} px wider than the window"

    browser.get(f"{base}/admin/audit?own_views=show")
    assert browser.find_elements(By.CSS_SELECTOR, "#audit-results tbody tr"), "no results"
    check("audit search, own page views shown", "/admin/audit")
    browser.get(f"{base}/admin/audit?actor={ADMIN[0].upper()}&action=audit")
    check("audit search, actor and action prefix", "/admin/audit")
    browser.get(f"{base}/admin/audit?from=24.11.2026")
    check("audit search, unreadable From (400)", "/admin/audit")
    look_up(browser, "12345")
    assert browser.find_elements(By.ID, "lookup-error")
    check("teleTAN lookup, not a teleTAN (422)", "/admin/audit/lookup")
    unknown = made_up_teletan()
    secrets_ledger.add_teletan(unknown)
    look_up(browser, unknown)
    check("teleTAN lookup, not found")
    browser.get(f"{base}/admin/audit")
    click_and_wait(browser, browser.find_element(By.ID, "verify-incremental"))
    check("audit search after a check", "/admin/audit")
    browser.get(f"{base}/admin/audit/entries/1")
    check("audit entry")
    browser.get(f"{base}/admin/sessions")
    check("sessions", "/admin/sessions")
    browser.get(f"{base}/admin/lockouts")
    rows = [row for row in browser.find_elements(By.CSS_SELECTOR, "#lockouts tr.lockout")
            if row.find_element(By.CSS_SELECTOR, ".lock-key").text == locked]
    assert len(rows) == 1, f"{locked} is not listed as locked"
    check("lockouts with a lock", "/admin/lockouts")
    click_and_wait(browser, rows[0].find_element(By.CSS_SELECTOR, ".lift-lock"))
    browser.get(f"{base}/admin/audit/charts")
    check("audit charts", "/admin/audit/charts")
    audit.assert_clean(expected_pages=10)
