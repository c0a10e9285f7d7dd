#!/usr/bin/env python3
"""Fault runs for the teleTAN portal (scripts/faults.sh): signed-in officers issue teleTANs
while something goes wrong, with an undisturbed baseline measured first in the same run.

Scenarios (first argument):

  pam-hang    Phase A: officers issue. Phase B: the PAM stack hangs (this tool writes
              --hang-seconds into --hang-file, which the test PAM service's pam_exec script
              sleeps for) and --signin-clients clients keep signing in (right passwords of
              unused bench accounts, wrong ones for made-up names) while officers issue.
              Measures the officers' POST /teletan latency in A and B and every sign-in's
              duration, status and page.
  storm       Phase A: officers issue. Phase B: --storm-clients threads send failing
              sign-ins (made-up and real names, wrong passwords) as fast as they are answered,
              each from an address out of a pool (X-Forwarded-For; the portal runs with
              --trust-proxy), so per-name and per-address locks trigger. Measures the officers'
              latency in A and B, storm attempts/s and statuses, and what the storm added to
              the audit trail and the database (psql at the phase edges).
  pg-restart  Phase A: officers issue. Then PostgreSQL is stopped (--pg-stop-cmd), stays down
              --outage seconds, is started again (--pg-start-cmd, which must return once the
              server accepts connections), and officers go on for --after seconds. Measures the
              time from the database's return to the first successful issuance (and to every
              officer's first one), and the officers' latency before and after.

Officers are the load generator's (scripts/bench/portal_load.py: Officer, its sign-in and its
issuing cycle GET / -> POST /teletan -> GET /teletan/result); they run in their own process,
the fault's clients in one or more others, so the GIL of one does not delay the other. An
issuance counts for a phase if its cycle started and its POST /teletan completed inside that
phase. Officers issue with --pace seconds between two issuances of one officer (default 0.25 s:
well below what the portal can do, so latency is service time, not a closed-loop queue).

Only 127.0.0.1 is ever connected to. Bounded: at most 50 officers, 64 fault clients per
process, 600 s per phase; stops by itself. Standard library only (Python 3.11+). Prints a
report with verdicts on stdout and writes the full result as JSON (--json-out). Exit status 0
whatever the verdicts; 2 when the run itself failed (sign-in of the officers, a client process).
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from collections import Counter

import portal_load as pl  # the officers, percentiles, CPU and RSS helpers
from support import database  # Tests/support, on PYTHONPATH (scripts/faults.sh)

HOST = pl.HOST
MAX_CLIENTS_PER_PROCESS = 64
UNAVAILABLE_TEXT = b"Sign-in is unavailable right now"
FAILED_TEXT = b"Sign-in failed"
THROTTLED_TEXT = b"Too many failed sign-ins"
CROWDED_TEXT = b"Too many sign-ins are under way"
SIGNIN_CONCURRENCY = 4   # officers sign in from one address: at most a quarter of the 16 PAM threads
SIGNIN_ATTEMPTS = 10


def log(message: str) -> None:
    print(f"fault_load: {message}", file=sys.stderr, flush=True)


# -- Officers -------------------------------------------------------------------------------
def officer_process(args, usernames, phases, end_at, ready_queue, go_conn, result_queue) -> None:
    """Signs the officers in, waits for the start, issues until the last phase ends and
    reports one Stats per phase (plus the times of every successful issuance for pg-restart)."""
    try:
        officers = [pl.Officer(u, args.password, args.port, args.timeout) for u in usernames]
        signin_errors: list[str] = []
        gate = threading.Semaphore(SIGNIN_CONCURRENCY)

        def sign_in(officer):
            with gate:
                for attempt in range(SIGNIN_ATTEMPTS):
                    try:
                        officer.sign_in()
                        return
                    except pl.Unexpected as error:
                        if error.key.startswith("POST /signin 503") and attempt + 1 < SIGNIN_ATTEMPTS:
                            time.sleep(0.2 * (attempt + 1))
                            continue
                        signin_errors.append(f"{officer.username}: {error.key}")
                        return

        threads = [threading.Thread(target=sign_in, args=(o,)) for o in officers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ready_queue.put(("officers", os.getpid(), signin_errors))
        start = go_conn.recv()
        if start is None:
            return
        # phases: [(name, offset_start, offset_end)] relative to start; before the first: warm-up.
        edges = [(name, start + a, start + b) for name, a, b in phases]
        over = lambda: time.monotonic() >= end_at.value  # noqa: E731

        def phase_at(t: float) -> str | None:
            for name, a, b in edges:
                if a <= t < b:
                    return name
            return None

        stats = {name: pl.Stats() for name, _, _ in edges}
        warm = pl.Stats()
        successes: list[list[float]] = [[] for _ in officers]   # completion offsets of each officer's issuances
        attempts: list[list[tuple[float, float, str]]] = [[] for _ in officers]  # (start, end, outcome) offsets

        def run(i: int) -> None:
            officer = officers[i]
            rnd = random.Random(i)
            next_issue = start + rnd.uniform(0, args.pace)
            while not over():
                if args.pace > 0 and time.monotonic() < next_issue:
                    time.sleep(min(next_issue - time.monotonic(), max(0.0, end_at.value - time.monotonic()), 0.5))
                    continue
                next_issue = max(next_issue + args.pace, time.monotonic())
                t0 = time.monotonic()
                phase = phase_at(t0)
                st = stats[phase] if phase else warm
                try:
                    officer.cycle(st, lambda: phase is not None and phase_at(time.monotonic()) == phase)
                    t1 = time.monotonic()
                    successes[i].append(t1 - start)
                    attempts[i].append((t0 - start, t1 - start, "ok"))
                except pl.Unexpected as error:
                    t1 = time.monotonic()
                    attempts[i].append((t0 - start, t1 - start, error.key))
                    if phase is not None and phase_at(t1) == phase:
                        st.errors[error.key] += 1
                    else:
                        warm.warmup_errors[error.key] += 1
                    if "session lost" in error.key:
                        try:
                            officer.sign_in()
                            st.resignins += 1
                        except pl.Unexpected as again:
                            st.errors["re-sign-in: " + again.key] += 1
                    time.sleep(0.05)  # never spin on a failing server
            stats_conn = officer.conn.connects
            officer.conn.close()
            st = stats[edges[-1][0]]
            st.connects += stats_conn

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(officers))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result_queue.put(("officers", {
            "phases": {name: s.to_dict() for name, s in stats.items()},
            "warmup": warm.to_dict(),
            "successes": successes,
            "attempts": attempts if args.scenario == "pg-restart" else [],
        }, None))
    except Exception:
        result_queue.put(("officers", None, traceback.format_exc()))


# -- Fault clients (sign-ins while PAM hangs, the storm) ------------------------------------------
class SignInClient:
    """One keep-alive connection that posts sign-in forms, optionally as another address."""

    def __init__(self, port: int, timeout: float):
        self.port = port
        self.conn = pl.CountingConnection(port, timeout)
        self.cookies: dict[str, str] = {}
        self.csrf = ""

    def request(self, method: str, path: str, form: dict | None = None, forwarded_for: str | None = None):
        headers = {"Host": f"{HOST}:{self.port}", "Accept": "text/html", "Accept-Language": "en"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if forwarded_for:
            headers["X-Forwarded-For"] = forwarded_for
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = pl.FORM_TYPE
            headers["Content-Length"] = str(len(body))
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.conn.close()
            raise pl.Unexpected(f"{method} {path}: {type(error).__name__}") from error
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                val = rest.split(";", 1)[0]
                if val and "max-age=0" not in value.lower():
                    self.cookies[name.strip()] = val
                else:
                    self.cookies.pop(name.strip(), None)
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return response.status, response, data

    def prepare(self) -> None:
        status, _, page = self.request("GET", "/signin")
        match = pl.CSRF_RE.search(page)
        if status != 200 or not match or "portal_presession" not in self.cookies:
            raise pl.Unexpected(f"GET /signin {status}: no csrf/presession")
        self.csrf = match.group(1).decode()

    def attempt(self, username: str, password: str, address: str | None):
        """POST /signin; returns (status, kind, retry_after) where kind names the page."""
        status, response, page = self.request(
            "POST", "/signin", {"username": username, "password": password, "csrf": self.csrf}, forwarded_for=address)
        self.cookies.pop("portal_session", None)  # a right password signs in: stay signed out
        kind = ("unavailable" if UNAVAILABLE_TEXT in page else "failed" if FAILED_TEXT in page
                else "throttled" if THROTTLED_TEXT in page
                else "crowded" if CROWDED_TEXT in page
                else "redirect" if 300 <= status < 400 else "other")
        return status, kind, response.getheader("Retry-After")


def fault_process(index: int, args, clients: int, ready_queue, go_conn, result_queue) -> None:
    """Runs `clients` sign-in threads from the start of the fault phase to its end; reports every
    attempt as (start offset, seconds, status, page kind, Retry-After present)."""
    try:
        rnd_global = random.Random(1000 + index)
        workers = [SignInClient(args.port, args.signin_timeout) for _ in range(clients)]
        for w in workers:
            for attempt in range(5):
                try:
                    w.prepare()
                    break
                except pl.Unexpected:
                    if attempt == 4:
                        raise
                    time.sleep(0.2)
        ready_queue.put((f"fault{index}", os.getpid(), []))
        message = go_conn.recv()
        if message is None:
            return
        start, t_begin, t_end = message
        records: list[list] = [[] for _ in workers]
        errors: Counter[str] = Counter()
        lock = threading.Lock()

        def pam_hang_pick(n: int, i: int, rnd: random.Random):
            # Even clients: right password of an unused bench account; odd: a made-up name.
            # Each client has its own address (so the per-address cap of a quarter of
            # --pam-threads does not hide the pool filling up) and its own names (so no name
            # reaches the per-user attempt limit through attempts that are under way).
            g = index * MAX_CLIENTS_PER_PROCESS + i
            address = f"10.66.{g // 250}.{g % 250 + 1}" if args.forwarded else None
            if g % 2 == 0:
                accounts = list(range(args.officers + 1, 51)) or [50]
                return args.user_format.format(accounts[(g // 2 + n * 7) % len(accounts)]), args.password, address
            return f"nobody-{g:02d}-{n:05d}", "Wrong-Pass-9", address

        def storm_pick(n: int, i: int, rnd: random.Random):
            if rnd.random() < args.storm_real_share:
                first = max(args.officers + 1, 51 - args.storm_real_names)
                name = args.user_format.format(rnd.randint(first, 50))
            else:
                name = f"storm-{rnd.randrange(args.storm_names):05d}"
            a = rnd.randrange(args.storm_addresses)
            return name, f"Wrong-{rnd.randrange(10**9)}", f"10.{77 + a // 65025}.{a // 255 % 255}.{a % 255 + 1}"

        pick = pam_hang_pick if args.scenario == "pam-hang" else storm_pick

        def run(i: int) -> None:
            w = workers[i]
            rnd = random.Random(rnd_global.random())
            n = 0
            while time.monotonic() < t_begin:
                time.sleep(min(0.05, max(0.0, t_begin - time.monotonic())))
            while time.monotonic() < t_end:
                username, password, address = pick(n, i, rnd)
                n += 1
                t0 = time.monotonic()
                try:
                    status, kind, retry_after = w.attempt(username, password, address)
                    t1 = time.monotonic()
                    records[i].append((round(t0 - start, 4), round(t1 - t0, 5), status, kind, retry_after is not None))
                except pl.Unexpected as error:
                    t1 = time.monotonic()
                    records[i].append((round(t0 - start, 4), round(t1 - t0, 5), 0, error.key, False))
                    with lock:
                        errors[error.key] += 1
                    time.sleep(0.05)
                    try:
                        w.prepare()
                    except pl.Unexpected:
                        pass
                if args.signin_pause > 0:
                    time.sleep(args.signin_pause)
            w.conn.close()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workers))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result_queue.put((f"fault{index}", {"records": [r for rs in records for r in rs],
                                            "connects": sum(w.conn.connects for w in workers),
                                            "errors": dict(errors)}, None))
    except Exception:
        result_queue.put((f"fault{index}", None, traceback.format_exc()))


# -- PostgreSQL probes (psql) -------------------------------------------------------------------
def psql(db_url: str, sql: str, timeout: float = 20) -> list[list[str]]:
    """The rows of `sql`, fields split at tabs (the shared helper; it raises when psql fails)."""
    out = database.psql(sql, db_url, separator="\t", timeout=timeout)
    return [line.split("\t") for line in out.splitlines() if line]


def db_snapshot(db_url: str) -> dict:
    """Sizes, audit rows and commits of the portal's database; WAL position of the whole cluster."""
    rows = psql(db_url, """
        SELECT 'db', pg_database_size(current_database())::text
        UNION ALL SELECT 'audit_rows', count(*)::text FROM audit_log
        UNION ALL SELECT 'audit_max_seq', coalesce(max(seq), 0)::text FROM audit_log
        UNION ALL SELECT 'commits', xact_commit::text FROM pg_stat_database WHERE datname = current_database()
        UNION ALL SELECT 'wal', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint::text
        UNION ALL SELECT 'table:' || c.relname, pg_total_relation_size(c.oid)::text
          FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace""")
    snap = {"tables": {}, "at": time.monotonic()}
    for key, value in rows:
        if key.startswith("table:"):
            snap["tables"][key[6:]] = int(value)
        else:
            snap[key] = int(value)
    return snap


