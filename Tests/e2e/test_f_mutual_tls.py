"""(f) Mutual TLS on the internal listener, and its start-up checks.

With E2E_INTERNAL_TLS=1 (scripts/test.sh sets it for the PostgreSQL run) every server of the
suite runs its internal listener over TLS with a client-certificate allow-list, so the whole
chain in (a)-(e) already goes portal -> server over mutual TLS. This module adds what only a
refused client shows: no certificate, or one not on the list, is a 401 on every internal path;
plain HTTP gets no answer. The start-up checks of the TLS flags run in either mode."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import time

import pytest
import requests

from e2e_support import (E2E_INTERNAL_TLS, PORTAL_BIN, V1, VERIFICATION_BIN, REQUEST_TIMEOUT,
                         free_ports, make_certificate, port_accepts)

needs_tls = pytest.mark.skipif(not E2E_INTERNAL_TLS, reason="E2E_INTERNAL_TLS=1 runs the suite over mutual TLS")
JSON = {"Content-Type": "application/json"}


def _post(server, path: str, certificate, *, headers=None, body=b"{}"):
    tls = server.tls
    return requests.post(server.internal_url + path, data=body, headers={**JSON, **(headers or {})},
                         cert=(certificate.certificate, certificate.key) if certificate else None,
                         verify=tls.server.certificate, timeout=REQUEST_TIMEOUT)


@needs_tls
@pytest.mark.parametrize("who", ["no certificate", "stranger", "expired"])
def test_clients_without_an_allowed_certificate_get_401_everywhere(server, portal_key, who):
    certificate = {"no certificate": None, "stranger": server.tls.stranger, "expired": server.tls.expired}[who]
    token = portal_key.token(["c19hotline"])
    for path, headers, body in [
        (f"{V1}/tan/teletan", {"Authorization": f"Bearer {token}"}, b""),
        (f"{V1}/tan/verify", {}, json.dumps({"tan": "00000000-0000-4000-8000-000000000000"}).encode()),
        ("/no/such/path", {}, b"{}"),
    ]:
        response = _post(server, path, certificate, headers=headers, body=body)
        assert response.status_code == 401, (path, response.text)
        assert response.headers["Content-Type"] == "application/json"
        assert response.json() == {"status": 401, "error": "client certificate not allowed"}


@needs_tls
def test_allowed_certificates_reach_the_endpoints(server, portal_key, secrets_ledger):
    # The submission server's certificate (second --internal-client-thumbprint) verifies TANs;
    # the portal's (first) creates teleTANs.
    unknown = _post(server, f"{V1}/tan/verify", server.tls.submission,
                    body=json.dumps({"tan": "00000000-0000-4000-8000-000000000000"}).encode())
    assert unknown.status_code == 404, unknown.text
    created = _post(server, f"{V1}/tan/teletan", server.tls.portal,
                    headers={"Authorization": f"Bearer {portal_key.token(['c19hotline'])}"}, body=b"")
    assert created.status_code == 201, created.text
    secrets_ledger.add_teletan(created.json()["value"])  # not sent through ApiClient's response log


@needs_tls
def test_plain_http_gets_no_answer_from_the_tls_listener(server):
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.post(f"http://127.0.0.1:{server.internal_port}{V1}/tan/verify", data=b"{}", headers=JSON,
                      timeout=REQUEST_TIMEOUT)


def _refused_start(command: list[str], flag: str):
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 78, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], result.stderr


def test_bad_tls_settings_stop_the_server_with_one_line_naming_the_flag(tmp_path):
    certificate = make_certificate(tmp_path, "server")
    serve = [VERIFICATION_BIN, "serve", "--database", f"sqlite:{tmp_path / 'v.sqlite'}",
             "--secret-file", str(tmp_path / "secret")]
    _refused_start(serve + ["--internal-client-thumbprint", "not-hex"], "--internal-client-thumbprint")
    _refused_start(serve + ["--internal-client-thumbprint", certificate.fingerprint], "--internal-client-thumbprint")
    _refused_start(serve + ["--internal-tls-certificate", certificate.certificate], "--internal-tls-key")
    _refused_start(serve + ["--internal-tls-certificate", str(tmp_path / "missing.pem"),
                            "--internal-tls-key", certificate.key], "--internal-tls-certificate")
    _refused_start(serve + ["--tls-certificate", certificate.certificate, "--tls-key", certificate.certificate],
                   "--tls-key")
    other = make_certificate(tmp_path, "other")
    _refused_start(serve + ["--internal-tls-certificate", certificate.certificate, "--internal-tls-key", other.key,
                            "--internal-client-thumbprint", other.fingerprint], "--internal-tls-key")
    result = subprocess.run(serve + ["--internal-tls-certificate", certificate.certificate, "--internal-tls-key", certificate.key],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS": " , "})
    assert result.returncode == 78, result.stderr
    assert "--internal-client-thumbprint" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_bad_client_certificate_settings_stop_the_portal_with_one_line_naming_the_flag(tmp_path, portal_key):
    certificate = make_certificate(tmp_path, "portal")
    serve = [PORTAL_BIN, "serve", "--database", f"sqlite:{tmp_path / 'p.sqlite'}", "--secret-file", str(tmp_path / "secret"),
             "--verification-server", "https://127.0.0.1:9", "--verification-key", str(portal_key.private_path)]
    _refused_start(serve + ["--verification-client-certificate", certificate.certificate], "--verification-client-key")
    _refused_start(serve + ["--verification-client-certificate", certificate.certificate,
                            "--verification-client-key", str(tmp_path / "missing.key")], "--verification-client-key")
    _refused_start(serve + ["--verification-ca", str(tmp_path / "missing.pem")], "--verification-ca")
    other = make_certificate(tmp_path, "other")
    _refused_start(serve + ["--verification-client-certificate", certificate.certificate,
                            "--verification-client-key", other.key], "--verification-client-key")
    plain = [*serve[:serve.index("--verification-server") + 1], "http://127.0.0.1:9", *serve[serve.index("--verification-key"):]]
    _refused_start(plain + ["--verification-client-certificate", certificate.certificate,
                            "--verification-client-key", certificate.key], "--verification-server")


# BSI TR-02102-2: TLS 1.2 only with ECDHE and AES-GCM. The CBC suites with SHA-1 (and every
# suite without forward secrecy) are not offered, whichever key the certificate has.
REFUSED_SUITES = {
    "ec": ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA"],
    "rsa": ["ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA", "AES128-SHA", "AES256-SHA", "AES128-GCM-SHA256"],
}
OFFERED_SUITES = {
    "ec": ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384"],
    "rsa": ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384"],
}


def _client(cipher: str | None) -> ssl.SSLContext:
    """A client offering only `cipher` in TLS 1.2 (None: TLS 1.3 with its defaults)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if cipher is None:
        context.minimum_version = ssl.TLSVersion.TLSv1_3
    else:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(cipher)
        # The client really offers it: a refusal below is the server's.
        assert [suite["name"] for suite in context.get_ciphers() if suite["protocol"] != "TLSv1.3"] == [cipher]
    return context


