"""Unit tests of audit_chain.py, the independent re-check of exports and signed checkpoints.
No portal needed: chains are built here, keys made and checkpoints signed with `openssl`.

    python3 -m pytest -q Tests/support/test_audit_chain.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import audit_chain as ac

T0 = 1_764_000_000_123  # 2025-11-24T16:00:00.123Z


def sample_entries(count: int) -> list[dict]:
    """A mix like the portal writes: sign-ins, issuances with a fingerprint, a failed sign-in
    with an awkward typed name, expiries, hotline calls."""
    entries = []
    for i in range(count):
        kind = i % 5
        at_ms = T0 + i * 61_003
        if kind == 0:
            entries.append(dict(at_ms=at_ms, action="signin", outcome="success", actor=f"officer{i % 3}",
                                role="officer", address="10.0.0.%d" % (i % 250), request_id=f"req-{i}"))
        elif kind == 1:
            entries.append(dict(at_ms=at_ms, action="teletan.issue", outcome="success", actor=f"officer{i % 3}",
                                role="officer", address="10.0.0.7", subject=hashlib.sha256(b"%d" % i).hexdigest(),
                                details='{"type":"TEST","valid_until":"2025-11-25T16:00:00Z"}'))
        elif kind == 2:
            entries.append(dict(at_ms=at_ms, action="signin", outcome="failure",
                                actor='Ünïcødé "quoted" \\ /slash/ \t\n\x01\x1f\x7f\u2028 😀',
                                address="2001:db8::1", details='{"reason":"bad_password"}'))
        elif kind == 3:
            entries.append(dict(at_ms=at_ms, action="session.expired", outcome="success", actor=f"officer{i % 3}"))
        else:
            entries.append(dict(at_ms=at_ms, action="hotline.call.started", outcome="success", actor="agent1",
                                role="hotline", subject=f"call:{i:08d}-0000-4000-8000-000000000000", details="{}"))
    return entries


def write_export(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(ac.record_line(r) for r in records), encoding="utf-8")
    return path


def rehash_from(records: list[dict], index: int) -> None:
    """Recomputes hashes from records[index] on, relinking each to its predecessor (a rewritten tail)."""
    for i in range(index, len(records)):
        if i > 0:
            records[i]["prev_hash"] = records[i - 1]["hash"]
        records[i]["hash"] = ac.record_hash(records[i])


# --- Canonical form and hash -----------------------------------------------------------------

def test_canonical_form_and_hash_by_hand():
    record = ac.make_record(1, T0, "signin", "success", ac.GENESIS_HASH, actor="tt-admin", role="admin",
                            details='{"type":"TEST"}')
    canonical = ('{"action":"signin","actor":"tt-admin","at_ms":1764000000123,"details":"{\\"type\\":\\"TEST\\"}",'
                 '"outcome":"success","role":"admin","seq":1}')
    assert ac.canonical_json(record) == canonical
    expected = hashlib.sha256(("0" * 64 + "\n" + canonical).encode()).hexdigest()
    assert record["hash"] == expected
    assert record["time"] == "2025-11-24T16:00:00.123Z"


@pytest.mark.parametrize("text", [
    "", "plain", 'quote " and backslash \\', "/slashes/ stay", "".join(chr(c) for c in range(0x20)),
    "\x7f DEL raw", "\u2028\u2029 separators raw", "Größe 😀 中文", "\u0000 nul"])
def test_string_escaping_follows_the_rule(text):
    # The rule equals Python's json.dumps with ensure_ascii=False; this implementation is separate.
    assert ac.json_string(text) == json.dumps(text, ensure_ascii=False)
    assert "\\u001f" in ac.json_string("\x1f")  # lower-case hex


def test_nulls_are_left_out_and_extra_fields_ignored():
    record = ac.make_record(3, T0, "session.expired", "success", "a" * 64)
    canonical = ac.canonical_json(record)
    assert canonical == '{"action":"session.expired","at_ms":1764000000123,"details":"{}","outcome":"success","seq":3}'
    for key in ("time", "prev_hash", "hash", "actor", "subject"):
        assert f'"{key}"' not in canonical


def test_lone_surrogate_is_refused():
    with pytest.raises(ValueError):
        ac.json_string("\ud800")


# --- Export files ------------------------------------------------------------------------------

@pytest.fixture
def chain():
    return ac.build_chain(sample_entries(30))


def test_intact_chain_verifies(tmp_path, chain):
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert report.ok, report
    assert (report.checked, report.first_seq, report.last_seq) == (30, 1, 30)


def test_empty_export_is_intact(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert ac.verify_export(path).ok


def test_tampered_field_is_found_at_its_seq(tmp_path, chain):
    chain[11]["actor"] = "someone-else"          # seq 12
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert (report.first_bad_seq, report.line) == (12, 12)
    assert "changed" in report.reason
    assert report.checked == 11


@pytest.mark.parametrize("field, value", [("at_ms", T0 + 1), ("details", '{"type":"EVENT"}'), ("subject", None),
                                          ("outcome", "failure"), ("seq", 99)])
def test_every_hashed_field_is_covered(tmp_path, chain, field, value):
    chain[6][field] = value                      # seq 7, a teletan.issue with a subject
    if field == "at_ms":
        chain[6]["time"] = ac.iso_time(value)
    # As a filtered export (gaps allowed), so a changed seq that still ascends is caught by its
    # hash alone, not by a missing entry; its line still carries the hash entry 8 links to.
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain), contiguous=False)
    assert (report.first_bad_seq, report.line) == (chain[6]["seq"], 7), report
    assert "changed after it was written" in report.reason, report


def test_deleted_line_is_found_as_missing_seq(tmp_path, chain):
    del chain[16]                                # seq 17
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert (report.first_bad_seq, report.reason) == (17, "entry 17 is missing")


def test_deleted_line_relinked_and_renumbered_is_found_by_the_checkpoint(tmp_path, chain):
    pin = (25, chain[24]["hash"])                 # a checkpoint signed before the rewrite
    del chain[16]
    for record in chain[16:]:
        record["seq"] -= 1
    rehash_from(chain, 16)
    path = write_export(tmp_path / "a.jsonl", chain)
    assert ac.verify_export(path).ok             # the chain alone cannot tell
    report = ac.verify_export(path, checkpoint=pin)
    assert report.first_bad_seq == 25
    assert "checkpoint" in report.reason


def test_rewritten_tail_is_found_by_the_checkpoint(tmp_path, chain):
    pin = (20, chain[19]["hash"])
    chain[14]["details"] = '{"type":"EVENT"}'     # seq 15, then every later hash recomputed
    rehash_from(chain, 14)
    path = write_export(tmp_path / "a.jsonl", chain)
    assert ac.verify_export(path).ok
    report = ac.verify_export(path, checkpoint=pin)
    assert (report.first_bad_seq, report.checkpoint_checked) == (20, True)


def test_half_relinked_tail_is_found_at_the_first_bad_link(tmp_path, chain):
    chain[14]["details"] = '{"type":"EVENT"}'     # seq 15 rehashed, seq 16 not relinked
    chain[14]["hash"] = ac.record_hash(chain[14])
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert (report.first_bad_seq, report.reason) == (16, "entry 16 does not link to entry 15")


def test_relinked_without_rehash_is_found_as_changed(tmp_path, chain):
    chain[20]["prev_hash"] = "f" * 64            # seq 21 points elsewhere; its hash was not recomputed
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert report.first_bad_seq == 21


def test_swapped_lines_are_found(tmp_path, chain):
    chain[8], chain[9] = chain[9], chain[8]
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert report.first_bad_seq == 9


def test_first_entry_must_start_from_genesis(tmp_path):
    chain = ac.build_chain(sample_entries(3), prev_hash="1" * 64)
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert (report.first_bad_seq, report.reason) == (1, "entry 1 does not start from the genesis hash")


def test_export_after_retention_starts_later_and_links_to_its_checkpoint(tmp_path, chain):
    tail = chain[10:]                            # entries 11..30 remain
    path = write_export(tmp_path / "a.jsonl", tail)
    assert ac.verify_export(path).ok
    good = ac.verify_export(path, checkpoint=(10, chain[9]["hash"]))
    assert good.ok and good.checkpoint_checked
    bad = ac.verify_export(path, checkpoint=(10, "e" * 64))
    assert bad.first_bad_seq == 11


def test_filtered_export_allows_gaps_but_checks_neighbours(tmp_path, chain):
    filtered = [r for r in chain if r["action"] == "signin"]
    path = write_export(tmp_path / "a.jsonl", filtered)
    assert ac.verify_export(path, contiguous=False).ok
    assert ac.verify_export(path).first_bad_seq == 2   # unfiltered reading: entry 2 missing
    filtered[3]["actor"] = "x"
    assert ac.verify_export(write_export(tmp_path / "b.jsonl", filtered), contiguous=False).first_bad_seq == filtered[3]["seq"]


@pytest.mark.parametrize("mutate, reason", [
    (lambda line: line[:-1], "does not end with a newline"),
    (lambda line: line.replace("\n", "\r\n"), "CR LF"),
    (lambda line: line + "\n", "empty line"),
    (lambda line: line.replace('"hash":', '"hash":"x","hash2":', 1), "not"),
])
def test_malformed_files_are_refused(tmp_path, chain, mutate, reason):
    text = "".join(ac.record_line(r) for r in chain[:3])
    path = tmp_path / "a.jsonl"
    path.write_bytes(mutate(text).encode())
    report = ac.verify_export(path)
    assert not report.ok and reason in report.reason


@pytest.mark.parametrize("change, reason", [
    (lambda r: r.update(extra="x"), "unexpected fields"),
    (lambda r: r.pop("role"), "fields missing: role"),
    (lambda r: r.update(at_ms=float(r["at_ms"])), "at_ms is not an integer"),
    (lambda r: r.update(time="2025-11-24T16:00:00Z"), "does not match at_ms"),
    (lambda r: r.update(hash=r["hash"].upper()), "lower-case hex"),
    (lambda r: r.update(details={"type": "TEST"}), "details is not a string"),
])
def test_records_breaking_the_contract_are_refused(tmp_path, chain, change, reason):
    change(chain[1])
    report = ac.verify_export(write_export(tmp_path / "a.jsonl", chain))
    assert report.first_bad_seq == 2 and reason in report.reason, report


def test_duplicate_keys_are_refused(tmp_path, chain):
    line = ac.record_line(chain[0]).replace('{"seq":1,', '{"seq":1,"actor":"x",', 1)
    path = tmp_path / "a.jsonl"
    path.write_text(line, encoding="utf-8")
    report = ac.verify_export(path)
    assert not report.ok and "duplicate key" in report.reason


# --- Signed checkpoints --------------------------------------------------------------------------

def openssl(*arguments: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["openssl", *arguments], input=data, capture_output=True, check=True, timeout=30).stdout


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A P-256 key pair as the portal keeps it: PKCS#8 private key, SubjectPublicKeyInfo public key."""
    directory = tmp_path_factory.mktemp("keys")
    pairs = {}
    for name in ("portal", "other"):
        sec1 = directory / f"{name}.sec1.pem"
        openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(sec1))
        private, public = directory / f"{name}.pem", directory / f"{name}.pub.pem"
        openssl("pkey", "-in", str(sec1), "-out", str(private))
        openssl("pkey", "-in", str(private), "-pubout", "-out", str(public))
        assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
        assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
        pairs[name] = (private, public)
    return pairs