def db_delta(a: dict, b: dict) -> dict:
    tables = {k: b["tables"].get(k, 0) - a["tables"].get(k, 0) for k in b["tables"]}
    return {"seconds": round(b["at"] - a["at"], 2), "db_bytes": b["db"] - a["db"], "audit_rows": b["audit_rows"] - a["audit_rows"],
            "commits": b.get("commits", 0) - a.get("commits", 0), "wal_bytes_cluster": b.get("wal", 0) - a.get("wal", 0),
            "tables": dict(sorted(((k, v) for k, v in tables.items() if v), key=lambda kv: -kv[1]))}


def audit_breakdown(db_url: str, after_seq: int) -> list[dict]:
    """Audit entries after `after_seq`, by action, outcome, reason and the set of detail keys."""
    rows = psql(db_url, f"""
        SELECT action, outcome, coalesce(details::jsonb ->> 'reason', ''),
               coalesce((SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(
                   CASE WHEN jsonb_typeof(details::jsonb) = 'object' THEN details::jsonb ELSE '{{}}'::jsonb END) k), ''),
               count(*), coalesce(sum(CASE WHEN (details::jsonb ->> 'refused') ~ '^[0-9]+$'
                                          THEN (details::jsonb ->> 'refused')::bigint END), 0)
        FROM audit_log WHERE seq > {int(after_seq)} GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC""")
    return [{"action": a, "outcome": o, "reason": r, "detail_keys": k, "count": int(c), "refused_sum": int(n)}
            for a, o, r, k, c, n in rows]


