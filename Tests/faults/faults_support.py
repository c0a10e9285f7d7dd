"""Helpers of the fault tests (Tests/faults): a portal process, a plain HTTP client that signs in
and issues like an officer's browser (no JavaScript, cookies by hand), a private PostgreSQL
cluster that a test may stop and start, and the checks that run after every fault (audit chain,
every teleTAN shown is stored and audited, nothing half-written).

Imported by conftest.py and the test modules (pytest puts this directory on sys.path); the
portal and its client come from the shared package (Tests/support).
"""

from __future__ import annotations

import glob
import http.client
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# The portal, its client and the helpers every suite shares (Tests/support, the package `support`).
from support.database import psql
from support.portal_client import (OFFICER, PAM_SERVICE, PORTAL_BIN, REPO, REQUEST_TIMEOUT, Client, Issuance,  # noqa: F401
                                   Portal, Response, health, wait_until)
from support.processes_and_browsers import free_ports

HANG_PAM_SERVICE = "teletan-portal-hang-test"
HANG_SECONDS_FILE = Path("/etc/teletan-portal-test/hang-seconds")

ADMIN = ("tt-admin", "Admin-Pass-1")


PASSWORDS = ("Officer-Pass-1", "Admin-Pass-1", "Bench-Pass-1")


def bench_officer(number: int) -> tuple[str, str]:
    """tt-bench-01 .. tt-bench-50 (officers)."""
    assert 1 <= number <= 50
    return (f"tt-bench-{number:02d}", "Bench-Pass-1")


ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TELETAN_PATTERN = re.compile(f"[{ALPHABET}]{{10}}")

# What the portal answers while its database cannot do the request (the lead's specification):
# 503, Retry-After: 5, its error page in the request's language.
UNAVAILABLE_TITLE = {"en": "Service unavailable", "de": "Dienst nicht verfügbar"}
SIGN_IN_UNAVAILABLE = {
    "en": "Sign-in is unavailable right now. Please try again in a moment.",
    "de": "Die Anmeldung ist gerade nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.",
}


def check_unavailable_page(response: Response, language: str = "en") -> None:
    """The database-unavailable answer: 503, Retry-After: 5, the error page in `language`, and
    no teleTAN on it."""
    assert response.status == 503, response.describe()
    assert response.headers.get("retry-after") == "5", \
        f"Retry-After {response.headers.get('retry-after')!r}: {response.describe()}"
    assert response.lang == language, response.describe()
    assert response.h1 == UNAVAILABLE_TITLE[language], response.describe()
    assert response.shows_no_teletan(), response.describe()


# ---------------------------------------------------------------------------------------------
# Load: officers issuing in threads, every answer recorded


@dataclass
class Attempt:
    """One request of the load, with its answer or the exception it ended with."""
    client: str
    method: str
    path: str
    started: float
    ended: float
    status: int | None = None
    response: Response | None = None
    error: BaseException | None = None


@dataclass
class Load:
    """Officers issuing back to back until stop(); every request and every teleTAN shown kept."""
    clients: dict[str, Client]
    attempts: list[Attempt] = field(default_factory=list)
    shown: list[tuple[str, str, float]] = field(default_factory=list)  # (client, teleTAN, time)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)
    pause: float = 0.0
    # After an answer that is not a teleTAN (the 503 page), wait like a person would before
    # trying again, rather than hammering the portal in a tight loop.
    pause_after_refusal: float = 0.2
    # Ends a client's loop at its first connection error (the portal is going away).
    stop_on_connection_error: bool = False

    def start(self) -> "Load":
        for name, client in self.clients.items():
            thread = threading.Thread(target=self._run, args=(name, client), daemon=True, name=f"load-{name}")
            thread.start()
            self.threads.append(thread)
        return self

    def stop(self, timeout: float = 60) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout)
            assert not thread.is_alive(), f"{thread.name} did not finish"

    def _run(self, name: str, client: Client) -> None:
        while not self.stopping.is_set():
            outcome = self._issue_once(name, client)
            if outcome is None and self.stop_on_connection_error:
                return
            pause = self.pause if outcome else self.pause_after_refusal
            if pause:
                self.stopping.wait(pause)

    def _issue_once(self, name: str, client: Client) -> bool | None:
        """One issuance: True if it showed a teleTAN, False if not, None if it ended with a
        connection error."""
        recording = _RecordingClient(client, name, self)
        try:
            issuance = recording.issue()
        except (OSError, http.client.HTTPException) as error:
            recording.record_error(error)
            return None
        teletan = issuance.teletan
        if teletan:
            with self.lock:
                self.shown.append((name, teletan, time.monotonic()))
        return teletan is not None

    def drain(self) -> None:
        """After stop(): each client fetches a teleTAN that may still wait for it (a POST whose
        answer was lost), so that every teleTAN made ends up shown."""
        for name, client in self.clients.items():
            home = client.get("/")
            assert home.status == 200, home.describe()
            if 'id="teletan-waiting"' in home.body:
                result = client.get("/teletan/result")
                assert result.status == 200 and result.teletan, result.describe()
                with self.lock:
                    self.shown.append((name, result.teletan, time.monotonic()))

    # What happened

    def responses(self) -> list[Response]:
        return [a.response for a in self.attempts if a.response is not None]

    def errors(self) -> list[Attempt]:
        return [a for a in self.attempts if a.error is not None]

    def between(self, start: float, end: float) -> list[Attempt]:
        return [a for a in self.attempts if a.started >= start and a.ended <= end]

    def successes_after(self, moment: float) -> list[tuple[str, str, float]]:
        return sorted((s for s in self.shown if s[2] >= moment), key=lambda s: s[2])


