"""(d) Status and revocation of a teleTAN through the real standalone server's internal
endpoints: the reference comes with the teleTAN, only its issuer (the token's `sub`) sees or
revokes it, and a revoked teleTAN is refused by `/registrationToken` like an unknown one.

Presents one invalid teleTAN (the revoked one) to the guessing protection of 127.0.0.1."""

from __future__ import annotations

import re

from e2e_support import V1, RecordedResponse, app_accepts, random_uuid

REFERENCE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _status(api, token: str | None, references) -> RecordedResponse:
    return api.post("internal", f"{V1}/tan/teletan/status", {"references": references},
                    headers=_auth(token) if token else None)


def _revoke(api, token: str, reference: str):
    return api.post("internal", f"{V1}/tan/teletan/revoke", {"reference": reference}, headers=_auth(token))


def test_a_revoked_teletan_no_longer_redeems(api, server):
    officer = server.trusted.token(["c19hotline"], sub="e2e-revoking-officer")
    colleague = server.trusted.token(["c19hotline"], sub="e2e-colleague")
    issued = []
    for _ in range(2):
        created = api.create_teletan(officer)
        assert created.status == 201, created.body
        assert list(created.json()) == ["value"], "the body stays CWA's"
        assert app_accepts(created.json()["value"])
        reference = created.headers.get("x-cwa-teletan-reference", "")
        assert REFERENCE.fullmatch(reference), reference
        issued.append((created.json()["value"], reference))
    (revoked_teletan, revoked), (kept_teletan, kept) = issued

    both = _status(api, officer, [revoked, kept, random_uuid()])
    assert both.status == 200, both.body
    assert both.json() == {"statuses": {revoked: "unused", kept: "unused"}}
    assert _status(api, colleague, [revoked, kept]).json() == {"statuses": {}}, "only the issuer sees them"
    foreign = _revoke(api, colleague, revoked)
    assert foreign.status == 404, foreign.body
    assert foreign.json()["status"] == 404

    revocation = _revoke(api, officer, revoked)
    assert revocation.status == 200, revocation.body
    assert revocation.json() == {"result": "revoked"}
    assert _revoke(api, officer, revoked).json() == {"result": "already_revoked"}

    redeemed = api.registration_token(kept_teletan)
    assert redeemed.status == 201, redeemed.body
    refused = api.registration_token(revoked_teletan)
    assert refused.status == 400, refused.body
    assert refused.json()["status"] == 400
    assert "revok" not in refused.json()["error"].lower(), "refused like an unknown teleTAN, with no hint"
    assert _revoke(api, officer, kept).json() == {"result": "already_redeemed"}
    after = _status(api, officer, [revoked, kept])
    assert after.json() == {"statuses": {revoked: "revoked", kept: "redeemed"}}


def test_status_and_revocation_need_the_portal_token_with_a_cwa_role(api, server):
    assert _status(api, None, [random_uuid()]).status == 401
    roleless = server.trusted.token([], sub="e2e-revoking-officer")
    # A missing role is 401 on every internal endpoint, as CWA answers it (never 403).
    assert _status(api, roleless, [random_uuid()]).status == 401
    assert _revoke(api, roleless, random_uuid()).status == 401
    officer = server.trusted.token(["c19hotline_event"], sub="e2e-revoking-officer")
    for references in ([], ["not-a-uuid"], [random_uuid() for _ in range(101)]):
        refused = _status(api, officer, references)
        assert refused.status == 400, (references[:2], refused.body)
        assert refused.json()["status"] == 400
    assert _status(api, officer, [random_uuid() for _ in range(100)]).json() == {"statuses": {}}