def breakdown_text(groups: list[dict]) -> str:
    return ", ".join(f"{g['action']}/{g['outcome']}/{g['reason'] or '-'}[{g['detail_keys']}] {g['count']}"
                     + (f" (refused summed: {g['refused_sum']})" if g["refused_sum"] else "") for g in groups[:8]) or "none"


def lock_counts(db_url: str) -> dict:
    """Locks in force: count per scope, and the attempts each scope's locks refused (a portal
    that predates the lockouts.refused column: counts only)."""
    try:
        rows = psql(db_url, "SELECT scope, count(*), count(*) FILTER (WHERE refused > 0), sum(refused) FROM lockouts GROUP BY 1")
        return {scope: {"locks": int(count), "refusing": int(refusing), "refused": int(refused or 0)}
                for scope, count, refusing, refused in rows}
    except Exception:
        try:
            rows = psql(db_url, "SELECT scope, count(*) FROM lockouts GROUP BY 1")
            return {scope: {"locks": int(count)} for scope, count in rows}
        except Exception as error:
            return {"error": str(error)[:200]}


class ActivitySampler(threading.Thread):
    """Samples pg_stat_activity of the database every `interval` s: what the portal's
    connections are doing (running, idle in transaction, waiting for a lock, ...), per phase."""

    def __init__(self, db_url: str, interval: float, phase_of):
        super().__init__(daemon=True)
        self.db_url, self.interval, self.phase_of = db_url, interval, phase_of
        self.samples: dict[str, Counter] = {}
        self.waits: dict[str, Counter] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        # State (or wait) of each of the portal's connections, and for those waiting for a lock
        # or the WAL the statement they wait in (its first words).
        sql = ("SELECT CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'running') "
               "ELSE state END, CASE WHEN state = 'active' AND wait_event_type IN ('Lock', 'LWLock', 'IO') "
               "THEN regexp_replace(left(query, 60), '\\s+', ' ', 'g') ELSE '' END, count(*) FROM pg_stat_activity "
               "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
               "GROUP BY 1, 2")
        while not self.stop.wait(self.interval):
            phase = self.phase_of(time.monotonic())
            if phase is None:
                continue
            try:
                rows = psql(self.db_url, sql, timeout=5)
            except Exception:
                continue
            counter = self.samples.setdefault(phase, Counter())
            waits = self.waits.setdefault(phase, Counter())
            counter["_samples"] += 1
            for state, query, count in rows:
                counter[state] += int(count)
                if query:
                    waits[f"{state} @ {query}"] += int(count)


