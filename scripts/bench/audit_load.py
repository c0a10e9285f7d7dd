#!/usr/bin/env python3
"""Measures the admin audit review of a running portal over a seeded audit trail, for
scripts/bench-audit.sh: first pages of the search and the teleTAN lookup (p50/p99 through HTTP,
next to the same query's time in the database in the same run), and the exports (rows/s, the
portal's peak RSS). Standard library only; connects to 127.0.0.1 only.

Baselines, per query: PostgreSQL -- `EXPLAIN (ANALYZE)` through psql, planning + execution time,
repeated; SQLite -- the query run through Python's sqlite3 module (SQLite has no EXPLAIN
ANALYZE), repeated, with EXPLAIN QUERY PLAN for the plan. The queries are the portal's:
    SELECT <columns> FROM audit_log [WHERE lower(actor) = lower($1) | action = $1 | subject = $1 |
        substr(subject, 1, 12) = $1 | occurred_at >= $1 AND occurred_at < $2]
        [AND (action <> 'audit.view' OR actor IS NULL OR actor <> <admin>)] ORDER BY seq DESC LIMIT 51
An action prefix (issue 18) is, in the portal as in the baseline, one UNION ALL statement of that
query once per action it stands for (each `SELECT * FROM (... ORDER BY seq DESC LIMIT 51)`),
ordered and limited once outside.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import http.client
import importlib.util
import json
import random
import re
import sqlite3
import sys
import threading
import time
import urllib.parse
import zoneinfo
from pathlib import Path

# The statistics and /proc helpers of the portal's load test: one percentile rule (nearest rank)
# for both benchmarks.
from portal_load import percentile, proc_cpu, reset_peak_rss, rss_kib, summarize
from support import database  # Tests/support, on PYTHONPATH (scripts/bench-audit.sh)

HOST = "127.0.0.1"
COLUMNS = "seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash"
CSRF_RE = re.compile(rb'name="csrf" value="([^"]+)"')
LOOKUP_FORM_RE = re.compile(rb'<form[^>]*action="/admin/audit/lookup"[^>]*>(.*?)</form>', re.S)
NONCE_RE = re.compile(rb'name="nonce" value="([^"]+)"')
TELETAN_RE = re.compile(rb'id="teletan"[^>]*>(.*?)</p>', re.S)
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


class Failed(Exception):
    pass


# --- HTTP ------------------------------------------------------------------------------------------

class Client:
    """One signed-in browser: a keep-alive connection and its cookies."""

    def __init__(self, port: int, timeout: float = 600):
        self.port = port
        self.conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
        self.cookies: dict[str, str] = {}

    def _headers(self, form: bool) -> dict:
        headers = {"Host": f"{HOST}:{self.port}", "Accept": "text/html", "Accept-Language": "en"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if form:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        return headers

    def _cookies(self, response) -> None:
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                cookie_value = rest.split(";", 1)[0]
                if not cookie_value or "max-age=0" in value.lower():
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = cookie_value

    def request(self, method: str, path: str, form: dict | None = None):
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            self.conn.request(method, path, body=body, headers=self._headers(form is not None))
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            raise
        self._cookies(response)
        if (response.getheader("Connection") or "").lower() == "close":
            self.conn.close()
        return response.status, response.getheader("Location") or "", data

    def stream(self, path: str, sink, chunk: int = 1 << 20):
        """GET path, passing the body to sink(bytes) chunk by chunk; returns (status, ttfb_s, total_s, bytes)."""
        started = time.perf_counter()
        self.conn.request("GET", path, headers=self._headers(False))
        response = self.conn.getresponse()
        first = time.perf_counter() - started
        size = 0
        while True:
            data = response.read(chunk)
            if not data:
                break
            size += len(data)
            sink(data)
        self._cookies(response)
        if (response.getheader("Connection") or "").lower() == "close":
            self.conn.close()
        return response.status, first, time.perf_counter() - started, size

    def sign_in(self, username: str, password: str) -> None:
        status, _, page = self.request("GET", "/signin")
        match = CSRF_RE.search(page)
        if status != 200 or not match:
            raise Failed(f"GET /signin: {status}, csrf {'found' if match else 'missing'}")
        status, location, _ = self.request("POST", "/signin", {"username": username, "password": password,
                                                               "csrf": match.group(1).decode()})
        if status != 303 or "portal_session" not in self.cookies:
            raise Failed(f"POST /signin as {username}: {status} -> {location or '-'} (wrong password, PAM stack missing, not root?)")


# --- The database baseline ---------------------------------------------------------------------------

class Database:
    def __init__(self, url: str):
        self.url = url
        self.is_postgres = url.startswith(("postgres://", "postgresql://"))

    def _psql(self, sql: str) -> str:
        try:
            return database.psql(sql, self.url, timeout=900)
        except AssertionError as error:
            raise Failed(str(error)) from None

    def _sqlite(self):
        return sqlite3.connect(f"file:{self.url[len('sqlite:'):]}?mode=ro", uri=True)

    @staticmethod
    def literal(value) -> str:
        if isinstance(value, dt.datetime):
            return "'" + value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00") + "'::timestamptz"
        return "'" + str(value).replace("'", "''") + "'"

    def value(self, sql: str):
        if self.is_postgres:
            return self._psql(sql).strip()
        with self._sqlite() as connection:
            row = connection.execute(sql).fetchone()
            return None if row is None else row[0]

    def column(self, sql: str) -> list:
        if self.is_postgres:
            return [line for line in self._psql(sql).splitlines() if line]
        with self._sqlite() as connection:
            return [row[0] for row in connection.execute(sql)]

    def where(self, query: dict) -> tuple[str, list]:
        """SQL condition and parameters for a query dict (actor/action/subject/from_utc/to_utc)."""
        clauses, params = [], []
        if "actor" in query:  # without regard to case, as the index of AuditReview.AddSearchIndexes
            clauses.append("lower(actor) = lower(?)")
            params.append(query["actor"])
        for column in ("action", "subject"):
            if column in query:
                clauses.append(f"{column} = ?")
                params.append(query[column])
        if "subject_start" in query:
            clauses.append("substr(subject, 1, 12) = ?")
            params.append(query["subject_start"])
        if "hide_views_of" in query:  # the search page leaves out the admin's own page views
            clauses.append("(action <> 'audit.view' OR actor IS NULL OR actor <> ?)")
            params.append(query["hide_views_of"])
        if "from_utc" in query:
            clauses += ["occurred_at >= ?", "occurred_at < ?"]
            params += [query["from_utc"], query["to_utc"]]
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params

    def _inline(self, sql: str, params: list) -> str:
        for param in params:
            sql = sql.replace("?", self.literal(param), 1)
        return sql

    def _sqlite_params(self, params: list) -> list:
        return [p.timestamp() if isinstance(p, dt.datetime) else p for p in params]

    def page_sql(self, query: dict) -> tuple[str, list]:
        if "actions" in query:  # an action prefix: one keyset query per action in one UNION ALL
            parts, params = [], []
            for action in query["actions"]:
                where, part_params = self.where({**{k: v for k, v in query.items() if k != "actions"}, "action": action})
                parts.append(f"SELECT * FROM (SELECT {COLUMNS} FROM audit_log{where} ORDER BY seq DESC LIMIT 51) AS p{len(parts)}")
                params += part_params
            return f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS merged ORDER BY seq DESC LIMIT 51", params
        where, params = self.where(query)
        return f"SELECT {COLUMNS} FROM audit_log{where} ORDER BY seq DESC LIMIT 51", params

    def count(self, query: dict) -> int:
        where, params = self.where(query)
        sql = f"SELECT count(*) FROM audit_log{where}"
        if self.is_postgres:
            return int(self._psql(self._inline(sql, params)).strip())
        with self._sqlite() as connection:
            return connection.execute(sql, self._sqlite_params(params)).fetchone()[0]

    def baseline(self, query: dict, repeats: int, warmup: int) -> dict:
        """The first-page query's time in the database itself: (p50, p99, plan)."""
        sql, params = self.page_sql(query)
        if self.is_postgres:
            statement = "EXPLAIN (ANALYZE, BUFFERS) " + self._inline(sql, params) + ";\n"
            output = self._psql(statement * (warmup + repeats))
            planning = [float(x) for x in re.findall(r"Planning Time: ([0-9.]+) ms", output)][warmup:]
            execution = [float(x) for x in re.findall(r"Execution Time: ([0-9.]+) ms", output)][warmup:]
            times = [p + e for p, e in zip(planning, execution)]
            plan_lines = output.split("Planning")[0].strip().splitlines()
            return {**summarize(times), "execution_p50": percentile(sorted(execution), 50), "plan": plan_lines[:8],
                    "tool": "psql EXPLAIN ANALYZE (planning + execution)", "sql": self._inline(sql, params)}
        times = []
        with self._sqlite() as connection:
            values = self._sqlite_params(params)
            plan = [row[-1] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, values)]
            for i in range(warmup + repeats):
                started = time.perf_counter()
                connection.execute(sql, values).fetchall()
                if i >= warmup:
                    times.append((time.perf_counter() - started) * 1000)
        return {**summarize(times), "plan": plan, "tool": "python sqlite3 (query + fetch)", "sql": sql, "params": values}


