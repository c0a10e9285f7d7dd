"""The secrets ledger itself (Tests/support/secrets_at_rest.py), without a portal: it must find
a phone number, a name and a teleTAN in each form the portal, a log or a browser could write
them in, and leave alone only what it is told to (the form body of a page a browser keeps in its
profile). Otherwise the session-end search could pass without looking."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from support.secrets_at_rest import SecretsLedger, Watched, phone_number_e164, phone_number_readable


def test_phone_numbers_are_normalised_as_the_portal_does():
    """The examples of Tests/PortalTests/HotlineTests.swift and PhoneNumber.swift."""
    assert phone_number_e164("030 1234 5678") == "+493012345678"
    assert phone_number_readable("+493012345678") == "+49 30 12345678"
    assert phone_number_readable("+12025550123") == "+1 202-555-0123"
    assert phone_number_e164("+44 20 7946 0958") == "+442079460958"
    assert phone_number_e164("0049 (30) 123-45.67") == "+49301234567"
    assert phone_number_e164("+49 (0)30 1234 5678") == "+493012345678"
    assert phone_number_e164("12ab") is None
    assert phone_number_e164("030 5550 12x4 5") is None


def test_the_ledger_finds_numbers_names_and_typed_teletans_in_every_form(tmp_path: Path):
    ledger = SecretsLedger()
    assert ledger.add_phone_number("030 5550 1234 5") == "+4930555012345"
    assert ledger.add_phone_number("030 5550 12x4 5", posted_to_a_page=True) is None
    ledger.add_person_name("Jürgen Prüfling-Omega", posted_to_a_page=True)
    ledger.add_person_name("Erika Testperson-Zeta")
    ledger.add_teletan("FE9A5MAK6C")

    profile = tmp_path / "profile"
    profile.mkdir()
    planted = {
        "e164": b"\0tel:+4930555012345\0",
        "e164-digits": b"number=4930555012345;",
        "readable": "<a>+49 30 555012345</a>".encode(),
        "typed-digits": b"030555012345",
        "typed-form-encoded": b"phone=030+5550+1234+5&",
        "name-nfd": unicodedata.normalize("NFD", "Jürgen Prüfling-Omega").encode(),
        "name-json": b'{"name":"J\\u00fcrgen Pr\\u00fcfling-Omega"}',
        "surname-alone": b"Testperson-Zeta",
        "mistyped-as-typed": b"value=\"030 5550 12x4 5\"",
        "read-back-form-encoded": b"read_back=fe9+a5m+ak6c",
        # What a browser keeps of a form posted to a page: allowed in its session files
        # (planted below), found anywhere else in the profile (History: the body in a URL).
        "posted-form-body-in-history": b"phone=030+5550+12x4+5&name=J%C3%BCrgen+Pr%C3%BCfling-Omega",
        # The masked number of the queue is no secret.
        "masked": "+49 ••• ••• •• 45".encode(),
    }
    for name, content in planted.items():
        (profile / name).write_bytes(b"\0before\0" + content + b"\0after\0")
    sessions = profile / "Default" / "Sessions"
    sessions.mkdir(parents=True)
    (sessions / "Session_1").write_bytes(b"\0" + planted["posted-form-body-in-history"] + b"\0")
    ledger.watch_directory(profile, "test profile")

    # A server whose log holds the same posted form body: found there.
    log = tmp_path / "server.log"
    log.write_bytes(b"server started\n" + planted["posted-form-body-in-history"] + b"\n")
    ledger.watched.append(Watched("test server", log, "none", b"server started", lambda: False))

    workdir = tmp_path / "check"
    workdir.mkdir()
    with pytest.raises(AssertionError) as failure:
        ledger.check_nothing_leaked(workdir=workdir)
    found_in = {line.rpartition(" found in ")[2] for line in str(failure.value).splitlines() if " found in " in line}
    expected = {str(profile / name) for name in planted if name != "masked"} | {str(log)}
    assert found_in == expected


def test_the_ledger_reads_firefox_compressed_session_store(tmp_path: Path):
    """Firefox's session store (`sessionstore-backups/recovery.jsonlz4`) is LZ4-compressed: a
    teleTAN in it may be split by a back-reference and never appear as such in the file. The
    ledger decompresses it. The block below spells `..."FE9A5MAK6C"` with the last five
    characters copied from the start (offset 11, length 5), as LZ4 does."""
    teletan = "FE9A5MAK6C"
    literals = b'MAK6C|"FE9A5'
    block = bytes([(len(literals) << 4) | (5 - 4)]) + literals + (12).to_bytes(2, "little") + bytes([0x10]) + b'"'
    content = b'MAK6C|"FE9A5MAK6C"'
    assert teletan.encode() not in block
    profile = tmp_path / "firefox-profile"
    (profile / "sessionstore-backups").mkdir(parents=True)
    recovery = profile / "sessionstore-backups" / "recovery.jsonlz4"
    recovery.write_bytes(b"mozLz40\0" + len(content).to_bytes(4, "little") + block)
    (profile / "prefs.js").write_bytes(b"nothing secret\n")

    ledger = SecretsLedger()
    ledger.add_teletan(teletan)
    ledger.watch_directory(profile, "test profile")
    workdir = tmp_path / "check"
    workdir.mkdir()
    with pytest.raises(AssertionError) as failure:
        ledger.check_nothing_leaked(workdir=workdir)
    assert f"teleTAN #1 (upper-case) found in {recovery} (decompressed)" in str(failure.value)
