"""docs/deployment.md sections 6 and 8 as an operator runs them: nginx with the shipped config in
front of two instances. In order: two-step sign-in keeps its affinity; an officer in Chromium
goes on after one instance is killed with SIGKILL (at most one retry page); a rolling restart
(SIGTERM, start, then the other) under a steady stream of requests fails none; with no instance
left, nginx shows the shipped retry page in the browser's language."""

from __future__ import annotations

import re
import threading
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import PASSWORD, USERNAME, terminate, wait_until
from support import oath
from support.processes_and_browsers import chromium

RETRY_TITLE = {"en": "The portal is briefly unavailable", "de": "Das Portal ist gerade kurz nicht erreichbar"}


def test_two_step_sign_in_stays_on_one_instance(deployment):
    # Without affinity each step would reach either instance (round robin): six sign-ins in a
    # row would all pass by chance once in 4096 runs.
    for _ in range(6):
        deployment.client().sign_in()


# ---------------------------------------------------------------------------------------------
# SIGKILL mid-session


@pytest.fixture
def browser(tmp_path):
    with chromium(tmp_path / "profile", accept_insecure_certs=True) as driver:
        yield driver


def submit_and_wait(driver, element) -> None:
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 30).until(lambda d: old.id != d.find_element(By.TAG_NAME, "html").id)


def is_retry_page(driver) -> bool:
    headings = driver.find_elements(By.TAG_NAME, "h1")
    return bool(headings) and headings[0].text in RETRY_TITLE.values()


def sign_in_in_browser(driver, deployment) -> None:
    driver.get(deployment.public_url + "/signin")
    driver.find_element(By.ID, "username").send_keys(USERNAME)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    submit_and_wait(driver, driver.find_element(By.ID, "signin"))
    with oath.code_lock():
        driver.find_element(By.ID, "answer").send_keys(oath.next_code(USERNAME)[1])
        submit_and_wait(driver, driver.find_element(By.ID, "continue"))
    assert driver.current_url == deployment.public_url + "/", driver.current_url


def issue_in_browser(driver, deployment) -> tuple[str, int]:
    """From the start page: "Issue teleTAN", the teleTAN read from the result page. A retry
    page on the way is counted and the step done again, as an officer would."""
    retry_pages = 0
    while True:
        driver.get(deployment.public_url + "/")
        if is_retry_page(driver):
            retry_pages += 1
            continue
        submit_and_wait(driver, driver.find_element(By.ID, "issue-teletan"))
        if is_retry_page(driver):
            retry_pages += 1
            continue
        teletan = re.sub(r"\s+", "", driver.find_element(By.ID, "teletan").text)
        assert len(teletan) == 10, driver.page_source[:500]
        return teletan, retry_pages


def instance_serving(deployment, since: list[int]) -> int:
    """Which instance served the browser's issuing since the log sizes in `since` (the hash of its
    portal_presession cookie pins it to one)."""
    counts = [instance.log_text()[since[n]:].count("path=/teletan/result") for n, instance in enumerate(deployment.instances)]
    assert sum(1 for count in counts if count) == 1, counts
    return next(n for n, count in enumerate(counts) if count)


def test_officer_goes_on_after_sigkill(deployment, browser):
    sign_in_in_browser(browser, deployment)
    since = [len(instance.log_text()) for instance in deployment.instances]
    first, retries = issue_in_browser(browser, deployment)
    assert retries == 0
    # Kill the instance this officer's requests go to, between two of them.
    served = instance_serving(deployment, since)
    victim, other = deployment.instances[served], deployment.instances[1 - served]
    victim.kill()
    log_lines = len(deployment.nginx.access_log())
    second, retries = issue_in_browser(browser, deployment)
    assert second != first
    assert retries <= 1, f"{retries} retry pages after one instance was killed"
    # nginx really tried the killed instance (the cookie pins the officer to it) and went on to
    # the other: "upstream=KILLED, OTHER".
    tried_both = f"upstream=127.0.0.1:{victim.port}, 127.0.0.1:{other.port}"
    assert any(tried_both in line for line in deployment.nginx.access_log()[log_lines:]), deployment.nginx.access_log()[log_lines:]
    third, retries = issue_in_browser(browser, deployment)
    assert retries == 0
    # The killed instance back (for the tests that follow).
    victim.start()