def signed_checkpoint(tmp_path: Path, private: Path, public: Path, seq: int, hash_: str,
                      time: str = "2026-11-24T10:00:00.000Z") -> str:
    der = openssl("pkey", "-pubin", "-in", str(public), "-outform", "DER")
    body = (f"teletan-portal audit checkpoint\nseq {seq}\nhash {hash_}\ntime {time}\n"
            f"key {hashlib.sha256(der).hexdigest()[:16]}\n")
    (tmp_path / "body.txt").write_text(body)
    signature = openssl("dgst", "-sha256", "-sign", str(private), str(tmp_path / "body.txt"))
    return body + "\nsignature " + base64.b64encode(signature).decode() + "\n"


def test_checkpoint_parses(tmp_path, keys, chain):
    text = signed_checkpoint(tmp_path, *keys["portal"], 10, chain[9]["hash"])
    checkpoint = ac.parse_checkpoint(text)
    assert (checkpoint.seq, checkpoint.hash, checkpoint.time) == (10, chain[9]["hash"], "2026-11-24T10:00:00.000Z")
    assert checkpoint.key_id == ac.key_id(keys["portal"][1])
    assert checkpoint.body == text.split("\n\n")[0].encode() + b"\n"
    assert checkpoint.signature[0] == 0x30  # DER SEQUENCE