def _handshake(port: int, context: ssl.SSLContext) -> tuple[str, str]:
    """The suite and version the server chose; ssl.SSLError when it accepts none offered."""
    with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return tls.cipher()[0], tls.version()


@pytest.mark.parametrize("key_type", ["ec", "rsa"])
def test_tls_listeners_offer_no_cbc_sha1_suites(tmp_path, key_type):
    certificate = make_certificate(tmp_path, "server", key_type)
    port, internal_port = free_ports(2)
    tls = ["--tls-certificate", certificate.certificate, "--tls-key", certificate.key,
           "--internal-tls-certificate", certificate.certificate, "--internal-tls-key", certificate.key]
    with open(tmp_path / "server.log", "wb") as log:
        process = subprocess.Popen(
            [VERIFICATION_BIN, "serve", "--database", f"sqlite:{tmp_path / 'v.sqlite'}", "--secret-file", str(tmp_path / "secret"),
             "--port", str(port), "--internal-port", str(internal_port), *tls], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not (port_accepts(port) and port_accepts(internal_port)):
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)
        for listener in (port, internal_port):
            for suite in REFUSED_SUITES[key_type]:
                client = _client(suite)
                with pytest.raises(ssl.SSLError):
                    _handshake(listener, client)
            for suite in OFFERED_SUITES[key_type]:
                assert _handshake(listener, _client(suite)) == (suite, "TLSv1.2")
            assert _handshake(listener, _client(None))[1] == "TLSv1.3"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0, (tmp_path / "server.log").read_text()