class _RecordingClient:
    """Wraps a Client so that each request of an issuance lands in the load's record."""

    def __init__(self, client: Client, name: str, load: Load):
        self.client, self.name, self.load = client, name, load
        self.pending: tuple[str, str, float] | None = None

    def issue(self) -> Issuance:
        original = self.client.request

        def recorded(method, path, form=None, headers=None):
            started = time.monotonic()
            self.pending = (method, path, started)
            response = original(method, path, form, headers)
            with self.load.lock:
                self.load.attempts.append(Attempt(self.name, method, path, started, time.monotonic(),
                                                  response.status, response))
            self.pending = None
            return response

        self.client.request = recorded
        try:
            return Client.issue(self.client)
        finally:
            del self.client.request

    def record_error(self, error: BaseException) -> None:
        method, path, started = self.pending or ("?", "?", time.monotonic())
        with self.load.lock:
            self.load.attempts.append(Attempt(self.name, method, path, started, time.monotonic(), error=error))


class Probe:
    """Polls /health/live, /health/ready and one signed-in client's start page (in its language)
    every `interval` seconds in a thread; keeps (time, path, status or None, Response or None)."""

    def __init__(self, base_url: str, client: Client | None = None, interval: float = 0.25):
        self.base_url, self.client, self.interval = base_url, client, interval
        self.records: list[tuple[float, str, int | None, Response | None]] = []
        self.errors: list[tuple[float, str, BaseException]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="probe")

    def start(self) -> "Probe":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), "the probe did not finish"

    def _run(self) -> None:
        while not self.stopping.is_set():
            for path in ("/health/live", "/health/ready"):
                self.records.append((time.monotonic(), path, health(self.base_url, path), None))
            if self.client is not None:
                started = time.monotonic()
                try:
                    response = self.client.get("/")
                    self.records.append((started, "/", response.status, response))
                except (OSError, http.client.HTTPException) as error:
                    self.errors.append((started, "/", error))
            self.stopping.wait(self.interval)

    def statuses(self, path: str, start: float = 0.0, end: float = float("inf")) -> list[int | None]:
        return [status for moment, p, status, _ in self.records if p == path and start <= moment <= end]

    def first(self, path: str, status: int, after: float) -> float | None:
        """Time of the first answer `status` to `path` at or after `after`."""
        moments = [moment for moment, p, s, _ in self.records if p == path and s == status and moment >= after]
        return min(moments) if moments else None


# ---------------------------------------------------------------------------------------------
# The checks afterwards


