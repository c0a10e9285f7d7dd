"""(k) The verification server trusts a Keycloak realm (`--trusted-iam URL`), checked against an
independent peer: a Keycloak-like issuer stub (keycloak_stub.py: an RSA key, a self-signed
certificate, the realm's certs document over HTTP on a free loopback port, RS256 tokens with
`realm_access.roles`) and the real `verification-server` binary.

- 201 with CWA's role rules (no type header: c19hotline; EVENT: c19hotline_event; TEST: any of
  the three roles), next to the portal's ES256 key, which keeps working;
- 401 in the server's JSON error format for no role, the wrong role for the type, roles outside
  `realm_access`, an expired token, another key (under the realm's kid or its own), `alg: none`,
  HS256 signed with the realm's public key or certificate as the secret (algorithm confusion);
- 503 while the realm is down and no cached key fits (a restarted server, or a kid the server
  must fetch), with a warning naming the realm and never the token; recovery once it is back;
- key rotation (a key added to the realm) and a token without a kid (the realm's first key);
- a flood of tokens with made-up kids makes the server fetch the certs document at most once
  per 10 s (the stub counts the fetches).

Every token and the realm's private keys go into the secrets-at-rest ledger."""

from __future__ import annotations

import math
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import jwt
import pytest
from jsonschema import Draft4Validator

from e2e_support import V1, ApiClient, VerificationServer, app_accepts, load_openapi
from keycloak_stub import KeycloakStub, RealmKey

DOC = load_openapi()

def _documented_schema(status: int) -> Draft4Validator:
    """The body schema the API document gives for `status` on POST /tan/teletan."""
    node = DOC["paths"][f"{V1}/tan/teletan"]["post"]["responses"][str(status)]
    node = _resolve(node["$ref"]) if "$ref" in node else node
    return Draft4Validator(_resolve(node["content"]["application/json"]["schema"]["$ref"]))


def _resolve(ref: str) -> dict:
    node = DOC
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node

TELETAN = f"{V1}/tan/teletan"
FETCH_INTERVAL = 10  # the server fetches a realm's certs document at most once per 10 s
RECOVERY_TIMEOUT = FETCH_INTERVAL + 10


class RealmTrustingServer(VerificationServer):
    """A verification server that trusts the portal key and a Keycloak realm."""

    def __init__(self, workdir, trusted, realm_url: str):
        super().__init__(workdir, trusted)
        self.realm_url = realm_url

    def command(self) -> list[str]:
        return super().command() + ["--trusted-iam", self.realm_url]


class Tokens:
    """Hands out the stub's tokens and records each in the ledger."""

    def __init__(self, realm: KeycloakStub, ledger):
        self.realm = realm
        self.ledger = ledger

    def record(self, token: str) -> str:
        self.ledger.add_secret(token, "bearer token")
        return token

    def __getattr__(self, name):
        make = getattr(self.realm, name)
        return lambda *args, **kwargs: self.record(make(*args, **kwargs))


def _record_keys(realm: KeycloakStub, ledger) -> None:
    for key in [*realm.signing_keys, realm.encryption_key]:
        ledger.add_private_key(key.private_pem, f"realm key {key.kid}")


@pytest.fixture(scope="module")
def realm(secrets_ledger):
    stub = KeycloakStub()
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()
        _record_keys(stub, secrets_ledger)


@pytest.fixture
def tokens(realm, secrets_ledger) -> Tokens:
    return Tokens(realm, secrets_ledger)


def _start_server(workdir, portal_key, realm_url, ledger) -> RealmTrustingServer:
    workdir.mkdir(parents=True, exist_ok=True)
    server = RealmTrustingServer(workdir, portal_key, realm_url)
    ledger.watch(server, server.database, log_marker=b"verification server starting")
    server.start()
    return server


@pytest.fixture(scope="module")
def realm_server(tmp_path_factory, portal_key, realm, secrets_ledger):
    server = _start_server(tmp_path_factory.mktemp("realm-server"), portal_key, realm.url, secrets_ledger)
    try:
        yield server
    finally:
        server.stop_cleanly()


@pytest.fixture
def fresh_server(tmp_path, portal_key, realm, secrets_ledger):
    """A server of the test's own, with nothing cached yet."""
    server = _start_server(tmp_path / "server", portal_key, realm.url, secrets_ledger)
    try:
        yield server
    finally:
        if server.is_running():
            server.stop_cleanly()


def _create(api: ApiClient, token: str, teletan_type: str | None = None):
    return api.create_teletan(token, teletan_type)


def _assert_error(answer, status: int) -> None:
    assert answer.status == status, (answer.status, answer.body)
    assert answer.headers.get("content-type") == "application/json"
    body = answer.json()
    _documented_schema(status).validate(body)
    assert body["status"] == status


# ---------------------------------------------------------------------------------------------
# 201 with CWA's role rules


