"""(l) The portal in CWA's token format (`portal serve --verification-auth cwa`) against an
independent peer: a CWA-like verification stub (cwa_verification_stub.py, PyJWT and cryptography,
written from the facts about CWA's own server) that fetches the portal's certs document from the
portal's metrics listener on every request and validates exactly as the real server does.

- An officer issues a TEST teleTAN and an event officer an EVENT teleTAN through the stub.
- An officer without the event role is refused by the stub: the portal itself refuses such a
  request earlier (the EVENT form needs the event permission, PortalTests/AuthorizationTests), so
  the test replays a token the portal made for the officer's TEST teleTAN against the stub with
  `X-CWA-TELETAN-TYPE: EVENT` (401), and the same token as TEST (201) to show the refusal is the
  role's.
- A portal whose certificate is not the one the server fetched gets the 401 page and the log line.
- The public listener has no certs route; the metrics listener serves Keycloak's format.
- `portal keygen --verification-auth cwa` and the start-up checks of key and certificate.

In the mutual-TLS run (E2E_INTERNAL_TLS=1) the stub requires the portal's client certificate
like our server's internal listener. The tokens the stub received and the private keys go into
the secrets-at-rest ledger: nothing of them may be in the portals' logs or databases.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import stat
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from cwa_verification_stub import CERTS_PATH, TELETAN_PATH, CWAVerificationStub
from e2e_support import (E2E_INTERNAL_TLS, OFFICER, PORTAL_BIN, REPO, Portal, TLSMaterial, app_accepts, click_and_wait,
                         error_page, last_document_status, press_issue, read_teletan, retry_text_file_busy, sign_in)

EVENT_OFFICER = ("tt-event", "Event-Pass-1")
AUTHORITY = "1.01.0.01"
HEALTH_AUTHORITIES = REPO / "docs" / "health-authorities.example.csv"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CWAKey:
    """`portal keygen --verification-auth cwa --out DIR`: DIR/cwa-key.pem, DIR/cwa-certificate.pem."""

    def __init__(self, directory: Path):
        result = retry_text_file_busy(lambda: subprocess.run(
            [PORTAL_BIN, "keygen", "--verification-auth", "cwa", "--out", str(directory)],
            capture_output=True, text=True, timeout=120))
        assert result.returncode == 0, f"portal keygen --verification-auth cwa failed ({result.returncode}): {result.stderr}"
        self.private_path = directory / "cwa-key.pem"
        self.certificate_path = directory / "cwa-certificate.pem"
        self.private_key = serialization.load_pem_private_key(self.private_path.read_bytes(), password=None)
        self.certificate = x509.load_pem_x509_certificate(self.certificate_path.read_bytes())


class CWAPortal(Portal):
    """A portal in CWA's token format whose verification server is `stub`, with EVENT teleTANs
    for the example health authorities."""

    def __init__(self, workdir: Path, stub: CWAVerificationStub, key: CWAKey):
        super().__init__(workdir, stub, key)
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}"

    def command(self) -> list[str]:
        return super().command() + [
            "--verification-auth", "cwa",
            "--verification-certificate", str(self.key.certificate_path),
            "--health-authorities", str(HEALTH_AUTHORITIES),
        ]


def new_stub() -> CWAVerificationStub:
    """Plain HTTP, or in the mutual-TLS run HTTPS that allows only the portal's client certificate."""
    tls = TLSMaterial.shared() if E2E_INTERNAL_TLS else None
    return CWAVerificationStub(tls=tls, allowed_thumbprints=[tls.portal.fingerprint] if tls else [])