# --- Helpers -------------------------------------------------------------------------------------------

def unknown_teletan(rng: random.Random) -> str:
    """A well-formed teleTAN (valid check character) that was never issued; typed with a space and in lower case."""
    body = "".join(rng.choice(ALPHABET) for _ in range(9))
    nibble = hashlib.sha256(body.encode()).digest()[0] >> 4
    check = "G" if nibble == 0 else "H" if nibble == 1 else "%X" % nibble
    value = body + check
    return (value[:3] + " " + value[3:6] + " " + value[6:]).lower()


def issue_teletan(port: int, username: str, password: str) -> str:
    """Issues one teleTAN through the officer's form and returns it (for a lookup of a known one)."""
    officer = Client(port)
    officer.sign_in(username, password)
    status, _, page = officer.request("GET", "/")
    csrf, nonce = CSRF_RE.search(page), NONCE_RE.search(page)
    if status != 200 or not csrf or not nonce:
        raise Failed(f"GET / as {username}: {status}, no issuing form")
    status, location, _ = officer.request("POST", "/teletan", {"csrf": csrf.group(1).decode(), "nonce": nonce.group(1).decode()})
    if status != 303:
        raise Failed(f"POST /teletan as {username}: {status} -> {location}")
    status, _, page = officer.request("GET", "/teletan/result")
    match = TELETAN_RE.search(page)
    if status != 200 or not match:
        raise Failed(f"GET /teletan/result: {status}, no teleTAN on the page")
    return re.sub(r"<[^>]+>|\s", "", match.group(1).decode())


