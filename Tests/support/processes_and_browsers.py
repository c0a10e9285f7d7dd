"""Shared by every suite (the package `support`): a headless Chromium from Debian's packages
that never reaches the network (`chromium()`, the body of every suite's browser fixture), free
ports, our server processes (started until ready, stopped gracefully with SIGTERM; the portal's
common command line) and a raw HTTP exchange."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from contextlib import contextmanager
from typing import Callable, Iterator

# Selenium's driver manager must never try to go online (no internet here); it reads this when
# the driver is created.
os.environ["SE_AVOID_STATS"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def headless_chromium(profile: Path, performance_log: bool = False, javascript: bool = True,
                      accept_insecure_certs: bool = False) -> webdriver.Chrome:
    """A fresh headless Chromium, English pages (the portal honours Accept-Language), nothing of
    Chromium's own reaching for the network, no password manager. Its profile (cache, session,
    history) is kept in `profile`, an empty directory, so that the tests can search it. With
    `javascript=False` pages run no script at all (the portal must work without).
    `accept_insecure_certs`: for a test's own self-signed certificate (Tests/deploy)."""
    options = Options()
    options.add_argument(f"--user-data-dir={profile}")
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
        **({} if javascript else {"profile.managed_default_content_settings.javascript": 2}),
    })
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    if accept_insecure_certs:
        options.set_capability("acceptInsecureCerts", True)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@contextmanager
def chromium(profile: Path, ledger=None, **options) -> Iterator[webdriver.Chrome]:
    """The one browser fixture of the suites: a fresh `headless_chromium(profile, **options)`,
    quit afterwards whatever the test did. With a secrets `ledger` (support.secrets_at_rest),
    the profile is searched for secrets with everything else at the end of the session."""
    driver = headless_chromium(profile, **options)
    if ledger is not None:
        ledger.watch_directory(profile, "Chromium profile")
    try:
        yield driver
    finally:
        driver.quit()


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


# ---------------------------------------------------------------------------------------------
# Ports and processes


def free_ports(count: int) -> list[int]:
    """Ports that were free a moment ago, all different (held open together while picked)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def retry_text_file_busy(start):
    """start() (which executes a binary), retried for up to 30 s while it fails with ETXTBSY:
    a concurrent `swift build` may be rewriting the binary at that moment."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return start()
        except OSError as error:
            if error.errno != errno.ETXTBSY or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class ManagedProcess:
    """One server process with its own log file: start until ready, stop with SIGTERM."""

    name = "process"
    startup_timeout = 90.0  # migrations first; generous, it costs nothing when things are fast
    shutdown_timeout = 10.0

    def __init__(self, workdir: Path, cwd: Path | None = None):
        """`workdir` holds the log; the process runs in `cwd` (default: `workdir`)."""
        self.workdir = workdir
        self.cwd = cwd or workdir
        self.process: subprocess.Popen | None = None
        self.log_path = workdir / f"{self.name}.log"
        self.returncode: int | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def is_ready(self) -> bool:
        raise NotImplementedError

    @staticmethod
    def answers_ready(base_url: str) -> bool:
        """Whether `base_url`/health/ready answers 200 (not listening yet, or the database not
        ready yet: False)."""
        try:
            with urllib.request.urlopen(base_url + "/health/ready", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def start(self) -> None:
        assert not self.is_running(), f"{self.name} is already running"
        with open(self.log_path, "ab") as log:
            self.process = self._spawn(log)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode} during start-up:\n{self.log_tail()}")
            if self.is_ready():
                return
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"{self.name} not ready within {self.startup_timeout} s:\n{self.log_tail()}")

    def _spawn(self, log) -> subprocess.Popen:
        return retry_text_file_busy(lambda: subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.cwd))

    def stop(self) -> int:
        """SIGTERM; the process must exit within shutdown_timeout (else it is killed and this
        raises). Returns the exit status."""
        assert self.process is not None, f"{self.name} was never started"
        self.returncode = stop_gracefully(self.process, self.shutdown_timeout, self.name, self.log_tail)
        return self.returncode

    def stop_cleanly(self) -> None:
        """stop(), and the exit status must be 0."""
        code = self.stop()
        assert code == 0, f"{self.name} exited with {code} after SIGTERM:\n{self.log_tail()}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


class PortalProcess(ManagedProcess):
    """`portal serve` on free ports of 127.0.0.1, with a database (default: a SQLite file in
    `workdir`), a secret and, next to the secret, the audit checkpoint key (portals sharing a
    database share both, as an operator's do). A suite adds its own flags in `settings()`;
    `extra_arguments` go last."""

    name = "portal"
    # No drain period after SIGTERM (default 5 s): suites that stop many portals would wait for
    # it each time. Tests/deploy, which tests the drain, keeps the default (None).
    shutdown_drain: str | None = "0s"

    def __init__(self, workdir: Path, binary: str, pam_service: str, database: str | None = None,
                 secret_file: Path | None = None, extra_arguments: list[str] | None = None):
        super().__init__(workdir)
        self.binary = binary
        self.pam_service = pam_service
        self.port, self.metrics_port = free_ports(2)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.database = database or f"sqlite:{workdir / 'portal.sqlite'}"
        self.secret_file = secret_file or workdir / "portal.secret"
        self.checkpoint_key = self.secret_file.with_name("audit-checkpoint-key.pem")
        self.extra_arguments = list(extra_arguments or [])

    def settings(self) -> list[str]:
        return []

    def command(self) -> list[str]:
        return [
            self.binary, "serve",
            "--port", str(self.port),
            "--metrics-port", str(self.metrics_port),
            "--database", self.database,
            "--secret-file", str(self.secret_file),
            "--audit-checkpoint-key", str(self.checkpoint_key),
            "--pam-service", self.pam_service,
            *(["--shutdown-drain", self.shutdown_drain] if self.shutdown_drain else []),
            *self.settings(),
            *self.extra_arguments,
        ]

    def is_ready(self) -> bool:
        return self.answers_ready(self.base_url)


def raw_exchange(port: int, request: bytes, timeout: float = 30) -> bytes:
    """Sends `request` as it is on a new connection to 127.0.0.1:`port`, closes the sending side
    and returns everything the server answered (for requests no HTTP client library would send)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def last_document_status(driver) -> int | None:
    """HTTP status of the last document the browser received (Chrome's performance log: only in a
    browser started with `headless_chromium(..., performance_log=True)`)."""
    status = None
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.responseReceived" and message["params"].get("type") == "Document":
            status = message["params"]["response"]["status"]
    return status