@contextmanager
def cwa_stack(workdir: Path, key: CWAKey, ledger, certs_from: CWAPortal | None = None):
    """A stub and a CWA-format portal that uses it; the stub fetches the certs document from the
    metrics listener of `certs_from` (default: this portal's). Yields (stub, portal). The tokens
    the stub received go into the secrets ledger afterwards."""
    workdir.mkdir(parents=True, exist_ok=True)
    stub = new_stub()
    stub.start()
    try:
        portal = CWAPortal(workdir, stub, key)
        stub.jwt_server = (certs_from or portal).metrics_url
        ledger.watch(portal, portal.database, log_marker=b"[PortalWeb] request")
        portal.start()
        try:
            yield stub, portal
        finally:
            portal.stop_cleanly()
    finally:
        stub.stop()
        for received in stub.received:
            if received.token:
                ledger.add_bearer_token(received.token)


@pytest.fixture(scope="module")
def cwa_key(tmp_path_factory, secrets_ledger) -> CWAKey:
    key = CWAKey(tmp_path_factory.mktemp("cwa-key"))
    secrets_ledger.add_rsa_private_key(key.private_path, "the portal's CWA signing key")
    return key


@pytest.fixture(scope="module")
def cwa(tmp_path_factory, cwa_key, secrets_ledger):
    """(stub, portal): the portal in CWA's format, the stub validating against its certs."""
    with cwa_stack(tmp_path_factory.mktemp("cwa-portal"), cwa_key, secrets_ledger) as stack:
        yield stack


def stub_post(stub: CWAVerificationStub, token: str, teletan_type: str | None) -> requests.Response:
    """A teleTAN request to the stub as a portal would send it (with the portal's client
    certificate in the mutual-TLS run)."""
    headers = {"Authorization": f"Bearer {token}"}
    if teletan_type is not None:
        headers["X-CWA-TELETAN-TYPE"] = teletan_type
    tls = stub.tls
    return requests.post(stub.internal_url + TELETAN_PATH, headers=headers, timeout=15,
                         cert=(tls.portal.certificate, tls.portal.key) if tls else None,
                         verify=tls.server.certificate if tls else True)


def last_received(stub: CWAVerificationStub, count_before: int):
    """The one request the stub received since it had `count_before`."""
    new = stub.received[count_before:]
    assert len(new) == 1, f"the stub received {len(new)} requests, expected one: {new}"
    return new[0]


def public_key_numbers(key) -> tuple[int, int]:
    numbers = key.public_numbers()
    return numbers.n, numbers.e


# ---------------------------------------------------------------------------------------------


def test_keygen_writes_a_private_3072_bit_key_and_a_self_signed_certificate_of_it(cwa_key):
    assert stat.S_IMODE(os.stat(cwa_key.private_path).st_mode) == 0o600
    assert isinstance(cwa_key.private_key, rsa.RSAPrivateKey) and cwa_key.private_key.key_size == 3072
    certificate = cwa_key.certificate
    assert public_key_numbers(certificate.public_key()) == public_key_numbers(cwa_key.private_key.public_key())
    assert certificate.issuer == certificate.subject, "self-signed"
    certificate.public_key().verify(certificate.signature, certificate.tbs_certificate_bytes, padding.PKCS1v15(),
                                    certificate.signature_hash_algorithm)
    assert certificate.not_valid_after_utc > datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=365)
    assert b"PRIVATE" not in cwa_key.certificate_path.read_bytes()


def test_the_certs_document_is_on_the_metrics_listener_in_keycloaks_format_and_not_on_the_public_one(cwa, cwa_key):
    _, portal = cwa
    public = requests.get(portal.base_url + CERTS_PATH, timeout=15)
    assert public.status_code == 404, "the public listener must not serve the certs document"
    response = requests.get(portal.metrics_url + CERTS_PATH, timeout=15)
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("application/json")
    document = response.json()
    assert list(document) == ["keys"] and len(document["keys"]) == 1
    key = document["keys"][0]
    assert {k: key[k] for k in ("kty", "alg", "use")} == {"kty": "RSA", "alg": "RS256", "use": "sig"}
    der = base64.b64decode(key["x5c"][0])
    assert der == cwa_key.certificate.public_bytes(serialization.Encoding.DER), "x5c[0] is --verification-certificate"
    assert key["x5t#S256"] == b64url(hashlib.sha256(der).digest()) == key["kid"]
    assert key["x5t"] == b64url(hashlib.sha1(der).digest())
    n, e = public_key_numbers(cwa_key.private_key.public_key())
    assert int.from_bytes(b64url_decode(key["n"]), "big") == n and int.from_bytes(b64url_decode(key["e"]), "big") == e
    assert not {"d", "p", "q"} & set(key), "no private part"