def check_nothing_half_written(portal: Portal, shown: list[str]) -> dict[str, int]:
    """The checks after a fault (the portal may be running or stopped):

    - `portal audit verify --full` passes;
    - every teleTAN shown was stored: its keyed fingerprint has a successful `teletan.issue`
      audit entry and an `issued_teletans` row, and no teleTAN was shown twice;
    - one issuance is all or nothing: the verification records (`teletans`), `issued_teletans`
      and the successful `teletan.issue` entries agree in number, and each of those teleTANs was
      shown or still waits in `pending_displays` (so nothing was issued that nobody saw);
    - every used form nonce belongs to an issuance that committed (an issued teleTAN, or a
      refusal because one was still waiting);
    - every session has its successful `signin` entry, and no nonce or waiting teleTAN belongs
      to a session that does not exist;
    - the portal's log holds no teleTAN shown and no password typed (the fault paths log
      database errors and refusals).

    Returns the counts."""
    log = portal.log_path.read_bytes()
    leaked = [t for t in shown if t.encode() in log] + [p for p in PASSWORDS if p.encode() in log]
    assert not leaked, f"{len(leaked)} secrets in the portal's log (teleTANs shown or passwords typed)"
    verify = portal.audit_verify()
    assert verify.returncode == 0, f"portal audit verify failed ({verify.returncode}):\n{verify.stdout}\n{verify.stderr}"

    assert len(shown) == len(set(shown)), "a teleTAN was shown twice"
    db = portal.db()
    issued_entries = {row[0] for row in db.rows(
        "SELECT subject FROM audit_log WHERE action = 'teletan.issue' AND outcome = 'success'")}
    issued_rows = {row[0] for row in db.rows("SELECT fingerprint FROM issued_teletans")}
    missing = [t for t in shown if portal.fingerprint(t) not in issued_entries]
    assert not missing, f"{len(missing)} of {len(shown)} teleTANs shown have no teletan.issue audit entry"
    missing = [t for t in shown if portal.fingerprint(t) not in issued_rows]
    assert not missing, f"{len(missing)} of {len(shown)} teleTANs shown have no issued_teletans row"

    counts = {
        "teletans": db.scalar("SELECT COUNT(*) FROM teletans"),
        "issued_teletans": db.scalar("SELECT COUNT(*) FROM issued_teletans"),
        "issue_entries": db.scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'teletan.issue' AND outcome = 'success'"),
        "waiting_refusals": db.scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'teletan.issue' "
                                      "AND outcome = 'refused' AND details LIKE '%teletan_waiting%'"),
        "pending_displays": db.scalar("SELECT COUNT(*) FROM pending_displays"),
        "form_nonces": db.scalar("SELECT COUNT(*) FROM form_nonces"),
        "sessions": db.scalar("SELECT COUNT(*) FROM sessions"),
        "signin_entries": db.scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'signin' AND outcome = 'success'"),
        "shown": len(shown),
    }
    assert counts["teletans"] == counts["issued_teletans"] == counts["issue_entries"] == len(issued_entries), counts
    assert counts["issue_entries"] == counts["shown"] + counts["pending_displays"], \
        f"teleTANs issued that were neither shown nor are waiting to be shown: {counts}"
    assert counts["form_nonces"] == counts["issue_entries"] + counts["waiting_refusals"], \
        f"used form nonces without their issuance: {counts}"
    assert counts["sessions"] <= counts["signin_entries"], f"sessions without a sign-in entry: {counts}"
    for user, sessions in db.rows("SELECT username, COUNT(*) FROM sessions GROUP BY username"):
        entries = db.scalar(f"SELECT COUNT(*) FROM audit_log WHERE action = 'signin' AND outcome = 'success' "
                            f"AND actor = '{user}'")
        assert sessions <= entries, f"{user} has {sessions} sessions but {entries} sign-in entries"
    orphans = db.scalar("SELECT COUNT(*) FROM form_nonces WHERE session_hash NOT IN (SELECT id_hash FROM sessions)")
    assert orphans == 0, f"{orphans} used form nonces of sessions that do not exist"
    orphans = db.scalar("SELECT COUNT(*) FROM pending_displays WHERE session_hash NOT IN (SELECT id_hash FROM sessions)")
    assert orphans == 0, f"{orphans} waiting teleTANs of sessions that do not exist"
    return counts


def check_refused_while_unavailable(portal: Portal, clients: list[tuple["Client", str]], attempts: int,
                                    signing_in: tuple[str, str], what: str) -> None:
    """While the database cannot write: every issuance gets the 503 page in its client's language
    and no teleTAN, a sign-in gets the 503 page too, and the portal stays up and live."""
    for client, language in clients:
        for _ in range(attempts):
            refused = client.issue()
            assert refused.teletan is None, f"a teleTAN was shown {what}: {refused.last.describe()}"
            check_unavailable_page(refused.last, language)
    check_unavailable_page(portal.client().sign_in(*signing_in), "en")
    assert health(portal.base_url, "/health/live") == 200
    assert portal.is_running(), f"the portal exited {what}:\n{portal.log_tail()}"


