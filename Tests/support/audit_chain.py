"""An independent re-check of the portal's audit trail, from the documented rule only (no code
shared with the Swift implementation): the JSON Lines export and the signed checkpoint.

The rule (docs: the issue-10 design contract):

    hash = lowercase hex SHA-256( prev_hash_hex || "\\n" || canonical )

`canonical` is a JSON object with the keys action, actor, address, at_ms, details, outcome,
request_id, role, seq, subject, sorted, without whitespace, keys whose value is null left out;
`at_ms` and `seq` are integers, `details` is the stored details *string*. Strings escape `"` `\\`
and the control characters U+0000..U+001F (\\b \\f \\n \\r \\t by name, the rest as \\u00xx in lower
case hex); everything else, "/" included, is written as raw UTF-8. The first entry (seq 1) links
to 64 zeros.

An export line is one JSON object:
    {"seq", "time", "at_ms", "actor", "role", "action", "outcome", "address", "request_id",
     "subject", "details", "prev_hash", "hash"}
`time` (UTC ISO 8601 with milliseconds) is informational; the hash uses `at_ms`.

A signed checkpoint is the text

    teletan-portal audit checkpoint
    seq <N>
    hash <64 hex>
    time <UTC ISO 8601 with milliseconds>
    key <16 hex: SHA-256 over the public key's DER, first 16 hex digits>
    <empty line>
    signature <base64 of a DER ECDSA P-256/SHA-256 signature over the five body lines>

whose signature `openssl dgst -sha256 -verify PUB -signature SIG BODY` checks.

Standard library plus the `openssl` command. Used by the Python test suites; also runnable:

    python3 Tests/support/audit_chain.py EXPORT.jsonl [CHECKPOINT.txt PUBLIC_KEY.pem]
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

GENESIS_HASH = "0" * 64
CHECKPOINT_ORIGIN = "teletan-portal audit checkpoint"

# The fields of an export record, in the order the contract lists them.
RECORD_FIELDS = ("seq", "time", "at_ms", "actor", "role", "action", "outcome", "address",
                 "request_id", "subject", "details", "prev_hash", "hash")
# The fields the hash covers (those of the canonical object).
CANONICAL_FIELDS = ("action", "actor", "address", "at_ms", "details", "outcome", "request_id",
                    "role", "seq", "subject")
_OPTIONAL_STRINGS = ("actor", "role", "address", "request_id", "subject")
_REQUIRED_STRINGS = ("action", "outcome", "details")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_ISO_MS = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


# ---------------------------------------------------------------------------------------------
# Canonical JSON and the hash

_NAMED_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def json_string(text: str) -> str:
    """`text` as a JSON string by the rule: the named escapes, other C0 controls as \\u00xx
    (lower-case hex), everything else raw. Refuses lone surrogates (they have no UTF-8)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif code < 0x20:
            out.append("\\u%04x" % code)
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError("string contains a lone surrogate (not valid Unicode text)")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical_json(fields: dict) -> str:
    """The canonical object of one entry: CANONICAL_FIELDS from `fields` (extra keys such as
    time/prev_hash/hash are ignored), nulls left out, keys sorted, no whitespace."""
    parts = []
    for key in sorted(CANONICAL_FIELDS):
        value = fields.get(key)
        if value is None:
            continue
        if key in ("seq", "at_ms"):
            if type(value) is not int:
                raise ValueError(f"{key} must be an integer")
            parts.append(f'"{key}":{value}')
        else:
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string or null")
            parts.append(f'"{key}":{json_string(value)}')
    return "{" + ",".join(parts) + "}"


def chain_hash(prev_hash: str, canonical: str) -> str:
    """SHA-256 over prev_hash, a newline and the canonical JSON, as lower-case hex."""
    return hashlib.sha256(prev_hash.encode("ascii") + b"\n" + canonical.encode("utf-8")).hexdigest()


def record_hash(record: dict) -> str:
    """The hash an export record should carry, given its fields and its prev_hash."""
    return chain_hash(record["prev_hash"], canonical_json(record))


def iso_time(at_ms: int) -> str:
    """UTC ISO 8601 with milliseconds, e.g. 2026-11-24T10:00:00.123Z."""
    moment = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=at_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (at_ms % 1000)


