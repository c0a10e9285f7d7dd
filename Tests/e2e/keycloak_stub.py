"""A Keycloak-like issuer, written from Keycloak's documented formats (not from our server's code):
an RSA signing key with a self-signed X.509 certificate, the realm's certs document at
`/auth/realms/cwa/protocol/openid-connect/certs` served over HTTP on a free loopback port, and RS256
access tokens with the roles in `realm_access.roles`, as Keycloak issues them. PyJWT signs, the
`cryptography` package makes the keys and certificates.

It counts the certs fetches, can be stopped and started again on the same port (the realm down
and back), and can add a key (rotation: Keycloak lists the new key next to the old one).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

CERTS_PATH = "/auth/realms/cwa/protocol/openid-connect/certs"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_uint(number: int) -> str:
    return _b64url(number.to_bytes((number.bit_length() + 7) // 8, "big"))


class RealmKey:
    """An RSA key pair and its self-signed certificate (Keycloak's realm keys are self-signed,
    with the realm's name as the subject)."""

    def __init__(self, kid: str | None = None, bits: int = 2048):
        self.kid = kid or _b64url(uuid.uuid4().bytes)
        self.private_key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cwa")])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                            .public_key(self.private_key.public_key()).serial_number(x509.random_serial_number())
                            .not_valid_before(now - datetime.timedelta(minutes=5))
                            .not_valid_after(now + datetime.timedelta(days=365))
                            .sign(self.private_key, hashes.SHA256()))

    @property
    def private_pem(self) -> bytes:
        return self.private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption())

    @property
    def public_pem(self) -> bytes:
        return self.private_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                           serialization.PublicFormat.SubjectPublicKeyInfo)

    @property
    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def jwk(self, use: str = "sig", alg: str = "RS256") -> dict:
        """The key as Keycloak's certs document lists it."""
        der = self.certificate.public_bytes(serialization.Encoding.DER)
        numbers = self.private_key.public_key().public_numbers()
        return {
            "kid": self.kid, "kty": "RSA", "alg": alg, "use": use,
            "n": _b64url_uint(numbers.n), "e": _b64url_uint(numbers.e),
            "x5c": [base64.b64encode(der).decode()],
            "x5t": _b64url(hashlib.sha1(der).digest()),
            "x5t#S256": _b64url(hashlib.sha256(der).digest()),
        }


class KeycloakStub:
    """The realm `cwa` of a Keycloak-like server on 127.0.0.1. `url` is what the verification
    server's `--trusted-iam` gets."""

    def __init__(self):
        self.signing_keys = [RealmKey()]
        # Keycloak lists an encryption key too (RSA-OAEP); a verifier must pass it over.
        self.encryption_key = RealmKey()
        self.certs_fetches = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        assert self.port is not None, "start the stub first"
        return f"http://127.0.0.1:{self.port}"

    @property
    def key(self) -> RealmKey:
        """The realm's first (active) signing key."""
        return self.signing_keys[0]

    def certs_document(self) -> dict:
        return {"keys": [self.encryption_key.jwk(use="enc", alg="RSA-OAEP")] + [k.jwk() for k in self.signing_keys]}

    def add_signing_key(self) -> RealmKey:
        """Rotation as Keycloak does it: a new key is listed next to the old one."""
        key = RealmKey()
        self.signing_keys.append(key)
        return key

    def fetch_count(self) -> int:
        with self._lock:
            return self.certs_fetches

    def start(self) -> None:
        """Listens on a free port, or on the same port again after stop()."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                if self.path != CERTS_PATH:
                    self.send_error(404)
                    return
                with stub._lock:
                    stub.certs_fetches += 1
                body = json.dumps(stub.certs_document()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port or 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """The realm down: nothing listens on its port any more."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    # -----------------------------------------------------------------------------------------
    # Tokens

    def claims(self, roles: list[str] | None, username: str = "keycloak-officer", lifetime: int = 300,
               issued_at: int | None = None) -> dict:
        """An access token's claims as Keycloak issues them; `roles` None: no realm_access."""
        now = int(time.time()) if issued_at is None else issued_at
        claims = {
            "exp": now + lifetime, "iat": now, "jti": str(uuid.uuid4()),
            "iss": f"{self.url}/auth/realms/cwa", "aud": "account", "sub": str(uuid.uuid4()),
            "typ": "Bearer", "azp": "verification-portal", "scope": "openid profile",
            "preferred_username": username,
        }
        if roles is not None:
            claims["realm_access"] = {"roles": roles}
        return claims

    def token(self, roles: list[str] | None, key: RealmKey | None = None, kid: str | None = "",
              **options) -> str:
        """RS256, signed with `key` (default: the realm's first key). kid "" (default): the key's
        own, None: no kid in the header, anything else: that kid."""
        key = key or self.key
        headers = {"typ": "JWT"}
        if kid is not None:
            headers["kid"] = kid or key.kid
        return jwt.encode(self.claims(roles, **options), key.private_pem, algorithm="RS256", headers=headers)

    def unsigned_token(self, roles: list[str]) -> str:
        """`alg: none`, the realm key's kid, no signature."""
        header = {"alg": "none", "typ": "JWT", "kid": self.key.kid}
        return f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(self.claims(roles)).encode())}."

    def hmac_token(self, roles: list[str], secret: bytes) -> str:
        """HS256 with `secret` (the realm's public key or certificate PEM: algorithm confusion).
        Built by hand: PyJWT refuses a PEM as an HMAC secret, as it should."""
        header = {"alg": "HS256", "typ": "JWT", "kid": self.key.kid}
        signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(self.claims(roles)).encode())}"
        signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{_b64url(signature)}"
