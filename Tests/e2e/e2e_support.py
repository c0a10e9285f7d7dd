"""Helpers of the end-to-end suite: the two processes (verification server, portal), portal key
pairs and JWTs, an HTTP client that behaves like the app and records every response, direct
database access for the expiry test, the OpenAPI document, and browser steps.

Imported by conftest.py and the test modules (pytest puts this directory on sys.path).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.client
import json
import os
import re
import socket
import ssl
import tempfile
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import requests
import yaml
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

REPO = Path(__file__).resolve().parents[2]

from support.database import DatabaseAccess  # noqa: E402
from support.processes_and_browsers import ManagedProcess, free_ports, retry_text_file_busy  # noqa: E402
from support.processes_and_browsers import chromium, last_document_status  # noqa: E402,F401  (for conftest.py and tests)
from support.secrets_at_rest import SecretsLedger  # noqa: E402,F401  (for conftest.py)
PORTAL_BIN = os.environ.get("PORTAL_BIN") or str(REPO / ".build" / "debug" / "portal")
VERIFICATION_BIN = os.environ.get("VERIFICATION_BIN") or str(REPO / ".build" / "debug" / "verification-server")
# A PostgreSQL URL for the verification servers; unset: a SQLite file per server.
E2E_DATABASE = os.environ.get("E2E_DATABASE") or None
# "1": every verification server's internal listener runs TLS with a client-certificate
# allow-list (mutual TLS), and the portals and the API client present allowed certificates.
E2E_INTERNAL_TLS = os.environ.get("E2E_INTERNAL_TLS") == "1"
OPENAPI_PATH = REPO / "docs" / "verification-api.yaml"
PAM_SERVICE = "teletan-portal-test"
OFFICER = ("tt-officer", "Officer-Pass-1")

REQUEST_TIMEOUT = 15.0

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TELETAN_PATTERN = re.compile(f"[{ALPHABET}]{{10}}")
UUID4_PATTERN = re.compile(r"[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[89aAbB][a-f0-9]{3}-[a-f0-9]{12}")
V1 = "/version/v1"
# What a portal names as `aud` and a verification server expects, unless both are configured
# otherwise (--verification-audience, --audience).
DEFAULT_AUDIENCE = "teletan-verification-server"
# The order n of P-256: (r, s) and (r, n - s) are both valid ECDSA signatures.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


# ---------------------------------------------------------------------------------------------
# teleTAN format, as the app checks it before it contacts the server


def check_character(body: str) -> str:
    """First hex digit of SHA-256 over the upper-cased body, upper-cased, 0 -> G, 1 -> H."""
    digit = hashlib.sha256(body.upper().encode("utf-8")).hexdigest()[0].upper()
    return {"0": "G", "1": "H"}.get(digit, digit)


def app_accepts(teletan: str) -> bool:
    """What the app does with typed input: case-insensitive, alphabet only, check character."""
    value = teletan.strip().upper()
    return (len(value) == 10 and all(c in ALPHABET for c in value)
            and value[9] == check_character(value[:9]))


def with_wrong_check_character(teletan: str) -> str:
    """The same teleTAN with another last character from the alphabet."""
    wrong = next(c for c in ALPHABET if c != teletan[9])
    return teletan[:9] + wrong


# ---------------------------------------------------------------------------------------------
# Ports


def port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False



class PortalKeyPair:
    """A key pair written by `portal keygen --out DIR` (generate=False: one that is there)."""

    def __init__(self, directory: Path, generate: bool = True):
        if generate:
            directory.mkdir(parents=True, exist_ok=True)
            result = retry_text_file_busy(lambda: subprocess.run(
                [PORTAL_BIN, "keygen", "--out", str(directory)], capture_output=True, text=True, timeout=60))
            assert result.returncode == 0, f"portal keygen failed ({result.returncode}): {result.stderr}"
        self.private_path = directory / "portal-key.pem"
        self.public_path = directory / "portal-key.pub.pem"
        self.private_key = serialization.load_pem_private_key(self.private_path.read_bytes(), password=None)

    @property
    def thumbprint(self) -> str:
        """PortalKeys.thumbprint: first 16 hex digits of SHA-256 over the public key's PEM form
        as swift-crypto prints it (no trailing newline), recomputed from the key itself."""
        pem = self.private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode().strip()
        return hashlib.sha256(pem.encode()).hexdigest()[:16]

    def token(self, roles: list[str], kid: str | None = "", sub: str = "e2e-client",
              lifetime: int = 60, issued_at: int | None = None, alg: str | None = "ES256",
              aud: str | None = DEFAULT_AUDIENCE, high_s: bool = False, header: dict | None = None) -> str:
        """A JWT signed with ES256, claims sub, roles, aud, iat, exp. kid "" (default) means this key's
        own thumbprint, None means no kid at all; `alg` is what the header claims (None: none);
        `aud` None leaves the claim out; `header` adds header fields. The signature has s <= n/2,
        as a portal signs; `high_s` gives its malleable twin (r, n - s) instead."""
        fields = {"typ": "JWT"} if alg is None else {"alg": alg, "typ": "JWT"}
        if kid is not None:
            fields["kid"] = kid or self.thumbprint
        fields.update(header or {})
        now = int(time.time()) if issued_at is None else issued_at
        payload = {"sub": sub, "roles": roles, "iat": now, "exp": now + lifetime}
        if aud is not None:
            payload["aud"] = aud
        signing_input = f"{_b64(json.dumps(fields).encode())}.{_b64(json.dumps(payload).encode())}"
        r, s = decode_dss_signature(self.private_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        s = max(s, P256_ORDER - s) if high_s else min(s, P256_ORDER - s)
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class VerificationServer(ManagedProcess):
    """`verification-server serve` with two listeners on free ports. stop() and start() again
    reuse the same ports, secret file and database (a restart)."""

    name = "verification-server"

    def __init__(self, workdir: Path, trusted: PortalKeyPair, teletans_per_hour: int | None = None,
                 database: str | None = None):
        super().__init__(workdir)
        self.trusted = trusted
        self.teletans_per_hour = teletans_per_hour
        self.database = database or E2E_DATABASE or f"sqlite:{workdir / 'verification.sqlite'}"
        self.secret_file = workdir / "verification.secret"
        self.port, self.internal_port = free_ports(2)
        self.app_url = f"http://127.0.0.1:{self.port}"
        self.tls = TLSMaterial.shared() if E2E_INTERNAL_TLS else None
        scheme = "https" if self.tls else "http"
        self.internal_url = f"{scheme}://127.0.0.1:{self.internal_port}"

    def command(self) -> list[str]:
        command = [
            VERIFICATION_BIN, "serve",
            "--database", self.database,
            "--secret-file", str(self.secret_file),
            "--trusted-portal-key", str(self.trusted.public_path),
            "--port", str(self.port),
            "--internal-port", str(self.internal_port),
        ]
        if self.teletans_per_hour is not None:
            command += ["--teletans-per-hour", str(self.teletans_per_hour)]
        if self.tls:
            command += [
                "--internal-tls-certificate", self.tls.server.certificate,
                "--internal-tls-key", self.tls.server.key,
                "--internal-client-thumbprint", self.tls.portal.fingerprint,
                "--internal-client-thumbprint", self.tls.submission.fingerprint,
                "--internal-client-thumbprint", self.tls.expired.fingerprint,
            ]
        return command

    def is_ready(self) -> bool:
        return self.answers_ready(self.app_url) and port_accepts(self.internal_port)

    @property
    def db(self) -> "DatabaseAccess":
        return DatabaseAccess(self.database)


class Portal(ManagedProcess):
    """`portal serve` that gets its teleTANs from a verification server. The portal keeps its
    own data in a SQLite file of its own (the server under test is what uses E2E_DATABASE)."""

    name = "portal"

    def __init__(self, workdir: Path, server: VerificationServer, key: PortalKeyPair):
        super().__init__(workdir)
        self.server = server
        self.key = key
        self.port, self.metrics_port = free_ports(2)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.database = f"sqlite:{self.workdir / 'portal.sqlite'}"

    def command(self) -> list[str]:
        tls = self.server.tls
        client_certificate = [
            "--verification-client-certificate", tls.portal.certificate,
            "--verification-client-key", tls.portal.key,
            "--verification-ca", tls.server.certificate,
        ] if tls else []
        return [
            PORTAL_BIN, "serve",
            "--port", str(self.port),
            "--metrics-port", str(self.metrics_port),
            "--database", self.database,
            "--secret-file", str(self.workdir / "portal.secret"),
            "--audit-checkpoint-key", str(self.workdir / "audit-checkpoint-key.pem"),
            "--pam-service", PAM_SERVICE,
            "--teletan-interval", "1s",
            # No drain period after SIGTERM (Tests/deploy tests it): stopping stays quick.
            "--shutdown-drain", "0s",
            "--verification-server", self.server.internal_url,
            "--verification-key", str(self.key.private_path),
        ] + client_certificate

    def is_ready(self) -> bool:
        return self.answers_ready(self.base_url)


# ---------------------------------------------------------------------------------------------
# Certificates for the mutual-TLS mode, made with the openssl command as an operator would


@dataclass(frozen=True)
class Certificate:
    certificate: str
    key: str

    @functools.cached_property
    def fingerprint(self) -> str:
        """`AB:CD:...`, as `openssl x509 -fingerprint -sha256` prints it for the allow-list (once)."""
        out = subprocess.run(["openssl", "x509", "-in", self.certificate, "-noout", "-fingerprint", "-sha256"],
                             check=True, capture_output=True, text=True).stdout
        return out.strip().split("=", 1)[1]


def make_certificate(directory: Path, name: str, key_type: str = "ec") -> Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost; `key_type` "ec" (P-256) or "rsa"."""
    certificate, key = directory / f"{name}.pem", directory / f"{name}.key"
    new_key = ["-newkey", "rsa:2048"] if key_type == "rsa" else ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    subprocess.run(["openssl", "req", "-x509", *new_key,
                    "-nodes", "-keyout", str(key), "-out", str(certificate), "-days", "2", "-subj", f"/CN={name}",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return Certificate(str(certificate), str(key))


def make_expired_certificate(directory: Path, name: str) -> Certificate:
    """A self-signed certificate whose validity ended yesterday (openssl 3.0 cannot backdate)."""
    import datetime
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=10)).not_valid_after(now - datetime.timedelta(days=1))
                   .sign(key, hashes.SHA256()))
    certificate_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return Certificate(str(certificate_path), str(key_path))


