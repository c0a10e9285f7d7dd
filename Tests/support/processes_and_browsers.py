"""Shared by the browser suite (Tests/browser) and the end-to-end suite (Tests/e2e): a headless
Chromium from Debian's packages that never reaches the network, and the graceful stop every
server process of ours must manage."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Callable

# Selenium's driver manager must never try to go online (no internet here); it reads this when
# the driver is created.
os.environ["SE_AVOID_STATS"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def headless_chromium(performance_log: bool = False) -> webdriver.Chrome:
    """A fresh headless Chromium, English pages (the portal honours Accept-Language), nothing of
    Chromium's own reaching for the network, no password manager."""
    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        "--lang=en-US",
        "--disable-background-networking",
        "--disable-sync",
        "--no-first-run",
        "--password-store=basic",
    ):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {
        "intl.accept_languages": "en-US,en",
        "credentials_enable_service": False,
        "profile.password_manager_enabled": False,
    })
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def stop_gracefully(process: subprocess.Popen, timeout: float, name: str, log_tail: Callable[[], str]) -> int:
    """SIGTERM, then wait; a process still running after `timeout` is killed and reported.
    Returns the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"{name} did not exit within {timeout} s of SIGTERM:\n{log_tail()}") from None
    return process.returncode
