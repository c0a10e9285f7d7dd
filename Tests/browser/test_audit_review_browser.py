"""Browser tests of the admins' review of the audit trail (issue 10), in a headless Chromium
against a real `portal serve`, in English and in German:

- the search form, filled in by its labels, whose URL another admin can open and see the same
  rows; keyset paging by the older and newer links, with nothing lost or doubled while entries
  are written meanwhile; an unreadable date that answers 400 and keeps what was typed;
- the teleTAN lookup (a POST: the typed teleTAN never reaches a URL or the browser's history);
- the CSV and JSON Lines exports, re-checked by Python's csv module and by the independent chain
  checker (Tests/support/audit_chain.py), against a checkpoint signed by `portal audit checkpoint
  --sign`, and refused with one changed byte by both that checker and `portal audit verify
  --export`;
- the charts page (inline SVG with a title and a table each, no inline script);
- ending another user's session, and lifting a sign-in lock;
- tamper evidence on the admin page and by the CLI (`portal audit verify --full`) for an entry
  changed and an entry deleted behind the triggers' back, on a portal of its own (SQLite only).

Every teleTAN read or typed goes into the secrets ledger (conftest.py), which searches the
portals' logs and databases and the Chromium profiles for it once every portal has stopped.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit
from zoneinfo import ZoneInfo

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import audit_chain
from conftest import DEFAULT_PAM_SERVICE, PORTAL_BIN, PortalInstance
from test_hotline_browser import choose_language
from test_portal_browser import (
    ADMIN, OFFICER, click_and_wait, issue_teletan, path_of, present, read_teletan, sign_in,
)

LANGUAGES = ["en", "de"]
BERLIN = ZoneInfo("Europe/Berlin")  # the portal's default --time-zone

# The portal's texts (AuditReviewStrings.swift); the English labels are fixed names.
TEXTS = {
    "en": {
        "labels": {"actor": "Actor", "action": "Action", "outcome": "Outcome", "from": "From", "to": "To",
                   "address": "Address", "subject": "Subject"},
        "search": "Search",
        "lookup": "Look up",
        "unused": "not used yet",
        "check_everything": "Check everything",
        "broken": "broken at entry",
        "intact": "intact",
        "end_session": "End session",
        "your_session": "your session",
        "session_ended": "The session has ended.",
        "lift_lock": "Lift lock",
        "lock_lifted": "The lock is lifted.",
    },
    "de": {
        "labels": {"actor": "Person", "action": "Aktion", "outcome": "Ergebnis", "from": "Von", "to": "Bis",
                   "address": "Adresse", "subject": "Gegenstand"},
        "search": "Suchen",
        "lookup": "Nachschlagen",
        "unused": "noch nicht verwendet",
        "check_everything": "Alles prüfen",
        "broken": "unterbrochen bei Eintrag",
        "intact": "unversehrt",
        "end_session": "Sitzung beenden",
        "your_session": "Ihre Sitzung",
        "session_ended": "Die Sitzung ist beendet.",
        "lift_lock": "Sperre aufheben",
        "lock_lifted": "Die Sperre ist aufgehoben.",
    },
}
# The browser and the portal run on one machine.
CLIENT_ADDRESS = "127.0.0.1"
FINGERPRINT_PATH = re.compile(r"/admin/audit/teletans/([0-9a-f]{64})")
CSV_HEADER = ["seq", "time_utc", "actor", "role", "action", "outcome", "address", "request_id", "subject", "details",
              "prev_hash", "hash"]


# ---------------------------------------------------------------------------------------------
# Helpers


def today_in_berlin() -> str:
    return datetime.now(BERLIN).date().isoformat()


def field_by_label(driver, label: str):
    """The form field a <label> with exactly this text names (through its `for`)."""
    labels = [element for element in driver.find_elements(By.TAG_NAME, "label") if element.text.strip() == label]
    assert len(labels) == 1, f"expected one label {label!r}, found {len(labels)}"
    target = labels[0].get_attribute("for")
    assert target, f"label {label!r} names no field"
    return driver.find_element(By.ID, target)


def fill_by_label(driver, label: str, value: str) -> None:
    field = field_by_label(driver, label)
    if field.tag_name == "select":
        Select(field).select_by_value(value)
    else:
        field.clear()
        field.send_keys(value)


def document_status(driver) -> int:
    """HTTP status of the document the browser shows (Navigation Timing)."""
    return driver.execute_script("return performance.getEntriesByType('navigation')[0].responseStatus;")


def result_rows(driver, table_id: str = "audit-results") -> list[dict]:
    """The rows of an entries table (entries.mustache) as dicts."""
    rows = []
    for row in driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr"):
        elements = row.find_elements(By.TAG_NAME, "td")
        cells = [cell.text.strip() for cell in elements]
        actor = re.sub(r" \([^)]*\)$", "", cells[2])  # "tt-officer (officer)" -> the actor
        # Outcome and details as stored (data attributes); the cells show them in the page's language.
        rows.append({"seq": int(cells[0]), "time": cells[1], "actor": actor, "action": cells[3],
                     "outcome": elements[4].get_attribute("data-outcome"), "outcome_label": cells[4],
                     "address": cells[5], "subject": cells[6], "details": elements[7].get_attribute("data-details"),
                     "details_shown": cells[7]})
    return rows


def seqs_on_page(driver) -> list[int]:
    return [row["seq"] for row in result_rows(driver)]


def sign_in_admin(driver, portal, ledger, lang: str) -> None:
    choose_language(driver, portal, lang)
    sign_in(driver, portal, ledger, *ADMIN)
    assert path_of(driver) == "/", driver.current_url


def session_cookies(driver) -> dict[str, str]:
    return {cookie["name"]: cookie["value"] for cookie in driver.get_cookies()}


def download(driver, url: str) -> requests.Response:
    """GET `url` with the browser's cookies, from outside the browser (its downloads are not
    reachable from Selenium in headless mode)."""
    answer = requests.get(url, cookies=session_cookies(driver), timeout=60)
    assert answer.status_code == 200, f"{url}: {answer.status_code}"
    return answer


def run_portal(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PORTAL_BIN, *arguments], capture_output=True, text=True, timeout=120, cwd=cwd)


def checkpoint_key(portal: PortalInstance) -> tuple[Path, Path]:
    """The portal's checkpoint key (next to its secret, see conftest.py) and its public key."""
    key = portal.secret_file.with_name("audit-checkpoint-key.pem")
    return key, portal.secret_file.with_name("audit-checkpoint-key.pub.pem")