def wait_until_idle(pid: int, limit_s: float, log) -> float:
    """Waits until the portal used < 5 % of a core over 2 s (start-up work such as the first
    checkpoint's verification of the whole chain); returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        before = proc_cpu(pid)
        time.sleep(2)
        if proc_cpu(pid) - before < 0.1:
            return time.monotonic() - started
        log(f"portal still busy after start ({time.monotonic() - started:.0f} s): waiting")
    log(f"warning: portal not idle after {limit_s:.0f} s; measuring anyway")
    return time.monotonic() - started


class RSSSampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.02):
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak_kib, self.running = pid, interval, 0, True

    def run(self):
        while self.running:
            rss = rss_kib(self.pid).get("VmRSS")
            if rss:
                self.peak_kib = max(self.peak_kib, rss)
            time.sleep(self.interval)


# --- The measurement ----------------------------------------------------------------------------------

def measure_get(client: Client, path: str, requests: int, warmup: int) -> dict:
    times, statuses, size = [], {}, 0
    for i in range(warmup + requests):
        started = time.perf_counter()
        status, _, body = client.request("GET", path)
        elapsed = (time.perf_counter() - started) * 1000
        statuses[status] = statuses.get(status, 0) + 1
        if status != 200:
            raise Failed(f"GET {path}: {status} {body[:200]!r}")
        if i >= warmup:
            times.append(elapsed)
            size = len(body)
    return {**summarize(times), "statuses": statuses, "bytes": size}


def measure_lookup(client: Client, teletan: str, requests: int, warmup: int) -> dict:
    """POST /admin/audit/lookup (303 to the fingerprint's page), then that page: both timed."""
    status, _, page = client.request("GET", "/admin/audit")
    form = LOOKUP_FORM_RE.search(page)
    csrf = CSRF_RE.search(form.group(1) if form else page)
    if status != 200 or not csrf:
        raise Failed(f"GET /admin/audit: {status}, no lookup form with csrf")
    token = csrf.group(1).decode()
    totals, posts, location = [], [], ""
    for i in range(warmup + requests):
        started = time.perf_counter()
        status, location, body = client.request("POST", "/admin/audit/lookup", {"csrf": token, "teletan": teletan})
        posted = time.perf_counter()
        if status != 303 or not location.startswith("/admin/audit/teletans/"):
            raise Failed(f"POST /admin/audit/lookup: {status} -> {location or '-'} {body[:200]!r}")
        status, _, body = client.request("GET", location)
        done = time.perf_counter()
        if status != 200:
            raise Failed(f"GET {location}: {status}")
        if i >= warmup:
            totals.append((done - started) * 1000)
            posts.append((posted - started) * 1000)
    return {**summarize(totals), "post_only": summarize(posts), "fingerprint": location.rsplit("/", 1)[-1]}


def measure_export(client: Client, path: str, pid: int, out_file: Path) -> dict:
    hwm_reset = reset_peak_rss(pid, "audit_load", "the requests before the export")
    rss_before = rss_kib(pid).get("VmRSS")
    sampler = RSSSampler(pid)
    sampler.start()
    newlines = 0
    with open(out_file, "wb") as handle:
        def sink(data: bytes):
            nonlocal newlines
            newlines += data.count(b"\n")
            handle.write(data)
        status, first, total, size = client.stream(path, sink)
    sampler.running = False
    sampler.join()
    if status != 200:
        raise Failed(f"GET {path}: {status}")
    return {"status": status, "ttfb_s": first, "seconds": total, "bytes": size, "newlines": newlines,
            "rss_before_kib": rss_before, "peak_rss_sampled_kib": sampler.peak_kib,
            "vmhwm_kib": rss_kib(pid).get("VmHWM") if hwm_reset else None, "vmhwm_was_reset": hwm_reset}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--portal-pid", type=int, default=0)
    parser.add_argument("--baseline-only", action="store_true", help="no portal: only the database's times")
    parser.add_argument("--database", required=True)
    parser.add_argument("--admin", default="tt-admin:Admin-Pass-1", help="USER:PASSWORD")
    parser.add_argument("--officer", default="tt-officer:Officer-Pass-1", help="USER:PASSWORD for the known teleTAN ('' to skip)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--baseline-repeats", type=int, default=50)
    parser.add_argument("--export-rows", type=int, default=1_000_000, help="rows the export's date filter should select (0: unfiltered)")
    parser.add_argument("--time-zone", default="Europe/Berlin")
    parser.add_argument("--settle-timeout", type=float, default=1800)
    parser.add_argument("--work-dir", default="/tmp")
    parser.add_argument("--verify-export", default="", help="path of Tests/support/audit_chain.py to re-check the JSON Lines export ('' to skip)")
    parser.add_argument("--json-out", required=True)
    args = parser.parse_args()

    log = lambda message: print(f"audit_load: {message}", file=sys.stderr, flush=True)  # noqa: E731
    db = Database(args.database)
    zone = zoneinfo.ZoneInfo(args.time_zone)
    result: dict = {"database": "postgres" if db.is_postgres else "sqlite"}

    if not args.baseline_only:
        if not args.port or not args.portal_pid:
            parser.error("--port and --portal-pid are needed (or --baseline-only)")
        result["settle_s"] = round(wait_until_idle(args.portal_pid, args.settle_timeout, log), 1)
        result["idle_rss_kib"] = rss_kib(args.portal_pid).get("VmRSS")

    # What to ask for: the busiest actor, a weekday about a month back, an unknown teleTAN.
    head = int(db.value("SELECT seq FROM audit_head WHERE id = 1"))
    last_ms = db.value("SELECT " + ("(extract(epoch FROM occurred_at) * 1000)::bigint" if db.is_postgres else "CAST(occurred_at * 1000 AS INTEGER)")
                       + " FROM audit_log ORDER BY seq DESC LIMIT 1")
    first_ms = db.value("SELECT " + ("(extract(epoch FROM occurred_at) * 1000)::bigint" if db.is_postgres else "CAST(occurred_at * 1000 AS INTEGER)")
                        + " FROM audit_log ORDER BY seq LIMIT 1")
    last_day = dt.datetime.fromtimestamp(int(last_ms) / 1000, zone).date()
    first_day = dt.datetime.fromtimestamp(int(first_ms) / 1000, zone).date()
    day = last_day - dt.timedelta(days=30)
    while day.weekday() != 2:  # a Wednesday: a busy day
        day -= dt.timedelta(days=1)
    actor = db.value("SELECT actor FROM audit_log WHERE seq > %d AND actor IS NOT NULL GROUP BY actor ORDER BY count(*) DESC LIMIT 1"
                     % max(0, head - 200_000))

    rare = db.value("SELECT actor FROM audit_log WHERE seq > %d AND role IS NOT NULL GROUP BY actor ORDER BY count(*), actor LIMIT 1"
                    % max(0, head - 200_000))

    def bounds(start: dt.date, end: dt.date) -> dict:
        lower = dt.datetime.combine(start, dt.time(), zone)
        upper = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), zone)
        return {"from_utc": lower, "to_utc": upper}

    teletan = unknown_teletan(random.Random(head))
    # Issue 18: a fingerprint as the table shortens it, a call id without `call:`, the actions
    # an action prefix stands for.
    fingerprint = db.value("SELECT subject FROM audit_log WHERE seq > %d AND action = 'teletan.issue' AND subject IS NOT NULL "
                           "ORDER BY seq LIMIT 1" % max(0, head - 200_000))
    call = db.value("SELECT subject FROM audit_log WHERE seq > %d AND subject LIKE 'call:%%' ORDER BY seq LIMIT 1" % max(0, head - 200_000))
    hotline = sorted(row for row in db.column(
        "WITH RECURSIVE known(action) AS (SELECT MIN(action) FROM audit_log UNION ALL "
        "SELECT (SELECT MIN(action) FROM audit_log WHERE action > known.action) FROM known WHERE known.action IS NOT NULL) "
        "SELECT action FROM known WHERE action IS NOT NULL") if row.startswith("hotline"))
    viewer = {"hide_views_of": args.admin.split(":", 1)[0]}  # every search page leaves out the admin's own views
    searches = [
        ("first page, unfiltered", "/admin/audit", {**viewer}),
        (f"actor={actor}", "/admin/audit?" + urllib.parse.urlencode({"actor": actor}), {"actor": actor, **viewer}),
        (f"actor={actor.upper()} (in capitals)", "/admin/audit?" + urllib.parse.urlencode({"actor": actor.upper()}),
         {"actor": actor.upper(), **viewer}),
        (f"actor={rare} (a rare one)", "/admin/audit?" + urllib.parse.urlencode({"actor": rare}), {"actor": rare, **viewer}),
        ("action=teletan.issue", "/admin/audit?action=teletan.issue", {"action": "teletan.issue", **viewer}),
        (f"action=hotline (prefix, {len(hotline)} actions)", "/admin/audit?action=hotline", {"actions": hotline, **viewer}),
        (f"subject={fingerprint[:12]}… (as the table shows it)",
         "/admin/audit?" + urllib.parse.urlencode({"subject": fingerprint[:12] + "…"}), {"subject_start": fingerprint[:12], **viewer}),
        ("subject=<call id> (without call:)", "/admin/audit?" + urllib.parse.urlencode({"subject": call[len("call:"):]}),
         {"subject": call, **viewer}),
        (f"one day {day}", f"/admin/audit?from={day}&to={day}", {**bounds(day, day), **viewer}),
    ]

    log(f"{head:,} entries, {first_day}..{last_day}")
    if args.baseline_only:
        rows = []
        for label, _, query in searches + [("lookup, unknown teleTAN (random fingerprint)", None, {"subject": "%064x" % random.Random(head).getrandbits(256)})]:
            rows.append({"figure": label, "portal": None, "baseline": db.baseline(query, args.baseline_repeats, 3),
                         "matching_rows": db.count(query) if "from_utc" in query else None})
        result["latencies"] = rows
        Path(args.json_out).write_text(json.dumps(result, default=str, indent=1))
        return 0

    admin_name, admin_password = args.admin.split(":", 1)
    client = Client(args.port)
    client.sign_in(admin_name, admin_password)
    log(f"signed in as {admin_name}")

    known = None
    if args.officer:
        try:
            officer_name, officer_password = args.officer.split(":", 1)
            known = issue_teletan(args.port, officer_name, officer_password)
        except (Failed, OSError) as error:
            log(f"no known teleTAN (issuing as the officer failed: {error}); the lookup measures an unknown one only")

    rows = []
    for label, path, query in searches:
        log(f"measuring {label}: {args.warmup} + {args.requests} requests")
        portal = measure_get(client, path, args.requests, args.warmup)
        baseline = db.baseline(query, args.baseline_repeats, 3)
        rows.append({"figure": label, "path": path, "portal": portal, "baseline": baseline,
                     "matching_rows": db.count(query) if "from_utc" in query else None})
    lookups = [("lookup, unknown teleTAN", teletan)] + ([("lookup, issued teleTAN", known)] if known else [])
    for label, typed in lookups:
        log(f"measuring {label}: {args.warmup} + {args.requests} requests")
        portal = measure_lookup(client, typed, args.requests, args.warmup)
        baseline = db.baseline({"subject": portal["fingerprint"]}, args.baseline_repeats, 3)
        rows.append({"figure": label, "path": "POST /admin/audit/lookup + GET /admin/audit/teletans/{fp}",
                     "portal": portal, "baseline": baseline})
    result["latencies"] = rows

    # Exports: a date range selecting about --export-rows entries (or everything).
    if args.export_rows:
        per_day = max(1, head / max(1, (last_day - first_day).days + 1))
        span = max(1, int(args.export_rows / per_day))
        end = last_day - dt.timedelta(days=2)
        start = max(first_day, end - dt.timedelta(days=span - 1))
        query, filter_qs = bounds(start, end), f"from={start}&to={end}"
    else:
        query, filter_qs = {}, ""
    expected = db.count(query)
    result["export_filter"] = filter_qs or "(none)"
    result["export_expected_rows"] = expected
    exports = []
    for fmt in ("jsonl", "csv"):
        path = f"/admin/audit/export.{fmt}" + (f"?{filter_qs}" if filter_qs else "")
        out_file = Path(args.work_dir) / f"export.{fmt}"
        log(f"export {path} ({expected:,} rows expected)")
        figures = measure_export(client, path, args.portal_pid, out_file)
        if fmt == "jsonl":
            figures["rows"] = figures["newlines"]
        else:
            with open(out_file, newline="", encoding="utf-8") as handle:
                figures["rows"] = sum(1 for _ in csv.reader(handle)) - 1
        figures["rows_per_s"] = figures["rows"] / figures["seconds"] if figures["seconds"] else None
        figures["path"] = path
        with open(out_file, "rb") as handle:
            figures["sample"] = handle.read(400).decode("utf-8", "replace")
        if fmt == "jsonl" and args.verify_export:
            # The checker is loaded from the file given (Tests/support/audit_chain.py).
            spec = importlib.util.spec_from_file_location("audit_chain", args.verify_export)
            audit_chain = importlib.util.module_from_spec(spec)
            sys.modules["audit_chain"] = audit_chain  # its dataclasses look their module up by name
            spec.loader.exec_module(audit_chain)
            started = time.monotonic()
            report = audit_chain.verify_export(out_file, contiguous=not filter_qs)
            figures["independent_check"] = ("intact: %d entries (seq %s..%s)" % (report.checked, report.first_seq, report.last_seq)
                                            if report.ok else f"BROKEN at entry {report.first_bad_seq} (line {report.line}): {report.reason}")
            figures["independent_check_s"] = round(time.monotonic() - started, 1)
        out_file.unlink(missing_ok=True)
        exports.append({"format": fmt, **figures})
    result["exports"] = exports
    Path(args.json_out).write_text(json.dumps(result, default=str, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as error:
        print(f"audit_load: {error}", file=sys.stderr)
        sys.exit(1)