def make_record(seq: int, at_ms: int, action: str, outcome: str, prev_hash: str, *, details: str = "{}",
                actor: str | None = None, role: str | None = None, address: str | None = None,
                request_id: str | None = None, subject: str | None = None) -> dict:
    """A complete export record chained to `prev_hash` (for tests and fixtures)."""
    record = {"seq": seq, "time": iso_time(at_ms), "at_ms": at_ms, "actor": actor, "role": role,
              "action": action, "outcome": outcome, "address": address, "request_id": request_id,
              "subject": subject, "details": details, "prev_hash": prev_hash}
    record["hash"] = record_hash(record)
    return record


def record_line(record: dict) -> str:
    """One export line (with its final newline) for `record`, compact; any valid JSON object
    with the same fields would verify the same."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def build_chain(entries: Iterable[dict], first_seq: int = 1, prev_hash: str = GENESIS_HASH) -> list[dict]:
    """Records for `entries` (dicts of make_record's keyword fields plus at_ms, action, outcome),
    numbered from `first_seq` and chained from `prev_hash`."""
    records = []
    for offset, entry in enumerate(entries):
        fields = dict(entry)
        record = make_record(first_seq + offset, fields.pop("at_ms"), fields.pop("action"), fields.pop("outcome"),
                             prev_hash, **fields)
        records.append(record)
        prev_hash = record["hash"]
    return records


# ---------------------------------------------------------------------------------------------
# Verifying an export


@dataclass
class ExportReport:
    """The outcome of checking an export. `first_bad_seq`/`reason` name the first problem (the
    seq is None when the problem is not tied to one entry, e.g. a line that is no JSON)."""
    checked: int = 0                      # records whose hash and link were checked and found good
    first_seq: int | None = None
    last_seq: int | None = None
    first_bad_seq: int | None = None
    reason: str | None = None
    line: int | None = None               # 1-based line number of the problem
    checkpoint_checked: bool = False      # the checkpoint's seq was in (or just before) the file
    hash_at: dict | None = None           # seq -> hash, only with keep_hashes=True

    @property
    def ok(self) -> bool:
        return self.reason is None


class _Bad(Exception):
    def __init__(self, seq: int | None, reason: str):
        super().__init__(reason)
        self.seq, self.reason = seq, reason


def _no_duplicate_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_record(line: str) -> dict:
    """One export line as a record; raises _Bad (seq when known) if it breaks the contract."""
    try:
        record = json.loads(line, object_pairs_hook=_no_duplicate_keys)
    except ValueError as error:
        raise _Bad(None, f"not a JSON object ({error})") from None
    if not isinstance(record, dict):
        raise _Bad(None, "not a JSON object")
    seq = record.get("seq")
    seq = seq if type(seq) is int else None
    missing = [key for key in RECORD_FIELDS if key not in record]
    extra = sorted(set(record) - set(RECORD_FIELDS))
    if missing:
        raise _Bad(seq, f"fields missing: {', '.join(missing)}")
    if extra:
        raise _Bad(seq, f"unexpected fields (not covered by the hash): {', '.join(extra)}")
    if seq is None or seq < 1:
        raise _Bad(None, "seq is not a positive integer")
    if type(record["at_ms"]) is not int:
        raise _Bad(seq, "at_ms is not an integer")
    for key in _REQUIRED_STRINGS:
        if not isinstance(record[key], str):
            raise _Bad(seq, f"{key} is not a string")
    for key in _OPTIONAL_STRINGS:
        if record[key] is not None and not isinstance(record[key], str):
            raise _Bad(seq, f"{key} is neither a string nor null")
    for key in ("prev_hash", "hash"):
        if not isinstance(record[key], str) or not _HEX64.fullmatch(record[key]):
            raise _Bad(seq, f"{key} is not 64 lower-case hex digits")
    if not isinstance(record["time"], str) or record["time"] != iso_time(record["at_ms"]):
        raise _Bad(seq, f"time {record['time']!r} does not match at_ms {record['at_ms']}")
    return record


def iter_lines(path: str | Path) -> Iterator[str]:
    """The lines of a JSON Lines file without their newline; each must end with one, the file
    must be UTF-8 and hold no empty line (raises _Bad otherwise)."""
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                raise _Bad(None, "the last line does not end with a newline (file cut off?)")
            try:
                text = raw[:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise _Bad(None, "not UTF-8") from None
            if text.endswith("\r"):
                raise _Bad(None, "line ends with CR LF")
            yield text


def verify_records(lines: Iterable[str], *, contiguous: bool = True, checkpoint: tuple[int, str] | None = None,
                   keep_hashes: bool = False) -> ExportReport:
    """Checks export lines (text without the newline): each record's hash from its fields and
    prev_hash, ascending seqs, and that consecutive seqs link (prev_hash = previous hash). With
    `contiguous` (an unfiltered export) a gap is an error ("entry N is missing") and a file that
    starts at seq 1 must start from the genesis hash; without it (a filtered export) seqs may
    skip and only neighbours are linked. `checkpoint` = (seq, hash): the entry at that seq (or,
    for the seq just before the file, the first entry's prev_hash) must carry that hash."""
    report = ExportReport(hash_at={} if keep_hashes else None)
    previous: dict | None = None
    line_number = 0
    iterator = iter(lines)
    try:
        while True:
            line_number += 1
            try:
                line = next(iterator)
            except StopIteration:
                break
            if line == "":
                raise _Bad(None, "empty line")
            record = parse_record(line)
            seq = record["seq"]
            if previous is None:
                report.first_seq = seq
                if seq == 1 and record["prev_hash"] != GENESIS_HASH:
                    raise _Bad(1, "entry 1 does not start from the genesis hash")
                if checkpoint and checkpoint[0] == seq - 1:
                    report.checkpoint_checked = True
                    if record["prev_hash"] != checkpoint[1]:
                        raise _Bad(seq, f"entry {seq} does not link to the checkpoint's hash of entry {seq - 1}")
            else:
                expected = previous["seq"] + 1
                if seq <= previous["seq"]:
                    raise _Bad(seq, f"entry {seq} follows entry {previous['seq']} (seqs must ascend)")
                if seq != expected and contiguous:
                    raise _Bad(expected, f"entry {expected} is missing")
                if seq == expected and record["prev_hash"] != previous["hash"]:
                    raise _Bad(seq, f"entry {seq} does not link to entry {seq - 1}")
            try:
                recomputed = record_hash(record)
            except ValueError as error:
                raise _Bad(seq, str(error)) from None
            if recomputed != record["hash"]:
                raise _Bad(seq, f"entry {seq} was changed after it was written (hash does not match its fields)")
            if checkpoint and checkpoint[0] == seq:
                report.checkpoint_checked = True
                if record["hash"] != checkpoint[1]:
                    raise _Bad(seq, f"entry {seq} does not carry the checkpoint's hash")
            if keep_hashes:
                report.hash_at[seq] = record["hash"]
            report.checked += 1
            report.last_seq = seq
            previous = record
    except _Bad as bad:
        report.first_bad_seq, report.reason, report.line = bad.seq, bad.reason, line_number or None
    return report


def verify_export(path: str | Path, *, contiguous: bool = True, checkpoint: tuple[int, str] | None = None,
                  keep_hashes: bool = False) -> ExportReport:
    """verify_records over a JSON Lines file (UTF-8, one record per line, each ending "\\n")."""
    return verify_records(iter_lines(path), contiguous=contiguous, checkpoint=checkpoint, keep_hashes=keep_hashes)


# ---------------------------------------------------------------------------------------------
# Signed checkpoints


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    hash: str
    time: str
    key_id: str
    signature: bytes      # DER-encoded ECDSA signature
    body: bytes           # the five signed lines, each with its newline


class CheckpointFormatError(ValueError):
    pass


def parse_checkpoint(text: str | bytes) -> Checkpoint:
    """Parses the signed-note text strictly (exact lines, exact formats)."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    if not text.endswith(b"\n"):
        raise CheckpointFormatError("the checkpoint does not end with a newline")
    lines = text[:-1].split(b"\n")
    if len(lines) != 7:
        raise CheckpointFormatError(f"expected 5 body lines, an empty line and a signature line; got {len(lines)} lines")
    try:
        origin, seq_line, hash_line, time_line, key_line, empty, signature_line = (line.decode("ascii") for line in lines)
    except UnicodeDecodeError:
        raise CheckpointFormatError("the checkpoint is not ASCII text") from None
    if origin != CHECKPOINT_ORIGIN:
        raise CheckpointFormatError(f"first line is {origin!r}, expected {CHECKPOINT_ORIGIN!r}")

    def field(line: str, name: str, pattern: re.Pattern) -> str:
        prefix = name + " "
        if not line.startswith(prefix) or not pattern.fullmatch(line[len(prefix):]):
            raise CheckpointFormatError(f"malformed {name} line: {line!r}")
        return line[len(prefix):]

    seq = int(field(seq_line, "seq", _DECIMAL))
    hash_ = field(hash_line, "hash", _HEX64)
    time = field(time_line, "time", _ISO_MS)
    key_id = field(key_line, "key", _HEX16)
    if empty != "":
        raise CheckpointFormatError("no empty line between the body and the signature")
    encoded = field(signature_line, "signature", re.compile(r"[A-Za-z0-9+/]+={0,2}"))
    try:
        signature = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        raise CheckpointFormatError("the signature is not base64") from None
    if seq == 0 and hash_ != GENESIS_HASH:
        raise CheckpointFormatError("a checkpoint at seq 0 must carry the genesis hash")
    body = b"".join(line + b"\n" for line in lines[:5])
    return Checkpoint(seq=seq, hash=hash_, time=time, key_id=key_id, signature=signature, body=body)


def public_key_der(public_key_pem: str | Path) -> bytes:
    """The SubjectPublicKeyInfo DER of a public key PEM file (openssl pkey)."""
    result = subprocess.run(["openssl", "pkey", "-pubin", "-in", str(public_key_pem), "-outform", "DER"],
                            capture_output=True, timeout=30)
    if result.returncode != 0:
        raise ValueError(f"openssl cannot read the public key {public_key_pem}: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def key_id(public_key_pem: str | Path) -> str:
    """First 16 hex digits of SHA-256 over the public key's DER."""
    return hashlib.sha256(public_key_der(public_key_pem)).hexdigest()[:16]


def openssl_verifies(public_key_pem: str | Path, signature: bytes, body: bytes) -> tuple[bool, str]:
    """Runs `openssl dgst -sha256 -verify PUB -signature SIG BODY`; (True, output) on "Verified OK"."""
    with tempfile.TemporaryDirectory(prefix="audit-checkpoint-") as directory:
        body_path, signature_path = Path(directory, "body.txt"), Path(directory, "sig.der")
        body_path.write_bytes(body)
        signature_path.write_bytes(signature)
        result = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(public_key_pem),
                                 "-signature", str(signature_path), str(body_path)],
                                capture_output=True, text=True, timeout=30)
    output = (result.stdout + result.stderr).strip()
    return result.returncode == 0 and "Verified OK" in result.stdout, output