class TLSMaterial:
    """The server's certificate, the portal's and the submission server's client certificates
    (both on the allow-list) and one that no server allows. Made once per test process."""

    _instance: "TLSMaterial | None" = None

    def __init__(self):
        directory = Path(tempfile.mkdtemp(prefix="e2e-tls-"))
        self.server = make_certificate(directory, "verification-server")
        self.portal = make_certificate(directory, "portal")
        self.submission = make_certificate(directory, "submission-server")
        self.stranger = make_certificate(directory, "stranger")
        # On the allow-list, but no longer valid: refused all the same.
        self.expired = make_expired_certificate(directory, "expired")

    @classmethod
    def shared(cls) -> "TLSMaterial":
        if cls._instance is None:
            cls._instance = TLSMaterial()
        return cls._instance

    def client_context(self, client: Certificate | None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.server.certificate)
        if client is not None:
            context.load_cert_chain(client.certificate, client.key)
        return context


# ---------------------------------------------------------------------------------------------
# HTTP client that records every response (for the OpenAPI check)


@dataclass
class RecordedResponse:
    listener: str  # "app" or "internal"
    method: str
    path: str
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes
    test: str

    def json(self):
        return json.loads(self.body)


@dataclass
class ResponseLog:
    responses: list[RecordedResponse] = field(default_factory=list)
    current_test: str = ""

    def add(self, listener: str, method: str, path: str, status: int, headers, body: bytes) -> RecordedResponse:
        recorded = RecordedResponse(listener, method, path, status,
                                    {name.lower(): value for name, value in headers}, body, self.current_test)
        self.responses.append(recorded)
        return recorded


