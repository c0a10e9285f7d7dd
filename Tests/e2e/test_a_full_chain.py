"""(a) The whole chain: an officer issues a teleTAN in the portal (headless Chromium), the
"app" validates it and exchanges it for a registration token, a TAN and the test result, and
the "submission server" verifies the TAN once."""

from __future__ import annotations

import time

from e2e_support import (OFFICER, TELETAN_PATTERN, UUID4_PATTERN, app_accepts, check_character,
                         press_issue, read_teletan, sign_in, last_document_status)


def test_check_character_matches_published_vectors():
    """The app-side check used below, against the CWA test vectors."""
    for body, expected in (("FE9A5MAK6", "C"), ("WPHSATMHD", "4"), ("FE9A5MAK9", "H"), ("FE9A5MAKW", "G")):
        assert check_character(body) == expected
    assert app_accepts("fe9a5mak6c")  # typed in lower case
    assert not app_accepts("FE9A5MAK6D") and not app_accepts("FE9A5MAK0C") and not app_accepts("FE9A5MAK6")


def test_officer_issued_teletan_goes_through_the_whole_chain(browser, portal, api, secrets_ledger):
    sign_in(browser, portal, *OFFICER)
    press_issue(browser, portal)
    assert last_document_status(browser) == 200
    teletan = read_teletan(browser, secrets_ledger)

    # What the app checks before it contacts the server.
    assert TELETAN_PATTERN.fullmatch(teletan), f"{len(teletan)} characters outside the alphabet"
    assert teletan[9] == check_character(teletan[:9]), "wrong check character"

    # teleTAN -> registration token, once.
    first = api.registration_token(teletan)
    assert first.status == 201, first.body
    registration_token = first.json()["registrationToken"]
    assert UUID4_PATTERN.fullmatch(registration_token)
    assert "responsePadding" in first.json()
    again = api.registration_token(teletan)
    assert again.status == 400, again.body

    # registration token -> TAN, once.
    created = time.time()
    first_tan = api.tan(registration_token)
    assert first_tan.status == 201, first_tan.body
    tan = first_tan.json()["tan"]
    assert UUID4_PATTERN.fullmatch(tan)
    second_tan = api.tan(registration_token)
    assert second_tan.status == 400, second_tan.body

    # The test result of a teleTAN session: positive, with the session's creation time.
    result = api.test_result(registration_token)
    assert result.status == 200, result.body
    body = result.json()
    assert body["testResult"] == 2
    assert isinstance(body["sc"], int) and not isinstance(body["sc"], bool)
    assert abs(body["sc"] - created) < 120, (body["sc"], created)
    assert isinstance(body.get("responsePadding"), str)

    # The submission server verifies the TAN on the internal listener: once.
    verified = api.verify_tan(tan)
    assert verified.status == 200, verified.body
    assert verified.headers.get("x-cwa-teletan-type") == "TEST"
    assert verified.body == b""
    verified_again = api.verify_tan(tan)
    assert verified_again.status == 404, verified_again.body
