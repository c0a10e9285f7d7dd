"""(b) What the verification server refuses, and that a refusal has no side effect.

Each invalid teleTAN counts as a failure of 127.0.0.1 for the server's guessing protection
(slower answers from the 5th failure in an hour): the whole suite presents only five (the last
a revoked teleTAN, in test_d_revocation.py)."""

from __future__ import annotations

import base64
import json
import subprocess
import time

import pytest

from e2e_support import DEFAULT_AUDIENCE, PORTAL_BIN, V1, VERIFICATION_BIN, random_uuid, with_wrong_check_character
from support.processes_and_browsers import raw_exchange  # noqa: E402

JSON = {"Content-Type": "application/json"}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_wrong_check_character_is_refused_and_the_real_teletan_stays_redeemable(api):
    teletan = api.new_teletan()
    refused = api.registration_token(with_wrong_check_character(teletan))
    assert refused.status == 400, refused.body
    assert refused.json()["status"] == 400
    redeemed = api.registration_token(teletan)
    assert redeemed.status == 201, redeemed.body


def test_expired_teletan_is_refused(api, server):
    teletan = api.new_teletan()
    server.db.expire_newest_teletan()
    refused = api.registration_token(teletan)
    assert refused.status == 400, refused.body


def test_redeemed_teletan_is_refused(api):
    teletan = api.new_teletan()
    assert api.registration_token(teletan).status == 201
    refused = api.registration_token(teletan)
    assert refused.status == 400, refused.body


def test_key_type_guid_is_refused(api):
    refused = api.registration_token("a" * 64, key_type="GUID")
    assert refused.status == 400, refused.body


@pytest.mark.parametrize("body", [b'{"key": "FE9A5MAK6C", "keyType": ', b"not json", b"[]", b'{"keyType": "TELETAN"}',
                                  b'{"key": 1234567890, "keyType": "TELETAN"}'])
def test_malformed_json_is_refused(api, body):
    refused = api.post("app", f"{V1}/registrationToken", data=body, headers=JSON)
    assert refused.status == 400, refused.body


@pytest.mark.parametrize("path", ["registrationToken", "tan", "testresult"])
def test_body_over_10000_bytes_is_refused(api, path):
    body = json.dumps({"registrationToken": random_uuid(), "key": "FE9A5MAK6C", "keyType": "TELETAN",
                       "filler": "x" * 10_000}).encode()
    assert len(body) > 10_000
    refused = api.post("app", f"{V1}/{path}", data=body, headers=JSON)
    assert refused.status == 406, refused.body


def test_body_of_exactly_10000_bytes_is_not_refused_for_its_size(api):
    prefix = json.dumps({"registrationToken": random_uuid(), "filler": ""}).encode()
    body = prefix[:-2] + b"x" * (10_000 - len(prefix)) + b'"}'
    assert len(body) == 10_000
    answered = api.post("app", f"{V1}/testresult", data=body, headers=JSON)
    assert answered.status == 400, answered.body  # unknown token, not 406


@pytest.mark.parametrize("listener,path", [("app", "registrationToken"), ("app", "testresult"), ("internal", "tan/verify")])
def test_chunked_body_is_refused(api, listener, path):
    body = json.dumps({"key": "FE9A5MAK6C", "keyType": "TELETAN", "registrationToken": random_uuid(),
                       "tan": random_uuid()}).encode()
    refused = api.post_raw(listener, f"{V1}/{path}", body, JSON, chunked=True)
    assert refused.status == 406, refused.body
    assert "chunked" in refused.json()["error"]  # refused for being chunked, not for its size


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml",
                                          "application/jsonfoo", "application/json-patch+json"])
def test_wrong_content_type_is_refused(api, content_type):
    body = json.dumps({"key": "FE9A5MAK6C", "keyType": "TELETAN"}).encode()
    refused = api.post("app", f"{V1}/registrationToken", data=body, headers={"Content-Type": content_type})
    assert refused.status == 415, refused.body


