"""One person, one user: every spelling the directory accepts for an account signs in as the
account's canonical name (PAM_USER, then getpwnam's pw_name), so the spellings share one
30-second interval, one "My recent teleTANs", one audit identity; wrong passwords count on one
lock whatever the spelling (lower case, without @domain or DOMAIN\\ prefix).

Spellings per route: pam_ldap (nslcd) accepts any case of the name but no @domain; pam_sss with
case_sensitive = false accepts any case and name@example.org."""

from __future__ import annotations

import re

from directory_support import (DOMAIN, FAILURES_PER_USER, canonical, issue_refused_by_interval, recent_rows)


def spellings(route: str, name: str) -> list[str]:
    forms = [name, name.upper(), name.capitalize()]
    return forms + [f"{name}@{DOMAIN}", f"{name.upper()}@{DOMAIN.upper()}"] if route == "sss" else forms


def test_spellings_are_one_user(portal):
    name = canonical("ldap-alice")
    assert name == "ldap-alice"
    before = portal.last_seq()
    clients = []
    for typed in spellings(portal.route, "ldap-alice"):
        client = portal.client()
        answer = client.sign_in(typed, "Ldap-Alice-1")
        assert answer.status == 303, f"{typed}: {answer.describe()}"
        clients.append((typed, client))

    # One teleTAN per interval between all of them: the first issues, every other spelling is refused.
    first = clients[0][1].issue()
    assert first.teletan, first.last.describe()
    for typed, client in clients[1:]:
        issue_refused_by_interval(client)

    # One list: every spelling sees the same single row.
    lists = {typed: recent_rows(client) for typed, client in clients}
    assert all(rows == lists[clients[0][0]] for rows in lists.values()) and len(lists[clients[0][0]]) == 1, lists

    # One audit identity; the spelling typed is kept as a detail where it differs.
    entries = [(actor, details) for _, actor, outcome, details in portal.sign_ins(after=before) if outcome == "success"]
    assert [actor for actor, _ in entries] == [name] * len(clients), entries
    assert [details.get("typed", name) for _, details in entries] == [typed for typed, _ in clients], entries
    issuers = portal.db().rows("SELECT DISTINCT actor FROM audit_log WHERE action LIKE 'teletan%' AND outcome = 'success' "
                               f"AND seq > {before}")
    assert issuers == [(name,)], issuers

    # The admin's search finds the person's entries under any spelling.
    admin = portal.signed_in("ldap-admin")
    wanted = {seq for seq, actor, outcome, _ in portal.sign_ins(after=before) if actor == name}
    for typed in (name, clients[1][0]):
        page = admin.get(f"/admin/audit?actor={typed}&action=signin")
        assert page.status == 200, page.describe()
        found = {int(seq) for seq in re.findall(r'<tr id="entry-(\d+)"', page.body)}
        assert wanted <= found, f"the search for {typed!r} misses entries {sorted(wanted - found)}"


def test_wrong_passwords_count_on_one_lock_whatever_the_spelling(portal):
    typed = ["ldap-bob", "LDAP-BOB", f"ldap-bob@{DOMAIN}", "EXAMPLE\\ldap-bob"][:FAILURES_PER_USER]
    for name in typed:
        answer = portal.client().sign_in(name, "not-the-password")
        assert answer.status == 401, f"{name}: {answer.describe()}"
    # The name is locked now, in every spelling, even with the right password.
    for name in ("ldap-bob", "Ldap-Bob", f"LDAP-BOB@{DOMAIN}"):
        answer = portal.client().sign_in(name, "Ldap-Bob-1")
        assert answer.status == 429, f"{name} after {FAILURES_PER_USER} wrong passwords as {typed}: {answer.describe()}"
