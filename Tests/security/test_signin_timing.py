"""Issue 28, item 3: a failed sign-in must not tell by its time whether the account exists.

With a PAM stack that adds no pause of its own (`pam_unix nodelay`, as the service
teletan-portal-test has; `pam_ldap` and `pam_sss` behave alike), pam_unix refuses an unknown name
in a few milliseconds but hashes the password of an existing account first (yescrypt, ~100 ms+).
The portal therefore answers every failed sign-in no sooner than `--signin-failure-time` (1 s by
default, the value this portal runs with) after the request arrived, plus a random jitter.

40 pairs, each an existing account with a wrong password and an unknown name, in random order
within the pair: Welch's t-test finds no difference (p > 0.001: a false alarm once in a thousand
runs) and the means are within 50 ms. A malformed name (refused before PAM) takes as long."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

from scipy import stats

PAIRS = 40
FLOOR = 1.0  # --signin-failure-time's default, in seconds
# Every failure of the test must pass, whatever the limits: 80 failures from one address.
UNLIMITED = ["--signin-failures-per-user", "1000", "--signin-failures-per-address", "100000"]


def failed_sign_in_seconds(portal, username: str) -> float:
    client = portal.client()
    form = client.get("/signin")
    answer = client.post("/signin", {"username": username, "password": "Not-The-Password-1", "csrf": form.hidden("csrf")})
    assert answer.status == 401, answer.describe()
    return answer.seconds


def test_existing_and_unknown_names_fail_in_the_same_time(portals):
    service = Path("/etc/pam.d/teletan-portal-test").read_text()
    assert "pam_unix.so nodelay" in service, "the test needs a PAM stack without pam_unix's own pause"
    portal = portals(extra_arguments=UNLIMITED)
    failed_sign_in_seconds(portal, "tt-officer")  # warm-up: the first request opens pools and loads modules
    existing, unknown = [], []
    for index in range(PAIRS):
        pair = [("existing", f"tt-bench-{index + 1:02d}"), ("unknown", f"tt-nobody-{index + 1:02d}")]
        random.shuffle(pair)
        for kind, name in pair:
            (existing if kind == "existing" else unknown).append(failed_sign_in_seconds(portal, name))
    summary = (f"existing: mean {statistics.mean(existing):.3f} s, min {min(existing):.3f}; "
               f"unknown: mean {statistics.mean(unknown):.3f} s, min {min(unknown):.3f}")
    test = stats.ttest_ind(existing, unknown, equal_var=False)
    summary += f"; Welch's t-test p = {test.pvalue:.2g}"
    assert test.pvalue > 0.001, summary
    assert abs(statistics.mean(existing) - statistics.mean(unknown)) < 0.05, summary
    assert min(existing + unknown) >= FLOOR, summary


def test_a_name_refused_before_pam_takes_as_long(portals):
    portal = portals(extra_arguments=UNLIMITED)
    for name in ("a" * 300, "tt-officer\u200b", "tab\there"):
        seconds = failed_sign_in_seconds(portal, name)
        assert FLOOR <= seconds < FLOOR + 1.0, (name, seconds)
