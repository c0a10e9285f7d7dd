"""The shown-once checks and a whole hotline call in Debian's Firefox ESR, the browser many German
public authorities standardise on, driven over WebDriver BiDi (firefox_bidi.py: no geckodriver
package exists here). The helpers of the Chromium tests run unchanged: the client offers the part
of selenium's interface they use.

Each test gets a fresh Firefox with a fresh profile, which the secrets ledger searches with
everything else at the end of the session (its session store decompressed). The hotline call also
looks into that session store while the call runs: Firefox keeps there what is typed into form
fields (to restore it after a crash), so a phone number, a name or a read-back teleTAN typed must
not be in it (the fields say autocomplete="off").

Without firefox-esr the tests are skipped, and fail instead when CI=true or
PORTAL_REQUIRE_FIREFOX=1 (scripts/test.sh).
"""

from __future__ import annotations

import json
import os
import time
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By

from firefox_bidi import FIREFOX, SESSION_STORE_INTERVAL, Firefox, firefox_available
from support.secrets_at_rest import MOZLZ4_MAGIC, lz4_block
from test_hotline_browser import HOTLINE, TEXTS, check_ids, read_call_teletan, start_call, text_of, tick, ticked, type_into
from test_portal_browser import (
    OFFICER, assert_already_shown, assert_teletan_not_on_page, click_and_wait, issue_teletan, note_issue, path_of,
    present, read_teletan, sign_in, wait_for_fresh_start_page, wait_issue_interval,
)

# Made up and distinctive, used nowhere else (the secrets ledger searches for them).
FIREFOX_CALLER = {"phone": "030 5550 3141 5", "name": "Fritzi Feuerfuchs-Lambda"}

FIREFOX_REQUIRED = os.environ.get("CI") == "true" or os.environ.get("PORTAL_REQUIRE_FIREFOX") == "1"
MISSING = f"{FIREFOX} is not installed (scripts/install-deps.sh installs firefox-esr)"

# Skipped before any fixture starts (a portal, the secrets ledger), unless required.
if not firefox_available() and not FIREFOX_REQUIRED:
    pytestmark = pytest.mark.skip(reason=MISSING)


def started_firefox(secrets_ledger, tmp_path_factory, javascript: bool):
    if not firefox_available():
        pytest.fail(f"{MISSING}; CI=true or PORTAL_REQUIRE_FIREFOX=1 requires the Firefox tests")
    profile = tmp_path_factory.mktemp("firefox-profile" if javascript else "firefox-profile-no-js")
    secrets_ledger.watch_directory(profile, "Firefox profile")
    return Firefox(profile, javascript=javascript)


@pytest.fixture
def firefox(secrets_ledger, tmp_path_factory):
    """A fresh headless Firefox ESR per test; quit() fails the test if it tried to go online."""
    browser = started_firefox(secrets_ledger, tmp_path_factory, javascript=True)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def firefox_without_js(secrets_ledger, tmp_path_factory):
    """The same with `javascript.enabled=false`: pages run no script at all."""
    browser = started_firefox(secrets_ledger, tmp_path_factory, javascript=False)
    try:
        yield browser
    finally:
        browser.quit()


def session_store(browser) -> str:
    """What Firefox's session store holds on disk now (sessionstore-backups/recovery.jsonlz4, the
    file it restores from after a crash), decompressed. Firefox keeps there what is typed into a
    page's form fields, unless a field says autocomplete="off"."""
    path = browser.profile / "sessionstore-backups" / "recovery.jsonlz4"
    deadline = time.monotonic() + 10 * SESSION_STORE_INTERVAL
    while not path.exists() and time.monotonic() < deadline:  # not written yet
        time.sleep(0.2)
    raw = path.read_bytes()  # Firefox replaces the file whole (written aside, then renamed)
    assert raw.startswith(MOZLZ4_MAGIC), "not Firefox's compressed session store"
    return lz4_block(raw[len(MOZLZ4_MAGIC) + 4:]).decode("utf-8", errors="replace")


def session_store_with_ticks(browser, checks: list[str], timeout: float = 5 * SESSION_STORE_INTERVAL) -> str:
    """The session store once it holds the page's form as it is now, which Firefox collects all
    at once: every check ticked, so the fields typed into before are in it too unless they are
    kept out. After `timeout` the store as it is (a form whose ticks are kept out as well gives
    nothing to wait for)."""
    deadline = time.monotonic() + timeout
    while True:
        stored = session_store(browser)
        fields = {}
        for window in json.loads(stored)["windows"]:
            for tab in window["tabs"]:
                fields.update((tab.get("formdata") or {}).get("id", {}))
        if all(fields.get(f"check-{check}") is True for check in checks) or time.monotonic() > deadline:
            return stored
        time.sleep(0.2)


def fail_if_kept(stored: str, typed: dict[str, str]) -> None:
    """Fails if a value typed (what -> value) is in the session store; pytest.fail keeps the
    values out of the report."""
    kept = [what for what, value in typed.items() if value in stored]
    if kept:
        pytest.fail(f"Firefox keeps the typed {', '.join(kept)} in its session store (autocomplete=\"off\" missing?)")


def script_runs(browser) -> bool:
    # portal.js shows the copy button (127.0.0.1 is a secure context); without scripts it stays hidden.
    return browser.find_element(By.ID, "copy-teletan").is_displayed()


