"""Fixtures of the end-to-end suite: a real `verification-server serve`, a real `portal serve`
that gets its teleTANs from it, a headless Chromium, and an app-like HTTP client.

Run from the repository root:

    python3 -m pytest -q Tests/e2e

Environment:
    PORTAL_BIN        portal binary (default: .build/debug/portal of this repository)
    VERIFICATION_BIN  verification server binary (default: .build/debug/verification-server)
    E2E_DATABASE      --database of every verification server started, e.g.
                      postgres://teletan:teletan@127.0.0.1:5432/teletan_e2e (default: a fresh
                      SQLite file per server). Give a freshly reset database: the suite counts
                      on an empty one (guessing protection counts failures per address in the
                      database, and the expiry test changes the newest teleTAN row).
                      The portals keep their own data in SQLite files either way, and the
                      server with a global limit of 1 always uses a SQLite file of its own
                      (other servers' teleTANs in a shared database would count against it).
    E2E_INTERNAL_TLS  1: the internal listener behind mutual TLS (and the TLS tests run).
    E2E_NO_SKIPS      1: a skipped test fails the run (scripts/test.sh sets it for the
                      PostgreSQL/TLS run, where every test applies, so that dropping a flag
                      cannot quietly skip the TLS and PostgreSQL tests).

Needs the PAM test stack (scripts/install-pam-stack.sh: tt-officer in teletan-portal-test),
Chromium and chromedriver, and the Python modules selenium, requests, cryptography, PyYAML,
jsonschema and openapi-spec-validator.

Every server is stopped with SIGTERM at the end of its fixture; it must exit within 10 s with
status 0 (a teardown error otherwise).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

# Selenium's driver manager must never try to go online; set before selenium is imported.
os.environ["SE_AVOID_STATS"] = "true"

import pytest

from e2e_support import (chromium, ApiClient, OFFICER, Portal, PortalKeyPair, ResponseLog,
                         SecretsLedger, VerificationServer)


@pytest.fixture(scope="session")
def response_log():
    """Every response the tests got from a verification server (checked against the OpenAPI
    document by test_e_openapi.py)."""
    return ResponseLog()


@pytest.fixture(scope="session")
def secrets_ledger(tmp_path_factory, response_log):
    """Every server fixture depends on this, so pytest tears it down last: after every server and
    portal stopped, their logs and databases (SQLite files, or a dump of the PostgreSQL database)
    are searched for every teleTAN, registration token and TAN the tests received, and for the
    officer's password."""
    ledger = SecretsLedger()
    ledger.add_password(OFFICER[1])
    yield ledger
    for response in response_log.responses:
        if response.status not in (200, 201) or not response.body.startswith(b"{"):
            continue
        body = response.json()
        if response.path.endswith("/tan/teletan"):
            ledger.add_teletan(body["value"])
        for key, kind in (("registrationToken", "registration token"), ("tan", "TAN")):
            if isinstance(body.get(key), str):
                ledger.add_secret(body[key], kind)
    # Every successful creation the suite saw must have left its value in the ledger, or the
    # search would check too little (a renamed field, say).
    for suffix, kind in (("/registrationToken", "registration token"), ("/tan", "TAN")):
        created = sum(1 for r in response_log.responses if r.status == 201 and r.path.endswith(suffix))
        assert ledger.secret_counts.get(kind, 0) >= created, f"{created} {kind}s received, fewer harvested"
    teletans = sum(1 for r in response_log.responses if r.status == 201 and r.path.endswith("/tan/teletan"))
    assert ledger.teletan_count >= teletans, f"{teletans} teleTANs received, fewer harvested"
    ledger.check_nothing_leaked(workdir=tmp_path_factory.mktemp("secrets-check"))


def _watched(ledger: SecretsLedger, instance):
    """Starts `instance` and has the ledger search what it writes."""
    if isinstance(instance, VerificationServer):
        ledger.watch(instance, instance.database, log_marker=b"verification server starting")
    else:
        ledger.watch(instance, instance.database, log_marker=b"[PortalWeb] request")
    return _start(instance)