def teletan_variants(teletan: str) -> list[str]:
    grouped = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}"
    return [teletan, teletan.lower(), grouped, grouped.lower()]


def assert_teletan_not_in(texts: list[str], teletan: str, where: str) -> None:
    """No form of the teleTAN in any of `texts` (URLs), also once they are percent-decoded."""
    for text in texts:
        for decoded in {text, unquote(text), unquote_plus(text)}:
            squeezed = re.sub(r"[\s+]", "", decoded).upper()
            if teletan in squeezed or any(variant in decoded for variant in teletan_variants(teletan)):
                pytest.fail(f"the teleTAN is in {where}")  # the URL itself is not printed: it holds the teleTAN


def browser_urls(driver) -> list[str]:
    """Every URL the page's Performance Timeline knows (the navigation and what it loaded)."""
    return driver.execute_script(
        "return performance.getEntries().map(e => e.name).concat([location.href, document.referrer]);")


def requested_urls(driver) -> list[str]:
    """Every URL in Chrome's performance log since it was last read (a browser with
    `performance_log=True`): requests, redirects and the documents' URLs."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message.get("method") == "Network.requestWillBeSent":
            urls += [params.get("documentURL", ""), params["request"].get("url", "")]
            if "redirectResponse" in params:
                urls.append(params["redirectResponse"].get("url", ""))
                urls.append(params["redirectResponse"].get("headers", {}).get("location", ""))
        elif message.get("method") == "Network.responseReceived":
            urls.append(params["response"].get("url", ""))
    return urls


# ---------------------------------------------------------------------------------------------
# Search


@pytest.mark.parametrize("lang", LANGUAGES)
def test_search_by_the_labelled_fields_gives_a_shareable_url(browser, second_browser, portal, secrets_ledger, lang):
    texts = TEXTS[lang]
    labels = texts["labels"]
    # The officer signs in and out (entries to find), in the browser the second admin uses later.
    choose_language(second_browser, portal, lang)
    sign_in(second_browser, portal, secrets_ledger, *OFFICER)
    assert path_of(second_browser) == "/"
    click_and_wait(second_browser, second_browser.find_element(By.ID, "signout"))

    sign_in_admin(browser, portal, secrets_ledger, lang)
    browser.get(portal.base_url + "/admin/audit")
    assert path_of(browser) == "/admin/audit"
    today = today_in_berlin()
    fill_by_label(browser, labels["actor"], OFFICER[0])
    fill_by_label(browser, labels["action"], "signin")
    fill_by_label(browser, labels["outcome"], "success")
    fill_by_label(browser, labels["from"], today)
    fill_by_label(browser, labels["to"], today)
    fill_by_label(browser, labels["address"], CLIENT_ADDRESS)
    # The seventh field, left empty here, is searched by in the lookup test.
    assert field_by_label(browser, labels["subject"]).get_attribute("name") == "subject"
    button = browser.find_element(By.ID, "search")
    assert button.text == texts["search"]
    click_and_wait(browser, button)

    # The URL carries the whole filter.
    url = browser.current_url
    assert path_of(browser) == "/admin/audit"
    query = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
    assert query == {"actor": OFFICER[0], "action": "signin", "outcome": "success", "from": today, "to": today,
                     "address": CLIENT_ADDRESS}, query
    rows = result_rows(browser)
    assert rows, "the officer's sign-in just now is not found"
    seqs = [row["seq"] for row in rows]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == len(seqs), "not newest first"
    for row in rows:
        assert (row["actor"], row["action"], row["outcome"], row["address"]) == (
            OFFICER[0], "signin", "success", CLIENT_ADDRESS), row
    # The form shows the filter it searched for.
    assert field_by_label(browser, labels["actor"]).get_attribute("value") == OFFICER[0]
    assert field_by_label(browser, labels["from"]).get_attribute("value") == today

    # Another admin's browser opens the same URL and sees the same rows.
    sign_in(second_browser, portal, secrets_ledger, *ADMIN)
    assert path_of(second_browser) == "/"
    second_browser.get(url)
    assert path_of(second_browser) == "/admin/audit"
    assert result_rows(second_browser) == rows

    # An unreadable From: 400, and the form keeps what was typed.
    browser.get(portal.base_url + "/admin/audit")
    typed = "24.11.2026"
    fill_by_label(browser, labels["actor"], OFFICER[0])
    fill_by_label(browser, labels["from"], typed)
    click_and_wait(browser, browser.find_element(By.ID, "search"))
    assert document_status(browser) == 400
    assert present(browser, "filter-error"), "no message about the unreadable field"
    assert labels["from"] in browser.find_element(By.ID, "filter-error").text
    from_field = field_by_label(browser, labels["from"])
    assert from_field.get_attribute("value") == typed
    assert from_field.get_attribute("aria-invalid") == "true"
    assert field_by_label(browser, labels["actor"]).get_attribute("value") == OFFICER[0]
    assert not result_rows(browser)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_value_with_a_space_is_searched_as_typed(browser, portal, secrets_ledger, lang):
    """The GET form sends a space as '+' (application/x-www-form-urlencoded, as every browser
    does): the search must read it as the space that was typed, find the entry, and show the
    field as typed."""
    name = f"tt review spaced {lang}"  # a made-up name; a failed sign-in makes the entry
    choose_language(browser, portal, lang)
    sign_in(browser, portal, secrets_ledger, name, "Wrong-Pass-Spaced-1")
    assert path_of(browser) == "/signin"
    browser.delete_all_cookies()
    sign_in_admin(browser, portal, secrets_ledger, lang)
    browser.get(portal.base_url + "/admin/audit")
    actor = TEXTS[lang]["labels"]["actor"]
    fill_by_label(browser, actor, name)
    click_and_wait(browser, browser.find_element(By.ID, "search"))
    assert parse_qs(urlsplit(browser.current_url).query)["actor"] == [name]  # the browser sent it as a+b
    assert field_by_label(browser, actor).get_attribute("value") == name, "the form does not show what was typed"
    assert [(row["actor"], row["action"]) for row in result_rows(browser)] == [(name, "signin")], \
        "the failed sign-in is not found by its name"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_older_and_newer_links_page_without_loss(browser, portal, secrets_ledger, lang):
    """Unfiltered, so every seq must be there: down four pages by Older, then up by Newer to the
    newest, while each page view writes an entry of its own at the top (shown: own_views=show)."""
    sign_in_admin(browser, portal, secrets_ledger, lang)
    base = portal.base_url
    start = base + "/admin/audit?own_views=show"
    browser.get(start)
    if not present(browser, "page-older"):
        # A short trail (this file run alone): views of one entry make it longer than a page.
        cookies = session_cookies(browser)
        for _ in range(60):
            assert requests.get(base + "/admin/audit/entries/1", cookies=cookies, timeout=30).status_code == 200
        browser.get(start)
    assert not present(browser, "page-newer"), "the first page offers newer entries"

    downwards: list[list[int]] = [seqs_on_page(browser)]
    while len(downwards) < 5 and present(browser, "page-older"):
        click_and_wait(browser, browser.find_element(By.ID, "page-older"))
        downwards.append(seqs_on_page(browser))
    assert len(downwards) >= 2, "no older page"
    walked = [seq for page in downwards for seq in page]
    assert all(page for page in downwards), f"an empty page: {[len(page) for page in downwards]}"
    assert walked == list(range(walked[0], walked[0] - len(walked), -1)), "going older lost or repeated an entry"

    upwards: list[list[int]] = [downwards[-1]]
    for _ in range(20):
        if not present(browser, "page-newer"):
            break
        click_and_wait(browser, browser.find_element(By.ID, "page-newer"))
        upwards.append(seqs_on_page(browser))
    assert not present(browser, "page-newer"), "never reached the newest page"
    back = [seq for page in reversed(upwards) for seq in page]
    assert back == list(range(back[0], back[0] - len(back), -1)), "going newer lost or repeated an entry"
    assert set(walked) <= set(back)
    assert back[0] > walked[0], "the views written meanwhile are not on the newest page"


# ---------------------------------------------------------------------------------------------
# Issue 18: the lookup and the chain check in view (10), room for the trail (9), search as an
# investigator types (11)

WIDE = (1280, 800)


def viewport(driver) -> tuple[int, int]:
    return tuple(driver.execute_script("return [window.innerWidth, window.innerHeight];"))


def in_view(driver, element_id: str) -> bool:
    """The element is on the part of the page the window shows now, without scrolling."""
    return driver.execute_script("""
        const r = document.getElementById(arguments[0]).getBoundingClientRect();
        return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;""", element_id)


def enough_entries(driver, base: str, count: int = 60) -> None:
    """At least `count` entries: views of one entry (the admin's own, shown with own_views=show)."""
    cookies = session_cookies(driver)
    for _ in range(count):
        assert requests.get(base + "/admin/audit/entries/1", cookies=cookies, timeout=30).status_code == 200


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lookup_and_chain_check_are_where_an_investigator_starts(browser, portal, secrets_ledger, lang):
    """Item 10: both forms in the first screen of /admin/audit with a full page of results, a
    refused lookup's error and the chain check's result in view after the answer."""
    browser.set_window_size(*WIDE)
    sign_in_admin(browser, portal, secrets_ledger, lang)
    base = portal.base_url
    enough_entries(browser, base)
    browser.get(base + "/admin/audit?own_views=show")
    assert len(seqs_on_page(browser)) == 50
    for element in ["lookup-teletan", "lookup", "verify-incremental", "verify-full"]:
        assert in_view(browser, element), f"{element} is not in the first screen"

    fill_by_label(browser, "teleTAN", "12345")
    click_and_wait(browser, browser.find_element(By.ID, "lookup"))
    assert document_status(browser) == 422
    assert in_view(browser, "lookup-error"), "the lookup's error is out of sight"

    browser.get(base + "/admin/audit?own_views=show")
    click_and_wait(browser, browser.find_element(By.ID, "verify-incremental"))
    assert urlsplit(browser.current_url).fragment == "integrity"
    assert in_view(browser, "verify-notice"), "the check's notice is out of sight"
    assert in_view(browser, "last-verification"), "the check's result is out of sight"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_trail_uses_the_window_and_shows_times_to_the_second(browser, portal, secrets_ledger, lang):
    """Item 9: at 1280 px the table takes the window's width, 50 entries fit in about three
    screens, every time has two-digit hours, minutes and seconds, and a row has one time zone
    (an issuance's valid_until is shown like the row's time, not as UTC with a Z)."""
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    issue_teletan(browser, OFFICER[0])
    read_teletan(browser, secrets_ledger)
    browser.delete_all_cookies()
    browser.set_window_size(*WIDE)
    sign_in_admin(browser, portal, secrets_ledger, lang)
    base = portal.base_url
    enough_entries(browser, base)
    browser.get(base + "/admin/audit?own_views=show")
    width, height = viewport(browser)
    assert len(seqs_on_page(browser)) == 50
    table_width = browser.execute_script("return document.getElementById('audit-results').getBoundingClientRect().width;")
    assert table_width >= width - 80, f"the table is {table_width} px wide in a {width} px window"
    page_height = browser.execute_script("return document.documentElement.scrollHeight;")
    # 3.3: the chain check's box has one more line since the scheduled full check (issue 28).
    assert page_height <= 3.3 * height, f"50 entries make a page {page_height} px tall ({page_height / height:.1f} screens)"
    clock = re.compile(r"\b\d{2}:\d{2}:\d{2}\b")
    for row in result_rows(browser):
        assert clock.search(row["time"]), f"no hh:mm:ss in {row['time']!r}"
        assert not re.search(r"\d:\d(?!\d)", row["time"]), f"a time without its leading zero: {row['time']!r}"

    browser.get(f"{base}/admin/audit?action=teletan.issue&actor={OFFICER[0]}")
    rows = result_rows(browser)
    assert rows, "no issuance found"
    zone = rows[0]["time"].split()[-1]
    details = rows[0]["details_shown"]
    assert "valid_until=" in rows[0]["details"]
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\S*Z", details), f"a UTC time beside {zone}: {details!r}"
    assert clock.search(details) and details.rstrip().endswith(zone), details


@pytest.mark.parametrize("lang", LANGUAGES)
def test_search_as_an_investigator_types(browser, portal, secrets_ledger, lang):
    """Item 11: Actor in capitals and Action by its first word find the officer's issuances; the
    admin's own page views are hidden until the visible box is ticked, and paging keeps it."""
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    issue_teletan(browser, OFFICER[0])
    read_teletan(browser, secrets_ledger)
    browser.delete_all_cookies()
    sign_in_admin(browser, portal, secrets_ledger, lang)
    base = portal.base_url
    labels = TEXTS[lang]["labels"]
    browser.get(base + "/admin/audit")
    fill_by_label(browser, labels["actor"], OFFICER[0].upper())
    fill_by_label(browser, labels["action"], "teletan")
    click_and_wait(browser, browser.find_element(By.ID, "search"))
    rows = result_rows(browser)
    assert rows and {row["actor"] for row in rows} == {OFFICER[0]}, rows
    assert {row["action"] for row in rows} <= {"teletan.issue", "teletan.revoke", "teletan.expired_unshown"}
    assert "teletan.issue" in {row["action"] for row in rows}
    assert field_by_label(browser, labels["actor"]).get_attribute("value") == OFFICER[0].upper()

    enough_entries(browser, base)
    browser.get(base + "/admin/audit")
    own = [row for row in result_rows(browser) if row["actor"] == ADMIN[0] and row["action"] == "audit.view"]
    assert not own, "the admin's own page views are shown without being asked for"
    toggle = browser.find_element(By.ID, "f-own-views")
    assert toggle.is_displayed() and not toggle.is_selected()
    toggle.click()
    click_and_wait(browser, browser.find_element(By.ID, "search"))
    assert parse_qs(urlsplit(browser.current_url).query).get("own_views") == ["show"]
    assert browser.find_element(By.ID, "f-own-views").is_selected()
    shown = [row for row in result_rows(browser) if row["actor"] == ADMIN[0] and row["action"] == "audit.view"]
    assert shown, "ticked, the own page views are still hidden"
    click_and_wait(browser, browser.find_element(By.ID, "page-older"))
    assert browser.find_element(By.ID, "f-own-views").is_selected(), "the older page lost the box"


# ---------------------------------------------------------------------------------------------
# teleTAN lookup


@pytest.mark.parametrize("lang", LANGUAGES)
def test_teletan_lookup_by_post_never_puts_the_teletan_in_a_url(browser, second_browser, portal, secrets_ledger, lang):
    texts = TEXTS[lang]
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    issue_teletan(browser, OFFICER[0])
    teletan = read_teletan(browser, secrets_ledger)  # recorded in the ledger

    admin = second_browser  # Chrome's performance log on: every URL it requested is checked
    sign_in_admin(admin, portal, secrets_ledger, lang)
    admin.get(portal.base_url + "/admin/audit")
    admin.get_log("performance")  # only what follows counts (sign-in URLs hold no teleTAN anyway)
    typed = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}".lower()
    fill_by_label(admin, "teleTAN", typed)
    button = admin.find_element(By.ID, "lookup")
    assert button.text == texts["lookup"]
    click_and_wait(admin, button)

    match = FINGERPRINT_PATH.fullmatch(path_of(admin))
    assert match, f"the lookup ended on {path_of(admin)}"
    fingerprint = match.group(1)
    assert admin.find_element(By.ID, "teletan-issued-by").text == OFFICER[0]
    assert admin.find_element(By.ID, "teletan-status").text == texts["unused"]
    assert not present(admin, "teletan-not-found")
    issuance = [row for row in result_rows(admin, "teletan-entries") if row["action"] == "teletan.issue"]
    assert len(issuance) == 1 and issuance[0]["actor"] == OFFICER[0], issuance

    # Neither the address bar, the Performance Timeline nor any request carried the teleTAN, and
    # the page does not show it.
    assert_teletan_not_in([admin.current_url], teletan, "the browser's address")
    assert_teletan_not_in(browser_urls(admin), teletan, "the Performance Timeline")
    assert_teletan_not_in(requested_urls(admin), teletan, "a URL the browser requested")
    source = admin.page_source
    assert not any(variant in source for variant in teletan_variants(teletan)), "the teleTAN is on the lookup page"
    # Back leads to the search page, not to a page holding the typed teleTAN in its URL.
    admin.back()
    assert path_of(admin) == "/admin/audit"
    assert_teletan_not_in([admin.current_url, *browser_urls(admin)], teletan, "the page Back leads to")

    # The seventh search field: the issuance is found by the fingerprint as subject.
    admin.get(portal.base_url + "/admin/audit")
    labels = texts["labels"]
    fill_by_label(admin, labels["action"], "teletan.issue")
    fill_by_label(admin, labels["subject"], fingerprint)
    click_and_wait(admin, admin.find_element(By.ID, "search"))
    rows = result_rows(admin)
    assert [(row["actor"], row["action"]) for row in rows] == [(OFFICER[0], "teletan.issue")], rows
    assert parse_qs(urlsplit(admin.current_url).query)["subject"] == [fingerprint]
    # The lookup itself is an audit entry, about the fingerprint.
    admin.get(f"{portal.base_url}/admin/audit?action=audit.lookup&subject={fingerprint}")
    assert [row["actor"] for row in result_rows(admin)][:1] == [ADMIN[0]]