def test_firefox_reload_does_not_show_the_teletan_again(firefox, portal, secrets_ledger):
    sign_in(firefox, portal, secrets_ledger, *OFFICER)
    assert path_of(firefox) == "/"
    issue_teletan(firefox, OFFICER[0])
    teletan = read_teletan(firefox, secrets_ledger)
    assert script_runs(firefox)

    firefox.refresh()
    assert path_of(firefox) == "/teletan/result"
    assert_teletan_not_on_page(firefox, teletan)
    assert present(firefox, "already-shown"), "a reload did not reach the portal"


def test_firefox_back_and_forward_do_not_show_the_teletan_again(firefox, portal, secrets_ledger):
    sign_in(firefox, portal, secrets_ledger, *OFFICER)
    used_nonce = firefox.find_element(By.NAME, "nonce").get_attribute("value")

    # Result page -> Back -> Forward.
    issue_teletan(firefox, OFFICER[0])
    first = read_teletan(firefox, secrets_ledger)
    firefox.back()
    wait_for_fresh_start_page(firefox, used_nonce)
    assert_teletan_not_on_page(firefox, first)
    firefox.forward()
    assert_already_shown(firefox, first)

    # "I have passed it on" -> Back -> Forward.
    firefox.get(portal.base_url + "/")
    issue_teletan(firefox, OFFICER[0])
    second = read_teletan(firefox, secrets_ledger)
    assert second != first
    click_and_wait(firefox, firefox.find_element(By.ID, "passed-on"))
    assert path_of(firefox) == "/"
    firefox.back()
    assert_already_shown(firefox, second)
    firefox.forward()
    assert path_of(firefox) == "/"
    assert_teletan_not_on_page(firefox, second)


def test_firefox_without_javascript_shows_the_teletan_once(firefox_without_js, portal, secrets_ledger):
    browser = firefox_without_js
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    assert path_of(browser) == "/"
    issue_teletan(browser, OFFICER[0])
    teletan = read_teletan(browser, secrets_ledger)
    assert not script_runs(browser), "scripts run in this Firefox"

    # Reload: the portal answers "already shown".
    browser.refresh()
    assert path_of(browser) == "/teletan/result"
    assert_teletan_not_on_page(browser, teletan)
    assert present(browser, "already-shown")

    # Back and Forward: nothing (no portal.js to remove it from a cached copy either).
    browser.back()
    assert path_of(browser) == "/"
    assert_teletan_not_on_page(browser, teletan)
    browser.forward()
    assert path_of(browser) == "/teletan/result"
    assert_teletan_not_on_page(browser, teletan)
    assert present(browser, "already-shown")


def test_firefox_a_whole_hotline_call(firefox, portal, secrets_ledger):
    """Start call, tick the required checks, issue, the read-back, "I have passed it on"; and
    Back through the call's pages afterwards never brings the teleTAN back."""
    texts = TEXTS["en"]
    sign_in(firefox, portal, secrets_ledger, *HOTLINE)
    call = start_call(firefox, portal, "en")

    _, required = check_ids(firefox)
    assert not ticked(firefox), "a new call starts with no check ticked"

    # The agent begins to note a callback, then the caller stays on the line: the number and
    # name typed must not stay in Firefox's session store (autocomplete="off").
    secrets_ledger.add_phone_number(FIREFOX_CALLER["phone"])
    secrets_ledger.add_person_name(FIREFOX_CALLER["name"])
    type_into(firefox, "phone", FIREFOX_CALLER["phone"])
    type_into(firefox, "name", FIREFOX_CALLER["name"])
    tick(firefox, required)
    assert ticked(firefox) == set(required)
    fail_if_kept(session_store_with_ticks(firefox, required),
                 {"phone number": FIREFOX_CALLER["phone"], "name": FIREFOX_CALLER["name"]})
    type_into(firefox, "phone", "")
    type_into(firefox, "name", "")
    issue = firefox.find_element(By.ID, "issue-teletan")
    assert issue.text == texts["issue"]
    wait_issue_interval(HOTLINE[0])
    click_and_wait(firefox, issue)
    note_issue(HOTLINE[0])
    teletan = read_call_teletan(firefox, secrets_ledger, "en")
    assert not present(firefox, "passed-on")

    click_and_wait(firefox, firefox.find_element(By.ID, "continue-call"))
    assert path_of(firefox) == f"/hotline/calls/{call}"
    assert_teletan_not_on_page(firefox, teletan)

    # The caller reads it back as callers do: lower case, with spaces between the groups.
    read_back = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}".lower()
    type_into(firefox, "read-back", read_back)
    # The page has no other field to tell when Firefox has collected it: wait out more than
    # two of its writes.
    time.sleep(2.5 * SESSION_STORE_INTERVAL)
    fail_if_kept(session_store(firefox), {"read-back": read_back})
    click_and_wait(firefox, firefox.find_element(By.ID, "check-read-back"))
    assert path_of(firefox) == f"/hotline/calls/{call}"
    assert text_of(firefox, "read-back-result") == texts["matches"]
    assert not present(firefox, "read-back"), "a matched read-back is still asked for"

    passed_on = firefox.find_element(By.ID, "passed-on")
    assert passed_on.text == texts["passed_on"]
    click_and_wait(firefox, passed_on)
    assert path_of(firefox) == "/hotline"
    assert urlsplit(firefox.current_url).query == "done=passed_on"
    assert text_of(firefox, "hotline-notice") == texts["done_passed_on"]

    # Back, page by page, to the result page: every page on the way shows no teleTAN, and the
    # result page says it was shown already.
    for _ in range(6):
        firefox.back()
        assert_teletan_not_on_page(firefox, teletan)
        if path_of(firefox) == "/teletan/result":
            break
    assert_already_shown(firefox, teletan)