# -- The run --------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["pam-hang", "storm", "pg-restart"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--portal-pid", type=int, default=0)
    parser.add_argument("--officers", type=int, default=10)
    parser.add_argument("--user-format", default="tt-bench-{:02d}")
    parser.add_argument("--password", default="Bench-Pass-1")
    parser.add_argument("--pace", type=float, default=0.25, help="seconds between two issuances of one officer")
    parser.add_argument("--timeout", type=float, default=10.0, help="officers' socket timeout per request")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--baseline", type=float, default=20.0, help="phase A seconds")
    parser.add_argument("--fault", type=float, default=20.0, help="phase B seconds (pam-hang, storm)")
    parser.add_argument("--db-url", help="postgres:// URL of the portal's database (storm: audit and size; samples)")
    parser.add_argument("--sample-activity", type=float, default=0.5,
                        help="seconds between pg_stat_activity samples (0: off)")
    # pam-hang
    parser.add_argument("--hang-file", default="/etc/teletan-portal-test/hang-seconds")
    parser.add_argument("--hang-seconds", type=int, default=30)
    parser.add_argument("--pam-wait", type=float, default=2.0, help="the portal's PAM wait (--pam-timeout), seconds")
    parser.add_argument("--pam-threads", type=int, default=16)
    parser.add_argument("--signin-clients", type=int, default=20)
    parser.add_argument("--signin-pause", type=float, default=None,
                        help="seconds a client waits after each answer (pam-hang default 0.2, storm 0)")
    parser.add_argument("--forwarded", action="store_true", help="send X-Forwarded-For (the portal trusts the proxy)")
    # storm
    parser.add_argument("--storm-clients", type=int, default=32)
    parser.add_argument("--storm-processes", type=int, default=1)
    parser.add_argument("--storm-addresses", type=int, default=64)
    parser.add_argument("--storm-names", type=int, default=400, help="made-up names the storm picks from")
    parser.add_argument("--storm-real-names", type=int, default=10, help="real accounts (the last ones) it also tries")
    parser.add_argument("--storm-real-share", type=float, default=0.1)
    parser.add_argument("--target-p99-ms", type=float, default=100.0)
    # pg-restart
    parser.add_argument("--pg-stop-cmd")
    parser.add_argument("--pg-start-cmd")
    parser.add_argument("--outage", type=float, default=5.0)
    parser.add_argument("--after", type=float, default=15.0, help="seconds measured after the database's return")
    parser.add_argument("--recovery-target", type=float, default=5.0, help="seconds from return to first issuance")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to wait after the fault phase for summing-up audit entries (pam-hang, storm)")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    if not 1 <= args.port <= 65535:
        parser.error("--port out of range")
    if not 1 <= args.officers <= pl.MAX_OFFICERS:
        parser.error(f"--officers must be 1..{pl.MAX_OFFICERS}")
    for name in ("warmup", "baseline", "fault", "outage", "after"):
        if not 0 <= getattr(args, name) <= pl.MAX_SECONDS:
            parser.error(f"--{name} must be 0..{pl.MAX_SECONDS}")
    if not 0 <= args.pace <= 60:
        parser.error("--pace must be 0..60")
    if args.signin_pause is None:
        args.signin_pause = 0.2 if args.scenario == "pam-hang" else 0.0
    args.signin_timeout = args.pam_wait + 15 if args.scenario == "pam-hang" else 15.0
    if args.scenario == "pg-restart" and not (args.pg_stop_cmd and args.pg_start_cmd):
        parser.error("pg-restart needs --pg-stop-cmd and --pg-start-cmd")
    if args.scenario == "storm" and not args.db_url:
        parser.error("storm needs --db-url")
    if args.db_url:
        global DB_NAME
        DB_NAME = urllib.parse.urlsplit(args.db_url).path.lstrip("/")

    # Fault clients per process.
    if args.scenario == "pam-hang":
        fault_split = [args.signin_clients]
    elif args.scenario == "storm":
        procs = max(1, min(args.storm_processes, 8))
        fault_split = [args.storm_clients // procs + (1 if i < args.storm_clients % procs else 0) for i in range(procs)]
    else:
        fault_split = []
    if any(n > MAX_CLIENTS_PER_PROCESS or n < 1 for n in fault_split):
        parser.error(f"1..{MAX_CLIENTS_PER_PROCESS} fault clients per process")

    # Phases, as offsets from the start.
    w, a = args.warmup, args.baseline
    if args.scenario == "pg-restart":
        # "down" and "after" get their real edges once the database is back (see below); the
        # officers only need to know when to stop.
        b_name = "after"
        phases = [("baseline", w, w + a), ("outage", w + a, w + a + args.outage + 60 + args.after)]
    else:
        b_name = "hang" if args.scenario == "pam-hang" else "storm"
        phases = [("baseline", w, w + a), (b_name, w + a, w + a + args.fault)]

    usernames = [args.user_format.format(i) for i in range(1, args.officers + 1)]
    ctx = mp.get_context("fork")
    ready_queue, result_queue = ctx.Queue(), ctx.Queue()
    pipes, procs = [], []

    end_at = ctx.Value("d", 0.0)  # when the officers stop (pg-restart: known only once the database is back)
    parent, child = ctx.Pipe()
    p = ctx.Process(target=officer_process, args=(args, usernames, phases, end_at, ready_queue, child, result_queue),
                    daemon=True)
    p.start()
    pipes.append(("officers", parent))
    procs.append(p)
    for i, n in enumerate(fault_split):
        parent, child = ctx.Pipe()
        p = ctx.Process(target=fault_process, args=(i, args, n, ready_queue, child, result_queue), daemon=True)
        p.start()
        pipes.append((f"fault{i}", parent))
        procs.append(p)

    # TERM (scripts/faults.sh on Ctrl-C) ends the run like an exception: multiprocessing's exit
    # handler then terminates the client processes instead of leaving them running. (Set after
    # the fork: the children keep the default action, so that terminate() ends them.)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def abort(message: str) -> int:
        for _, pipe in pipes:
            try:
                pipe.send(None)
            except OSError:
                pass
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
        log(message)
        return 2

    if args.scenario == "pam-hang":
        write_hang(args.hang_file, 0)
    t_signin = time.monotonic()
    for _ in procs:
        try:
            who, _, errors = ready_queue.get(timeout=120)
        except Exception:
            return abort("sign-in / preparation did not finish within 120 s")
        if errors:
            return abort("sign-in failed: " + "; ".join(errors[:5]))
    log(f"{args.officers} officers signed in ({time.monotonic() - t_signin:.2f} s); warm-up {w:g} s, "
        f"baseline {a:g} s, then {args.scenario}")
    pl.reset_peak_rss(args.portal_pid, "fault_load", "sign-in")

    start = time.monotonic() + 0.2
    abs_phases = {name: (start + x, start + y) for name, x, y in phases}

    def phase_of(t: float) -> str | None:
        # Latest first: pg-restart adds "down" and "after" inside the officers' long "outage".
        for name, (x, y) in reversed(list(abs_phases.items())):
            if x <= t < y:
                return name
        return None

    client_pids = [os.getpid()] + [proc.pid for proc in procs]
    t_b0, t_b1 = abs_phases[phases[1][0]]
    end_at.value = start + phases[-1][2]
    pipes[0][1].send(start)
    for _, pipe in pipes[1:]:
        pipe.send((start, t_b0, t_b1))

    sampler = None
    if args.db_url and args.sample_activity > 0:
        sampler = ActivitySampler(args.db_url, args.sample_activity, phase_of)
        sampler.start()

    def sleep_until(t: float) -> None:
        while (left := t - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))

    result: dict = {"scenario": args.scenario, "settings": {k: v for k, v in vars(args).items()
                                                            if k not in ("pg_stop_cmd", "pg_start_cmd")}}
    cpu: dict[str, dict] = {}
    rss: dict[str, dict] = {}
    db_before = db_after = None
    events: dict[str, float] = {}

    t_a0, t_a1 = abs_phases["baseline"]
    sleep_until(t_a0)
    c0 = snapshot(args.portal_pid, client_pids)
    db_start = None
    if args.scenario != "pg-restart" and args.db_url:
        db_start = db_snapshot(args.db_url)
        sleep_until(t_a1 - 0.6)
        db_before = db_snapshot(args.db_url)
    if args.scenario == "pam-hang":
        sleep_until(t_a1 - 0.05)
        write_hang(args.hang_file, args.hang_seconds)
        log(f"PAM now hangs for {args.hang_seconds} s per sign-in ({args.hang_file})")
    sleep_until(t_a1)
    c1 = snapshot(args.portal_pid, client_pids)
    cpu["baseline"] = cores(c0, c1, t_a1 - t_a0)
    rss["baseline"] = pl.rss_kib(args.portal_pid)

    if args.scenario == "pg-restart":
        log("stopping PostgreSQL")
        events["stop_called"] = time.monotonic() - start
        run_cmd(args.pg_stop_cmd)
        events["stopped"] = time.monotonic() - start
        sleep_until(start + events["stopped"] + args.outage)
        log("starting PostgreSQL")
        events["start_called"] = time.monotonic() - start
        run_cmd(args.pg_start_cmd)
        t_return = time.monotonic()
        events["returned"] = t_return - start
        log(f"PostgreSQL is back ({events['returned'] - events['stopped']:.1f} s after it stopped)")
        # Officers stop when their own schedule ends; measure "after" from the return.
        abs_phases["down"] = (start + events["stop_called"], t_return)
        abs_phases["after"] = (t_return, t_return + args.after)
        end_at.value = t_return + args.after
        c2 = snapshot(args.portal_pid, client_pids)
        sleep_until(t_return + args.after)
        c3 = snapshot(args.portal_pid, client_pids)
        cpu["after"] = cores(c2, c3, args.after)
        rss["after"] = pl.rss_kib(args.portal_pid)
    else:
        c2 = c1
        sleep_until(t_b1)
        c3 = snapshot(args.portal_pid, client_pids)
        cpu[b_name] = cores(c2, c3, t_b1 - t_b0)
        if db_before:
            db_after = db_snapshot(args.db_url)
        rss[b_name] = pl.rss_kib(args.portal_pid)

    results: dict[str, dict] = {}
    failures = []
    wait_for = args.signin_timeout + args.timeout + 30
    for _ in procs:
        try:
            who, data, failure = result_queue.get(timeout=max(10, wait_for))
        except Exception:
            return abort("client processes did not report in time")
        if failure:
            failures.append(f"{who}: {failure}")
        else:
            results[who] = data
    for proc in procs:
        proc.join(5)
    if sampler:
        sampler.stop.set()
    if failures:
        log("a client process failed:\n" + failures[0])
        return 2

    if db_before:
        result["database"] = {"baseline": db_delta(db_start, db_before), "fault": db_delta(db_before, db_after),
                              "audit_fault_breakdown": audit_breakdown(args.db_url, db_before["audit_max_seq"]),
                              "locks_at_end": lock_counts(args.db_url)}
        if args.settle > 0:
            # The portal sums refusals up later (PAM busy: each minute; locks: when they end).
            log(f"waiting {args.settle:g} s for the portal's summing-up audit entries")
            last = psql(args.db_url, "SELECT coalesce(max(seq), 0) FROM audit_log")[0][0]
            time.sleep(args.settle)
            result["database"]["settle"] = {"seconds": args.settle, "breakdown": audit_breakdown(args.db_url, int(last)),
                                            "locks": lock_counts(args.db_url)}

    officers = results["officers"]
    report: list[str] = []
    verdicts: list[tuple[str, str, bool]] = []

    def officer_phase(name: str, d: dict) -> dict:
        issue, cycle = pl.summarize(d["issue_ms"]), pl.summarize(d["cycle_ms"])
        errs = sum(d["errors"].values())
        return {"issuances": len(d["issue_ms"]), "issue_post_ms": issue, "cycle_ms": cycle,
                "get_home_ms": pl.summarize(d["home_ms"]), "errors": errs, "error_kinds": d["errors"],
                "resignins": d["resignins"]}

    if args.scenario == "pg-restart":
        result["officers"] = pg_restart_officers(officers, abs_phases, start, events)
        result["recovery"] = result["officers"].pop("_recovery")
    else:
        result["officers"] = {name: officer_phase(name, officers["phases"][name]) for name, _, _ in phases}
    result["cpu_cores"] = cpu
    result["portal_rss_kib"] = rss
    result["warmup_errors"] = officers["warmup"]["warmup_errors"]
    if sampler:
        result["pg_activity"] = {ph: {k: (round(v / c["_samples"], 2) if k != "_samples" else v)
                                      for k, v in c.items()} for ph, c in sampler.samples.items()}
        result["pg_waits_by_statement"] = {ph: {k: round(v / sampler.samples[ph]["_samples"], 2) for k, v in c.most_common(8)}
                                           for ph, c in sampler.waits.items()}

    ph = result["officers"]
    for name in ph:
        o = ph[name]
        rate = o["issuances"] / max(1e-9, o.get("seconds", (abs_phases[name][1] - abs_phases[name][0])))
        if args.scenario == "pg-restart":  # phases cut from the attempt log: whole cycles only
            c, f = o["cycle_ms"], o["failed_cycle_ms"]
            latency = (f"cycle p50 {fmt(c.get('p50'))} p99 {fmt(c.get('p99'))} max {fmt(c.get('max'))} ms"
                       + (f"; failed cycles took p50 {fmt(f.get('p50'))} max {fmt(f.get('max'))} ms" if f["count"] else ""))
        else:
            i = o["issue_post_ms"]
            latency = (f"POST /teletan p50 {fmt(i.get('p50'))} p99 {fmt(i.get('p99'))} max {fmt(i.get('max'))} ms; "
                       f"cycle p99 {fmt(o['cycle_ms'].get('p99'))} ms")
        report.append(f"officers {name:<8} {o['issuances']:6d} issuances ({rate:6.1f}/s)  {latency}; errors {o['errors']}"
                      + (f" {o['error_kinds']}" if o["errors"] else ""))
    for name, c in cpu.items():
        report.append(f"cpu      {name:<8} portal {c['portal']:.2f}  postgres (its backends) {c['postgres']:.2f}  "
                      f"load tools {c['client']:.2f}  other {c['other']:.2f}  idle {c['idle']:.2f} (cores of {c['machine']:.0f}); "
                      "portal threads: " + ", ".join(f"{k} {v:.2f}" for k, v in c["portal_threads"].items()))
    if sampler:
        for name, c in result["pg_activity"].items():
            parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(c.items(), key=lambda kv: -kv[1] if kv[0] != "_samples" else 0)
                              if k != "_samples")
            report.append(f"pg conns {name:<8} (mean per sample, {c['_samples']} samples) {parts}")
        for name, waits in result["pg_waits_by_statement"].items():
            if name != "baseline" and waits:
                report.append(f"  waiting in {name}: " + "; ".join(f"{k} {v:.2f}" for k, v in list(waits.items())[:6]))

    if args.scenario == "pam-hang":
        pam_hang_report(args, results, ph, start, abs_phases, result, report, verdicts)
    elif args.scenario == "storm":
        storm_report(args, results, ph, db_before, db_after, abs_phases, result, report, verdicts)
    else:
        pg_restart_report(args, ph, events, result, report, verdicts)

    skew = max((c["other"] for c in cpu.values()), default=0.0)
    result["other_cpu_max"] = skew
    if skew > 0.1:
        report.append(f"WARNING: other work on the machine used up to {skew:.2f} cores during a phase; "
                      "latency figures are skewed (compare phases of quiet runs only)")
    result["verdicts"] = [{"check": c, "measured": m, "pass": ok} for c, m, ok in verdicts]
    print(f"\n== {args.scenario} ==")
    for line in report:
        print("  " + line)
    print(f"\n  {'Check':<60}{'measured':<36}result")
    for check, measured, ok in verdicts:
        print(f"    {check:<58}{measured:<36}{'PASS' if ok else 'FAIL'}")
    print()
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=1, default=str)
    return 0


