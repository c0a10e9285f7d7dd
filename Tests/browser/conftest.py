"""Fixtures for the browser tests: a real portal process, a headless Chromium, and a ledger of
every secret the tests handled, checked against the database and the log at the very end.

Run from the repository root:

    SE_AVOID_STATS=true python3 -m pytest -q Tests/browser

Environment:
    PORTAL_BIN             portal binary (default: .build/debug/portal of this repository)
    BROWSER_TEST_DATABASE  --database of every portal started (default: a fresh SQLite file per
                           portal, e.g. postgres://user:password@host:5432/db to test PostgreSQL)

Every portal gets the example list of health authorities (docs/health-authorities.example.csv),
so that event officers can issue EVENT teleTANs; `two_person_portal` is one more portal with the
four-eyes rule for EVENT teleTANs (--event-approval two-person).

The PAM test stack must be installed (scripts/install-pam-stack.sh, as root).
"""

from __future__ import annotations

import os

# Selenium's driver manager must never try to go online (no internet here), and it reads this
# variable when the driver is created; set it before selenium is even imported.
os.environ["SE_AVOID_STATS"] = "true"

from pathlib import Path

import pytest

from support.processes_and_browsers import PortalProcess, chromium  # noqa: E402
from support.secrets_at_rest import SecretsLedger  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PORTAL_BIN = os.environ.get("PORTAL_BIN", str(REPO / ".build" / "debug" / "portal"))

HEALTH_AUTHORITIES = REPO / "docs" / "health-authorities.example.csv"

DEFAULT_PAM_SERVICE = "teletan-portal-test"
OTP_PAM_SERVICE = "teletan-portal-otp-test"


class PortalInstance(PortalProcess):
    """One `portal serve` process with its own port, temp dir, secret, database and log."""

    def __init__(self, pam_service: str, workdir: Path, database: str | None = None, secret_file: Path | None = None,
                 extra_arguments: list[str] | None = None):
        """`database` and `secret_file` default to the suite's database and a secret of its own;
        a second instance of a portal (as behind a load balancer) gets the first one's.
        `extra_arguments` go at the end of the command line (e.g. --event-approval two-person)."""
        super().__init__(workdir, PORTAL_BIN, pam_service, database or os.environ.get("BROWSER_TEST_DATABASE"),
                         secret_file, extra_arguments)

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file, or None for another database (PostgreSQL): nothing to read at rest."""
        return Path(self.database[len("sqlite:"):]) if self.database.startswith("sqlite:") else None

    def settings(self) -> list[str]:
        return [
            # The default allows one teleTAN per 30 s per user; the tests issue several quickly.
            "--teletan-interval", "1s",
            "--health-authorities", str(HEALTH_AUTHORITIES),
            # The shipped checks as an operator would pass them (the file equals the built-in list).
            "--hotline-checks", str(REPO / "docs" / "hotline-checks.example.json"),
            "--callback-retention", "1h",
            # In the PostgreSQL run every portal shares one database, so the failed sign-ins of all
            # tests from 127.0.0.1 add up to the per-address lock (50 in 15 min) and lock out the
            # tests that come later. Per-name locks are tested here; the address lock in the Swift
            # suite (SignInStormTests, SignInAndSessionTests).
            "--signin-failures-per-address", "1000",
        ]


@pytest.fixture(scope="session")
def secrets_ledger(tmp_path_factory):
    """Session-wide ledger. Every portal fixture depends on it, so pytest tears it down last:
    its finaliser runs after all portals stopped and searches their logs and databases (SQLite
    files, or a dump of the PostgreSQL database) for the secrets."""
    ledger = SecretsLedger()
    yield ledger
    ledger.check_nothing_leaked(workdir=tmp_path_factory.mktemp("secrets-check"))


@pytest.fixture(scope="session")
def portal(request, tmp_path_factory, secrets_ledger):
    """A running portal for the whole session, by default with the PAM service
    `teletan-portal-test`. Pick another service with indirect parametrisation:

        @pytest.mark.parametrize("portal", [OTP_PAM_SERVICE], indirect=True)

    Each service gets its own process (and its own SQLite file and log)."""
    pam_service = getattr(request, "param", DEFAULT_PAM_SERVICE)
    instance = PortalInstance(pam_service, tmp_path_factory.mktemp(f"portal-{pam_service}"))
    secrets_ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    instance.start()
    yield instance
    instance.stop()
    # The exit status is not asserted here: see test_sigterm_exits_cleanly.


@pytest.fixture(scope="session")
def two_person_portal(tmp_path_factory, secrets_ledger):
    """A portal under the four-eyes rule for EVENT teleTANs (--event-approval two-person): one
    event officer requests, another approves, the first issues. Same PAM service and database
    setting as `portal`."""
    instance = PortalInstance(DEFAULT_PAM_SERVICE, tmp_path_factory.mktemp("portal-two-person"),
                              extra_arguments=["--event-approval", "two-person"])
    secrets_ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    instance.start()
    yield instance
    instance.stop()


@pytest.fixture
def browser(secrets_ledger, tmp_path_factory):
    """A fresh headless Chromium per test: no cookies or history carried over. Its profile is
    searched for secrets with everything else at the end of the session."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    with chromium(profile, secrets_ledger) as driver:
        yield driver


@pytest.fixture
def second_browser(secrets_ledger, tmp_path_factory):
    """A second Chromium of its own, for a second person (another agent, the approving event
    officer), with Chrome's performance log on: `last_document_status` in test_hotline_browser.py
    reads the HTTP status of the page it shows (a 403 or 409 page looks like any other). Its
    profile is searched like the first one's."""
    profile = tmp_path_factory.mktemp("chromium-profile-second")
    with chromium(profile, secrets_ledger, performance_log=True) as driver:
        yield driver


@pytest.fixture
def browser_without_js(secrets_ledger, tmp_path_factory):
    """A fresh headless Chromium that runs no script at all (the portal must work without); its
    profile is searched like the others."""
    profile = tmp_path_factory.mktemp("chromium-profile-no-js")
    with chromium(profile, secrets_ledger, javascript=False) as driver:
        yield driver