def test_an_officer_issues_a_test_teletan_through_the_cwa_stub(browser, cwa, cwa_key, secrets_ledger):
    stub, portal = cwa
    before, fetches = len(stub.received), stub.certs_fetches
    sign_in(browser, portal, *OFFICER)
    press_issue(browser, portal)
    teletan = read_teletan(browser, secrets_ledger)
    received = last_received(stub, before)
    assert received.status == 201 and received.teletan == teletan and app_accepts(teletan)
    assert stub.certs_fetches > fetches, "the stub fetched the portal's certs document"
    assert received.type_header is None, "CWA's portal sent no type header for TEST"
    assert received.header == {"alg": "RS256", "typ": "JWT", "kid": b64url(hashlib.sha256(
        cwa_key.certificate.public_bytes(serialization.Encoding.DER)).digest())}
    claims = received.claims
    assert claims["realm_access"] == {"roles": ["c19hotline"]}
    assert claims["sub"] == claims["preferred_username"] == OFFICER[0]
    assert isinstance(claims["iat"], int) and isinstance(claims["exp"], int), "whole seconds, as Keycloak writes them"
    assert claims["exp"] - claims["iat"] == 60
    assert "roles" not in claims, "CWA's format has no top-level roles"


def test_an_event_officer_issues_an_event_teletan_through_the_cwa_stub(browser, cwa, secrets_ledger):
    stub, portal = cwa
    secrets_ledger.add_password(EVENT_OFFICER[1])
    sign_in(browser, portal, *EVENT_OFFICER)
    browser.get(portal.base_url + "/")
    Select(browser.find_element(By.ID, "health-authority")).select_by_value(AUTHORITY)
    before = len(stub.received)
    click_and_wait(browser, browser.find_element(By.ID, "issue-event-teletan"))
    teletan = read_teletan(browser, secrets_ledger)
    received = last_received(stub, before)
    assert received.status == 201 and received.teletan == teletan
    assert received.type_header == "EVENT"
    assert received.claims["realm_access"] == {"roles": ["c19hotline_event"]}
    assert received.claims["preferred_username"] == EVENT_OFFICER[0]


def test_the_cwa_stub_refuses_an_officers_token_for_an_event_teletan(browser, cwa, secrets_ledger):
    stub, portal = cwa
    sign_in(browser, portal, *OFFICER)
    before = len(stub.received)
    press_issue(browser, portal)
    read_teletan(browser, secrets_ledger)
    token = last_received(stub, before).token  # valid for 60 s: replayed at once

    refused = stub_post(stub, token, "EVENT")
    assert refused.status_code == 401 and refused.text == "JWT is invalid.", "c19hotline alone is not enough for EVENT"
    # The same token with its claims changed to the event role keeps its signature: refused too.
    header, claims, signature = token.split(".")
    forged_claims = json.loads(b64url_decode(claims))
    forged_claims["realm_access"]["roles"] = ["c19hotline_event"]
    forged = f"{header}.{b64url(json.dumps(forged_claims).encode())}.{signature}"
    assert stub_post(stub, forged, "EVENT").status_code == 401, "the stub checks the signature"
    # The refusal was the role's: the token itself is good, for TEST (any of the roles).
    accepted = stub_post(stub, token, "TEST")
    assert accepted.status_code == 201, accepted.text
    secrets_ledger.add_teletan(accepted.json()["value"])


