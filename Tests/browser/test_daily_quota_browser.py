"""The daily quota in the browser (issue 28, item 4), in English and German, on a portal of its
own with `--daily-quota 1` (SQLite, so that no other portal's day counts):

- an officer's second teleTAN of the day is refused with the 429 page that says an
  administrator can raise the limit;
- the admin reaches `/admin/quota` from the start page, finds the fields by their fixed labels
  (**Additional teleTANs today**, **Reason**, button **Raise quota**), gets a 400 that keeps what
  was typed for a blank reason, raises the quota, and the officer issues again;
- axe finds no serious or critical violation on the page, nor on its 400.
"""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from conftest import DEFAULT_PAM_SERVICE, PortalInstance
from test_accessibility import AxeAudit, record_teletan
from test_audit_review_browser import document_status, field_by_label
from test_hotline_browser import choose_language
from test_portal_browser import ADMIN, OFFICER, click_and_wait, mark_for_navigation, path_of, sign_in, wait_for_new_document

LANGUAGES = ["en", "de"]

# The fixed labels (English from the issue) and their German texts (IssuanceStrings.swift).
TEXTS = {
    "en": {"amount": "Additional teleTANs today", "reason": "Reason", "raise": "Raise quota", "link": "Daily quota of teleTANs",
           "refused": "Today's limit of teleTANs is reached", "admin_can": "An administrator can raise the limit for today",
           "no_reason": "Please give a reason for raising the quota.", "raised": "The quota has been raised until midnight."},
    "de": {"amount": "Zusätzliche teleTANs heute", "reason": "Begründung", "raise": "Kontingent erhöhen",
           "link": "Tageskontingent an teleTANs", "refused": "Das Tageslimit an teleTANs ist erreicht",
           "admin_can": "Eine Administratorin oder ein Administrator kann das Limit für heute erhöhen",
           "no_reason": "Bitte geben Sie eine Begründung für die Erhöhung an.", "raised": "Das Kontingent ist bis Mitternacht erhöht."},
}


@pytest.fixture
def quota_portal(tmp_path, secrets_ledger):
    instance = PortalInstance(DEFAULT_PAM_SERVICE, tmp_path, database=f"sqlite:{tmp_path / 'quota.sqlite'}",
                              extra_arguments=["--daily-quota", "1", "--teletan-interval", "0s"])
    secrets_ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    instance.start()
    yield instance
    instance.stop()


def press_issue(driver) -> None:
    mark_for_navigation(driver)
    driver.find_element(By.ID, "issue-teletan").click()
    wait_for_new_document(driver)


def cell(driver, name: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, f"#quota-portal .{name}").text.strip()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_admin_raises_the_quota_an_officer_ran_out_of(browser, second_browser, quota_portal, secrets_ledger, lang):
    texts = TEXTS[lang]
    base = quota_portal.base_url
    officer = second_browser
    choose_language(officer, quota_portal, lang)
    sign_in(officer, quota_portal, secrets_ledger, *OFFICER)
    press_issue(officer)
    assert path_of(officer) == "/teletan/result"
    record_teletan(officer, secrets_ledger)
    officer.get(base + "/")
    press_issue(officer)
    assert document_status(officer) == 429
    message = officer.find_element(By.ID, "error-message").text
    assert texts["refused"] in message and texts["admin_can"] in message, message

    choose_language(browser, quota_portal, lang)
    sign_in(browser, quota_portal, secrets_ledger, *ADMIN)
    link = browser.find_element(By.ID, "link-quota")
    assert link.text == texts["link"]
    click_and_wait(browser, link)
    assert path_of(browser) == "/admin/quota"
    assert (cell(browser, "limit"), cell(browser, "used"), cell(browser, "left")) == ("1", "1", "0")
    audit = AxeAudit(browser, lang)
    audit.check("daily quota page", "/admin/quota")

    # A reason of blanks only: the browser's `required` lets it through, the server does not.
    field_by_label(browser, texts["amount"]).send_keys("2")
    field_by_label(browser, texts["reason"]).send_keys("   ")
    button = browser.find_element(By.ID, "raise-quota")
    assert button.text == texts["raise"]
    click_and_wait(browser, button)
    assert document_status(browser) == 400
    assert browser.find_element(By.ID, "quota-error").text == texts["no_reason"]
    assert field_by_label(browser, texts["amount"]).get_attribute("value") == "2", "what was typed is kept"
    assert field_by_label(browser, texts["reason"]).get_attribute("aria-invalid") == "true"
    audit.check("daily quota page, reason missing (400)")

    field_by_label(browser, texts["reason"]).send_keys("Ausbruch Schule Nord")
    click_and_wait(browser, browser.find_element(By.ID, "raise-quota"))
    assert path_of(browser) == "/admin/quota"
    assert browser.find_element(By.ID, "quota-notice").text == texts["raised"]
    assert (cell(browser, "limit"), cell(browser, "extra"), cell(browser, "left")) == ("3", "2", "2")
    assert "Ausbruch Schule Nord" in browser.find_element(By.ID, "raises").text
    audit.assert_clean(expected_pages=2)

    officer.get(base + "/")
    press_issue(officer)
    assert path_of(officer) == "/teletan/result", "issued again after the raise"
    record_teletan(officer, secrets_ledger)