@pytest.mark.parametrize("roles, teletan_type", [
    (["c19hotline"], None),
    (["c19hotline", "offline_access"], "TEST"),
    (["c19hotline_event"], "EVENT"),
    (["c19healthauthority"], "TEST"),
    (["c19hotline_event"], "TEST"),
], ids=["no header, c19hotline", "TEST, c19hotline", "EVENT, c19hotline_event", "TEST, c19healthauthority only",
        "TEST, c19hotline_event only"])
def test_a_realm_token_with_the_right_role_creates_a_teletan(realm_server, response_log, tokens, roles, teletan_type):
    api = ApiClient(realm_server, response_log)
    created = _create(api, tokens.token(roles), teletan_type)
    assert created.status == 201, created.body
    teletan = created.json()["value"]
    assert app_accepts(teletan)
    # A real teleTAN of the requested type: the app's chain accepts it.
    registration = api.registration_token(teletan)
    assert registration.status == 201, registration.body
    tan = api.tan(registration.json()["registrationToken"])
    verified = api.verify_tan(tan.json()["tan"])
    assert verified.status == 200
    assert verified.headers.get("x-cwa-teletan-type") == (teletan_type or "TEST")


def test_the_portal_key_keeps_working_next_to_the_realm(realm_server, response_log, portal_key, secrets_ledger):
    api = ApiClient(realm_server, response_log)
    assert _create(api, portal_key.token(["c19hotline"]), "TEST").status == 201
    assert _create(api, portal_key.token(["c19hotline_event"]), "EVENT").status == 201
    # A portal token keeps its own rule: TEST needs c19hotline even with the header.
    _assert_error(_create(api, portal_key.token(["c19healthauthority"]), "TEST"), 401)


def test_the_realm_is_recorded_in_the_audit_trail(realm_server, response_log, tokens, realm):
    api = ApiClient(realm_server, response_log)
    assert _create(api, tokens.token(["c19hotline"], username="audited-keycloak-officer")).status == 201
    details = realm_server.db.values("audit_log", "details", "actor", "audited-keycloak-officer", "seq")
    assert len(details) == 1, details
    assert realm.url in details[0], details


# ---------------------------------------------------------------------------------------------
# 401