class ApiClient:
    """Talks to both listeners of one verification server, like the app (app listener) and like
    a portal or the submission server (internal listener)."""

    def __init__(self, server: VerificationServer, log: ResponseLog):
        self.server = server
        self.log = log
        self.session = requests.Session()
        if server.tls:
            # Like the submission server: an allowed client certificate for the internal listener.
            self.session.cert = (server.tls.submission.certificate, server.tls.submission.key)
            # Not on the session: REQUESTS_CA_BUNDLE in the environment would win over it.
        self.verify = server.tls.server.certificate if server.tls else True

    def _base(self, listener: str) -> str:
        return self.server.app_url if listener == "app" else self.server.internal_url

    def post(self, listener: str, path: str, json_body=None, *, data: bytes | None = None,
             headers: dict[str, str] | None = None) -> RecordedResponse:
        all_headers = dict(headers or {})
        if json_body is not None:
            data = json.dumps(json_body).encode()
            all_headers.setdefault("Content-Type", "application/json")
        response = self.session.post(self._base(listener) + path, data=data, headers=all_headers,
                                     timeout=REQUEST_TIMEOUT, allow_redirects=False, verify=self.verify)
        return self.log.add(listener, "POST", path, response.status_code, response.headers.items(), response.content)

    def post_raw(self, listener: str, path: str, body: bytes, headers: dict[str, str], chunked: bool = False) -> RecordedResponse:
        """http.client, for what requests does not do on purpose: a chunked body."""
        port = self.server.port if listener == "app" else self.server.internal_port
        if listener != "app" and self.server.tls:
            connection = http.client.HTTPSConnection(
                "127.0.0.1", port, timeout=REQUEST_TIMEOUT,
                context=self.server.tls.client_context(self.server.tls.submission))
        else:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
        try:
            if chunked:
                # http.client writes the chunk framing itself (size line, data, final 0 chunk).
                connection.request("POST", path, body=iter([body]),
                                   headers={**headers, "Transfer-Encoding": "chunked"}, encode_chunked=True)
            else:
                connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            content = response.read()
            return self.log.add(listener, "POST", path, response.status, response.getheaders(), content)
        finally:
            connection.close()

    # The app's three calls
    def registration_token(self, key: str, key_type: str = "TELETAN", fake: bool = False) -> RecordedResponse:
        return self.post("app", f"{V1}/registrationToken", {"key": key, "keyType": key_type},
                         headers={"cwa-fake": "1"} if fake else None)

    def tan(self, registration_token: str, fake: bool = False) -> RecordedResponse:
        return self.post("app", f"{V1}/tan", {"registrationToken": registration_token},
                         headers={"cwa-fake": "1"} if fake else None)

    def test_result(self, registration_token: str, fake: bool = False) -> RecordedResponse:
        return self.post("app", f"{V1}/testresult", {"registrationToken": registration_token},
                         headers={"cwa-fake": "1"} if fake else None)

    # The internal calls
    def create_teletan(self, token: str | None, teletan_type: str | None = None) -> RecordedResponse:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if teletan_type is not None:
            headers["X-CWA-TELETAN-TYPE"] = teletan_type
        return self.post("internal", f"{V1}/tan/teletan", headers=headers)

    def verify_tan(self, tan: str) -> RecordedResponse:
        return self.post("internal", f"{V1}/tan/verify", {"tan": tan})

    def new_teletan(self, teletan_type: str = "TEST") -> str:
        """A real teleTAN straight from the internal API (signed as the trusted portal)."""
        role = "c19hotline_event" if teletan_type == "EVENT" else "c19hotline"
        response = self.create_teletan(self.server.trusted.token([role]), teletan_type)
        assert response.status == 201, (response.status, response.body)
        value = response.json()["value"]
        assert app_accepts(value), value
        return value


