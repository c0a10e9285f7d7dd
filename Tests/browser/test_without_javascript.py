"""The officer's flow in a Chromium that runs no script: a teleTAN is still shown exactly once,
whatever the back and forward buttons do (the browser's back/forward cache must not bring the
result page back), and one that was issued but never shown is offered on the start page."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from test_portal_browser import (
    OFFICER, assert_teletan_not_on_page, click_and_wait, issue_outside_browser, issue_teletan, path_of, present,
    read_teletan, sign_in,
)


def assert_script_is_off(driver) -> None:
    # portal.js shows the copy button; without scripts it stays hidden.
    assert not driver.find_element(By.ID, "copy-teletan").is_displayed(), "scripts run in this browser"


def test_back_and_forward_never_show_a_teleTAN_again(browser_without_js, portal, secrets_ledger):
    browser = browser_without_js
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    assert path_of(browser) == "/"

    # Result page -> Back -> Forward.
    issue_teletan(browser, OFFICER[0])
    first = read_teletan(browser, secrets_ledger)
    assert_script_is_off(browser)
    browser.back()
    assert path_of(browser) == "/"
    assert_teletan_not_on_page(browser, first)
    browser.forward()
    assert path_of(browser) == "/teletan/result"
    assert_teletan_not_on_page(browser, first)
    assert present(browser, "already-shown")

    # "I have passed it on" -> Back.
    browser.get(portal.base_url + "/")
    issue_teletan(browser, OFFICER[0])
    second = read_teletan(browser, secrets_ledger)
    click_and_wait(browser, browser.find_element(By.ID, "passed-on"))
    assert path_of(browser) == "/"
    browser.back()
    assert path_of(browser) == "/teletan/result"
    assert_teletan_not_on_page(browser, second)
    assert present(browser, "already-shown")
    browser.forward()
    assert path_of(browser) == "/"
    assert_teletan_not_on_page(browser, second)


def test_a_teleTAN_whose_redirect_was_lost_is_offered_on_the_start_page(browser_without_js, portal, secrets_ledger):
    """The issuing POST reaches the portal, but the browser never loads the result page (the
    connection dropped): the start page says a teleTAN is waiting and shows it, once."""
    browser = browser_without_js
    sign_in(browser, portal, secrets_ledger, *OFFICER)
    issue_outside_browser(browser, portal, OFFICER[0])
    browser.get(portal.base_url + "/")
    assert present(browser, "teletan-waiting")
    assert not present(browser, "issue-teletan")
    click_and_wait(browser, browser.find_element(By.ID, "show-waiting"))
    assert path_of(browser) == "/teletan/result"
    waiting = read_teletan(browser, secrets_ledger)
    browser.get(portal.base_url + "/")
    assert not present(browser, "teletan-waiting")
    assert present(browser, "issue-teletan")
    browser.back()
    assert path_of(browser) == "/teletan/result"
    assert_teletan_not_on_page(browser, waiting)
    assert present(browser, "already-shown")