# ---------------------------------------------------------------------------------------------
# Export and signed checkpoints


def formula_username(lang: str) -> str:
    """A made-up username a spreadsheet would run as a formula; with a comma and quotes, which
    CSV must quote. (No space: test_a_value_with_a_space_is_searched_as_typed is about those.)"""
    return f"=cmd|'/C;calc'!A0,\"{lang}\""


def change_one_byte(line: bytes) -> bytes:
    """The line with the first letter of its action flipped in case (still valid JSON)."""
    position = line.index(b'"action":"') + len(b'"action":"')
    assert chr(line[position]).isalpha(), line[:position + 1]
    return line[:position] + bytes([line[position] ^ 0x20]) + line[position + 1:]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_exports_verify_and_a_changed_byte_is_named(browser, portal, secrets_ledger, lang, tmp_path):
    texts = TEXTS[lang]
    base = portal.base_url
    # An entry with a formula as its actor: a failed sign-in under such a name.
    name = formula_username(lang)
    choose_language(browser, portal, lang)
    sign_in(browser, portal, secrets_ledger, name, "Wrong-Pass-Formula-1")
    assert path_of(browser) == "/signin"
    browser.delete_all_cookies()
    sign_in_admin(browser, portal, secrets_ledger, lang)

    browser.get(base + "/admin/audit")
    fill_by_label(browser, texts["labels"]["actor"], name)
    click_and_wait(browser, browser.find_element(By.ID, "search"))
    # A failed sign-in's actor is the name's AccountKey: lower-cased (the spelling typed is a detail).
    key = name.lower()
    assert [row["actor"] for row in result_rows(browser)] == [key], "the failed sign-in is not found by its name"
    csv_link, jsonl_link = browser.find_element(By.ID, "export-csv"), browser.find_element(By.ID, "export-jsonl")
    assert (csv_link.text, jsonl_link.text) == ("CSV", "JSON Lines")
    assert parse_qs(urlsplit(csv_link.get_attribute("href")).query) == {"actor": [name]}

    # CSV: RFC 4180, and the formula disarmed with a leading '.
    answer = download(browser, csv_link.get_attribute("href"))
    assert answer.headers["Content-Type"].startswith("text/csv")
    assert "attachment" in answer.headers.get("Content-Disposition", "")
    raw = answer.content
    assert raw.startswith(b"seq,") and raw.endswith(b"\r\n")
    records = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert records[0] == CSV_HEADER
    assert len(records) == 2, f"expected one entry, got {len(records) - 1}"
    entry = dict(zip(CSV_HEADER, records[1]))
    assert entry["actor"] == "'" + key, "the formula is not prefixed with '"
    assert json.loads(entry["details"]).get("typed") == name, "the spelling typed is not kept"
    assert entry["action"] == "signin" and entry["outcome"] == "failure"
    assert json.loads(entry["details"]).get("reason") == "authentication_failed"
    for cell in records[1]:
        assert not cell or cell[0] not in "=+-@\t\r", f"a cell a spreadsheet would run: {cell[:12]!r}"

    # JSON Lines of the same filter: the same entry, verified by the independent checker.
    filtered = tmp_path / "filtered.jsonl"
    filtered.write_bytes(download(browser, jsonl_link.get_attribute("href")).content)
    report = audit_chain.verify_export(filtered, contiguous=False)
    assert report.ok, f"{report.reason} (entry {report.first_bad_seq})"
    record = json.loads(filtered.read_text().splitlines()[0])
    assert (record["seq"], record["actor"], record["hash"], record["prev_hash"]) == (
        int(entry["seq"]), key, entry["hash"], entry["prev_hash"])

    # The whole trail, from the unfiltered page's link.
    browser.get(base + "/admin/audit")
    link = browser.find_element(By.ID, "export-jsonl")
    assert link.text == "JSON Lines" and urlsplit(link.get_attribute("href")).query == ""
    whole_url = link.get_attribute("href")
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(download(browser, whole_url).content)
    report = audit_chain.verify_export(whole)
    assert report.ok, f"{report.reason} (entry {report.first_bad_seq})"
    assert report.first_seq == 1 and report.checked == report.last_seq

    # The export is itself an entry, with the number of rows, written when the download ended.
    browser.get(base + "/admin/audit?action=audit.export")
    exported = result_rows(browser)
    assert exported and exported[0]["actor"] == ADMIN[0]
    assert "format=jsonl" in exported[0]["details"] and f"rows={report.checked}" in exported[0]["details"], exported[0]

    # A checkpoint signed now by the CLI; a fresh export checked against it.
    key, public_key = checkpoint_key(portal)
    assert key.exists() and public_key.exists(), "serve did not create the checkpoint key"
    signed = run_portal("audit", "checkpoint", "--sign", "--database", portal.database,
                        "--audit-checkpoint-key", str(key), cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    checkpoint_file = tmp_path / "checkpoint.txt"
    checkpoint_file.write_text(signed.stdout)
    checkpoint = audit_chain.verify_checkpoint(signed.stdout, public_key)
    assert checkpoint.ok, checkpoint.reason
    assert checkpoint.checkpoint.seq >= report.last_seq

    browser.get(base + "/admin/audit")  # an entry after the checkpoint
    export = tmp_path / "after-checkpoint.jsonl"
    export.write_bytes(download(browser, whole_url).content)
    checkpoint_report, report = audit_chain.verify_export_with_checkpoint(export, signed.stdout, public_key)
    assert checkpoint_report.ok, checkpoint_report.reason
    assert report.ok, f"{report.reason} (entry {report.first_bad_seq})"
    assert report.checkpoint_checked and report.last_seq > checkpoint.checkpoint.seq
    cli = run_portal("audit", "verify", "--export", str(export), "--checkpoint", str(checkpoint_file),
                     "--public-key", str(public_key), cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert "export intact" in cli.stdout and f"entry {checkpoint.checkpoint.seq} has the hash" in cli.stdout, cli.stdout

    # One byte changed in one line (before the checkpoint's entry): both refuse it, naming it.
    lines = export.read_bytes().splitlines(keepends=True)
    victim = max(1, checkpoint.checkpoint.seq // 2)
    index = next(i for i, line in enumerate(lines) if json.loads(line)["seq"] == victim)
    lines[index] = change_one_byte(lines[index])
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(b"".join(lines))
    _, report = audit_chain.verify_export_with_checkpoint(tampered, signed.stdout, public_key)
    assert not report.ok and report.first_bad_seq == victim, (report.first_bad_seq, report.reason)
    cli = run_portal("audit", "verify", "--export", str(tampered), "--checkpoint", str(checkpoint_file),
                     "--public-key", str(public_key), cwd=tmp_path)
    assert cli.returncode != 0, cli.stdout
    assert f"export broken at entry {victim}:" in cli.stderr, cli.stderr

    # A line deleted from the whole export: a gap, which only --filtered (a filter's export) accepts.
    gap = tmp_path / "gap.jsonl"
    whole = export.read_bytes().splitlines(keepends=True)
    gap.write_bytes(b"".join(whole[:index] + whole[index + 1:]))
    cli = run_portal("audit", "verify", "--export", str(gap), "--checkpoint", str(checkpoint_file),
                     "--public-key", str(public_key), cwd=tmp_path)
    assert cli.returncode != 0 and "export broken at entry" in cli.stderr, cli.stdout + cli.stderr
    filtered_cli = run_portal("audit", "verify", "--export", str(filtered), "--checkpoint", str(checkpoint_file),
                              "--public-key", str(public_key), "--filtered", cwd=tmp_path)
    assert filtered_cli.returncode == 0, filtered_cli.stdout + filtered_cli.stderr


# ---------------------------------------------------------------------------------------------
# Charts


@pytest.mark.parametrize("lang", LANGUAGES)
def test_charts_are_inline_svg_with_a_table_and_no_script(browser, portal, secrets_ledger, lang):
    sign_in_admin(browser, portal, secrets_ledger, lang)
    browser.get(portal.base_url + "/admin/audit/charts")
    assert path_of(browser) == "/admin/audit/charts" and document_status(browser) == 200
    sections = browser.find_elements(By.CSS_SELECTOR, "section.chart-block")
    assert len(sections) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg")) == 3
    for section in sections:
        svgs = section.find_elements(By.CSS_SELECTOR, "svg")
        assert len(svgs) == 1
        title = browser.execute_script("const t = arguments[0].querySelector('title'); return t && t.textContent;", svgs[0])
        assert title and title.strip(), "an SVG without a <title>"
        table = section.find_elements(By.TAG_NAME, "table")
        assert len(table) == 1, "no table next to the chart"
        assert table[0].find_elements(By.CSS_SELECTOR, "thead th"), "a table without headers"
    # The hourly table has a row per hour of the last 48, the daily one a row per day of 90.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#per-hour-table tbody tr")) == 48
    assert len(browser.find_elements(By.CSS_SELECTOR, "#per-day-table tbody tr")) == 90
    assert browser.execute_script("return document.querySelectorAll('script:not([src])').length;") == 0, "inline script"
    assert "<script>" not in browser.page_source


# ---------------------------------------------------------------------------------------------
# Sessions and lockouts


def session_rows(driver) -> list:
    return driver.find_elements(By.CSS_SELECTOR, "#sessions tbody tr.session")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_end_session_signs_the_user_out_on_their_next_request(browser, second_browser, portal, secrets_ledger, lang):
    texts = TEXTS[lang]
    sign_in_admin(browser, portal, secrets_ledger, lang)
    browser.get(portal.base_url + "/admin/sessions")
    before = {row.get_attribute("id") for row in session_rows(browser)}

    officer = second_browser
    choose_language(officer, portal, lang)
    sign_in(officer, portal, secrets_ledger, *OFFICER)
    assert path_of(officer) == "/"
    officer.get(portal.base_url + "/admin/sessions")
    assert document_status(officer) == 403, "an officer may see the sessions page"

    browser.get(portal.base_url + "/admin/sessions")
    rows = session_rows(browser)
    new = [row for row in rows if row.get_attribute("id") not in before]
    assert len(new) == 1, f"expected the officer's new session, found {len(new)} new rows"
    row = new[0]
    assert row.find_element(By.CSS_SELECTOR, ".username").text == OFFICER[0]
    # The admin's own row: no End session.
    own = [r for r in rows if texts["your_session"] in r.text]
    assert len(own) == 1 and own[0].find_element(By.CSS_SELECTOR, ".username").text == ADMIN[0]
    assert not own[0].find_elements(By.CSS_SELECTOR, ".end-session")
    # No session id on the page: only the handles, which are not the cookie.
    cookie = officer.get_cookie("portal_session")
    assert cookie and cookie["value"] not in browser.page_source

    button = row.find_element(By.CSS_SELECTOR, ".end-session")
    assert button.text == texts["end_session"]
    ended_id = row.get_attribute("id")
    click_and_wait(browser, button)
    assert path_of(browser) == "/admin/sessions"
    assert browser.find_element(By.ID, "sessions-notice").text == texts["session_ended"]
    assert ended_id not in {r.get_attribute("id") for r in session_rows(browser)}

    officer.get(portal.base_url + "/")
    assert path_of(officer) == "/signin", f"the officer is still signed in: {officer.current_url}"
    browser.get(portal.base_url + "/admin/audit?action=admin.session.end")
    newest = result_rows(browser)[0]
    assert (newest["actor"], newest["outcome"], newest["subject"]) == (ADMIN[0], "success", f"user:{OFFICER[0]}")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lift_lock_ends_a_sign_in_lock(browser, portal, secrets_ledger, lang):
    texts = TEXTS[lang]
    name = f"tt-review-locked-{lang}"  # no such account
    choose_language(browser, portal, lang)
    for attempt in range(5):
        sign_in(browser, portal, secrets_ledger, name, f"Wrong-Pass-Lock-{attempt}")
        assert path_of(browser) == "/signin"
        browser.delete_all_cookies()

    sign_in_admin(browser, portal, secrets_ledger, lang)
    browser.get(portal.base_url + "/admin/lockouts")

    def locks() -> list:
        return [row for row in browser.find_elements(By.CSS_SELECTOR, "#lockouts tr.lockout")
                if row.find_element(By.CSS_SELECTOR, ".lock-key").text == name]

    assert len(locks()) == 1, f"{name} is not listed as locked"
    button = locks()[0].find_element(By.CSS_SELECTOR, ".lift-lock")
    assert button.text == texts["lift_lock"]
    click_and_wait(browser, button)
    assert path_of(browser) == "/admin/lockouts"
    assert browser.find_element(By.ID, "lockouts-notice").text == texts["lock_lifted"]
    assert not locks(), "the lock is still listed"
    browser.get(portal.base_url + "/admin/audit?action=admin.lockout.lift")
    newest = result_rows(browser)[0]
    assert newest["actor"] == ADMIN[0]
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, f"#entry-{newest['seq']} a"))
    assert browser.find_element(By.ID, "entry-subject").text == f"user:{name}"  # the table shortens it


# ---------------------------------------------------------------------------------------------
# Tamper evidence, on a portal of its own


@pytest.fixture
def own_portal(tmp_path, secrets_ledger):
    """A portal with a SQLite file of its own, to tamper with (the suite's portal stays intact)."""
    if os.environ.get("BROWSER_TEST_DATABASE"):
        pytest.skip("tampers with the SQLite file behind the portal's back; the PostgreSQL test database is shared "
                    "by every portal of the suite (and no other database may be created), so a broken chain there "
                    "would break the other tests")
    instance = PortalInstance(DEFAULT_PAM_SERVICE, tmp_path, database=f"sqlite:{tmp_path / 'own.sqlite'}")
    secrets_ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    instance.start()
    yield instance
    instance.stop()


def last_check_text(driver) -> str:
    found = driver.find_elements(By.ID, "last-verification")
    return found[0].text if found else ""


def check_everything(driver, portal, lang: str) -> None:
    """Presses Check everything, which runs in the background, and reloads until its result shows."""
    driver.get(portal.base_url + "/admin/audit")
    before = last_check_text(driver)
    button = driver.find_element(By.ID, "verify-full")
    assert button.text == TEXTS[lang]["check_everything"]
    click_and_wait(driver, button)
    assert path_of(driver) == "/admin/audit" and present(driver, "verify-notice")
    deadline = time.monotonic() + 30
    while last_check_text(driver) == before:
        assert time.monotonic() < deadline, "the background check's result never showed"
        time.sleep(0.3)
        driver.get(portal.base_url + "/admin/audit")


def cli_verify_full(portal: PortalInstance, cwd: Path) -> subprocess.CompletedProcess:
    key, _ = checkpoint_key(portal)
    return run_portal("audit", "verify", "--full", "--database", portal.database, "--audit-checkpoint-key", str(key), cwd=cwd)


def assert_broken_at(driver, portal, lang: str, seq: int, cwd: Path) -> None:
    check_everything(driver, portal, lang)
    assert present(driver, "chain-broken"), "the page does not say the chain is broken"
    assert driver.find_element(By.ID, "chain-broken").text.startswith(TEXTS[lang]["broken"])
    assert driver.find_element(By.ID, "first-bad-seq").text == str(seq)
    assert driver.find_element(By.ID, "first-bad-seq").get_attribute("href").endswith(f"/admin/audit/entries/{seq}")
    cli = cli_verify_full(portal, cwd)
    assert cli.returncode != 0, cli.stdout
    assert f"audit trail broken at entry {seq}:" in cli.stderr, cli.stderr


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_changed_and_a_deleted_entry_are_named_on_the_page_and_by_the_cli(browser, own_portal, secrets_ledger, lang,
                                                                          tmp_path):
    portal = own_portal
    sign_in_admin(browser, portal, secrets_ledger, lang)
    for path in ("/admin/sessions", "/admin/lockouts", "/admin/audit/charts"):
        browser.get(portal.base_url + path)  # entries to tamper with
    check_everything(browser, portal, lang)
    assert present(browser, "chain-intact"), "the untouched chain is not intact"
    assert browser.find_element(By.ID, "chain-intact").text == TEXTS[lang]["intact"]
    cli = cli_verify_full(portal, tmp_path)
    assert cli.returncode == 0 and "audit trail intact" in cli.stdout, cli.stderr

    connection = sqlite3.connect(portal.sqlite_path, timeout=10)
    try:
        head = connection.execute("SELECT MAX(seq) FROM audit_log").fetchone()[0]
        assert head >= 6, head
        changed_seq, deleted_seq = 2, head - 2
        # An entry changed: its actor.
        original = connection.execute("SELECT actor FROM audit_log WHERE seq = ?", (changed_seq,)).fetchone()[0]
        connection.execute("DROP TRIGGER audit_log_no_update")
        assert connection.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = ?", (changed_seq,)).rowcount == 1
        connection.commit()
    finally:
        connection.close()
    assert_broken_at(browser, portal, lang, changed_seq, tmp_path)

    connection = sqlite3.connect(portal.sqlite_path, timeout=10)
    try:
        # Put back, so that the deleted entry is the first bad one.
        connection.execute("UPDATE audit_log SET actor = ? WHERE seq = ?", (original, changed_seq))
        connection.execute("DROP TRIGGER audit_log_no_delete")
        assert connection.execute("DELETE FROM audit_log WHERE seq = ?", (deleted_seq,)).rowcount == 1
        connection.commit()
    finally:
        connection.close()
    assert_broken_at(browser, portal, lang, deleted_seq, tmp_path)
