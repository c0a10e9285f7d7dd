"""(j) Every refusal docs/verification-api.yaml documents, provoked as a real client would, answers
the documented status with the documented body: for every path and every documented 4xx status
there are cases here (malformed JSON, a missing field, a field of the wrong type, malformed,
unknown or used teleTANs, registration tokens and TANs, missing, broken or untrusted bearer
tokens, a token without the role, a body over 10,000 bytes or chunked, another content type, the
guessing protection and the global limit), and test_every_documented_refusal_has_cases fails as
soon as the document names a status no case provokes.

Each answer must carry the documented status, `Content-Type: application/json`, a body of the
document's `Error` schema whose `status` repeats the HTTP status, and the documented headers
(Retry-After on a 429).

The guessing protection (429 on /registrationToken) and the global teleTAN limit (429 on
/tan/teletan) get verification servers of their own (SQLite), so that the session's server
is not locked: invalid teleTANs count against an address for an hour. The one with the
guessing protection trusts X-Forwarded-For (as behind the operator's load balancer), so every
case presents its invalid teleTANs from an address of its own."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import count
from typing import Callable

import pytest
import requests
from jsonschema import Draft4Validator

from e2e_support import (E2E_INTERNAL_TLS, REQUEST_TIMEOUT, V1, ApiClient, RecordedResponse, VerificationServer,
                         load_openapi, random_uuid, with_wrong_check_character)

JSON = {"Content-Type": "application/json"}
DOC = load_openapi()
ERROR_SCHEMA = Draft4Validator(DOC["components"]["schemas"]["Error"])

REGISTRATION = f"{V1}/registrationToken"
TAN = f"{V1}/tan"
TEST_RESULT = f"{V1}/testresult"
TELETAN = f"{V1}/tan/teletan"
STATUS = f"{V1}/tan/teletan/status"
REVOKE = f"{V1}/tan/teletan/revoke"
VERIFY = f"{V1}/tan/verify"

# A TAN-like value of every kind the schema UuidV4 refuses (CWA answers 400 to these).
NOT_UUID_V4 = {"not a UUID": "not-a-uuid", "empty": "", "UUID version 1": "3f1c2d4e-5a6b-1c7d-8e9f-0a1b2c3d4e5f",
               "too short": "3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5"}


def documented_refusals() -> set[tuple[str, int]]:
    """(path, status) of every 4xx the document names for an operation."""
    found = set()
    for path, item in DOC["paths"].items():
        for method, operation in item.items():
            if method == "servers":
                continue
            found |= {(path, int(status)) for status in operation["responses"] if status.startswith("4")}
    return found


def documented_response(path: str, status: int) -> dict:
    (operation,) = [operation for method, operation in DOC["paths"][path].items() if method != "servers"]
    response = operation["responses"][str(status)]
    while "$ref" in response:
        node = DOC
        for part in response["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        response = node
    return response


def listener_of(path: str) -> str:
    (operation,) = [operation for method, operation in DOC["paths"][path].items() if method != "servers"]
    (tag,) = operation["tags"]
    return tag


# ---------------------------------------------------------------------------------------------
# Servers of their own


class ProxiedServer(VerificationServer):
    """A verification server that takes the client address from X-Forwarded-For (--trust-proxy)."""

    def command(self) -> list[str]:
        return super().command() + ["--trust-proxy"]


def _own_server(instance, secrets_ledger):
    secrets_ledger.watch(instance, instance.database, log_marker=b"verification server starting")
    instance.start()
    return instance


@pytest.fixture(scope="module")
def guessing_server(tmp_path_factory, portal_key, secrets_ledger):
    directory = tmp_path_factory.mktemp("guessing-server")
    instance = _own_server(ProxiedServer(directory, portal_key, database=f"sqlite:{directory / 'verification.sqlite'}"),
                           secrets_ledger)
    try:
        yield instance
    finally:
        instance.stop_cleanly()


@pytest.fixture(scope="module")
def limited_server(tmp_path_factory, portal_key, secrets_ledger):
    directory = tmp_path_factory.mktemp("limited-server")
    instance = _own_server(VerificationServer(directory, portal_key, teletans_per_hour=1,
                                              database=f"sqlite:{directory / 'verification.sqlite'}"), secrets_ledger)
    try:
        yield instance
    finally:
        instance.stop_cleanly()


_addresses = count(1)


@dataclass
class Context:
    """What the cases send with: the session's server (and its API client), the two servers of
    their own, the trusted and an untrusted portal key."""
    api: ApiClient
    server: VerificationServer
    guessing: ApiClient
    limited: ApiClient
    portal_key: object
    untrusted_key: object
    response_log: object

    def token(self, roles=("c19hotline", "c19hotline_event"), **claims) -> str:
        return self.portal_key.token(list(roles), **claims)

    def bearer(self, roles=("c19hotline", "c19hotline_event"), **claims) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(roles, **claims)}"}

    def address(self) -> dict[str, str]:
        """X-Forwarded-For with an address of its own (TEST-NET-3), for the guessing server."""
        number = next(_addresses)
        return {"X-Forwarded-For": f"203.0.113.{number % 250 + 1}, 198.51.{number // 250}.{number % 250 + 1}"}

    def registration_token(self) -> str:
        answered = self.api.registration_token(self.api.new_teletan())
        assert answered.status == 201, answered.body
        return answered.json()["registrationToken"]

    def tan(self) -> str:
        answered = self.api.tan(self.registration_token())
        assert answered.status == 201, answered.body
        return answered.json()["tan"]

    def reference(self, sub: str = "e2e-client") -> str:
        created = self.api.post("internal", TELETAN, headers=self.bearer(["c19hotline"], sub=sub))
        assert created.status == 201, created.body
        return created.headers["x-cwa-teletan-reference"]

    def without_client_certificate(self, path: str, body: bytes, headers: dict[str, str]) -> RecordedResponse:
        """The internal listener, asked without a client certificate (mutual TLS)."""
        response = requests.post(self.server.internal_url + path, data=body, headers=headers,
                                 verify=self.server.tls.server.certificate, timeout=REQUEST_TIMEOUT)
        return self.response_log.add("internal", "POST", path, response.status_code, response.headers.items(), response.content)


# ---------------------------------------------------------------------------------------------
# The cases: (path, status) -> name -> what a client sends to provoke it


def _too_big(path: str) -> bytes:
    body = json.dumps({"key": "FE9A5MAK6C", "keyType": "TELETAN", "registrationToken": random_uuid(), "tan": random_uuid(),
                       "references": [random_uuid()], "reference": random_uuid(), "filler": "x" * 10_000}).encode()
    assert len(body) > 10_000
    return body


def _any_body() -> bytes:
    return json.dumps({"key": "FE9A5MAK6C", "keyType": "TELETAN", "registrationToken": random_uuid(), "tan": random_uuid(),
                       "references": [random_uuid()], "reference": random_uuid()}).encode()


def _transport_cases(path: str, auth: bool) -> dict[tuple[int, str], Callable[[Context], RecordedResponse]]:
    """The rules every POST follows, whatever its operation: 406 for a body over 10,000 bytes or
    a chunked one, 415 for a body that is not JSON (with a valid token where one is needed, so
    that nothing else is the reason)."""
    listener = listener_of(path)

    def headers(c: Context, extra: dict[str, str]) -> dict[str, str]:
        return {**(c.bearer() if auth else {}), **extra}

    return {
        (406, "body over 10,000 bytes"): lambda c: c.api.post(listener, path, data=_too_big(path), headers=headers(c, JSON)),
        (406, "chunked body"): lambda c: c.api.post_raw(listener, path, _any_body(), headers(c, JSON), chunked=True),
        (406, "chunked body without content type"): lambda c: c.api.post_raw(listener, path, _any_body(), headers(c, {}), chunked=True),
        (415, "text/plain"): lambda c: c.api.post(listener, path, data=_any_body(), headers=headers(c, {"Content-Type": "text/plain"})),
        (415, "form"): lambda c: c.api.post(listener, path, data=b"key=FE9A5MAK6C&keyType=TELETAN",
                                            headers=headers(c, {"Content-Type": "application/x-www-form-urlencoded"})),
        (415, "no content type"): lambda c: c.api.post(listener, path, data=_any_body(), headers=headers(c, {})),
        (415, "application/jsonx"): lambda c: c.api.post(listener, path, data=_any_body(),
                                                         headers=headers(c, {"Content-Type": "application/jsonx"})),
    }


def _json_body_cases(path: str, listener: str, field: str, auth: bool) -> dict[tuple[int, str], Callable]:
    """400 for a body that is no JSON, not an object, lacks the field or has it of another type."""
    def send(body: bytes):
        return lambda c: c.api.post(listener, path, data=body, headers={**JSON, **(c.bearer() if auth else {})})
    return {
        (400, "malformed JSON"): send(b'{"' + field.encode() + b'": '),
        (400, "not JSON at all"): send(b"not json"),
        (400, "JSON array"): send(b"[]"),
        (400, "JSON null"): send(b"null"),
        (400, f"missing {field}"): send(b'{"other": "x"}'),
        (400, "empty body"): send(b""),
        (400, f"{field} a number"): send(json.dumps({field: 1234567890}).encode()),
        (400, f"{field} null"): send(json.dumps({field: None}).encode()),
        (400, f"{field} an object"): send(json.dumps({field: {"a": 1}}).encode()),
    }


def _unauthorized_cases(path: str, body: Callable[[], bytes]) -> dict[tuple[int, str], Callable]:
    def send(headers: Callable[[Context], dict[str, str]]):
        return lambda c: c.api.post("internal", path, data=body(), headers={**JSON, **headers(c)})
    cases = {
        (401, "no Authorization header"): send(lambda c: {}),
        (401, "Basic scheme"): send(lambda c: {"Authorization": "Basic dXNlcjpwYXNz"}),
        (401, "not a JWT"): send(lambda c: {"Authorization": "Bearer not-a-jwt"}),
        (401, "untrusted key"): send(lambda c: {"Authorization": f"Bearer {c.untrusted_key.token(['c19hotline'], kid=c.portal_key.thumbprint)}"}),
        (401, "expired token"): send(lambda c: c.bearer(issued_at=int(time.time()) - 3600, lifetime=60)),
        (401, "alg none"): send(lambda c: {"Authorization": "Bearer " + _alg_none(c)}),
        (401, "empty sub"): send(lambda c: c.bearer(sub="")),
    }
    return cases


def _alg_none(c: Context) -> str:
    import base64
    valid = c.token()
    _, payload, _ = valid.split(".")
    header = base64.urlsafe_b64encode(json.dumps({"alg": "none", "typ": "JWT", "kid": c.portal_key.thumbprint}).encode()).rstrip(b"=").decode()
    return f"{header}.{payload}."


def _mutual_tls_case(path: str, body: Callable[[], bytes]) -> dict[tuple[int, str], Callable]:
    return {(401, "no client certificate (mutual TLS)"): lambda c: c.without_client_certificate(path, body(), {**JSON, **c.bearer()})}


def _guess_until_refused(c: Context) -> RecordedResponse:
    """Invalid teleTANs from one address, five at a time as a guesser would, until the guessing
    protection refuses (at the latest after its 20 failures)."""
    address = c.address()
    clients = [ApiClient(c.guessing.server, c.response_log) for _ in range(5)]

    def guess(client: ApiClient) -> RecordedResponse:
        return client.post("app", REGISTRATION, {"key": "FE9A5MAK6C", "keyType": "TELETAN"}, headers=address)

    with ThreadPoolExecutor(5) as pool:
        for _ in range(10):
            answers = list(pool.map(guess, clients))
            assert all(answer.status in (400, 429) for answer in answers), [(a.status, a.body) for a in answers]
            refused = [answer for answer in answers if answer.status == 429]
            if refused:
                return refused[0]
    raise AssertionError("50 invalid teleTANs from one address, and no 429")


def _limit_reached(c: Context) -> RecordedResponse:
    first = c.limited.create_teletan(c.token(["c19hotline"]))
    assert first.status in (201, 429), first.body
    return c.limited.create_teletan(c.token(["c19hotline"]))


def _second_verification(c: Context) -> RecordedResponse:
    tan = c.tan()
    assert c.api.verify_tan(tan).status == 200
    return c.api.verify_tan(tan)


def _second_tan(c: Context) -> RecordedResponse:
    token = c.registration_token()
    assert c.api.tan(token).status == 201
    return c.api.tan(token)


def _redeemed_teletan(c: Context) -> RecordedResponse:
    teletan = c.guessing.new_teletan()
    headers = c.address()
    assert c.guessing.post("app", REGISTRATION, {"key": teletan, "keyType": "TELETAN"}, headers=headers).status == 201
    return c.guessing.post("app", REGISTRATION, {"key": teletan, "keyType": "TELETAN"}, headers=headers)


def _expired_teletan(c: Context) -> RecordedResponse:
    teletan = c.guessing.new_teletan()
    c.guessing.server.db.expire_newest_teletan()
    return c.guessing.post("app", REGISTRATION, {"key": teletan, "keyType": "TELETAN"}, headers=c.address())


def _revoked_teletan(c: Context) -> RecordedResponse:
    created = c.guessing.create_teletan(c.token(["c19hotline"]))
    assert created.status == 201, created.body
    revoked = c.guessing.post("internal", REVOKE, {"reference": created.headers["x-cwa-teletan-reference"]},
                              headers=c.bearer(["c19hotline"]))
    assert revoked.status == 200, revoked.body
    return c.guessing.post("app", REGISTRATION, {"key": created.json()["value"], "keyType": "TELETAN"}, headers=c.address())


def _teletan(key: str, key_type: str = "TELETAN") -> Callable[[Context], RecordedResponse]:
    return lambda c: c.guessing.post("app", REGISTRATION, {"key": key, "keyType": key_type}, headers=c.address())


def _wrong_check_character(c: Context) -> RecordedResponse:
    return c.guessing.post("app", REGISTRATION, {"key": with_wrong_check_character(c.guessing.new_teletan()), "keyType": "TELETAN"},
                           headers=c.address())


def _status_body(references) -> Callable[[Context], RecordedResponse]:
    return lambda c: c.api.post("internal", STATUS, {"references": references() if callable(references) else references},
                                headers=c.bearer())


def _revoke_body(reference) -> Callable[[Context], RecordedResponse]:
    return lambda c: c.api.post("internal", REVOKE, {"reference": reference(c) if callable(reference) else reference},
                                headers=c.bearer(["c19hotline"]))


def _token_body(path: str, value) -> Callable[[Context], RecordedResponse]:
    return lambda c: c.api.post("app", path, {"registrationToken": value(c) if callable(value) else value})


CASES: dict[tuple[str, int], dict[str, Callable[[Context], RecordedResponse]]] = {}
TLS_ONLY = set()


def _add(path: str, cases: dict[tuple[int, str], Callable], tls_only: bool = False) -> None:
    for (status, name), send in cases.items():
        CASES.setdefault((path, status), {})[name] = send
        if tls_only:
            TLS_ONLY.add((path, status, name))


# /registrationToken
_add(REGISTRATION, _json_body_cases(REGISTRATION, "app", "key", auth=False))
_add(REGISTRATION, {
    (400, "keyType missing"): lambda c: c.api.post("app", REGISTRATION, {"key": "FE9A5MAK6C"}),
    (400, "keyType GUID (not supported)"): lambda c: c.api.registration_token("a" * 64, key_type="GUID"),
    (400, "keyType unknown"): lambda c: c.api.registration_token("FE9A5MAK6C", key_type="PCR"),
    (400, "keyType a number"): lambda c: c.api.post("app", REGISTRATION, {"key": "FE9A5MAK6C", "keyType": 1}),
    (400, "unknown teleTAN"): _teletan("FE9A5MAK6C"),
    (400, "teleTAN with a wrong check character"): _wrong_check_character,
    (400, "teleTAN too short"): _teletan("FE9A5MAK6"),
    (400, "teleTAN with characters outside the alphabet"): _teletan("FE9A5MAK01"),
    (400, "empty teleTAN"): _teletan(""),
    (400, "redeemed teleTAN"): _redeemed_teletan,
    (400, "expired teleTAN"): _expired_teletan,
    (400, "revoked teleTAN"): _revoked_teletan,
    (429, "guessing protection (invalid teleTANs from one address)"): _guess_until_refused,
})
_add(REGISTRATION, _transport_cases(REGISTRATION, auth=False))

# Dummy requests (cwa-fake: 1) need a well-formed JSON body, and follow the transport rules.
for _path in (REGISTRATION, TAN, TEST_RESULT):
    _add(_path, {
        (400, "dummy request, malformed JSON"): (lambda path: lambda c: c.api.post(
            "app", path, data=b'{"key": ', headers={**JSON, "cwa-fake": "1"}))(_path),
        (400, "dummy request, not JSON"): (lambda path: lambda c: c.api.post(
            "app", path, data=b"not json", headers={**JSON, "cwa-fake": "1"}))(_path),
        (406, "dummy request, body over 10,000 bytes"): (lambda path: lambda c: c.api.post(
            "app", path, data=_too_big(path), headers={**JSON, "cwa-fake": "1"}))(_path),
        (415, "dummy request, text/plain"): (lambda path: lambda c: c.api.post(
            "app", path, data=_any_body(), headers={"Content-Type": "text/plain", "cwa-fake": "1"}))(_path),
    })

# /tan and /testresult
for _path in (TAN, TEST_RESULT):
    _add(_path, _json_body_cases(_path, "app", "registrationToken", auth=False))
    _add(_path, {
        (400, "registration token not a UUID"): _token_body(_path, "not-a-uuid"),
        (400, "registration token upper case, unknown"): _token_body(_path, lambda c: random_uuid().upper()),
        (400, "unknown registration token"): _token_body(_path, lambda c: random_uuid()),
        (400, "a TAN instead of the registration token"): _token_body(_path, lambda c: c.tan()),
    })
    _add(_path, _transport_cases(_path, auth=False))
_add(TAN, {(400, "second TAN for one registration token"): _second_tan})

# /tan/teletan (no request body)
_add(TELETAN, {
    (400, "unknown X-CWA-TELETAN-TYPE"): lambda c: c.api.create_teletan(c.token(), "PCR"),
    (400, "empty X-CWA-TELETAN-TYPE"): lambda c: c.api.create_teletan(c.token(), ""),
    (401, "TEST teleTAN without c19hotline"): lambda c: c.api.create_teletan(c.token(["c19hotline_event"]), "TEST"),
    (401, "EVENT teleTAN without c19hotline_event"): lambda c: c.api.create_teletan(c.token(["c19hotline"]), "EVENT"),
    (401, "no roles"): lambda c: c.api.create_teletan(c.token([])),
    (429, "global teleTAN limit reached"): _limit_reached,
})
_add(TELETAN, _unauthorized_cases(TELETAN, lambda: b""))
_add(TELETAN, _mutual_tls_case(TELETAN, lambda: b""), tls_only=True)
_add(TELETAN, _transport_cases(TELETAN, auth=True))

# /tan/teletan/status
_add(STATUS, _json_body_cases(STATUS, "internal", "references", auth=True))
_add(STATUS, {
    (400, "references a string"): _status_body(lambda: random_uuid()),
    (400, "no references"): _status_body([]),
    (400, "101 references"): _status_body(lambda: [random_uuid() for _ in range(101)]),
    (400, "a reference that is no UUID"): _status_body(lambda: [random_uuid(), "not-a-uuid"]),
    (400, "a reference that is a number"): _status_body([1]),
    (401, "no roles"): lambda c: c.api.post("internal", STATUS, {"references": [random_uuid()]}, headers=c.bearer([])),
    (401, "another role only"): lambda c: c.api.post("internal", STATUS, {"references": [random_uuid()]}, headers=c.bearer(["admin"])),
})
_add(STATUS, _unauthorized_cases(STATUS, lambda: json.dumps({"references": [random_uuid()]}).encode()))
_add(STATUS, _mutual_tls_case(STATUS, lambda: json.dumps({"references": [random_uuid()]}).encode()), tls_only=True)
_add(STATUS, _transport_cases(STATUS, auth=True))

# /tan/teletan/revoke
_add(REVOKE, _json_body_cases(REVOKE, "internal", "reference", auth=True))
_add(REVOKE, {
    (400, "reference no UUID"): _revoke_body("not-a-uuid"),
    (400, "reference a list"): _revoke_body(lambda c: [random_uuid()]),
    (401, "no roles"): lambda c: c.api.post("internal", REVOKE, {"reference": random_uuid()}, headers=c.bearer([])),
    (404, "unknown reference"): _revoke_body(lambda c: random_uuid()),
    (404, "another officer's teleTAN"): _revoke_body(lambda c: c.reference(sub="e2e-other-officer")),
})
_add(REVOKE, _unauthorized_cases(REVOKE, lambda: json.dumps({"reference": random_uuid()}).encode()))
_add(REVOKE, _mutual_tls_case(REVOKE, lambda: json.dumps({"reference": random_uuid()}).encode()), tls_only=True)
_add(REVOKE, _transport_cases(REVOKE, auth=True))

# /tan/verify (the submission server: no bearer token; on a mutual-TLS listener its certificate)
_add(VERIFY, _json_body_cases(VERIFY, "internal", "tan", auth=False))
_add(VERIFY, {(400, f"malformed TAN ({name})"): (lambda value: lambda c: c.api.verify_tan(value))(value)
              for name, value in NOT_UUID_V4.items()})
_add(VERIFY, {
    (404, "unknown TAN"): lambda c: c.api.verify_tan(random_uuid()),
    (404, "TAN already used"): _second_verification,
    (404, "a registration token instead of the TAN"): lambda c: c.api.verify_tan(c.registration_token()),
})
_add(VERIFY, _mutual_tls_case(VERIFY, lambda: json.dumps({"tan": random_uuid()}).encode()), tls_only=True)
_add(VERIFY, _transport_cases(VERIFY, auth=False))


# ---------------------------------------------------------------------------------------------
# Tests


def test_every_documented_refusal_has_cases():
    """The cases cover exactly the document's (path, 4xx status) pairs: a status added to the
    document without a case here fails, and so does a case for a status it no longer names."""
    documented = documented_refusals()
    # 29 since a missing role became a 401 (CWA's answer) instead of a 403 of its own.
    assert len(documented) >= 29, sorted(documented)
    assert documented - set(CASES) == set(), f"documented refusals without a case: {sorted(documented - set(CASES))}"
    assert set(CASES) - documented == set(), f"cases for refusals the document does not name: {sorted(set(CASES) - documented)}"


@pytest.fixture(scope="module")
def context(api, server, guessing_server, limited_server, portal_key, untrusted_key, response_log) -> Context:
    return Context(api=api, server=server, guessing=ApiClient(guessing_server, response_log),
                   limited=ApiClient(limited_server, response_log), portal_key=portal_key, untrusted_key=untrusted_key,
                   response_log=response_log)


PARAMETERS = [pytest.param(path, status, name, id=f"{path.removeprefix(V1)} {status} {name}")
              for (path, status), cases in sorted(CASES.items()) for name in cases]


@pytest.mark.parametrize("path, status, name", PARAMETERS)
def test_documented_refusal(context, path, status, name):
    if (path, status, name) in TLS_ONLY and not E2E_INTERNAL_TLS:
        pytest.skip("E2E_INTERNAL_TLS=1 puts the internal listener behind mutual TLS")
    answer = CASES[(path, status)][name](context)
    where = f"{path} ({name})"
    assert answer.status == status, f"{where}: {answer.status}, documented {status}: {answer.body[:300]!r}"
    assert answer.headers.get("content-type", "").split(";")[0].strip() == "application/json", (where, answer.headers)
    body = answer.json()
    errors = [error.message for error in ERROR_SCHEMA.iter_errors(body)]
    assert not errors, f"{where}: body {body} is not an Error: {errors}"
    assert body["status"] == status, (where, body)
    for header_name, header in documented_response(path, status).get("headers", {}).items():
        if "$ref" in header:
            header = DOC["components"]["headers"][header["$ref"].rsplit("/", 1)[1]]
        value = answer.headers.get(header_name.lower())
        if header.get("required"):
            assert value is not None, f"{where}: header {header_name} missing"
        if value is not None and header["schema"].get("type") == "integer":
            assert value.isdigit() and int(value) >= header["schema"].get("minimum", 0), (where, header_name, value)


# ---------------------------------------------------------------------------------------------
# "A path below asked with a method it does not list gets 405 with an Allow header (and the
# Error body); HEAD is answered wherever GET is."

OTHER_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]


def _method_cases():
    for path, item in sorted(DOC["paths"].items()):
        listed = {method.upper() for method in item if method != "servers"}
        for method in OTHER_METHODS:
            if method in listed:
                continue
            yield pytest.param(path, method, "GET" in listed and method == "HEAD", id=f"{method} {path}")


@pytest.mark.parametrize("path, method, like_get", list(_method_cases()))
def test_methods_the_document_does_not_list(context, path, method, like_get):
    listener = listener_of(path)
    base = context.server.app_url if listener == "app" else context.server.internal_url
    response = context.api.session.request(method, base + path, timeout=REQUEST_TIMEOUT, verify=context.api.verify,
                                           allow_redirects=False)
    context.response_log.add(listener, method, path, response.status_code, response.headers.items(), response.content)
    if like_get:
        assert response.status_code == 200, (method, path, response.status_code)
        return
    assert response.status_code == 405, (method, path, response.status_code, response.content[:200])
    listed = {m.upper() for m in DOC["paths"][path] if m != "servers"}
    allowed = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
    assert listed <= allowed, (method, path, response.headers.get("Allow"))
    if method != "HEAD":
        assert response.headers.get("Content-Type", "").split(";")[0] == "application/json", response.headers
        body = response.json()
        assert not list(ERROR_SCHEMA.iter_errors(body)) and body["status"] == 405, body

