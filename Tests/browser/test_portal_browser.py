"""Browser tests of the teleTAN portal: a headless Chromium against a real `portal serve`,
signing in through the real PAM test stack (scripts/install-pam-stack.sh).

The secrets check (no teleTAN or password in the database or the log) is not a test function:
it runs in the finaliser of the `secrets_ledger` fixture (conftest.py), after every portal has
stopped, over all teleTANs and passwords the tests below recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import time
from datetime import datetime, timezone
from urllib.parse import urlsplit

import pytest
import requests
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import OTP_PAM_SERVICE, PORTAL_BIN, PortalInstance
from support import oath
from support.database import DatabaseAccess

OFFICER = ("tt-officer", "Officer-Pass-1")
NO_ROLE = ("tt-norole", "Norole-Pass-1")
ADMIN = ("tt-admin", "Admin-Pass-1")
OTP_USER = ("tt-otp", "Otp-Pass-1")

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TELETAN_PATTERN = re.compile(f"[{ALPHABET}]{{10}}")
ENGLISH_DIGITS = {"2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight",
                  "9": "Niner"}
SIGN_IN_FAILED = "Sign-in failed. Check your username and password, or try again later."

# The portal runs with --teletan-interval 1s (one teleTAN per second per user); the tests wait
# out the rest of that second before issuing again rather than hit a 429 page.
ISSUE_INTERVAL = 1.2
_last_issue: dict[str, float] = {}


# ---------------------------------------------------------------------------------------------
# Helpers


def path_of(driver) -> str:
    return urlsplit(driver.current_url).path


def mark_for_navigation(driver) -> None:
    """Marks the current document; wait_for_new_document then waits until it is replaced."""
    driver.execute_script("window.browserTestOldDocument = true;")


def wait_for_new_document(driver) -> None:
    """Waits until the marked document was replaced and the next one (after any redirects) has
    loaded. While the browser is between documents, script calls can fail (e.g. "Node with given
    id does not belong to the document"); those are retried, not errors."""
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return document.readyState === 'complete' && !window.browserTestOldDocument;"))


def wait_for_fresh_start_page(driver, used_nonce: str) -> None:
    """After going back to the start page: waits until it is loaded afresh, with a new one-use form
    token. A page restored from the back/forward cache reloads itself (portal.js), and anything
    done before that reload would race it."""
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: path_of(d) == "/" and d.execute_script("return document.readyState === 'complete';")
        and d.find_element(By.NAME, "nonce").get_attribute("value") != used_nonce)


def assert_no_error_page(driver) -> None:
    """Fails with the portal's own words if it answered with its error page (error.mustache)."""
    messages = driver.find_elements(By.ID, "error-message")
    if messages:
        title = driver.find_element(By.TAG_NAME, "h1").text
        request_id = driver.find_element(By.CSS_SELECTOR, "main .hint code").text
        raise AssertionError(f"the portal answered {driver.current_url} with its error page: "
                             f"{title!r}: {messages[0].text!r} (request id {request_id}, see the portal log)")


def click_and_wait(driver, element) -> None:
    """Clicks a link or submit button, waits for the page it leads to (after redirects), and
    fails if that is the portal's error page."""
    mark_for_navigation(driver)
    element.click()
    wait_for_new_document(driver)
    assert_no_error_page(driver)


def present(driver, element_id: str) -> bool:
    return len(driver.find_elements(By.ID, element_id)) > 0


def sign_in(driver, portal: PortalInstance, ledger, username: str, password: str) -> None:
    """Fills in and submits the sign-in form (the outcome is for the caller to check)."""
    ledger.add_password(password)
    driver.get(portal.base_url + "/signin")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    click_and_wait(driver, driver.find_element(By.ID, "signin"))


def signed_in_user(driver) -> str:
    return driver.find_element(By.CSS_SELECTOR, "header .who strong").text