def random_uuid() -> str:
    return str(uuid.uuid4())


# ---------------------------------------------------------------------------------------------
# OpenAPI document


def load_openapi() -> dict:
    return yaml.safe_load(OPENAPI_PATH.read_text())


# ---------------------------------------------------------------------------------------------
# Browser steps (patterns of Tests/browser)


def path_of(driver) -> str:
    return urlsplit(driver.current_url).path


def click_and_wait(driver, element) -> None:
    """Clicks, then waits until the old document was replaced and the new one has loaded."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.e2eOldDocument = true;")
    element.click()
    WebDriverWait(driver, 20, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return document.readyState === 'complete' && !window.e2eOldDocument;"))


# Where a new session starts (HotlineFeature.landing).
LANDING = re.compile(r"/(hotline(/calls/[0-9a-f-]{36})?)?")


def sign_in(driver, portal: Portal, username: str, password: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(portal.base_url + "/signin")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    click_and_wait(driver, driver.find_element(By.ID, "signin"))
    # The start page, or for a hotline agent the hotline page or their open call.
    assert LANDING.fullmatch(path_of(driver)), f"sign-in ended on {driver.current_url}"


def press_issue(driver, portal: Portal) -> float:
    """Loads the start page (a fresh form), presses "Issue teleTAN", waits for the page it
    leads to. Returns the seconds from the click to the loaded page."""
    from selenium.webdriver.common.by import By

    driver.get(portal.base_url + "/")
    button = driver.find_element(By.ID, "issue-teletan")
    assert button.text == "Issue teleTAN"
    driver.get_log("performance")  # drop what came before
    started = time.monotonic()
    click_and_wait(driver, button)
    return time.monotonic() - started


def read_teletan(driver, ledger: SecretsLedger) -> str:
    """The teleTAN on the result page, recorded for the secrets check."""
    from selenium.webdriver.common.by import By

    assert path_of(driver) == "/teletan/result", f"issuing ended on {driver.current_url}"
    teletan = re.sub(r"\s+", "", driver.find_element(By.ID, "teletan").text)
    ledger.add_teletan(teletan)
    return teletan


def error_page(driver) -> tuple[str, str]:
    """(title, message) of the portal's error page."""
    from selenium.webdriver.common.by import By

    return (driver.find_element(By.TAG_NAME, "h1").text, driver.find_element(By.ID, "error-message").text)