REFUSED = {
    "no roles": lambda t: (t.token([]), None),
    "no realm_access (a top-level roles claim is not read)": lambda t: (t.token(None), None),
    "no header, c19hotline_event only": lambda t: (t.token(["c19hotline_event"]), None),
    "no header, c19healthauthority only": lambda t: (t.token(["c19healthauthority"]), None),
    "EVENT, c19hotline only": lambda t: (t.token(["c19hotline"]), "EVENT"),
    "EVENT, c19healthauthority only": lambda t: (t.token(["c19healthauthority"]), "EVENT"),
    "TEST, no CWA role": lambda t: (t.token(["offline_access", "uma_authorization"]), "TEST"),
    "expired": lambda t: (t.token(["c19hotline"], issued_at=int(time.time()) - 600, lifetime=300), None),
    # A realm token ends within 5 minutes (and 60 s of clock skew); CWA's realm issues 60 s.
    "valid for an hour": lambda t: (t.token(["c19hotline"], lifetime=3600), None),
    "a crit header": lambda t: (t.record(jwt.encode(
        t.realm.claims(["c19hotline"]), t.realm.key.private_pem, algorithm="RS256",
        headers={"kid": t.realm.key.kid, "crit": ["exp"]})), None),
    "another key under the realm's kid": lambda t: (t.token(["c19hotline"], key=RealmKey(), kid=t.realm.key.kid), None),
    "alg none": lambda t: (t.unsigned_token(["c19hotline"]), None),
    "HS256 with the realm's public key PEM as the secret": lambda t: (t.hmac_token(["c19hotline"], t.realm.key.public_pem), None),
    "HS256 with the realm's certificate PEM as the secret": lambda t: (t.hmac_token(["c19hotline"], t.realm.key.certificate_pem), None),
    "RS384 with the realm's key": lambda t: (t.record(jwt.encode(
        t.realm.claims(["c19hotline"]), t.realm.key.private_pem, algorithm="RS384", headers={"kid": t.realm.key.kid})), None),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_realm_token_is_401(realm_server, response_log, tokens, name):
    token, teletan_type = REFUSED[name](tokens)
    _assert_error(_create(ApiClient(realm_server, response_log), token, teletan_type), 401)


def test_another_key_with_its_own_kid_is_401_while_the_realm_answers(fresh_server, response_log, tokens, realm):
    api = ApiClient(fresh_server, response_log)
    before = realm.fetch_count()
    _assert_error(_create(api, tokens.token(["c19hotline"], key=RealmKey())), 401)
    assert realm.fetch_count() == before + 1, "an unknown kid is looked up at the realm"


# ---------------------------------------------------------------------------------------------
# Rotation, no kid


def test_a_key_added_to_the_realm_is_fetched_and_a_token_without_kid_uses_the_first_key(
        fresh_server, response_log, tokens, realm, secrets_ledger):
    api = ApiClient(fresh_server, response_log)
    assert _create(api, tokens.token(["c19hotline"])).status == 201
    new_key = realm.add_signing_key()
    secrets_ledger.add_private_key(new_key.private_pem, f"realm key {new_key.kid}")
    # The server fetched less than 10 s ago; at the latest 10 s later the new kid is fetched.
    answer = _until(lambda a: a.status != 401, lambda: _create(api, tokens.token(["c19hotline"], key=new_key)))
    assert answer.status == 201, answer.body
    # No kid: the realm's first sig/RS256 key, as CWA takes it for every token.
    assert _create(api, tokens.token(["c19hotline"], kid=None)).status == 201
    _assert_error(_create(api, tokens.token(["c19hotline"], key=new_key, kid=None)), 401)
    realm.signing_keys.remove(new_key)


def _until(done, attempt, timeout: float = RECOVERY_TIMEOUT):
    """attempt() every half second until done(answer) or the timeout; the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = attempt()
        if done(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.5)


# ---------------------------------------------------------------------------------------------
# 503 while the realm is down


def _assert_unavailable(answer, server, token: str, realm: KeycloakStub) -> None:
    _assert_error(answer, 503)
    assert int(answer.headers["retry-after"]) >= 1
    log = server.log_text()
    assert "trusted IAM unreachable" in log and realm.url in log, server.log_tail()
    assert token not in log


def test_a_restarted_server_answers_503_while_the_realm_is_down_and_recovers(fresh_server, response_log, tokens, realm):
    api = ApiClient(fresh_server, response_log)
    assert _create(api, tokens.token(["c19hotline"])).status == 201
    fresh_server.stop_cleanly()
    realm.stop()
    try:
        fresh_server.start()  # nothing cached
        token = tokens.token(["c19hotline"])
        _assert_unavailable(_create(api, token), fresh_server, token, realm)
        for _ in range(5):
            assert _create(api, tokens.token(["c19hotline"])).status == 503
        # One warning for the one fetch attempt, not one per refused request (at most one fetch
        # per 10 s: a flood of requests must not flood the log).
        warnings = [line for line in fresh_server.log_text().splitlines()
                    if " warning " in line and "trusted IAM unreachable" in line]
        assert len(warnings) == 1, warnings
    finally:
        realm.start()  # the same port
    recovered = _until(lambda a: a.status != 503, lambda: _create(api, tokens.token(["c19hotline"])))
    assert recovered.status == 201, recovered.body


def test_an_unknown_kid_while_the_realm_is_down_is_503_and_cached_keys_keep_working(
        fresh_server, response_log, tokens, realm, secrets_ledger):
    api = ApiClient(fresh_server, response_log)
    assert _create(api, tokens.token(["c19hotline"])).status == 201
    realm.stop()
    try:
        # Rotated while the realm is unreachable: the server cannot know the new key.
        new_key = realm.add_signing_key()
        secrets_ledger.add_private_key(new_key.private_pem, f"realm key {new_key.kid}")
        time.sleep(FETCH_INTERVAL)  # so that the server may fetch again, and finds the realm down
        token = tokens.token(["c19hotline"], key=new_key)
        _assert_unavailable(_create(api, token), fresh_server, token, realm)
        assert _create(api, tokens.token(["c19hotline"])).status == 201, "the cached key still works"
    finally:
        realm.start()
    recovered = _until(lambda a: a.status != 503, lambda: _create(api, tokens.token(["c19hotline"], key=new_key)))
    assert recovered.status == 201, recovered.body
    realm.signing_keys.remove(new_key)


# ---------------------------------------------------------------------------------------------
# Bounded fetches


def test_a_flood_of_unknown_kids_fetches_the_realm_at_most_once_per_interval(fresh_server, response_log, tokens, realm):
    stranger = RealmKey()
    flood = [tokens.token(["c19hotline"], key=stranger, kid=f"made-up-{uuid.uuid4()}") for _ in range(200)]
    threads = 10

    def send(share: list[str]) -> list:
        client = ApiClient(fresh_server, response_log)  # one connection pool per thread
        return [_create(client, token) for token in share]

    before = realm.fetch_count()
    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        answers = [answer for share in pool.map(send, [flood[i::threads] for i in range(threads)]) for answer in share]
    seconds = time.monotonic() - started
    fetches = realm.fetch_count() - before
    assert all(answer.status == 401 for answer in answers), {answer.status for answer in answers}
    # The first request found nothing cached and fetched; the others joined it or found the
    # interval not over. At most one fetch starts per 10 s.
    assert 1 <= fetches <= 1 + math.floor(seconds / FETCH_INTERVAL), (fetches, seconds)
