"""The one portal client of the tests and the scripts: an officer's browser as plain HTTP
(`Client`: cookies kept by hand, CSRF tokens and one-use form nonces read from the forms, sign-in
with or without the second step, issuing), and `Portal`, the portal process with its limits off
that the fault, backup, directory and package suites drive with it."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import re
import ssl
import subprocess
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Callable
from urllib.parse import urlencode

from support.database import DatabaseAccess
from support.processes_and_browsers import PortalProcess, retry_text_file_busy

REPO = Path(__file__).resolve().parents[2]
PORTAL_BIN = os.environ.get("PORTAL_BIN") or str(REPO / ".build" / "debug" / "portal")

PAM_SERVICE = "teletan-portal-test"
OFFICER = ("tt-officer", "Officer-Pass-1")

REQUEST_TIMEOUT = 30.0  # longer than any wait of the portal (PAM, database pool)


# ---------------------------------------------------------------------------------------------
# The portal


class Portal(PortalProcess):
    """`portal serve` with its own ports, secret file, checkpoint key and log; limits off, so
    that officers can issue as fast as they like. stop() and start() again reuse everything (a
    restart)."""

    def __init__(self, workdir: Path, database: str | None = None, pam_service: str = PAM_SERVICE,
                 extra_arguments: list[str] | None = None):
        super().__init__(workdir, PORTAL_BIN, pam_service, database, extra_arguments=extra_arguments)

    def settings(self) -> list[str]:
        return ["--teletan-interval", "0s", "--teletans-per-user-per-day", "1000000", "--teletans-per-hour", "100000000",
                "--daily-quota", "10000000"]

    def client(self, language: str = "en") -> "Client":
        return Client(self.base_url, language)

    def audit_verify(self) -> subprocess.CompletedProcess:
        """`portal audit verify --full` on this portal's database."""
        return retry_text_file_busy(lambda: subprocess.run(
            [PORTAL_BIN, "audit", "verify", "--full", "--database", self.database,
             "--secret-file", str(self.secret_file), "--audit-checkpoint-key", str(self.checkpoint_key)],
            capture_output=True, text=True, timeout=120, cwd=self.workdir))

    def fingerprint(self, teletan: str) -> str:
        """The teleTAN's keyed fingerprint, as the audit trail's `subject` holds it:
        HMAC-SHA-256(secret, "teletan-fingerprint" 0x00 teleTAN) in lower-case hex
        (KeyedHasher, docs/configuration.md "Secret file")."""
        key = bytes.fromhex(self.secret_file.read_text().strip())
        return hmac.new(key, b"teletan-fingerprint\x00" + teletan.encode(), hashlib.sha256).hexdigest()

    def db(self) -> DatabaseAccess:
        return DatabaseAccess(self.database)

    def log_problems(self, since: int = 0) -> list[str]:
        """Log lines from byte offset `since` on at level error or critical."""
        text = self.log_path.read_bytes()[since:].decode(errors="replace")
        # "2026-11-24T06:36:30+0000 info teletan-portal: ...": the level is the second word.
        return [line for line in text.splitlines() if line.split(" ", 2)[1:2] in (["error"], ["critical"])]

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0


# ---------------------------------------------------------------------------------------------
# An officer's browser, as plain HTTP


@dataclass
class Response:
    method: str
    path: str
    status: int
    headers: dict[str, str]  # lower-case names (the last of repeated ones)
    body: str
    started: float  # time.monotonic()
    seconds: float

    @property
    def location(self) -> str | None:
        return self.headers.get("location")

    def hidden(self, name: str) -> str | None:
        """The value of the hidden form field `name` (the first one)."""
        match = re.search(rf'<input type="hidden" name="{re.escape(name)}" value="([^"]*)"', self.body)
        return match.group(1) if match else None

    @property
    def lang(self) -> str | None:
        match = re.search(r'<html lang="([^"]+)"', self.body)
        return match.group(1) if match else None

    @property
    def h1(self) -> str | None:
        match = re.search(r"<h1[^>]*>(.*?)</h1>", self.body, re.S)
        return match.group(1).strip() if match else None

    @property
    def teletan(self) -> str | None:
        """The teleTAN a result page shows (id="teletan"), without the group spaces."""
        match = re.search(r'<p id="teletan"[^>]*>(.*?)</p>', self.body, re.S)
        return re.sub(r"<[^>]+>|\s+", "", match.group(1)) if match else None

    def shows_no_teletan(self) -> bool:
        return 'id="teletan"' not in self.body and "teletan-spelled" not in self.body

    def describe(self) -> str:
        return f"{self.method} {self.path} -> {self.status} after {self.seconds:.2f} s: {self.body[:600]!r}"


