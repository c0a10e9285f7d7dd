"""(c) Plausible deniability: a dummy request (`cwa-fake: 1`) looks like a real one on the wire
(status, header names, body size) and changes nothing."""

from __future__ import annotations

import random
import statistics
import time

from e2e_support import ALPHABET, V1, random_uuid


def random_key() -> str:
    """Ten random characters of the alphabet: almost never a valid teleTAN."""
    return "".join(random.choice(ALPHABET) for _ in range(10))


def assert_alike(real, fake) -> None:
    assert fake.status == real.status, (real.status, fake.status, fake.body)
    assert set(fake.headers) == set(real.headers), (sorted(real.headers), sorted(fake.headers))
    assert len(fake.body) == len(real.body), (len(real.body), len(fake.body))
    assert fake.headers["content-length"] == real.headers["content-length"]
    assert set(fake.json()) == set(real.json())


def test_each_app_endpoint_answers_a_dummy_like_a_real_request(api):
    teletan = api.new_teletan()
    real_registration = api.registration_token(teletan)
    fake_registration = api.registration_token(random_key(), fake=True)
    assert real_registration.status == 201
    assert_alike(real_registration, fake_registration)

    token = real_registration.json()["registrationToken"]
    real_tan = api.tan(token)
    fake_tan = api.tan(random_uuid(), fake=True)
    assert real_tan.status == 201
    assert_alike(real_tan, fake_tan)

    real_result = api.test_result(token)
    fake_result = api.test_result(random_uuid(), fake=True)
    assert real_result.status == 200
    assert_alike(real_result, fake_result)

    # A dummy's fields look real too.
    assert fake_result.json()["testResult"] == 2
    assert abs(fake_result.json()["sc"] - time.time()) < 120


def test_app_errors_are_as_long_as_dummies(api):
    """An observer who sees only sizes cannot tell a failed real request (400, 404) from a
    dummy: error bodies are padded like success bodies (responsePadding)."""
    dummy = api.registration_token(random_key(), fake=True)
    assert dummy.status == 201
    errors = {
        "unknown teleTAN": api.registration_token(random_key()),
        "unknown registration token": api.tan(random_uuid()),
        "malformed JSON": api.post("app", f"{V1}/testresult", data=b"{", headers={"Content-Type": "application/json"}),
        "no such path": api.post("app", f"{V1}/nothing", {}),
    }
    assert [response.status for response in errors.values()] == [400, 400, 400, 404]
    for name, response in errors.items():
        assert len(response.body) == len(dummy.body), (name, response.body)
        assert response.json()["status"] == response.status, name
        assert response.json()["responsePadding"], name


def test_dummies_with_real_values_change_nothing(api, server):
    db = server.db
    teletan = api.new_teletan()
    before = {table: db.count(table) for table in ("teletans", "registration_tokens", "tans")}

    # A dummy with a real teleTAN does not redeem it.
    assert api.registration_token(teletan, fake=True).status == 201
    assert {table: db.count(table) for table in before} == before
    real = api.registration_token(teletan)
    assert real.status == 201, "the dummy request redeemed the teleTAN"
    token = real.json()["registrationToken"]

    # A dummy with a real registration token does not use up its one TAN.
    counts = {table: db.count(table) for table in before}
    assert api.tan(token, fake=True).status == 201
    assert api.test_result(token, fake=True).status == 200
    assert {table: db.count(table) for table in before} == counts
    real_tan = api.tan(token)
    assert real_tan.status == 201, "the dummy request used up the TAN"
    assert api.verify_tan(real_tan.json()["tan"]).status == 200


def assert_medians_close(what: str, sample_round, capsys, rounds: int = 3) -> None:
    """`sample_round()` times interleaved real and dummy requests and returns (real, dummy)
    durations. Dummies do work of the same kind (hashing, indexed reads, a committed write where
    the real request writes), so an observer timing them learns little: the medians stay within a
    factor of two. Loose on purpose, and up to `rounds` rounds, one of which must be within it (a
    shared CI machine's disk flushes are uneven); a dummy that skips the database (a fraction of
    a real request's time) or waits is outside it in every round."""
    seen = []
    for _ in range(rounds):
        real_times, fake_times = sample_round()
        real_median, fake_median = statistics.median(real_times), statistics.median(fake_times)
        seen.append(f"real {real_median * 1000:.2f} ms vs dummy {fake_median * 1000:.2f} ms")
        if 0.5 <= fake_median / real_median <= 2:
            break
    with capsys.disabled():
        print(f"\n{what}, medians of 20 requests each: " + "; ".join(seen))
    assert 0.5 <= fake_median / real_median <= 2, "; ".join(seen)


def interleaved_timings(pairs, expected_status: int) -> tuple[list[float], list[float]]:
    """Times each (real request, dummy request) pair of calls one after the other; every answer
    must have `expected_status`. Returns the real and the dummy durations."""
    real_times, fake_times = [], []
    for real, fake in pairs:
        for call, times in ((real, real_times), (fake, fake_times)):
            started = time.perf_counter()
            response = call()
            times.append(time.perf_counter() - started)
            assert response.status == expected_status, response.body
    return real_times, fake_times


def test_dummy_and_real_test_result_timing(api, capsys):
    token = api.registration_token(api.new_teletan()).json()["registrationToken"]

    def sample_round():
        real_times, fake_times = interleaved_timings(
            [(lambda: api.test_result(token), lambda: api.test_result(random_uuid(), fake=True))] * 20, 200)
        assert statistics.median(real_times) < 1.0 and statistics.median(fake_times) < 1.0
        return real_times, fake_times

    assert_medians_close("/testresult", sample_round, capsys)


def test_dummy_and_real_redemption_timing(api, capsys):
    """/registrationToken: a real redemption writes (and passes the guessing check); a dummy does
    work of the same kind and amount, so the medians stay close."""
    def sample_round():
        teletans = [api.new_teletan() for _ in range(20)]
        return interleaved_timings(
            [(lambda t=t: api.registration_token(t), lambda t=t: api.registration_token(t, fake=True)) for t in teletans], 201)

    assert_medians_close("/registrationToken", sample_round, capsys)