@dataclass
class CheckpointReport:
    checkpoint: Checkpoint | None
    signature_ok: bool
    key_id_ok: bool
    reason: str | None

    @property
    def ok(self) -> bool:
        return self.reason is None


def verify_checkpoint(text: str | bytes, public_key_pem: str | Path) -> CheckpointReport:
    """Parses a checkpoint and checks its signature (openssl) and that its key id is the key's."""
    try:
        checkpoint = parse_checkpoint(text)
    except CheckpointFormatError as error:
        return CheckpointReport(None, False, False, f"malformed checkpoint: {error}")
    signature_ok, output = openssl_verifies(public_key_pem, checkpoint.signature, checkpoint.body)
    expected_id = key_id(public_key_pem)
    key_id_ok = checkpoint.key_id == expected_id
    reason = None
    if not key_id_ok:
        reason = f"the checkpoint names key {checkpoint.key_id}, the public key is {expected_id}"
    elif not signature_ok:
        reason = f"bad signature ({output or 'openssl failed'})"
    return CheckpointReport(checkpoint, signature_ok, key_id_ok, reason)


def verify_export_with_checkpoint(export: str | Path, checkpoint_text: str | bytes, public_key_pem: str | Path, *,
                                  contiguous: bool = True) -> tuple[CheckpointReport, ExportReport]:
    """What `portal audit verify --export --checkpoint` checks, independently: the checkpoint's
    signature and key, every line's hash and link, and the entry at the checkpoint's seq (when
    the file holds it). The export report is only produced when the checkpoint parses."""
    checkpoint_report = verify_checkpoint(checkpoint_text, public_key_pem)
    pin = (checkpoint_report.checkpoint.seq, checkpoint_report.checkpoint.hash) if checkpoint_report.checkpoint else None
    return checkpoint_report, verify_export(export, contiguous=contiguous, checkpoint=pin)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    if len(argv) == 4:
        checkpoint_report, report = verify_export_with_checkpoint(argv[1], Path(argv[2]).read_bytes(), argv[3])
        if not checkpoint_report.ok:
            print(f"checkpoint: {checkpoint_report.reason}")
            return 1
        print(f"checkpoint: signature good, seq {checkpoint_report.checkpoint.seq}"
              + ("" if report.checkpoint_checked else " (not in this file)"))
    else:
        report = verify_export(argv[1])
    if report.ok:
        print(f"export intact: {report.checked} entries (seq {report.first_seq}..{report.last_seq})")
        return 0
    print(f"export broken at entry {report.first_bad_seq} (line {report.line}): {report.reason}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