def test_good_signature_verifies_with_openssl(tmp_path, keys, chain):
    report = ac.verify_checkpoint(signed_checkpoint(tmp_path, *keys["portal"], 10, chain[9]["hash"]), keys["portal"][1])
    assert report.ok and report.signature_ok and report.key_id_ok


def test_changed_body_fails_the_signature(tmp_path, keys, chain):
    text = signed_checkpoint(tmp_path, *keys["portal"], 10, chain[9]["hash"]).replace("seq 10\n", "seq 11\n")
    report = ac.verify_checkpoint(text, keys["portal"][1])
    assert not report.signature_ok and "bad signature" in report.reason


def test_checkpoint_of_another_key_is_refused(tmp_path, keys, chain):
    text = signed_checkpoint(tmp_path, *keys["other"], 10, chain[9]["hash"])
    report = ac.verify_checkpoint(text, keys["portal"][1])
    assert not report.key_id_ok and not report.signature_ok and "names key" in report.reason


def test_key_id_is_the_public_key_der_hash(keys):
    der = openssl("pkey", "-pubin", "-in", str(keys["portal"][1]), "-outform", "DER")
    assert ac.key_id(keys["portal"][1]) == hashlib.sha256(der).hexdigest()[:16]


@pytest.mark.parametrize("mutate", [
    lambda t: t.replace("teletan-portal audit checkpoint", "some other log"),
    lambda t: t.replace("seq 10", "seq 010"),
    lambda t: t.replace("seq 10", "seq -1"),
    lambda t: t.replace("\nhash ", "\nhash  "),
    lambda t: t.replace(".000Z", "Z"),
    lambda t: t.replace("\n\nsignature", "\nsignature"),
    lambda t: t.replace("signature ", "signature !"),
    lambda t: t[:-1],
    lambda t: t + "extra\n",
])
def test_malformed_checkpoints_are_refused(tmp_path, keys, chain, mutate):
    text = mutate(signed_checkpoint(tmp_path, *keys["portal"], 10, chain[9]["hash"]))
    with pytest.raises(ac.CheckpointFormatError):
        ac.parse_checkpoint(text)
    assert not ac.verify_checkpoint(text, keys["portal"][1]).ok