@pytest.mark.skipif(not E2E_INTERNAL_TLS, reason="the mutual-TLS run (E2E_INTERNAL_TLS=1) only")
def test_in_the_mutual_tls_run_the_stub_requires_an_allowed_client_certificate(cwa):
    stub, _ = cwa
    assert stub.internal_url.startswith("https://")
    tls = stub.tls
    with pytest.raises(requests.exceptions.RequestException):
        requests.post(stub.internal_url + TELETAN_PATH, headers={"Authorization": "Bearer x"}, timeout=15,
                      verify=tls.server.certificate)
    # A certificate the handshake accepts (the submission server's) but that is not on the stub's
    # allow-list (only the portal's is): 401 before any token check.
    refused = requests.post(stub.internal_url + TELETAN_PATH, headers={"Authorization": "Bearer x"}, timeout=15,
                            cert=(tls.submission.certificate, tls.submission.key), verify=tls.server.certificate)
    assert refused.status_code == 401


def test_a_portal_whose_certificate_the_server_did_not_fetch_gets_the_refusal_page_and_a_log_line(
        browser, tmp_path, cwa, secrets_ledger):
    _, first = cwa
    other_key = CWAKey(tmp_path / "other-key")
    secrets_ledger.add_rsa_private_key(other_key.private_path, "a second portal's CWA signing key")
    # The server's jwt.server points at the first portal: it checks this portal's tokens with the
    # first portal's certificate.
    with cwa_stack(tmp_path / "portal", other_key, secrets_ledger, certs_from=first) as (stub, portal):
        sign_in(browser, portal, *OFFICER)
        press_issue(browser, portal)
        assert last_document_status(browser) == 503
        title, message = error_page(browser)
        assert title == "Service unavailable"
        assert "The verification server did not accept the portal's credentials" in message
        assert "please tell your administrator" in message
        received = stub.received[-1]
        assert received.status == 401 and received.token
        log = portal.log_text()
        lines = [line for line in log.splitlines() if "refused this portal's token (HTTP 401)" in line]
        assert len(lines) == 1, log[-3000:]
        for cause in ("jwt.server", "--verification-certificate", "clocks", "--verification-auth"):
            assert cause in lines[0], f"the log line names {cause}: {lines[0]}"
        assert received.token not in log and received.token.split(".")[2] not in log


def _short_key_and_certificate(directory: Path, bits: int) -> tuple[Path, Path]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "short")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now)
                   .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_path, certificate_path = directory / f"rsa-{bits}.pem", directory / f"rsa-{bits}-certificate.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return key_path, certificate_path


def _serve(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    return retry_text_file_busy(lambda: subprocess.run(
        [PORTAL_BIN, "serve", "--verification-server", "http://127.0.0.1:9", *arguments],
        capture_output=True, text=True, timeout=60, cwd=tmp_path))


def test_start_up_refuses_a_short_key_and_a_certificate_of_another_key_naming_the_flag(tmp_path, cwa_key):
    short_key, short_certificate = _short_key_and_certificate(tmp_path, 2048)
    result = _serve(tmp_path, "--verification-auth", "cwa", "--verification-key", str(short_key),
                    "--verification-certificate", str(short_certificate))
    assert result.returncode == 78, result.stderr
    assert "--verification-key" in result.stderr and "2048 bits; at least 3072" in result.stderr, result.stderr

    result = _serve(tmp_path, "--verification-auth", "cwa", "--verification-key", str(cwa_key.private_path),
                    "--verification-certificate", str(short_certificate))
    assert result.returncode == 78, result.stderr
    assert "--verification-certificate" in result.stderr and "is not the public key of" in result.stderr, result.stderr

    result = _serve(tmp_path, "--verification-auth", "keycloak")
    assert result.returncode == 78 and "--verification-auth" in result.stderr, result.stderr