def sign_out(driver) -> None:
    click_and_wait(driver, driver.find_element(By.ID, "signout"))
    assert path_of(driver) == "/signin"
    assert "You have signed out." in driver.find_element(By.CSS_SELECTOR, "main .notice").text


def wait_issue_interval(username: str) -> None:
    last = _last_issue.get(username)
    if last is not None:
        time.sleep(max(0.0, last + ISSUE_INTERVAL - time.monotonic()))


def note_issue(username: str) -> None:
    _last_issue[username] = time.monotonic()


def issue_teletan(driver, username: str) -> None:
    """Presses "Issue teleTAN" on the start page and waits for the result page."""
    wait_issue_interval(username)
    button = driver.find_element(By.ID, "issue-teletan")
    assert button.text == "Issue teleTAN"
    click_and_wait(driver, button)
    note_issue(username)
    assert path_of(driver) == "/teletan/result", f"issuing ended on {driver.current_url}"


def issue_outside_browser(driver, portal: PortalInstance, username: str) -> None:
    """Submits the start page's issuing form with the browser's cookies but from outside it, and
    drops the answer: as if the connection broke before the redirect to the result page was
    followed. The teleTAN is issued and waits, unseen."""
    driver.get(portal.base_url + "/")
    form = {field: driver.find_element(By.NAME, field).get_attribute("value") for field in ("csrf", "nonce")}
    cookies = {cookie["name"]: cookie["value"] for cookie in driver.get_cookies()}
    wait_issue_interval(username)
    answer = requests.post(portal.base_url + "/teletan", data=form, cookies=cookies, headers={"Origin": portal.base_url},
                           allow_redirects=False, timeout=30)
    note_issue(username)
    assert answer.status_code == 303, answer.status_code


def check_character(body: str) -> str:
    """The teleTAN check character, computed independently of the portal: the first hex digit
    of SHA-256 over the upper-cased body, upper-cased, with 0 -> G and 1 -> H."""
    digit = hashlib.sha256(body.upper().encode("utf-8")).hexdigest()[0].upper()
    return {"0": "G", "1": "H"}.get(digit, digit)


def assert_valid_teletan(value: str) -> None:
    assert TELETAN_PATTERN.fullmatch(value), f"not a teleTAN: {len(value)} characters, {value!r}"
    assert value[9] == check_character(value[:9]), "wrong check character"


def read_teletan(driver, ledger) -> str:
    """Reads the teleTAN on the result page, records it for the secrets check and checks its
    format, check character, 3-3-4 grouping and spelling list."""
    element = driver.find_element(By.ID, "teletan")
    value = re.sub(r"\s+", "", element.text)
    ledger.add_teletan(value)  # recorded before the checks below (the ledger refuses a non-teleTAN)
    assert_valid_teletan(value)

    groups = [group.text for group in element.find_elements(By.CSS_SELECTOR, ".group")]
    assert groups == [value[0:3], value[3:6], value[6:10]]

    items = driver.find_elements(By.CSS_SELECTOR, "#teletan-spelled > li")
    assert len(items) == 3
    for group, item in zip(groups, items):
        label, _, spelled = item.text.partition(": ")
        assert label == group
        words = spelled.split(" - ")  # words are joined with " - " ("X-ray" has no spaces)
        assert len(words) == len(group), item.text
        for character, word in zip(group, words):
            expected = ENGLISH_DIGITS.get(character)
            assert (word == expected) if expected else word.startswith(character), (character, word)
    return value


def mark_document(driver) -> None:
    """Marks the current document, to tell later whether the browser showed that same
    document again (back/forward cache) instead of loading the page anew."""
    driver.execute_script("window.browserTestMarker = true;")


def how_shown(driver) -> str:
    if driver.execute_script("return window.browserTestMarker === true;"):
        return "restored from the back/forward cache, without a request to the portal"
    return "loaded anew"