def test_export_against_checkpoint(tmp_path, keys, chain):
    path = write_export(tmp_path / "a.jsonl", chain)
    text = signed_checkpoint(tmp_path, *keys["portal"], 20, chain[19]["hash"])
    checkpoint_report, report = ac.verify_export_with_checkpoint(path, text, keys["portal"][1])
    assert checkpoint_report.ok and report.ok and report.checkpoint_checked


def test_export_against_genesis_checkpoint(tmp_path, keys, chain):
    path = write_export(tmp_path / "a.jsonl", chain)
    text = signed_checkpoint(tmp_path, *keys["portal"], 0, ac.GENESIS_HASH)
    checkpoint_report, report = ac.verify_export_with_checkpoint(path, text, keys["portal"][1])
    assert checkpoint_report.ok and report.ok and report.checkpoint_checked


def test_checkpoint_beyond_the_export_is_not_checked_against_it(tmp_path, keys, chain):
    path = write_export(tmp_path / "a.jsonl", chain[:10])
    text = signed_checkpoint(tmp_path, *keys["portal"], 20, chain[19]["hash"])
    checkpoint_report, report = ac.verify_export_with_checkpoint(path, text, keys["portal"][1])
    assert checkpoint_report.ok and report.ok and not report.checkpoint_checked


def test_rewritten_export_against_signed_checkpoint(tmp_path, keys, chain):
    text = signed_checkpoint(tmp_path, *keys["portal"], 20, chain[19]["hash"])
    chain[4]["actor"] = "nobody"
    rehash_from(chain, 4)
    path = write_export(tmp_path / "a.jsonl", chain)
    checkpoint_report, report = ac.verify_export_with_checkpoint(path, text, keys["portal"][1])
    assert checkpoint_report.ok
    assert report.first_bad_seq == 20 and "checkpoint" in report.reason


def test_command_line(tmp_path, keys, chain):
    path = write_export(tmp_path / "a.jsonl", chain)
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(signed_checkpoint(tmp_path, *keys["portal"], 20, chain[19]["hash"]))
    script = Path(ac.__file__)
    good = subprocess.run([sys.executable, str(script), str(path), str(checkpoint), str(keys["portal"][1])],
                          capture_output=True, text=True)
    assert good.returncode == 0 and "export intact: 30 entries" in good.stdout, good.stdout + good.stderr
    chain[2]["outcome"] = "refused"
    bad = subprocess.run([sys.executable, str(script), str(write_export(tmp_path / "b.jsonl", chain))],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "export broken at entry 3" in bad.stdout