# ---------------------------------------------------------------------------------------------
# Rolling restart


class RequestStream:
    """One signed-in officer issuing teleTANs through nginx without pause, in a thread: every
    answer must be the expected one (200, 303, 200), and no request may fail."""

    def __init__(self, deployment):
        self.officer = deployment.client()
        self.officer.sign_in()
        self.failures: list[str] = []
        self.requests = 0
        self.issued = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "RequestStream":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                answers = self.officer.issue()
            except Exception as error:  # noqa: BLE001 - any failure is the finding
                self.failures.append(f"{time.strftime('%X')} {type(error).__name__}: {error}")
                continue
            self.requests += len(answers)
            statuses = [answer.status for answer in answers]
            if statuses == [200, 303, 200] and 'id="teletan"' in answers[-1].body:
                self.issued += 1
            else:
                self.failures.append(f"{time.strftime('%X')} {[(a.method, a.path, a.status) for a in answers]}")


def test_rolling_restart_loses_no_request(deployment):
    stream = RequestStream(deployment).start()
    try:
        time.sleep(1)
        for instance in deployment.instances:
            before = stream.requests
            terminate(instance)
            # Not ready from SIGTERM on, while it still answers (the drain period)...
            wait_until(lambda: instance.ready_status() == 503, 3, f"{instance.name}: /health/ready 503 after SIGTERM")
            assert instance.live_status() == 200
            # ...then it exits cleanly, and the stream went on meanwhile.
            assert instance.process.wait(timeout=20) == 0, instance.log_tail()
            instance.start()
            assert stream.requests > before
            time.sleep(1)
        time.sleep(1)
    finally:
        stream.stop()
    print(f"rolling restart: {stream.requests} requests, {stream.issued} teleTANs, {len(stream.failures)} failures")
    assert not stream.failures, "\n".join(stream.failures[:20])
    assert stream.issued >= 10, stream.issued
    assert "shutting down: /health/ready answers 503" in deployment.instances[0].log_text()


# ---------------------------------------------------------------------------------------------
# The proxy's error pages


@pytest.mark.parametrize("language", ["de", "en"])
def test_no_instance_left_shows_the_localised_retry_page(deployment, language):
    for instance in deployment.instances:
        if instance.is_running():
            terminate(instance)
    for instance in deployment.instances:
        if instance.process.poll() is None:
            instance.process.wait(timeout=20)
    answer = deployment.client({"de": "de-DE,de;q=0.9,en;q=0.5", "en": "en-GB,en;q=0.9,de;q=0.5"}[language]).get("/")
    assert answer.status == 502
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-language"] == language
    assert answer.headers["retry-after"] == "10"
    assert answer.headers["cache-control"] == "no-store"
    body = answer.body
    assert f'<html lang="{language}">' in body
    assert f"<h1>{RETRY_TITLE[language]}</h1>" in body
    assert "<script" not in body
    # Each page says it in the other language too.
    other = "en" if language == "de" else "de"
    assert f'lang="{other}"' in body


AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document).then(
  results => done({passes: results.passes.length,
                   violations: results.violations.map(v => ({id: v.id, impact: v.impact, help: v.help}))}),
  error => done({error: String(error)}));
"""


def test_the_retry_page_is_accessible(deployment, browser):
    """axe-core (as Tests/browser/test_accessibility.py runs it) on the page Chromium shows with no
    instance left (the test before stopped them): nothing serious or critical."""
    from axe_selenium_python import Axe

    assert not any(instance.is_running() for instance in deployment.instances)
    browser.get(deployment.public_url + "/")
    assert is_retry_page(browser)
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    axe = Axe(browser)
    axe.inject()
    outcome = browser.execute_async_script(AXE_RUN)
    assert "error" not in outcome and outcome["passes"] > 0, outcome
    blocking = [v for v in outcome["violations"] if v["impact"] in ("serious", "critical")]
    assert not blocking, blocking