def assert_teletan_not_on_page(driver, teletan: str) -> None:
    # The markup splits the teleTAN into group spans, so search the source both as it is and
    # with tags and white space removed.
    source = driver.page_source
    flattened = re.sub(r"\s+", "", re.sub(r"<[^>]*>", "", source))
    for haystack in (source, flattened):
        for variant in (teletan, teletan.lower()):
            if variant in haystack:  # pytest.fail: keep the page (and teleTAN) out of the report
                pytest.fail(f"the teleTAN is shown again at {driver.current_url} ({how_shown(driver)})")
    assert not present(driver, "teletan")


def assert_already_shown(driver, teletan: str) -> None:
    """Reloads reach the server and get the already-shown page. The back button may instead
    restore the page from the browser's back/forward cache; the page's script removed the
    teleTAN before it was cached and says so (#teletan-hidden). Either way: no teleTAN."""
    assert path_of(driver) == "/teletan/result"
    assert_teletan_not_on_page(driver, teletan)
    title = driver.find_element(By.TAG_NAME, "h1").text
    restored_and_hidden = present(driver, "teletan-hidden") and driver.find_element(By.ID, "teletan-hidden").is_displayed()
    assert present(driver, "already-shown") or restored_and_hidden, f"expected the already-shown page, got {title!r}"


def teletans_issued_to(portal: PortalInstance, username: str) -> int:
    """How many teleTANs the portal's database (SQLite or PostgreSQL) holds for `username`."""
    return DatabaseAccess(portal.database).count("teletans", where="requested_by", equals=username)


# ---------------------------------------------------------------------------------------------
# Tests


def test_officer_issues_teletan_shown_once(browser, portal, secrets_ledger):
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    assert path_of(browser) == "/"
    header = browser.find_element(By.CSS_SELECTOR, "header .who").text
    assert header.startswith(f"Signed in as {username}")
    assert signed_in_user(browser) == username
    assert browser.find_element(By.ID, "signout").text == "Sign out"

    used_nonce = browser.find_element(By.NAME, "nonce").get_attribute("value")
    issue_teletan(browser, username)
    first = read_teletan(browser, secrets_ledger)
    valid_until = browser.find_element(By.ID, "valid-until")
    assert valid_until.text.strip()
    assert datetime.fromisoformat(valid_until.get_attribute("datetime")) > datetime.now(timezone.utc)
    # portal.js shows the copy button where the clipboard API exists (127.0.0.1 is a secure context).
    assert browser.find_element(By.ID, "copy-teletan").is_displayed()
    # Switching language would reload the page, so the result page has no switch.
    assert not present(browser, "language-switch")

    # Shown once: a reload finds nothing, and neither does history navigation.
    browser.refresh()
    assert_already_shown(browser, first)
    browser.back()
    wait_for_fresh_start_page(browser, used_nonce)
    assert_teletan_not_on_page(browser, first)
    browser.forward()
    assert_already_shown(browser, first)

    # A second teleTAN from a freshly loaded start page is a different one.
    click_and_wait(browser, browser.find_element(By.ID, "back-home"))
    assert path_of(browser) == "/"
    issue_teletan(browser, username)
    second = read_teletan(browser, secrets_ledger)
    assert second != first

    # "I have passed it on" goes back to the start page; going back to the result page from
    # there must not bring the teleTAN back (no cached or back/forward-cached copy).
    mark_document(browser)
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    assert path_of(browser) == "/"
    assert present(browser, "issue-teletan")
    browser.back()
    assert_already_shown(browser, second)

    sign_out(browser)
    browser.get(portal.base_url + "/")
    assert path_of(browser) == "/signin"
    assert not present(browser, "signout")