@pytest.fixture(autouse=True)
def _name_responses(request, response_log):
    response_log.current_test = request.node.nodeid
    yield


@pytest.fixture(scope="session")
def portal_key(tmp_path_factory) -> PortalKeyPair:
    """The key pair of the trusted portal (`portal keygen`)."""
    return PortalKeyPair(tmp_path_factory.mktemp("trusted-key"))


@pytest.fixture(scope="session")
def untrusted_key(tmp_path_factory) -> PortalKeyPair:
    """A second key pair that no server trusts."""
    return PortalKeyPair(tmp_path_factory.mktemp("untrusted-key"))


def _start(instance):
    instance.start()
    return instance


@pytest.fixture(scope="session")
def server(tmp_path_factory, portal_key, secrets_ledger):
    """The verification server of the whole session."""
    instance = _watched(secrets_ledger, VerificationServer(tmp_path_factory.mktemp("server"), portal_key))
    try:
        yield instance
    finally:
        instance.stop_cleanly()


@pytest.fixture(scope="session")
def portal(tmp_path_factory, server, portal_key, secrets_ledger):
    """A portal that asks `server` for its teleTANs."""
    instance = _watched(secrets_ledger, Portal(tmp_path_factory.mktemp("portal"), server, portal_key))
    try:
        yield instance
    finally:
        instance.stop_cleanly()


@pytest.fixture(scope="session")
def api(server, response_log) -> ApiClient:
    return ApiClient(server, response_log)


@pytest.fixture
def own_stack(tmp_path, portal_key, response_log, secrets_ledger):
    """A verification server and a portal of their own, for a test that stops the server.
    Yields (server, portal, api)."""
    _mkdirs(tmp_path)
    server = VerificationServer(tmp_path / "server", portal_key)
    with _stack(server, tmp_path, portal_key, response_log, secrets_ledger) as stack:
        yield stack


@pytest.fixture
def limited_stack(tmp_path, portal_key, response_log, secrets_ledger):
    """A verification server with --teletans-per-hour 1 (always on a SQLite file of its own),
    and a portal that uses it. Yields (server, portal, api)."""
    _mkdirs(tmp_path)
    server = VerificationServer(tmp_path / "server", portal_key, teletans_per_hour=1,
                                database=f"sqlite:{tmp_path / 'server' / 'verification.sqlite'}")
    with _stack(server, tmp_path, portal_key, response_log, secrets_ledger) as stack:
        yield stack


@contextmanager
def _stack(server, tmp_path, portal_key, response_log, ledger):
    """Starts `server` and a portal of its own that uses it; yields (server, portal, api). Stops
    both afterwards (the server only if the test has not stopped it, and checked that, itself)."""
    _watched(ledger, server)
    try:
        portal = _watched(ledger, Portal(tmp_path / "portal", server, portal_key))
        try:
            yield server, portal, ApiClient(server, response_log)
        finally:
            portal.stop_cleanly()
    finally:
        if server.is_running():
            server.stop_cleanly()


def _mkdirs(tmp_path) -> None:
    for name in ("server", "portal"):
        (tmp_path / name).mkdir(exist_ok=True)


@pytest.fixture
def browser(secrets_ledger, tmp_path_factory):
    """A fresh headless Chromium per test, with the performance log on (to read the HTTP
    status of the pages). Its profile is searched for secrets with everything else at the end
    of the session."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    with chromium(profile, secrets_ledger, performance_log=True) as driver:
        yield driver


def pytest_sessionfinish(session, exitstatus):
    """With E2E_NO_SKIPS=1 a skipped test fails the run (see the module's documentation)."""
    if os.environ.get("E2E_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"E2E_NO_SKIPS=1, but {len(skipped)} tests were skipped:", red=True)
        for report in skipped:
            reporter.write_line(f"  {report.nodeid}: {report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr}")
        session.exitstatus = 1
