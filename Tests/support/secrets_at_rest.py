"""Shared by the browser and end-to-end suites: a ledger of every secret the tests handled
(teleTANs, registration tokens, TANs, passwords, the phone numbers and names of hotline
callers, bearer tokens (the portal's and a Keycloak realm's) and the private keys that sign them) and, once every server has stopped, a search of
everything those servers wrote for them: their logs, their SQLite files (with write-ahead log and
journal), a data dump of each PostgreSQL database they used and, when that database is served by a
cluster on this machine, its raw files (dead row versions too), the write-ahead log written during
the run and the server's log; and the browser profiles (cache, session, history) of the tests,
Chromium's and Firefox's (whose LZ4-compressed session store is searched decompressed)."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
import time
import json
import unicodedata
import urllib.parse
import warnings

import phonenumbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from support import database


# header.payload.signature, base64url, header and payload JSON objects ("eyJ" is `{"`).
JWT_SHAPE = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{20,}")


def phone_number_e164(typed: str) -> str | None:
    """A phone number as the portal normalises it (Sources/Hotline/Domain/PhoneNumber.swift, which
    follows Google's libphonenumber; its PyPI port phonenumbers is the oracle here): digits with
    spaces, `/`, `-`, `.` and brackets, after `+`, `00` or a national 0 (German), valid by
    libphonenumber's metadata. None for what the portal refuses as a number (whether the
    hotline may call it back is --callback-numbers' question)."""
    text = typed.strip()
    if len(text) > 40 or not re.fullmatch("\\(?[+0][0-9 /\\-.()\u00a0]*", text):
        return None
    try:
        number = phonenumbers.parse(text, "DE")
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def phone_number_readable(e164: str) -> str:
    """PhoneNumber.readable: libphonenumber's international format, grouped by the real area
    code (`+49 30 12345678`), as the callback page shows the number."""
    return phonenumbers.format_number(phonenumbers.parse(e164, None), phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def phone_number_masked(e164: str) -> str:
    """PhoneNumber.masked: the country code and the last two digits (`+49 ••• ••• •• 78`)."""
    number = phonenumbers.parse(e164, None)
    return f"+{number.country_code} \u2022\u2022\u2022 \u2022\u2022\u2022 \u2022\u2022 {phonenumbers.national_significant_number(number)[-2:]}"


def typed_value_variants(value: str) -> dict[str, str]:
    """What a value typed into a form may look like where it is written: as typed (NFC and NFD),
    form-encoded as the browser posts it (`+` or `%20` for spaces), and JSON-escaped."""
    variants = {"as typed": value}
    for form in ("NFC", "NFD"):
        variants[f"as typed, {form}"] = unicodedata.normalize(form, value)
    variants["form-encoded"] = urllib.parse.quote_plus(value)
    variants["percent-encoded"] = urllib.parse.quote(value, safe="")
    variants["JSON-escaped"] = json.dumps(value)[1:-1]
    return variants


def sqlite_files(database: str) -> list[Path]:
    """The files of a `sqlite:PATH` database that exist (none for another database)."""
    if not database.startswith("sqlite:"):
        return []
    base = database[len("sqlite:"):]
    return [Path(base + suffix) for suffix in ("", "-wal", "-shm", "-journal") if Path(base + suffix).exists()]


def is_postgres(database: str) -> bool:
    return database.startswith(("postgres://", "postgresql://"))


def dump_postgres(url: str, directory: Path) -> Path:
    """A plain-text data dump of the whole database (every table, every row), for searching."""
    handle, name = tempfile.mkstemp(prefix="dump-", suffix=".sql", dir=directory)
    with open(handle, "wb") as out:
        result = subprocess.run(["pg_dump", "--data-only", "--no-owner", "--dbname", url],
                                stdout=out, stderr=subprocess.PIPE, timeout=120)
    assert result.returncode == 0, f"pg_dump failed: {result.stderr.decode(errors='replace')}"
    return Path(name)


def local_cluster(url: str) -> tuple[Path, Path] | None:
    """Data directory and server log of the PostgreSQL cluster on this machine that serves `url`
    (Debian's `pg_lsclusters`), or None when it is elsewhere."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    try:
        listing = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, timeout=30).stdout
    except FileNotFoundError:
        return None
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 7 and fields[2] == str(parts.port or 5432):
            return Path(fields[5]), Path(fields[6])
    return None


def raw_postgres_files(url: str, since: float) -> list[Path] | None:
    """What the cluster serving `url` wrote for it: the database's relation files (after a
    checkpoint, so they hold every row version still on disk, dead ones included) and the
    write-ahead log segments written since `since` (every change, whatever vacuum did later).
    None when the cluster is not on this machine."""
    cluster = local_cluster(url)
    if cluster is None:
        return None
    data_directory = cluster[0]
    assert os.access(data_directory, os.R_OK | os.X_OK), (
        f"cannot read {data_directory}: run the suite as root (as CI does) to search PostgreSQL's files")

    def psql(statement: str) -> str:
        try:
            return database.psql(statement, url, timeout=120)
        except AssertionError as error:
            raise AssertionError(f"{error} (scripts/start-test-postgres.sh grants pg_checkpoint)") from None

    psql("CHECKPOINT")
    database_oid = psql("SELECT oid FROM pg_database WHERE datname = current_database()")
    relations = [p for p in (data_directory / "base" / database_oid).iterdir() if p.is_file()]
    assert relations, f"no relation files for database {database_oid} in {data_directory}"
    wal = [p for p in (data_directory / "pg_wal").iterdir()
           if p.is_file() and re.fullmatch(r"[0-9A-F]{24}", p.name) and p.stat().st_mtime >= since - 1]
    assert wal, "no write-ahead log segment written during the run"
    return relations + wal


def regular_files(directory: Path) -> list[Path]:
    """Every regular file under `directory` (no sockets, no symbolic links followed), except
    Chromium's and Firefox's crash dumps: a dump holds the page's memory, so a crash would look
    like a leak (and a crash fails its test anyway)."""
    found = []
    for root, subdirectories, names in os.walk(directory):
        subdirectories[:] = [name for name in subdirectories if name not in ("Crashpad", "minidumps")]
        found += [Path(root) / name for name in names
                  if not os.path.islink(Path(root) / name) and os.path.isfile(Path(root) / name)]
    return found


MOZLZ4_MAGIC = b"mozLz40\0"


def lz4_block(data: bytes) -> bytes:
    """Decompresses one LZ4 block (the format of lz4's LZ4_compress_default): sequences of a
    token (literal length, match length - 4), the literals, a 2-byte offset back into the
    output and the match, which may overlap what it copies."""
    out = bytearray()
    position = 0

    def length(base: int) -> int:
        nonlocal position
        if base == 15:
            while True:
                byte = data[position]
                position += 1
                base += byte
                if byte != 255:
                    break
        return base

    try:
        while position < len(data):
            token = data[position]
            position += 1
            literals = length(token >> 4)
            out += data[position:position + literals]
            position += literals
            if position >= len(data):
                break  # the last sequence has literals only
            offset = data[position] | data[position + 1] << 8
            position += 2
            match = length(token & 15) + 4
            assert 0 < offset <= len(out), "not an LZ4 block"
            start = len(out) - offset
            for index in range(match):  # byte by byte: a match may repeat its own output
                out.append(out[start + index])
    except IndexError:
        pass  # cut off: what was decoded so far (the caller compares the size)
    return bytes(out)


def mozlz4_copies(files: list[Path], workdir: Path) -> dict[Path, Path]:
    """Firefox keeps its session store (open pages, their history, what was typed into forms)
    and a few other files LZ4-compressed behind the magic `mozLz40\\0` and the size (4 bytes,
    little-endian): a match can split any secret, so grep would not see it. Each such file is
    decompressed into `workdir`; returns copy -> original."""
    copies = {}
    for index, path in enumerate(files):
        with open(path, "rb") as source:
            if source.read(len(MOZLZ4_MAGIC)) != MOZLZ4_MAGIC:
                continue
            size = int.from_bytes(source.read(4), "little")
            content = lz4_block(source.read())
        # A write cut off when Firefox was ended (its temporary file) is searched as far as it goes.
        assert len(content) == size or (path.suffix == ".tmp" and len(content) < size), \
            f"{path}: decompressed {len(content)} bytes, the header says {size}"
        copy = workdir / f"mozlz4-{index}-{path.name}.decompressed"
        copy.write_bytes(content)
        copies[copy] = path
    return copies


def grep_needles(needles: list[bytes], files: list[Path], workdir: Path) -> list[tuple[Path, bytes]]:
    """(file, needle) for every needle found in a file: `grep -F`, which searches for all of them
    at once (hundreds of needles over hundreds of megabytes of write-ahead log). A file that
    vanished meanwhile (a recycled log segment) is not an error."""
    handle, patterns = tempfile.mkstemp(prefix="needles-", dir=workdir)
    with open(handle, "wb") as out:
        out.write(b"".join(needle + b"\n" for needle in needles))
    found = []
    for start in range(0, len(files), 200):
        chunk = files[start:start + 200]
        result = subprocess.run(["grep", "-aFoHZ", "-f", patterns, "--", *map(str, chunk)],
                                capture_output=True, env={**os.environ, "LC_ALL": "C"}, timeout=900)
        errors = [line for line in result.stderr.decode(errors="replace").splitlines()
                  if not line.endswith("No such file or directory")]
        assert result.returncode in (0, 1) or (result.returncode == 2 and not errors), f"grep failed: {errors}"
        for line in result.stdout.splitlines():
            name, _, match = line.partition(b"\0")
            found.append((Path(os.fsdecode(name)), match))
    os.unlink(patterns)
    return found


@dataclass
class Watched:
    """One server process whose writing is searched: its log file and its database."""
    name: str
    log_path: Path
    database: str
    log_marker: bytes  # a line every log of this server holds, so an empty log cannot pass
    is_running: Callable[[], bool]


@dataclass
class SecretsLedger:
    needles: dict[bytes, str] = field(default_factory=dict)
    watched: list[Watched] = field(default_factory=list)
    teletan_count: int = 0
    secret_counts: dict[str, int] = field(default_factory=dict)
    phone_number_count: int = 0
    name_count: int = 0
    directories: list[tuple[Path, str]] = field(default_factory=list)
    # Needles not searched for in Chromium's session files (`Sessions/` of a profile): the
    # form-encoded body of a form the browser posted and got a page back for (not a redirect),
    # which Chromium keeps with that history entry there, whatever the portal does. Every other
    # file of a profile (History, Cache, ...) is searched for them like everything else.
    not_in_session_files: set[bytes] = field(default_factory=set)
    started: float = field(default_factory=time.time)
    # The size of each local PostgreSQL server log when the run started: only what the run added
    # is searched (the log is the machine's, and outlives the run).
    server_log_sizes: dict[Path, int] = field(default_factory=dict)

    def note_database(self, database: str) -> None:
        """Call before a server first uses `database`: remembers where its server's log ends."""
        if is_postgres(database) and (cluster := local_cluster(database)) is not None:
            log = cluster[1]
            self.server_log_sizes.setdefault(log, log.stat().st_size if log.is_file() else 0)

    def add_teletan(self, teletan: str) -> None:
        """A teleTAN, searched as the 10 characters (both cases) and as the portal groups it."""
        assert re.fullmatch(r"[A-Za-z0-9]{10}", teletan or ""), f"not a teleTAN: {teletan!r}"
        self.teletan_count += 1
        label = f"teleTAN #{self.teletan_count}"
        grouped = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}"
        variants = {"upper-case": teletan, "lower-case": teletan.lower(), "grouped": grouped,
                    "grouped, lower-case": grouped.lower()}
        # Typed into a form (the hotline's read-back) and posted: form-encoded.
        for how, variant in list(variants.items()):
            if " " in variant:
                variants[f"{how}, form-encoded"] = urllib.parse.quote_plus(variant)
                variants[f"{how}, percent-encoded"] = urllib.parse.quote(variant)
        for how, variant in variants.items():
            self.needles[variant.encode()] = f"{label} ({how})"

    def add_secret(self, value: str, kind: str) -> None:
        """A registration token or TAN (UUIDs; searched in both cases)."""
        assert len(value) >= 8, f"not a {kind}: {value!r}"
        self.secret_counts[kind] = self.secret_counts.get(kind, 0) + 1
        for variant in {value, value.lower(), value.upper()}:
            self.needles[variant.encode()] = f"{kind} #{self.secret_counts[kind]}"

    def add_phone_number(self, typed: str, posted_to_a_page: bool = False) -> str | None:
        """A caller's phone number, as the test typed it (valid or not): searched as typed (also
        form-encoded, as the browser posted it), as its digits only, and, when the portal accepts
        it, in E.164 (`+4930...`), as the E.164 digits (`4930...`) and grouped as the callback page
        shows it (`+49 305 ...`). Returns the E.164 form (None for a number the portal refuses).

        `posted_to_a_page`: the number was posted in a form the portal answered with a page, not
        a redirect (a refused number, shown again for correction). Chromium keeps such a POST
        body with its history entry in the profile's session files; its form-encoded forms are
        then searched for everywhere but in the browser profiles' session files."""
        assert len(re.sub(r"\D", "", typed)) >= 7, f"too few digits to search for: {typed!r}"
        self.phone_number_count += 1
        label = f"phone number #{self.phone_number_count}"
        variants = typed_value_variants(typed)
        variants["digits only, as typed"] = re.sub(r"\D", "", typed)
        e164 = phone_number_e164(typed)
        if e164 is not None:
            variants["E.164"] = e164
            variants["E.164 digits"] = e164[1:]
            variants["grouped as the callback page shows it"] = phone_number_readable(e164)
        self._add_typed(label, variants, posted_to_a_page)
        return e164

    def add_person_name(self, name: str, posted_to_a_page: bool = False) -> None:
        """A caller's name, as typed: searched as typed (NFC and NFD), form-encoded and
        JSON-escaped, and each word of 8 characters or more alone (a distinctive surname, however
        the rest was encoded). Use a name no page, log line or data file would hold by chance.
        `posted_to_a_page`: as for add_phone_number."""
        assert len(name) >= 8 and " " in name, f"not distinctive enough to search for: {name!r}"
        self.name_count += 1
        label = f"name #{self.name_count}"
        variants = typed_value_variants(name)
        for word in name.split():
            if len(word) >= 8:
                variants[f"the word {word[:2]!r}..."] = word
        self._add_typed(label, variants, posted_to_a_page)

    def _add_typed(self, label: str, variants: dict[str, str], posted_to_a_page: bool) -> None:
        """Records the variants; for a value posted to a page, those found within its form
        body (the form-encoded variants themselves, a surname that needs no encoding) are not
        searched for in the browser profiles' session files."""
        posted = (variants["form-encoded"], variants["percent-encoded"]) if posted_to_a_page else ()
        for how, variant in variants.items():
            needle = variant.encode()
            self.needles.setdefault(needle, f"{label} ({how})")
            if any(variant in body for body in posted):
                self.not_in_session_files.add(needle)

    def add_private_key(self, pem: bytes, what: str) -> None:
        """A private key in PEM: every full base64 line of its body is a needle, which also finds
        the key written as one base64 line (PEM lines are whole 48-byte chunks of that text)."""
        lines = [line for line in pem.splitlines() if len(line) == 64 and not line.startswith(b"-----")]
        assert len(lines) >= 8, f"{what}: not a PEM private key"
        for number, line in enumerate(lines, 1):
            self.needles[line] = f"{what} (PEM line {number})"

    def add_password(self, password: str) -> None:
        assert password, "an empty password would match everything"
        self.needles[password.encode()] = f"password of length {len(password)} starting {password[:2]!r}"

    def add_bearer_token(self, token: str) -> None:
        """A JWT the portal sent (as a verification server received it): searched whole and as
        its signature alone (a token cut or re-encoded around it still leaks that). Any other
        JWT-shaped text in the servers' own files fails the search anyway (JWT_SHAPE)."""
        assert token.count(".") == 2 and len(token.rsplit(".", 1)[1]) >= 20, "not a signed JWT"
        self.secret_counts["bearer token"] = self.secret_counts.get("bearer token", 0) + 1
        label = f"bearer token #{self.secret_counts['bearer token']}"
        self.needles[token.encode()] = label
        self.needles[token.rsplit(".", 1)[1].encode()] = f"{label} (signature)"

    def add_rsa_private_key(self, path: Path, what: str) -> None:
        """An RSA private key file (PEM): searched as each line of its PEM text that holds
        private material only (the lines of the modulus and exponent are public: the portal
        publishes them in its certs document), and as its private numbers in JWK form
        (base64url of d, p, q, dp, dq, qi), as a key written into a JSON document would read."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        text = path.read_text()
        key = serialization.load_pem_private_key(text.encode(), password=None)
        assert isinstance(key, rsa.RSAPrivateKey), f"{path} is not an RSA private key"
        numbers = key.private_numbers()
        lines = [line for line in text.splitlines() if line and not line.startswith("-----")]
        der = base64.b64decode("".join(lines))
        modulus = numbers.public_numbers.n.to_bytes((numbers.public_numbers.n.bit_length() + 7) // 8, "big")
        public_end = der.index(modulus) + len(modulus) + 8  # the exponent follows the modulus
        private_lines = [line for index, line in enumerate(lines[:-1]) if index * 48 >= public_end]
        assert len(private_lines) >= 10, f"too few private PEM lines in {path}"
        for index, line in enumerate(private_lines):
            self.needles[line.encode()] = f"{what} (PEM line {index + 1} of its private part)"
        for name in ("d", "p", "q", "dmp1", "dmq1", "iqmp"):
            value = getattr(numbers, name)
            encoded = base64.urlsafe_b64encode(value.to_bytes((value.bit_length() + 7) // 8, "big")).rstrip(b"=")
            self.needles[encoded] = f"{what} ({name}, JWK form)"

    def watch(self, process, database: str, log_marker: bytes) -> None:
        """Searches what `process` (a ManagedProcess) writes: its log and `database`. Call
        before the process starts."""
        self.note_database(database)
        self.watched.append(Watched(process.name, process.log_path, database, log_marker, process.is_running))

    def watch_directory(self, directory: Path, what: str) -> None:
        """Searches every file under `directory` (a Chromium or Firefox profile) for the secrets."""
        self.directories.append((directory, what))

    def check_nothing_leaked(self, workdir: Path) -> None:
        """Call when every watched server has stopped: databases closed, logs complete. Besides
        the recorded secrets, anything shaped like a JWT (the portals' bearer tokens, which the
        tests never see) must not appear in the servers' own logs and databases either."""
        still_running = [w.name for w in self.watched if w.is_running()]
        assert not still_running, f"secrets check ran while these were running: {still_running}"
        assert self.needles, "no secret was recorded: the search would check nothing"
        own = self._servers_own_files(workdir)
        problems = [f"a JWT (bearer token) found in {path}" for path in own if JWT_SHAPE.search(path.read_bytes())]
        in_directories = self._directory_files()
        decompressed = mozlz4_copies(in_directories, workdir)
        files = [*own, *self._other_files(workdir), *in_directories, *decompressed]
        # A planted file proves the search finds what it looks for (a wrong grep flag would
        # otherwise pass everything).
        canary, planted = b"canary-" + os.urandom(8).hex().encode(), workdir / "planted"
        planted.write_bytes(b"\0binary\0" + canary + b"\0")
        found = set(grep_needles([*self.needles, canary], [planted, *files], workdir))
        assert (planted, canary) in found, "the search did not find a planted needle"
        session_files = {path for path in in_directories if "Sessions" in path.parts}
        exempt = {(path, needle) for path, needle in found if needle in self.not_in_session_files and path in session_files}
        problems += [f"{self.needles.get(needle, repr(needle))} found in "
                     + (f"{decompressed[path]} (decompressed)" if path in decompressed else str(path))
                     for path, needle in sorted(found - {(planted, canary)} - exempt)]
        assert not problems, "secrets at rest or in logs:\n" + "\n".join(problems)

    def _servers_own_files(self, workdir: Path) -> list[Path]:
        """Each watched server's log and SQLite files, and a dump of each PostgreSQL database."""
        files: list[Path] = []
        for watched in self.watched:
            assert watched.log_marker in watched.log_path.read_bytes(), \
                f"{watched.log_path} of {watched.name} lacks {watched.log_marker!r}"
            database_files = sqlite_files(watched.database)
            if watched.database.startswith("sqlite:"):
                assert database_files and database_files[0].stat().st_size > 0, \
                    f"{watched.database} of {watched.name} is missing or empty"
            files += [watched.log_path, *database_files]
        for url in sorted({w.database for w in self.watched if is_postgres(w.database)}):
            dump = dump_postgres(url, workdir)
            assert b"COPY public.teletans" in dump.read_bytes(), f"the dump of {url.split('@')[-1]} has no teletans table"
            files.append(dump)
        return list(dict.fromkeys(files))  # several watchers may share a file

    def _other_files(self, workdir: Path) -> list[Path]:
        """PostgreSQL's own files (raw relation files, write-ahead log, what the run added to the
        server log)."""
        files: list[Path] = []
        for url in sorted({w.database for w in self.watched if is_postgres(w.database)}):
            raw = raw_postgres_files(url, since=self.started)
            if raw is None:
                warnings.warn(f"{url.split('@')[-1]} is not served from this machine: only a dump of it was searched")
            else:
                files += raw
        for log, size in self.server_log_sizes.items():
            # What the run added to the server's log (all of it if the log was rotated meanwhile).
            with open(log, "rb") as source:
                source.seek(size if log.stat().st_size >= size else 0)
                added = workdir / f"added-to-{log.name}"
                added.write_bytes(source.read())
            files.append(added)
        return files

    def _directory_files(self) -> list[Path]:
        """Every file in the watched directories (the browsers' profiles)."""
        files: list[Path] = []
        for directory, what in self.directories:
            in_directory = regular_files(directory)
            assert in_directory, f"{what} {directory} is empty: the search would check nothing"
            files += in_directory
        return files
