"""A CWA-like verification server: an independent peer for the portal's `--verification-auth cwa`.

Written from the description of the CWA verification server's own code in
verification-facts.md ("How the CWA verification server checks a portal's token"; its
`JwtService`, `IamClient`, `Key`, `AuthorizationRole`, `InternalTanController`), with PyJWT and
cryptography, and sharing no code with this project's servers:

- `POST /version/v1/tan/teletan`, no body, `Authorization: Bearer <JWT>`, optional
  `X-CWA-TELETAN-TYPE: TEST | EVENT`.
- On every validation it fetches `${jwt_server}/auth/realms/cwa/protocol/openid-connect/certs`,
  takes the FIRST key whose `use` is `sig` and `alg` is `RS256`, reads the X.509 certificate in
  `x5c[0]` (base64 DER) and uses that certificate's public key (never `n`/`e`). No such key:
  refused.
- The token's signature and `exp` are checked (as jjwt does: no leeway, `iat` not checked), then
  the roles are read from `realm_access.roles`.
- Roles: no type header requires `c19hotline`; `EVENT` requires `c19hotline_event`; `TEST`
  requires no particular one; in every case at least one of `c19hotline`, `c19healthauthority`,
  `c19hotline_event` must be there.
- 201 `{"value": "<teleTAN>"}`, or 401 `JWT is invalid.` for a missing, malformed, wrongly signed
  or expired token and for a missing role (CWA answers 401, not 403).
- A type header other than TEST or EVENT is 400: the facts do not say what CWA answers (its
  enum would not parse it); the portal never sends one.

With `tls`, it listens like our server's internal listener in the mutual-TLS run: HTTPS with the
server certificate, a client certificate required and its SHA-256 thumbprint on an allow-list.

Every request is recorded (token, type header, status, claims if valid) for the tests and the
secrets-at-rest ledger.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import ssl
import threading
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography import x509

CERTS_PATH = "/auth/realms/cwa/protocol/openid-connect/certs"
TELETAN_PATH = "/version/v1/tan/teletan"
HOTLINE, HEALTH_AUTHORITY, HOTLINE_EVENT = "c19hotline", "c19healthauthority", "c19hotline_event"
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def new_teletan() -> str:
    """9 random characters of the alphabet and the check character (facts: teleTAN format)."""
    body = "".join(secrets.choice(ALPHABET) for _ in range(9))
    digit = hashlib.sha256(body.encode()).hexdigest()[0].upper()
    return body + {"0": "G", "1": "H"}.get(digit, digit)


@dataclass
class Received:
    token: str | None
    type_header: str | None
    status: int
    header: dict | None = None  # the token's JOSE header, when it was valid
    claims: dict | None = None  # its claims, when it was valid
    teletan: str | None = None


class CWAVerificationStub:
    """Start with start(), stop with stop(). `jwt_server` may be set after construction (the
    portal's metrics listener, known once the portal picked its ports)."""

    def __init__(self, jwt_server: str | None = None, tls=None, allowed_thumbprints: list[str] | None = None):
        self.jwt_server = jwt_server
        self.tls = tls
        self.allowed = {t.replace(":", "").upper() for t in (allowed_thumbprints or [])}
        self.received: list[Received] = []
        self.certs_fetches = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what Portal reads of a verification server

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.server_address[1]

    @property
    def internal_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    # -- lifecycle

    def start(self) -> None:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                stub._handle(self)

            def log_message(self, *args):  # quiet
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(self.tls.server.certificate, self.tls.server.key)
            context.verify_mode = ssl.CERT_REQUIRED
            # Self-signed client certificates: each allowed one is its own trust anchor.
            for certificate in (self.tls.portal, self.tls.submission):
                context.load_verify_locations(certificate.certificate)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="cwa-stub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- the endpoint

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        if request.path != TELETAN_PATH:
            return self._answer(request, 404, b"", "text/plain")
        if self.tls and not self._client_allowed(request):
            return self._answer(request, 401, b"", "text/plain")
        authorization = request.headers.get("Authorization")
        type_header = request.headers.get("X-CWA-TELETAN-TYPE")
        token = authorization[len("Bearer "):] if authorization and authorization.startswith("Bearer ") else None
        record = Received(token=token, type_header=type_header, status=401)
        if type_header is not None and type_header not in ("TEST", "EVENT"):
            record.status = 400
        elif token is not None and self._valid(token, type_header, record):
            record.status = 201
            record.teletan = new_teletan()
        with self._lock:
            self.received.append(record)
        if record.status == 201:
            self._answer(request, 201, json.dumps({"value": record.teletan}).encode(), "application/json")
        elif record.status == 400:
            self._answer(request, 400, b"", "text/plain")
        else:
            self._answer(request, 401, b"JWT is invalid.", "text/plain")

    def _client_allowed(self, request: BaseHTTPRequestHandler) -> bool:
        der = request.connection.getpeercert(binary_form=True)
        return der is not None and hashlib.sha256(der).hexdigest().upper() in self.allowed

    @staticmethod
    def _answer(request: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def _signing_key(self):
        """The public key of the certificate in x5c[0] of the first sig/RS256 key, fetched now."""
        with self._lock:
            self.certs_fetches += 1
        with urllib.request.urlopen(self.jwt_server + CERTS_PATH, timeout=5) as response:
            document = json.load(response)
        for key in document.get("keys", []):
            if key.get("use") == "sig" and key.get("alg") == "RS256":
                certificate = x509.load_der_x509_certificate(base64.b64decode(key["x5c"][0]))
                return certificate.public_key()
        return None

    def _valid(self, token: str, type_header: str | None, record: Received) -> bool:
        try:
            public_key = self._signing_key()
        except (OSError, ValueError, KeyError, IndexError):
            return False
        if public_key is None:
            return False
        try:
            claims = jwt.decode(token, public_key, algorithms=["RS256"],
                                options={"verify_exp": True, "verify_iat": False, "verify_aud": False,
                                         "verify_iss": False, "require": ["exp"]})
        except jwt.InvalidTokenError:
            return False
        realm_access = claims.get("realm_access")
        roles = realm_access.get("roles") if isinstance(realm_access, dict) else None
        roles = set(roles) if isinstance(roles, list) else set()
        if not roles & {HOTLINE, HEALTH_AUTHORITY, HOTLINE_EVENT}:
            return False
        if type_header is None and HOTLINE not in roles:
            return False
        if type_header == "EVENT" and HOTLINE_EVENT not in roles:
            return False
        record.header = jwt.get_unverified_header(token)
        record.claims = claims
        return True