def check_recovered(portal: Portal, admin: "Client", officer: "Client", german: "Client", shown: list[str],
                    signing_in: tuple[str, str], limit: float, what: str) -> None:
    """Once the database writes again: issuing works within `limit` seconds without a restart of
    the portal (the 503 page until then), in both languages, and so does signing in; the admin's
    lookup finds every teleTAN shown; after a clean stop nothing is half-written and no teleTAN
    waits. Appends the new teleTANs to `shown`."""
    def issues() -> bool:
        issued = officer.issue()
        if issued.teletan:
            shown.append(issued.teletan)
            return True
        check_unavailable_page(issued.last, "en")
        time.sleep(0.2)
        return False
    wait_until(issues, limit, interval=0, what=what)
    german_again = german.issue()
    assert german_again.teletan, german_again.last.describe()
    shown.append(german_again.teletan)
    portal.client().signed_in(*signing_in)

    admin_finds(admin, shown)
    portal.stop_cleanly()
    counts = check_nothing_half_written(portal, shown)
    assert counts["pending_displays"] == 0, counts


def admin_finds(admin: Client, teletans: list[str]) -> None:
    """The admin's teleTAN lookup (/admin/audit, form `teletan-lookup`) finds each teleTAN's
    issuance: POST /admin/audit/lookup -> 303 to its page, which shows the issuance facts."""
    page = admin.get("/admin/audit")
    assert page.status == 200, page.describe()
    csrf = page.hidden("csrf")
    assert csrf, page.describe()
    for teletan in teletans:
        answer = admin.post("/admin/audit/lookup", {"csrf": csrf, "teletan": teletan})
        assert answer.status == 303 and answer.location.startswith("/admin/audit/teletans/"), answer.describe()
        found = admin.get(answer.location)
        assert found.status == 200, found.describe()
        assert 'id="teletan-facts"' in found.body and 'id="teletan-not-found"' not in found.body, \
            f"the admin's lookup does not find the teleTAN shown at {answer.location}"


# ---------------------------------------------------------------------------------------------
# A private PostgreSQL cluster (never the shared one on port 5432)


def _postgres_bin() -> Path:
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
    assert versions, "PostgreSQL is not installed (scripts/install-deps.sh)"
    return Path(versions[-1]).parent


class PostgresCluster:
    """initdb + pg_ctl as user postgres, in a directory of its own, on a free port of 127.0.0.1,
    trust authentication (it listens on the loopback address only and lives for one test run)."""

    def __init__(self):
        self.bin = _postgres_bin()
        self.directory = Path(tempfile.mkdtemp(prefix="teletan-faults-pg-"))
        os.chmod(self.directory, 0o755)
        shutil.chown(self.directory, "postgres", "postgres")
        self.data = self.directory / "data"
        self.log = self.directory / "postgres.log"
        self.port = free_ports(1)[0]
        self._as_postgres(self.bin / "initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                          "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")

    def _as_postgres(self, *command, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run(["runuser", "-u", "postgres", "--", *map(str, command)], cwd="/",
                                capture_output=True, text=True, timeout=timeout)
        if check:
            assert result.returncode == 0, f"{command[0]} failed ({result.returncode}): {result.stdout}\n{result.stderr}"
        return result

    def start(self, extra_options: str = "") -> None:
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.directory} "
                   f"-c fsync=off -c max_connections=60 {extra_options}")
        self._as_postgres(self.bin / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "30", "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._as_postgres(self.bin / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "30", "stop")

    def is_running(self) -> bool:
        return self._as_postgres(self.bin / "pg_ctl", "-D", self.data, "status", check=False).returncode == 0

    def is_ready(self) -> bool:
        return subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]).returncode == 0

    def psql(self, sql: str, database: str = "postgres") -> str:
        return psql(sql, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database,
                    as_postgres=True, timeout=60)

    def create_database(self, name: str) -> str:
        """A new database owned by role teletan; returns the portal's URL for it."""
        if not self.psql("SELECT 1 FROM pg_roles WHERE rolname = 'teletan'"):
            self.psql("CREATE ROLE teletan LOGIN PASSWORD 'teletan'")
        self.psql(f"CREATE DATABASE {name} OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
        return f"postgres://teletan:teletan@127.0.0.1:{self.port}/{name}?sslmode=disable"

    def remove(self) -> None:
        if self.is_running():
            self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)