class Client:
    """One browser: its own cookies, one new connection per request (Connection: close), no
    redirects followed, `Accept-Language` of its language (a code, or a whole header value).
    `base_url` is http://HOST:PORT, or https://HOST:PORT with `cafile`, the certificate the
    server's must chain to (Tests/deploy: nginx with the test's own certificate)."""

    def __init__(self, base_url: str, language: str = "en", timeout: float = REQUEST_TIMEOUT,
                 cafile: str | Path | None = None):
        scheme, _, address = base_url.partition("://")
        self.host, port = address.split(":")
        self.port = int(port)
        self.tls = ssl.create_default_context(cafile=str(cafile)) if scheme == "https" else None
        self.language = language
        self.timeout = timeout
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> Response:
        body = urlencode(form).encode() if form is not None else None
        all_headers = {"Accept-Language": self.language, "Connection": "close", **(headers or {})}
        if body is not None:
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        started = time.monotonic()
        if self.tls is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        else:
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.tls)
        try:
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            content = response.read()
            self._take_cookies(response.headers.get_all("Set-Cookie") or [])
            return Response(method, path, response.status, {k.lower(): v for k, v in response.getheaders()},
                            content.decode("utf-8", errors="replace"), started, time.monotonic() - started)
        finally:
            connection.close()

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, path: str, form: dict[str, str]) -> Response:
        return self.request("POST", path, form)

    def _take_cookies(self, set_cookies: list[str]) -> None:
        for header in set_cookies:
            cookie = SimpleCookie()
            cookie.load(header)
            for name, morsel in cookie.items():
                if morsel["max-age"] in ("0", "-1") or (morsel["expires"] and "1970" in morsel["expires"]):
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value

    # The officer's steps

    def sign_in(self, username: str, password: str, second_step: Callable[[], str] | None = None) -> Response:
        """GET /signin (pre-session cookie, CSRF token), POST /signin. Returns the POST's answer
        (303 to / when signed in). With `second_step` (a PAM service that asks for a one-time
        code after the password): the password's answer must be the second step's form, and
        `second_step()`'s code is posted to /signin/continue; returns that answer."""
        page = self.get("/signin")
        assert page.status == 200, page.describe()
        csrf = page.hidden("csrf")
        assert csrf, page.describe()
        answer = self.post("/signin", {"username": username, "password": password, "csrf": csrf})
        if second_step is None:
            return answer
        assert answer.status == 200 and 'action="/signin/continue"' in answer.body, answer.describe()
        return self.post("/signin/continue", {"answer": second_step(), "csrf": answer.hidden("csrf")})

    def signed_in(self, username: str, password: str) -> "Client":
        answer = self.sign_in(username, password)
        # The start page, or for a hotline agent the hotline page or their open call.
        assert answer.status == 303 and re.fullmatch(r"/(hotline(/calls/[0-9a-f-]{36})?)?", answer.location or ""), answer.describe()
        return self

    def issue(self) -> "Issuance":
        """One press of "Issue teleTAN": GET / (form with CSRF token and one-use nonce), POST
        /teletan, GET /teletan/result. A teleTAN left waiting by an earlier attempt (its POST
        committed, its page never came) is fetched instead of issuing a new one. Stops at the
        first answer that is not the expected one."""
        steps: list[Response] = []
        home = self.get("/")
        steps.append(home)
        if home.status != 200:
            return Issuance(steps)
        if 'id="teletan-waiting"' not in home.body:
            csrf, nonce = home.hidden("csrf"), home.hidden("nonce")
            assert csrf and nonce, home.describe()
            posted = self.post("/teletan", {"csrf": csrf, "nonce": nonce})
            steps.append(posted)
            if posted.status != 303:
                return Issuance(steps)
            assert posted.location == "/teletan/result", posted.describe()
        steps.append(self.get("/teletan/result"))
        return Issuance(steps)


@dataclass
class Issuance:
    steps: list[Response]

    @property
    def last(self) -> Response:
        return self.steps[-1]

    @property
    def teletan(self) -> str | None:
        last = self.last
        return last.teletan if last.path == "/teletan/result" and last.status == 200 else None


def wait_until(condition, timeout: float, interval: float = 0.1, what: str = "condition") -> float:
    """Polls `condition` until true; returns the seconds it took. Raises after `timeout`."""
    started = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what} not within {timeout} s")
        time.sleep(interval)



def health(base_url: str, path: str) -> int | None:
    """Status of GET `path` (/health/live, /health/ready), None if there was no answer."""
    host, port = base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=REQUEST_TIMEOUT)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()