def write_hang(path: str, seconds: int) -> None:
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise SystemExit(f"fault_load: {directory} missing (scripts/install-pam-stack.sh)")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{seconds}\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def run_cmd(command: str) -> None:
    out = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=120, cwd="/")
    if out.returncode != 0:
        log(f"command failed ({out.returncode}): {command}\n{out.stdout[-500:]}{out.stderr[-500:]}")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of the portal's threads by kind of thread: TP = NIOThreadPool (PAM and NSS
    calls), NIO = SwiftNIO event loops (HTTP, PostgreSQL client), dispatch = the Swift
    concurrency / Dispatch pool (async handlers), other."""
    out: dict[str, float] = Counter()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        if (stat := pl.stat_of(f"/proc/{pid}/task/{tid}/stat")) is None:
            continue
        comm, cpu = stat
        kind = ("TP (PAM pool)" if comm.startswith("TP-") else "NIO event loops" if comm.startswith("NIO-")
                else "dispatch/async" if "qos" in comm else "other")
        out[kind] += cpu
    return out


DB_NAME = ""  # the portal's database: only its backends count as "postgres" (set in main)


def database_backends_cpu(dbname: str) -> float:
    """CPU seconds of the backends connected to `dbname` (process title "postgres: ... user db
    host(port) state"); other databases on the server and its background processes are left out."""
    total = 0.0
    needle = f" {dbname} ".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                title = f.read(200)
        except OSError:
            continue
        if title.startswith(b"postgres: ") and needle in title:
            total += pl.proc_cpu(int(entry))
    return total


def snapshot(pid: int, client_pids: list[int]) -> dict:
    snap = pl.cpu_snapshot(pid, client_pids)
    if DB_NAME:
        snap["postgres"] = database_backends_cpu(DB_NAME)
    snap["threads"] = thread_cpu(pid) if pid else {}
    return snap


def cores(c0: dict, c1: dict, seconds: float) -> dict:
    """Cores used between two snapshots. postgres: the backends of the portal's database (as far
    as they lived through both snapshots; clamped at 0); the server's background processes (WAL
    writer, checkpointer) and other databases count as "other"."""
    seconds = max(1e-9, seconds)
    d = {k: (c1[k] - c0[k]) / seconds for k in c0 if k != "threads"}
    out = {k: round(max(0.0, d[k]), 3) for k in ("portal", "postgres", "client", "busy")}
    out["other"] = round(max(0.0, d["busy"] - out["portal"] - out["postgres"] - out["client"]), 3)
    out["machine"] = round(d["total"], 2)
    out["idle"] = round(max(0.0, d["total"] - d["busy"]), 3)
    out["portal_threads"] = {k: round(max(0.0, (c1["threads"].get(k, 0) - c0["threads"].get(k, 0)) / seconds), 3)
                             for k in c1.get("threads", {})}
    return out


def fmt(value, spec=".1f") -> str:
    return "n/a" if value is None else f"{value:{spec}}"


# -- Reports --------------------------------------------------------------------------------
def pam_hang_report(args, results, ph, start, abs_phases, result, report, verdicts) -> None:
    records = [r for key, d in results.items() if key.startswith("fault") for r in d["records"]]
    wait = args.pam_wait
    by_status = Counter(r[2] for r in records)
    groups: dict[str, list[float]] = {}
    for t0, dur, status, kind, _ in records:
        if status == 503:
            key = "503 after the PAM wait" if dur >= wait - 0.5 else "503 at once (PAM threads busy)" if dur < 1.0 else "503 other"
        else:
            key = f"{status or 'error'} {kind}"
        groups.setdefault(key, []).append(dur * 1000)
    pages_ok = all(kind == "unavailable" for _, _, status, kind, _ in records if status == 503)
    longest = max((r[1] for r in records), default=0.0)
    signins = {"attempts": len(records), "by_status": dict(by_status),
               "durations_ms": {k: pl.summarize(v) for k, v in groups.items()},
               "longest_s": longest, "all_503_pages_say_unavailable": pages_ok,
               "errors": {k: v for d in results.values() if "errors" in d for k, v in d.get("errors", {}).items()}}
    # When did the first sign-in get through to PAM after the first batch timed out? Attempts
    # answered after the wait, over time (1 s bins), show the pool emptying and filling.
    timed = sorted(r[0] + r[1] - (abs_phases["hang"][0] - start) for r in records if r[2] == 503 and r[1] >= wait - 0.5)
    signins["timed_out_at_s"] = [round(t, 1) for t in timed[:64]]
    result["signins"] = signins
    report.append(f"sign-ins during the hang: {len(records)} attempts by {args.signin_clients} clients "
                  f"(pause {args.signin_pause:g} s), statuses {dict(by_status)}")
    for key, v in sorted(groups.items()):
        s = pl.summarize(v)
        report.append(f"  {key:<34} {s['count']:5d}  p50 {fmt(s['p50'])} ms  p99 {fmt(s['p99'])} ms  max {fmt(s['max'])} ms")
    report.append(f"  longest sign-in {longest:.2f} s (PAM wait {wait:g} s); every 503 page says "
                  f"'Sign-in is unavailable right now': {'yes' if pages_ok else 'NO'}")
    database_lines(result, report)
    pa, pb = ph["baseline"]["issue_post_ms"].get("p99"), ph["hang"]["issue_post_ms"].get("p99")
    ratio = (pb / pa) if pa and pb else None
    verdicts.append(("officers' p99 during the hang <= 2 x baseline",
                     f"{fmt(pb)} / {fmt(pa)} ms = {fmt(ratio, '.2f')}x", ratio is not None and ratio <= 2.0))
    verdicts.append((f"every sign-in ended within PAM wait + 1 s ({wait + 1:g} s)", f"longest {longest:.2f} s",
                     bool(records) and longest <= wait + 1.0))
    verdicts.append(("sign-ins that hit the hang get 503 'unavailable' page",
                     f"{by_status.get(503, 0)} x 503, pages {'ok' if pages_ok else 'WRONG'}",
                     by_status.get(503, 0) > 0 and pages_ok))
    verdicts.append(("officers had no errors during the hang", f"{ph['hang']['errors']} errors", ph["hang"]["errors"] == 0))


def database_lines(result: dict, report: list[str]) -> None:
    """What each phase wrote: audit entries, commits, database growth (per second), and the audit
    entries of the fault phase by action/outcome/reason [detail keys]."""
    db = result.get("database")
    if not db:
        return
    for name, d in (("baseline", db["baseline"]), ("fault", db["fault"])):
        sec = max(1e-9, d["seconds"])
        report.append(f"database {name:<8} {d['seconds']:.1f} s: audit +{d['audit_rows']} ({d['audit_rows'] / sec:.1f}/s), "
                      f"transactions {d['commits'] / sec:.0f}/s, size +{d['db_bytes'] / 1e6:.2f} MB "
                      f"({d['db_bytes'] / sec * 3600 / 1e9:.2f} GB/h); "
                      "tables: " + ", ".join(f"{k} +{v / 1e6:.2f} MB" for k, v in list(d["tables"].items())[:5]))
    report.append("audit entries of the fault phase: " + breakdown_text(db["audit_fault_breakdown"]))
    report.append(f"locks in force at the end: {db['locks_at_end']}")
    if "settle" in db:
        report.append(f"audit entries in the {db['settle']['seconds']:g} s after the phase (officers stopped): "
                      + breakdown_text(db["settle"]["breakdown"]))


def storm_report(args, results, ph, db_before, db_after, abs_phases, result, report, verdicts) -> None:
    records = [r for key, d in results.items() if key.startswith("fault") for r in d["records"]]
    t0, t1 = abs_phases["storm"]
    seconds = t1 - t0
    by_status = Counter(r[2] for r in records)
    by_page = Counter(f"{r[2]} {r[3]}" for r in records)
    durations: dict[int, list[float]] = {}
    for _, dur, status, _, _ in records:
        durations.setdefault(status, []).append(dur * 1000)
    n429 = by_status.get(429, 0)
    retry_after = sum(1 for r in records if r[2] == 429 and r[4])
    db = result["database"]
    fault, base = db["fault"], db["baseline"]
    audit = db["audit_fault_breakdown"]
    signin_rows = sum(g["count"] for g in audit if g["action"] == "signin" and g["outcome"] != "success")
    throttled_rows = sum(g["count"] for g in audit if g["reason"] == "throttled")
    pam_rows = sum(g["count"] for g in audit if g["action"] == "signin" and g["reason"] not in ("throttled", "pam_busy"))
    locks = db["locks_at_end"]
    lock_total = sum(v.get("locks", 0) for v in locks.values() if isinstance(v, dict))
    refusing = sum(v.get("refusing", v.get("locks", 0)) for v in locks.values() if isinstance(v, dict))
    refused_on_locks = sum(v.get("refused", 0) for v in locks.values() if isinstance(v, dict))
    # Growth the storm caused: the fault phase's minus the officers' own (the baseline's rate).
    storm_bytes = fault["db_bytes"] - base["db_bytes"] / max(1e-9, base["seconds"]) * fault["seconds"]
    per_1000 = signin_rows / len(records) * 1000 if records else None
    result["storm"] = {
        "attempts": len(records), "seconds": round(seconds, 2), "attempts_per_s": len(records) / seconds,
        "by_status": dict(by_status), "by_status_and_page": dict(by_page), "retry_after_on_429": retry_after,
        "latency_ms_by_status": {str(k): pl.summarize(v) for k, v in durations.items()},
        "audit_signin_failure_entries": signin_rows, "audit_entries_per_1000_attempts": per_1000,
        "audit_throttled_entries": throttled_rows, "audit_entries_reaching_pam": pam_rows,
        "locks": lock_total, "locks_that_refused": refusing, "refused_counted_on_locks": refused_on_locks,
        "storm_db_bytes": storm_bytes, "storm_db_bytes_per_1000_attempts": storm_bytes / max(1, len(records)) * 1000,
        "commits_per_attempt": (fault["commits"] - base["commits"] / max(1e-9, base["seconds"]) * fault["seconds"]) / max(1, len(records)),
        "errors": {k: v for d in results.values() if "errors" in d for k, v in d.get("errors", {}).items()},
    }
    st = result["storm"]
    report.append(f"storm: {len(records)} attempts in {seconds:.1f} s = {st['attempts_per_s']:.0f}/s by "
                  f"{args.storm_clients} clients from {args.storm_addresses} addresses over {args.storm_names} made-up "
                  f"+ {args.storm_real_names} real names; answers {dict(by_page.most_common())}")
    for status, v in sorted(durations.items()):
        q = pl.summarize(v)
        report.append(f"  {status or 'error'}: {q['count']:6d}  p50 {fmt(q['p50'])} ms  p99 {fmt(q['p99'])} ms  max {fmt(q['max'])} ms")
    database_lines(result, report)
    report.append(f"storm's audit entries: {signin_rows} for {len(records)} attempts = {fmt(per_1000)} per 1000 "
                  f"({pam_rows} answered by PAM, {throttled_rows} 'throttled'; {lock_total} locks, {refusing} of which refused "
                  f"attempts, their counters hold "
                  f"{refused_on_locks} refusals, the first included; 429 answers: {n429})")
    report.append(f"storm's database growth: {storm_bytes / 1e6:.2f} MB = {st['storm_db_bytes_per_1000_attempts'] / 1e6:.3f} MB "
                  f"per 1000 attempts, {storm_bytes / seconds * 3600 / 1e9:.2f} GB per hour of storm at this rate; "
                  f"{st['commits_per_attempt']:.1f} transactions per attempt (read-only ones included)")
    p99 = ph["storm"]["issue_post_ms"].get("p99")
    verdicts.append((f"officers' p99 during the storm < {args.target_p99_ms:g} ms", f"{fmt(p99)} ms "
                     f"(baseline {fmt(ph['baseline']['issue_post_ms'].get('p99'))})",
                     p99 is not None and p99 < args.target_p99_ms))
    verdicts.append(("the storm gets 429s", f"{n429} of {len(records)} ({n429 / max(1, len(records)):.0%})", n429 > 0))
    # A 429 is either a lock's page ("too many failed sign-ins") or the gate's ("too many sign-ins
    # under way": more sign-in requests at once than --pam-threads).
    locked_429, crowded_429 = by_page.get("429 throttled", 0), by_page.get("429 crowded", 0)
    verdicts.append(("every 429 has Retry-After and the lock or gate page",
                     f"{retry_after} / {locked_429} lock + {crowded_429} gate of {n429}",
                     n429 > 0 and retry_after == n429 == locked_429 + crowded_429))
    # Aggregated: about one entry per lock (the first refusal), not one per 429.
    ok = n429 > 0 and throttled_rows <= refusing * 1.1 + 10
    verdicts.append(("refusals aggregated: 'throttled' entries <= ~1 per lock",
                     f"{throttled_rows} for {refusing} locks, {n429} x 429", ok))
    # Every 429 is in the trail: on a lock's counter (summed up when the lock ends; its first also has
    # an entry), or its own entry when no lock row refused it (a name with 5 attempts under way).
    # The gate's 429s are counted in the instance's memory and written as one entry a minute
    # ("too_many_at_once", with "refused"); FAULT_SETTLE=65 lists it.
    accounted = refused_on_locks + max(0, throttled_rows - refusing)
    verdicts.append(("every lock's 429 accounted for (lock counters + own entries)", f"{accounted} of {locked_429}",
                     abs(accounted - locked_429) <= max(5, locked_429 * 0.005)))
    verdicts.append(("officers had no errors during the storm", f"{ph['storm']['errors']} errors", ph["storm"]["errors"] == 0))


def pg_restart_officers(officers: dict, abs_phases: dict, start: float, events: dict) -> dict:
    """Per phase from the attempt log: baseline, down (stop until return), after (return + after s)."""
    out = {}
    for name in ("baseline", "down", "after"):
        x, y = (v - start for v in abs_phases[name])
        ok, failed, errs = [], [], Counter()
        for per in officers["attempts"]:
            for a0, a1, outcome in per:
                if x <= a0 and a1 < y:
                    if outcome == "ok":
                        ok.append((a1 - a0) * 1000)
                    else:
                        failed.append((a1 - a0) * 1000)
                        errs[outcome] += 1
        out[name] = {"issuances": len(ok), "cycle_ms": pl.summarize(ok), "errors": sum(errs.values()),
                     "error_kinds": dict(errs), "failed_cycle_ms": pl.summarize(failed), "seconds": y - x}
    # Issue latency from the Stats of the baseline (POST alone).
    base = officers["phases"]["baseline"]
    out["baseline"]["issue_post_ms"] = pl.summarize(base["issue_ms"])
    ret = events["returned"]
    firsts = [min((t for t in s if t > ret), default=None) for s in officers["successes"]]
    out["_recovery"] = {"first_issuance_after_return_s": min((f - ret for f in firsts if f is not None), default=None),
                        "every_officer_issued_again_s": (max(f - ret for f in firsts) if all(f is not None for f in firsts) else None),
                        "officers_never_recovered": sum(1 for f in firsts if f is None)}
    return out


def pg_restart_report(args, ph, events, result, report, verdicts) -> None:
    rec = result["recovery"]
    result["events_s"] = {k: round(v, 3) for k, v in events.items()}
    down = events["returned"] - events["stop_called"]
    report.append(f"PostgreSQL down {down:.1f} s (stop {events['stopped'] - events['stop_called']:.1f} s, "
                  f"start {events['returned'] - events['start_called']:.1f} s); officers' errors while down: "
                  f"{ph['down']['errors']} {ph['down']['error_kinds']}")
    first, every = rec["first_issuance_after_return_s"], rec["every_officer_issued_again_s"]
    report.append(f"after the return: first issuance after {fmt(first, '.2f')} s, every officer issuing again after "
                  f"{fmt(every, '.2f')} s ({rec['officers_never_recovered']} never); cycle p99 before "
                  f"{fmt(ph['baseline']['cycle_ms'].get('p99'))} ms, after {fmt(ph['after']['cycle_ms'].get('p99'))} ms")
    verdicts.append((f"first issuance within {args.recovery_target:g} s of the return", f"{fmt(first, '.2f')} s",
                     first is not None and first <= args.recovery_target))
    verdicts.append((f"every officer issuing within {args.recovery_target:g} s", f"{fmt(every, '.2f')} s",
                     every is not None and every <= args.recovery_target))


if __name__ == "__main__":
    sys.exit(main())
