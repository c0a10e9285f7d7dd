"""Shared by the browser and end-to-end suites: a ledger of every secret the tests handled
(teleTANs, registration tokens, TANs, passwords) and, once every server has stopped, a search of
everything those servers wrote for them: their logs, their SQLite files (with write-ahead log and
journal) and a data dump of each PostgreSQL database they used."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


# header.payload.signature, base64url, header and payload JSON objects ("eyJ" is `{"`).
JWT_SHAPE = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{20,}")


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

    def add_teletan(self, teletan: str) -> None:
        """A teleTAN, searched as the 10 characters (both cases) and as the portal groups it."""
        self.teletan_count += 1
        label = f"teleTAN #{self.teletan_count}"
        grouped = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}"
        for variant, how in ((teletan, "upper-case"), (teletan.lower(), "lower-case"), (grouped, "grouped")):
            self.needles[variant.encode()] = f"{label} ({how})"

    def add_secret(self, value: str, kind: str) -> None:
        """A registration token or TAN (UUIDs; searched in both cases)."""
        self.secret_counts[kind] = self.secret_counts.get(kind, 0) + 1
        for variant in {value, value.lower(), value.upper()}:
            self.needles[variant.encode()] = f"{kind} #{self.secret_counts[kind]}"

    def add_password(self, password: str) -> None:
        self.needles[password.encode()] = f"password of length {len(password)} starting {password[:2]!r}"

    def watch(self, process, database: str, log_marker: bytes) -> None:
        """Searches what `process` (a ManagedProcess) writes: its log and `database`."""
        self.watched.append(Watched(process.name, process.log_path, database, log_marker, process.is_running))

    def check_nothing_leaked(self, workdir: Path) -> None:
        """Call when every watched server has stopped: databases closed, logs complete. Besides
        the recorded secrets, anything shaped like a JWT (the portals' bearer tokens, which the
        tests never see) must not appear either."""
        still_running = [w.name for w in self.watched if w.is_running()]
        assert not still_running, f"secrets check ran while these were running: {still_running}"
        assert self.needles, "no secret was recorded: the search would check nothing"
        contents: dict[Path, bytes] = {}
        for watched in self.watched:
            log = contents.setdefault(watched.log_path, watched.log_path.read_bytes())
            assert watched.log_marker in log, f"{watched.log_path} of {watched.name} lacks {watched.log_marker!r}"
            files = sqlite_files(watched.database)
            if watched.database.startswith("sqlite:"):
                assert files and files[0].stat().st_size > 0, f"{watched.database} of {watched.name} is missing or empty"
            for path in files:
                contents.setdefault(path, path.read_bytes())
        for url in sorted({w.database for w in self.watched if is_postgres(w.database)}):
            dump = dump_postgres(url, workdir)
            contents[dump] = dump.read_bytes()
            assert b"COPY public.teletans" in contents[dump], f"the dump of {url.split('@')[-1]} has no teletans table"
        problems = []
        for path, content in contents.items():
            problems += [f"{label} found in {path}" for needle, label in self.needles.items() if needle in content]
            if JWT_SHAPE.search(content):
                problems.append(f"a JWT (bearer token) found in {path}")
        assert not problems, "secrets at rest or in logs:\n" + "\n".join(problems)