@pytest.mark.parametrize("mode", ["two-clicks", "resubmitted-form"])
def test_double_submit_shows_one_teleTAN(browser, portal, secrets_ledger, mode):
    """two-clicks: a fast double click; portal.js disables the button on the first submit.
    resubmitted-form: the same form reaches the server twice (as without JavaScript); the form's
    one-time nonce must keep the second request from issuing another teleTAN."""
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    assert path_of(browser) == "/"
    before = teletans_issued_to(portal, username)
    wait_issue_interval(username)

    mark_for_navigation(browser)
    if mode == "two-clicks":
        browser.execute_script(
            "const button = document.getElementById('issue-teletan'); button.click(); button.click();")
    else:
        # First request by fetch (its 303 is not followed, so nothing is displayed yet), then the
        # ordinary submission of the same form, with the same nonce.
        outcome = browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const form = document.querySelector('form[data-submit-once]');
            fetch(form.action, {method: 'POST', body: new URLSearchParams(new FormData(form)),
                                credentials: 'same-origin', redirect: 'manual'})
              .then(response => { form.submit(); done(response.type); },
                    error => done('fetch failed: ' + error));
        """)
        assert outcome == "opaqueredirect", outcome  # the first request was answered with a redirect
    wait_for_new_document(browser)
    note_issue(username)
    assert_no_error_page(browser)

    assert path_of(browser) == "/teletan/result", browser.current_url
    assert len(browser.find_elements(By.ID, "teletan")) == 1
    teletan = read_teletan(browser, secrets_ledger)
    assert teletans_issued_to(portal, username) == before + 1, "not exactly one teleTAN issued"

    browser.refresh()
    assert_already_shown(browser, teletan)


def test_wrong_password_is_refused_generically(browser, portal, secrets_ledger):
    username, _ = OFFICER
    sign_in(browser, portal, secrets_ledger, username, "Wrong-Pass-9")
    assert path_of(browser) == "/signin"
    assert browser.find_element(By.ID, "signin-error").text == SIGN_IN_FAILED
    assert not present(browser, "signout")

    # An unknown username gets the very same message: nothing tells which part was wrong.
    sign_in(browser, portal, secrets_ledger, "tt-no-such-user", "Wrong-Pass-9")
    assert browser.find_element(By.ID, "signin-error").text == SIGN_IN_FAILED

    # No session was created.
    browser.get(portal.base_url + "/")
    assert path_of(browser) == "/signin"
    assert not present(browser, "signout")
    assert browser.get_cookie("portal_session") is None


def test_user_without_role_cannot_issue(browser, portal, secrets_ledger):
    username, password = NO_ROLE
    sign_in(browser, portal, secrets_ledger, username, password)
    assert path_of(browser) == "/"
    assert signed_in_user(browser) == username
    assert present(browser, "no-role")
    assert not present(browser, "issue-teletan")
    # The result page is refused as well (403), and shows no teleTAN.
    browser.get(portal.base_url + "/teletan/result")
    assert not present(browser, "teletan")
    assert not present(browser, "already-shown")
    assert "Not allowed" in browser.find_element(By.TAG_NAME, "h1").text


def test_admin_without_issuing_role_has_no_issue_button(browser, portal, secrets_ledger):
    username, password = ADMIN
    sign_in(browser, portal, secrets_ledger, username, password)
    assert path_of(browser) == "/"
    assert signed_in_user(browser) == username
    assert present(browser, "no-issue-role")
    assert not present(browser, "issue-teletan")


def test_german_ui_via_language_switch(browser, portal, secrets_ledger):
    browser.get(portal.base_url + "/signin")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    assert browser.find_element(By.CSS_SELECTOR, "label[for=username]").text == "Username"
    assert browser.find_element(By.CSS_SELECTOR, "label[for=password]").text == "Password"
    assert browser.find_element(By.ID, "signin").text == "Sign in"

    switch = browser.find_element(By.ID, "language-switch")
    assert switch.text == "Deutsch"
    click_and_wait(browser, switch)
    assert path_of(browser) == "/signin"
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert browser.find_element(By.CSS_SELECTOR, "label[for=username]").text == "Benutzername"
    assert browser.find_element(By.CSS_SELECTOR, "label[for=password]").text == "Passwort"
    assert browser.find_element(By.ID, "signin").text == "Anmelden"
    assert browser.find_element(By.ID, "language-switch").text == "English"

    # The choice is kept (cookie) through signing in.
    username, password = OFFICER
    browser.find_element(By.ID, "username").send_keys(username)
    browser.find_element(By.ID, "password").send_keys(password)
    secrets_ledger.add_password(password)
    click_and_wait(browser, browser.find_element(By.ID, "signin"))
    assert path_of(browser) == "/"
    assert browser.find_element(By.CSS_SELECTOR, "header .who").text.startswith(f"Angemeldet als {username}")
    assert browser.find_element(By.ID, "issue-teletan").text == "teleTAN erzeugen"
    assert browser.find_element(By.ID, "signout").text == "Abmelden"

    click_and_wait(browser, browser.find_element(By.ID, "language-switch"))
    assert path_of(browser) == "/"
    assert browser.find_element(By.ID, "issue-teletan").text == "Issue teleTAN"


@pytest.mark.parametrize("portal", [OTP_PAM_SERVICE], indirect=True)
def test_two_step_sign_in_with_one_time_password(browser, portal, secrets_ledger):
    username, password = OTP_USER
    sign_in(browser, portal, secrets_ledger, username, password)

    # Step two: the PAM stack's HOTP prompt, shown as its own form.
    assert not present(browser, "signout")
    assert not present(browser, "password")
    assert browser.find_element(By.CSS_SELECTOR, "label[for=answer]").text.strip()
    with oath.code_lock():
        step, code = oath.next_code(username)
        browser.find_element(By.ID, "answer").send_keys(code)
        click_and_wait(browser, browser.find_element(By.ID, "continue"))
        # pam_oath recorded the counter of the code just used (so that code cannot be used again).
        assert oath.counter(username) == step

    assert path_of(browser) == "/"
    assert signed_in_user(browser) == username
    assert present(browser, "issue-teletan")
    sign_out(browser)


def test_sigterm_exits_cleanly(tmp_path):
    """A portal of its own: SIGTERM must end it within the time limit (asserted), with exit
    status 0 and the "portal stopped" log line."""
    instance = PortalInstance("teletan-portal-test", tmp_path)
    instance.start()
    try:
        returncode = instance.stop()  # raises if the process is still running after 10 s
    finally:
        instance.kill()
    log = instance.log_text()
    assert returncode == 0, f"exit status {returncode} after SIGTERM:\n{instance.log_tail()}"
    assert "portal stopped" in log


def test_audit_verify_after_a_real_session(portal, browser, secrets_ledger):
    """`portal audit verify` (the operator's command) finds the chain written by a real sign-in,
    issuance and sign-out intact."""
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    issue_teletan(browser, OFFICER[0])
    assert read_teletan(browser, secrets_ledger)
    sign_out(browser)
    result = subprocess.run([PORTAL_BIN, "audit", "verify", "--database", portal.database],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "audit trail intact" in result.stdout


def test_bad_configuration_stops_with_one_line_naming_the_flag(tmp_path):
    result = subprocess.run([PORTAL_BIN, "serve", "--port", "not-a-port"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 78
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--port (PORTAL_PORT)" in lines[0], result.stderr


def test_audit_verify_names_the_first_broken_link(portal, browser, secrets_ledger, tmp_path):
    """On a copy of the portal's SQLite database, an entry changed behind the triggers' back
    (as someone with file access could) makes `portal audit verify` fail, naming that entry."""
    if portal.sqlite_path is None:
        pytest.skip("tampers with a copy of the SQLite file; the PostgreSQL chain is checked by the Swift tests")
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    sign_out(browser)
    copy = tmp_path / "tampered.sqlite"
    source = sqlite3.connect(f"file:{portal.sqlite_path}?mode=ro", uri=True, timeout=10)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
        entries = target.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0]
        assert entries >= 3, entries
        victim = entries - 1
        for (trigger,) in target.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'").fetchall():
            target.execute(f'DROP TRIGGER "{trigger}"')
        changed = target.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = ?", (victim,)).rowcount
        assert changed == 1
        target.commit()
    finally:
        source.close()
        target.close()
    result = subprocess.run([PORTAL_BIN, "audit", "verify", "--database", f"sqlite:{copy}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout
    assert f"audit trail broken at entry {victim}:" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "Fatal error" not in result.stderr
    # The untouched original still verifies.
    intact = subprocess.run([PORTAL_BIN, "audit", "verify", "--database", portal.database],
                            capture_output=True, text=True, timeout=60)
    assert intact.returncode == 0, intact.stderr



def test_two_instances_behind_a_load_balancer_act_as_one(portal, browser, secrets_ledger, tmp_path):
    """A second portal process on the same PostgreSQL database with the same secret, as behind a
    load balancer: a session begun on one is valid on the other, a teleTAN issued on one is not
    shown again on the other, failed sign-ins on both count against one name, signing out on one
    ends the session on both, and the audit chain both appended to verifies. (Cookies are per
    host, not per port, so the browser carries its session between the two.)"""
    if portal.sqlite_path is not None:
        pytest.skip("several instances need PostgreSQL (SQLite is for one instance)")
    second = PortalInstance(portal.pam_service, tmp_path, database=portal.database, secret_file=portal.secret_file)
    secrets_ledger.watch(second, second.database, log_marker=b"[PortalWeb] request")
    second.start()
    try:
        username, password = OFFICER
        sign_in(browser, portal, secrets_ledger, username, password)
        assert path_of(browser) == "/"
        browser.get(second.base_url + "/")
        assert path_of(browser) == "/" and signed_in_user(browser) == username, "the session is valid on the second"
        issue_teletan(browser, username)
        assert urlsplit(browser.current_url).port == second.port
        read_teletan(browser, secrets_ledger)
        browser.get(portal.base_url + "/teletan/result")
        assert present(browser, "already-shown"), "shown once across instances"

        # Five failures for one name, alternating between the instances, lock it on both.
        name = "tt-nobody-two-instances"
        for attempt, instance in enumerate([portal, second] * 3):
            browser.delete_all_cookies()
            sign_in(browser, instance, secrets_ledger, name, f"Wrong-Pass-{attempt}")
            assert path_of(browser) == "/signin"
        reasons = [json.loads(details).get("reason") for details in
                   DatabaseAccess(portal.database).values("audit_log", "details", where="actor", equals=name, order_by="seq")]
        assert reasons == ["authentication_failed"] * 5 + ["throttled"], reasons

        # Signing out on the second ends the session on the first.
        browser.delete_all_cookies()
        sign_in(browser, second, secrets_ledger, username, password)
        browser.get(portal.base_url + "/")
        assert signed_in_user(browser) == username
        browser.get(second.base_url + "/")
        sign_out(browser)
        browser.get(portal.base_url + "/")
        assert path_of(browser) == "/signin", "signed out on both"
    finally:
        second.stop_cleanly()
    result = subprocess.run([PORTAL_BIN, "audit", "verify", "--database", portal.database],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "audit trail intact" in result.stdout, result.stderr


def test_back_to_the_start_page_gives_a_usable_form(portal, browser, secrets_ledger):
    """Start page -> issue -> Back: the start page comes back with a working button and a fresh
    one-use form token (a restored page would have a disabled button and a spent token)."""
    username, password = OFFICER
    sign_in(browser, portal, secrets_ledger, username, password)
    used_nonce = browser.find_element(By.NAME, "nonce").get_attribute("value")
    issue_teletan(browser, username)
    read_teletan(browser, secrets_ledger)
    mark_for_navigation(browser)
    browser.back()
    wait_for_new_document(browser)
    wait_for_fresh_start_page(browser, used_nonce)
    assert browser.find_element(By.ID, "issue-teletan").is_enabled()
    wait_issue_interval(username)
    issue_teletan(browser, username)
    assert read_teletan(browser, secrets_ledger)
    sign_out(browser)
