"""(f) Mutual TLS on the internal listener, and its start-up checks.

With E2E_INTERNAL_TLS=1 (scripts/test.sh sets it for the PostgreSQL run) every server of the
suite runs its internal listener over TLS with a client-certificate allow-list, so the whole
chain in (a)-(e) already goes portal -> server over mutual TLS. This module adds what only a
refused client shows: no certificate, or one not on the list, is a 401 on every internal path;
plain HTTP gets no answer. The start-up checks of the TLS flags run in either mode."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import requests

from e2e_support import (E2E_INTERNAL_TLS, PORTAL_BIN, V1, VERIFICATION_BIN, REQUEST_TIMEOUT,
                         make_certificate)

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