def test_internal_endpoints_do_not_exist_on_the_app_listener(api, portal_key):
    token = portal_key.token(["c19hotline"])
    teletan = api.post("app", f"{V1}/tan/teletan", headers={"Authorization": f"Bearer {token}"})
    assert teletan.status == 404, teletan.body
    verify = api.post("app", f"{V1}/tan/verify", {"tan": random_uuid()})
    assert verify.status == 404, verify.body


def test_app_endpoints_do_not_exist_on_the_internal_listener(api):
    for path in ("registrationToken", "tan", "testresult"):
        answered = api.post("internal", f"{V1}/{path}", {"registrationToken": random_uuid(), "key": "FE9A5MAK6C",
                                                        "keyType": "TELETAN"})
        assert answered.status == 404, (path, answered.body)


def test_teletan_creation_without_token_is_unauthorized(api):
    refused = api.create_teletan(None)
    assert refused.status == 401, refused.body
    refused = api.post("internal", f"{V1}/tan/teletan", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert refused.status == 401, refused.body


def test_teletan_creation_with_untrusted_or_broken_tokens_is_unauthorized(api, portal_key, untrusted_key):
    cases = {
        # Signed by a key the server does not trust, claiming to be the trusted portal: only
        # the signature check can refuse it.
        "untrusted key, trusted kid": untrusted_key.token(["c19hotline"], kid=portal_key.thumbprint),
        "untrusted key, own kid": untrusted_key.token(["c19hotline"]),
        "trusted key, no kid": portal_key.token(["c19hotline"], kid=None),
        "trusted key, unknown kid": portal_key.token(["c19hotline"], kid="0123456789abcdef"),
        "trusted key, expired": portal_key.token(["c19hotline"], issued_at=0, lifetime=60),
        # Correctly signed, but claiming what a portal token never does.
        "header says ES384": portal_key.token(["c19hotline"], alg="ES384"),
        "header says RS256": portal_key.token(["c19hotline"], alg="RS256"),
        "header without alg": portal_key.token(["c19hotline"], alg=None),
        "issued an hour ahead": portal_key.token(["c19hotline"], issued_at=int(time.time()) + 3600),
        "valid for ten years": portal_key.token(["c19hotline"], lifetime=10 * 365 * 86400),
        "empty subject": portal_key.token(["c19hotline"], sub=""),
        # Bound to a server, signed once, understood fully (issue 28).
        "for another server": portal_key.token(["c19hotline"], aud="another-verification-server"),
        "without audience": portal_key.token(["c19hotline"], aud=None),
        "malleable twin (high S)": portal_key.token(["c19hotline"], high_s=True),
        "crit names an extension": portal_key.token(["c19hotline"], header={"crit": ["exp"]}),
        "crit names nothing": portal_key.token(["c19hotline"], header={"crit": []}),
        "not a JWT": "not-a-jwt",
    }
    valid = portal_key.token(["c19hotline"])
    head, payload, signature = valid.split(".")
    cases["signature removed"] = f"{head}.{payload}."
    none_header = _b64url(json.dumps({"alg": "none", "typ": "JWT", "kid": portal_key.thumbprint}).encode())
    cases["alg none"] = f"{none_header}.{payload}."
    for name, token in cases.items():
        refused = api.create_teletan(token)
        assert refused.status == 401, (name, refused.status, refused.body)
    # The control case: the same construction with the trusted key and its thumbprint works,
    # also with the scheme in lower case (it is case-insensitive) and a small clock skew.
    assert api.create_teletan(valid).status == 201
    lower = api.post("internal", f"{V1}/tan/teletan", headers={"Authorization": f"bearer {portal_key.token(['c19hotline'])}"})
    assert lower.status == 201, lower.body
    skewed = portal_key.token(["c19hotline"], issued_at=int(time.time()) + 30)
    assert api.create_teletan(skewed).status == 201


def test_event_teletan_needs_the_event_role(api, portal_key):
    # A missing role is 401, as CWA's server answers it (never 403).
    refused = api.create_teletan(portal_key.token(["c19hotline"]), "EVENT")
    assert refused.status == 401, refused.body
    created = api.create_teletan(portal_key.token(["c19hotline_event"]), "EVENT")
    assert created.status == 201, created.body
    # An EVENT teleTAN goes through the chain and is verified as EVENT.
    registration = api.registration_token(created.json()["value"])
    assert registration.status == 201, registration.body
    tan = api.tan(registration.json()["registrationToken"])
    assert tan.status == 201, tan.body
    verified = api.verify_tan(tan.json()["tan"])
    assert verified.status == 200 and verified.headers.get("x-cwa-teletan-type") == "EVENT"


def test_test_teletan_needs_the_hotline_role(api, portal_key):
    refused = api.create_teletan(portal_key.token(["c19hotline_event"]), "TEST")
    assert refused.status == 401, refused.body
    refused = api.create_teletan(portal_key.token([]))
    assert refused.status == 401, refused.body


def test_unknown_teletan_type_is_a_bad_request(api, portal_key):
    refused = api.create_teletan(portal_key.token(["c19hotline", "c19hotline_event"]), "PCR")
    assert refused.status == 400, refused.body


def test_unknown_tokens_and_tans_are_refused(api):
    assert api.tan(random_uuid()).status == 400
    assert api.test_result(random_uuid()).status == 400
    assert api.tan("not-a-uuid").status == 400
    assert api.verify_tan(random_uuid()).status == 404
    assert api.verify_tan("not-a-uuid").status == 400  # malformed: 400, as the document and CWA say


def _raw_status(port: int, request: bytes) -> tuple[int, bytes]:
    """Sends `request` as it is on a new connection; returns the status code and the response."""
    response = raw_exchange(port, request, timeout=10)
    return int(response.split(b" ", 2)[1]), response


BAD_CHUNKS = b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
CUT_SHORT = b"Content-Length: 100\r\n\r\nabcde"


@pytest.mark.parametrize("body, server_status", [(BAD_CHUNKS, 406), (CUT_SHORT, 400)],
                         ids=["bad-chunk-size", "body-cut-short"])
def test_malformed_bodies_are_client_errors_not_500(portal, server, body, server_status):
    """A body the HTTP parser rejects is the client's fault: 400 from the portal; from the
    verification server 400, or 406 for any chunked body (refused before it is read). No error
    line in either log."""
    log_sizes = {instance: len(instance.log_text()) for instance in (portal, server)}
    # The portal's own host and port: any other Host gets 421 before the body is read.
    status, response = _raw_status(portal.port, f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{portal.port}\r\n".encode()
                                   + b"Content-Type: application/x-www-form-urlencoded\r\n" + body)
    assert status == 400, response[:300]
    status, response = _raw_status(server.port, f"POST {V1}/registrationToken HTTP/1.1\r\n".encode()
                                   + b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n" + body)
    assert status == server_status, response[:300]
    for instance, size in log_sizes.items():
        written = instance.log_text()[size:]
        assert " error " not in written, written[-2000:]


def _stops_naming(command: list[str], flag: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 78, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], result.stderr


def test_a_bad_audience_stops_start_up_naming_the_flag(tmp_path, portal_key):
    server = [VERIFICATION_BIN, "serve", "--database", f"sqlite:{tmp_path / 'v.sqlite'}", "--secret-file", str(tmp_path / "v.secret")]
    for bad in ["", "two words", "x" * 201]:
        _stops_naming(server + ["--audience", bad], "--audience")
    portal = [PORTAL_BIN, "serve", "--database", f"sqlite:{tmp_path / 'p.sqlite'}", "--secret-file", str(tmp_path / "p.secret"),
              "--verification-server", "http://127.0.0.1:9", "--verification-key", str(portal_key.private_path)]
    _stops_naming(portal + ["--verification-audience", "two words"], "--verification-audience")
    # CWA's tokens carry no aud: the setting would be silently ignored.
    _stops_naming(portal + ["--verification-auth", "cwa", "--verification-audience", DEFAULT_AUDIENCE], "--verification-audience")
