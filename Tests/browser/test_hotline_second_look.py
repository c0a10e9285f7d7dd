"""Issue 18's hotline items in a real Chromium: Enter in the call page's fields never issues a
teleTAN (with and without JavaScript), the callback queue at 390 px, every checkbox the same size,
and the warning before an idle session ends.

The numbers and names typed are made up and distinctive; they go into the secrets ledger like
every other (conftest.py)."""

from __future__ import annotations

import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import DEFAULT_PAM_SERVICE, PortalInstance
from test_hotline_browser import CALL_PATH, HOTLINE2, check_ids, start_call, tick
from test_portal_browser import mark_for_navigation, path_of, sign_in, wait_for_new_document


def press_enter_in(driver, element_id: str) -> None:
    mark_for_navigation(driver)
    driver.find_element(By.ID, element_id).send_keys(Keys.ENTER)
    wait_for_new_document(driver)


@pytest.mark.parametrize("javascript", [True, False], ids=["with-js", "without-js"])
def test_enter_in_phone_or_name_never_issues(browser, browser_without_js, portal, secrets_ledger, javascript):
    driver = browser if javascript else browser_without_js
    phone, name = ("030 5550 7788 1", "Enter Testperson-Eta") if javascript else ("030 5550 7788 2", "Enter Testperson-Theta")
    secrets_ledger.add_phone_number(phone)
    secrets_ledger.add_person_name(name)
    sign_in(driver, portal, secrets_ledger, *HOTLINE2)
    start_call(driver, portal, "en")
    call_path = path_of(driver)
    everything, _ = check_ids(driver)
    tick(driver, everything)

    # Enter in Phone number with nothing typed: nothing happens but the ticks are saved.
    press_enter_in(driver, "phone")
    # (the answer to the POST is the call page again, at the POST's address)
    assert path_of(driver) == call_path + "/callback", "Enter in an empty Phone number left the call page"
    assert "Enter does not issue a teleTAN" in driver.find_element(By.ID, "call-notice").text
    assert all(driver.find_element(By.ID, f"check-{check}").is_selected() for check in everything)

    # Enter in Name with a number and a name typed: the callback is queued, no teleTAN issued.
    driver.find_element(By.ID, "phone").send_keys(phone)
    driver.find_element(By.ID, "name").send_keys(name)
    press_enter_in(driver, "name")
    assert path_of(driver) == "/hotline", driver.current_url
    assert "/teletan/result" not in driver.current_url
    assert "The callback is in the queue" in driver.find_element(By.ID, "hotline-notice").text


def test_the_queue_fits_390_px_and_take_is_not_cut_off(browser, portal, secrets_ledger):
    phone, name = "0171 5550 4411", "Schmal Testperson-Iota"
    secrets_ledger.add_phone_number(phone)
    secrets_ledger.add_person_name(name)
    sign_in(browser, portal, secrets_ledger, *HOTLINE2)
    start_call(browser, portal, "en")
    browser.find_element(By.ID, "phone").send_keys(phone)
    browser.find_element(By.ID, "name").send_keys(name)
    mark_for_navigation(browser)
    browser.find_element(By.ID, "call-back-later").click()
    wait_for_new_document(browser)
    browser.set_window_size(390, 844)
    try:
        browser.get(portal.base_url + "/hotline/callbacks")
        width = browser.execute_script("return document.documentElement.clientWidth")
        scroll = browser.execute_script("return document.documentElement.scrollWidth")
        assert scroll <= width, f"the queue scrolls sideways at 390 px ({scroll} > {width})"
        buttons = browser.find_elements(By.CSS_SELECTOR, "#callback-queue button.take")
        assert buttons, "no Take button in the queue"
        for button in buttons:
            box = button.rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"Take is cut off: {box} in {width} px"
    finally:
        browser.set_window_size(1280, 1000)


def test_every_checkbox_is_the_same_size(browser, portal, secrets_ledger):
    sign_in(browser, portal, secrets_ledger, *HOTLINE2)
    start_call(browser, portal, "en")
    sizes = {(round(box.rect["width"]), round(box.rect["height"]))
             for box in browser.find_elements(By.CSS_SELECTOR, "input[type=checkbox]")}
    assert len(sizes) == 1, f"checkboxes of different sizes: {sizes}"
    assert min(sizes.pop()) >= 18, "checkboxes smaller than 1.2rem"


@pytest.fixture(scope="module")
def short_idle_portal(tmp_path_factory, secrets_ledger):
    """A portal whose sessions end after 150 s without activity: the warning comes after 30 s."""
    instance = PortalInstance(DEFAULT_PAM_SERVICE, tmp_path_factory.mktemp("portal-short-idle"),
                              extra_arguments=["--idle-timeout", "150s"])
    secrets_ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    instance.start()
    yield instance
    instance.stop()


def test_the_call_page_warns_before_the_idle_timeout(browser, short_idle_portal, secrets_ledger):
    portal = short_idle_portal
    sign_in(browser, portal, secrets_ledger, *HOTLINE2)
    if not CALL_PATH.fullmatch(path_of(browser)):
        start_call(browser, portal, "en")
    notice = browser.find_element(By.ID, "idle-notice").text
    assert "Without activity your session ends after 150 seconds" in notice
    warning = browser.find_element(By.ID, "idle-warning")
    assert not warning.is_displayed()
    # Two minutes before the end (here: after 30 s) the warning shows.
    deadline = time.monotonic() + 45
    while not warning.is_displayed() and time.monotonic() < deadline:
        time.sleep(1)
    assert warning.is_displayed(), "no warning before the idle timeout"
    assert warning.get_attribute("role") == "alert"
    browser.find_element(By.ID, "stay-signed-in").click()
    time.sleep(1)
    assert not warning.is_displayed(), "Stay signed in did not clear the warning"
