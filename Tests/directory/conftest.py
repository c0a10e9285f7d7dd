"""Fixtures of the directory tests: sign-in through a real directory (slapd) by both routes,
nslcd (pam_ldap, libnss-ldapd) and SSSD (pam_sss, sssd-ldap, libnss-sss), against real portals
on SQLite files, driven by plain HTTP.

Run from the repository root, as root (it resets the directory stack, switches NSS between the
routes, stops and starts slapd):

    python3 -m pytest -q Tests/directory

Environment:
    PORTAL_BIN  portal binary (default: .build/debug/portal of this repository)

The session starts with scripts/install-directory-stack.sh (which installs the stack if needed
and resets the directory, nslcd and sssd), so every run starts from docs/pam/directory.ldif.
Every test runs once per route: all nslcd tests first (NSS switched to `files systemd ldap`),
then all SSSD tests (`files systemd sss`, the stack's default, which the session leaves).
"""

from __future__ import annotations

import os

import pytest

from directory_support import DirectoryPortal, Slapd, reset_stack, sssd_go_online, use_nss


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the directory tests run as root (the directory stack, NSS, slapd)")
    # The directory-down test last in each route: once slapd is back, SSSD signs in known users
    # again but may answer NSS lookups from its cache only ("offline") for up to about 90 s more,
    # so a later test's first lookup of a user it never saw would fail.
    route_of = {"ldap": 0, "sss": 1}
    items.sort(key=lambda item: (route_of.get(getattr(item, "callspec", None) and item.callspec.params.get("route"), 2),
                                 "test_directory_down" in item.nodeid))


@pytest.fixture(scope="session", autouse=True)
def directory_stack():
    reset_stack()
    yield
    Slapd.start()
    use_nss("sss")


@pytest.fixture(scope="session", params=["ldap", "sss"])
def route(request) -> str:
    """The route under test; NSS follows it for as long as its tests run (session-scoped, so
    pytest runs all tests of one route before the other's)."""
    use_nss(request.param)
    if request.param == "sss":
        sssd_go_online()
    yield request.param
    use_nss("sss")


@pytest.fixture(scope="session")
def portal(route, tmp_path_factory) -> DirectoryPortal:
    """The route's shared portal (started once; tests use accounts of their own or count from
    where the trail stands)."""
    started = DirectoryPortal(tmp_path_factory.mktemp(f"portal-{route}"), route)
    started.start()
    yield started
    if started.is_running():
        started.stop_cleanly()


@pytest.fixture
def new_portal(route, tmp_path):
    """A portal of the test's own (not started), for tests that stop it; killed at the end."""
    made: list[DirectoryPortal] = []

    def make() -> DirectoryPortal:
        workdir = tmp_path / f"portal-{len(made) + 1}"
        workdir.mkdir()
        made.append(DirectoryPortal(workdir, route))
        return made[-1]

    yield make
    for portal in made:
        portal.kill()
