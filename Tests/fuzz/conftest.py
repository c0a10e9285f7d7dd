"""Fixtures of the form fuzz: real portal processes (SQLite in a temp dir, the PAM test service,
limits out of the way so that generated forms reach their real validation), signed-in
browsers of every role, and the portal's texts.

Run from the repository root:

    python3 -m pytest -q Tests/fuzz

Environment:
    PORTAL_BIN   portal binary (default: .build/debug/portal of this repository)

Needs the PAM test stack (scripts/install-pam-stack.sh: tt-officer, tt-hotline, tt-hotline2,
tt-event, tt-event2, tt-admin, tt-pwchange in the PAM service teletan-portal-test) and the
Python modules hypothesis and selenium (imported by the shared process helpers).

Each portal is stopped with SIGTERM at the end; it must exit with status 0, and its log must hold
no error line (an unexpected error is logged as one even when the page looks right).
"""

from __future__ import annotations

import pytest

from fuzz_support import SENT, STATUSES, FuzzPortal, load_texts


def _stop_and_check(instance: FuzzPortal) -> None:
    instance.stop_cleanly()
    errors = [line for line in instance.log_text().splitlines() if " error " in line]
    assert not errors, f"{instance.name} logged errors:\n" + "\n".join(errors[:20])


def _running(instance: FuzzPortal):
    instance.start()
    try:
        yield instance
    finally:
        _stop_and_check(instance)


@pytest.fixture(scope="session")
def portal(tmp_path_factory):
    """The portal of the fuzz (EVENT teleTANs issued at once)."""
    yield from _running(FuzzPortal(tmp_path_factory.mktemp("fuzz-portal")))


@pytest.fixture(scope="session")
def two_person_portal(tmp_path_factory):
    """A portal under the four-eyes rule (--event-approval two-person), for the request,
    approve, decline and issue routes of EVENT teleTANs."""
    yield from _running(FuzzPortal(tmp_path_factory.mktemp("fuzz-portal-two-person"), ["--event-approval", "two-person"]))


@pytest.fixture(scope="session")
def texts():
    return load_texts()


def pytest_terminal_summary(terminalreporter):
    """How many generated requests each test sent (the fuzz is not vacuous)."""
    if not SENT:
        return
    terminalreporter.write_sep("-", f"form fuzz: {sum(SENT.values())} generated requests")
    for name, count in sorted(SENT.items()):
        statuses = ", ".join(f"{status}: {n}" for status, n in sorted(STATUSES[name].items()))
        terminalreporter.write_line(f"  {count:6d}  {name}" + (f"  ({statuses})" if statuses else ""))
