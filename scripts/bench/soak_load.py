#!/usr/bin/env python3
"""Soak load for the teleTAN portal: officers and hotline agents doing their whole flows, for
minutes, with think time; the portal's memory, file descriptors and database connections sampled
all along. Driven by scripts/soak.sh (see docs/benchmarks.md, "Soak").

    soak_load.py run --port P --portal-pid PID --json-out FILE [...]    the load, writes JSON
    soak_load.py report --load FILE [...]                               table and verdicts

**run.** The load runs on locust (as a library: its Environment and local runner): every
simulated person is one locust user, a greenlet, with its own keep-alive HTTP/1.1 connection to
127.0.0.1 (the Officer class of portal_load.py: cookies, CSRF, no other address; its sockets are
gevent's, locust patches them on import, which is why this script imports locust only for `run`).
Every request is reported to locust's request event: locust counts requests and failures and
keeps the latencies per kind of request (its percentiles: milliseconds rounded to 2 significant
digits above 100 ms); a second locust RequestStats per report period gives the periods' p50/p99.
All sign in first (4 at a time), then load their start page at the same moment three times
(warm-up: the database pool opens its connections, see SoakUser.warm_up()); then the measured run
starts, each person after a random delay of 0-10 s, repeating its flow until the end:

* officer (tt-bench-NN): GET / -> POST /teletan -> GET /teletan/result (a valid teleTAN) ->
  POST /teletan/done -> GET /; now and then GET /teletan/recent (one row per teleTAN it issued,
  every status known) and, rarely, POST /signout -> GET /signin -> POST /signin -> GET /.
* hotline agent (tt-hotbench-NN): GET /hotline; either a new call (POST /hotline/calls, GET the
  call page, then with the ticked checks: issue the teleTAN in the call, or call back later with a
  number and a name, or end the call with an outcome) or, when callbacks wait, a callback from
  the shared queue (GET /hotline/callbacks, Take, GET the callback page: the number and the name
  that were queued, then reached / no answer / wrong number / refused; reached opens a new call
  with the first call's answers ticked). Issuing in a call: GET /teletan/result, Continue, the
  read-back (sometimes misheard first: "does not match"), "I have passed it on". Now and then
  "My recent teleTANs", the hotline overview, or signing out and in again.

Every response's status, redirect target and expected content is checked; anything else is a
failure (kept with details), after which the person finds their way back (GET /, signing in again
if the session is gone). Two agents pressing Take on the same callback is a race the portal must
answer with 409 and "Another agent has just taken this callback." (or "no longer in the queue"):
that answer is checked and counted as a take conflict, not as a failure.

Every --sample seconds the coordinator records the portal's VmRSS and VmHWM, its open file
descriptors (/proc/PID/fd), its threads, its database connections (PostgreSQL: pg_stat_activity
for the database; SQLite: descriptors open on the database file and its -wal/-shm) and the CPU
time of the portal, of those database backends, of this client and of the machine. At every
report period's end VmHWM is read (the peak of that period) and reset (/proc/PID/clear_refs).

**report.** Per period: requests, failures, requests/s, p50/p99 latency, RSS (highest 5 s
sample and VmHWM), fds, database connections, CPU; then the verdicts (see verdicts()).

Python 3.11 and locust (Tests/requirements.txt). Bounded: at most 50 officers and 50 agents, 3600 s.
"""
from __future__ import annotations

import sys

if __name__ == "__main__" and sys.argv[1:2] == ["run"]:
    # locust patches sockets, threads and time.sleep with gevent when it is imported: before
    # anything else imports them, and only for the load itself (`report` stays plain Python).
    import locust  # noqa: F401

import argparse
import html
import itertools
import json
import os
import random
import re
import subprocess
import threading
import time
import traceback
from collections import Counter

from portal_load import CSRF_RE, NONCE_RE, TELETAN_MARK, Officer, Unexpected, machine_cpu, proc_cpu, reset_peak_rss
from support.database import psql  # Tests/support, on PYTHONPATH (scripts/soak.sh)

MAX_PEOPLE = 50          # per role: the bench accounts tt-bench-01..50, tt-hotbench-01..50
MAX_SECONDS = 3600
# Every person connects from 127.0.0.1, and the portal admits at most a quarter of its
# --pam-threads (4 of 16) sign-ins in progress per client address (503 beyond, by design): so in
# the sign-in phase at most 4 POST /signin are in flight at once. During the run, at most one:
# a sign-in in progress costs the portal about 16 MiB (pam_unix's yescrypt), and two that overlap
# by chance would add 16 MiB to one minute's RSS peak and make the minutes' peaks a lottery.
SIGNIN_CONCURRENCY_START = 4
SIGNIN_CONCURRENCY_RUN = 1
FAILURES_KEPT = 50
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # TeleTAN.alphabet
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# Rules for the verdicts (docs/benchmarks.md, "Soak").
RSS_TOLERANCE = 0.10     # last period's RSS peak within 10 % of the second period's

TEXT = {  # the portal's English texts that the flows check
    "signed_out": "You have signed out.",
    "done_callback_queued": "The callback is in the queue.",
    "done_ended": "The call has ended.",
    "done_passed_on": "The call has ended. The teleTAN was passed on.",
    "matches": "Matches: the caller has the right teleTAN.",
    "differs": "Does not match: read it again.",
    "taken_by_other": "Another agent has just taken this callback.",
    "not_waiting": "This callback is no longer in the queue.",
    "no_answer": "No answer: the callback is back in the queue.",
    "unreachable": "No answer on the last attempt: the callback is closed as unreachable",
    "wrong_number": "Wrong number: the callback is closed",
    "refused": "Refused: the callback is closed",
    "from_callback": "callback",
}
END_OUTCOMES = ["not_eligible", "caller_hung_up", "information_only", "other"]  # CallOutcome.endable

TELETAN_RE = re.compile(rb'<p id="teletan" class="teletan">(.*?)</p>', re.S)
GROUP_RE = re.compile(rb'<span class="group">([^<]*)</span>')
# Where a new session starts: the start page, or for a hotline agent the hotline page or their open
# call (HotlineFeature.landing).
LANDING_RE = re.compile(r"^/(hotline(/calls/[0-9a-f-]{36})?)?$")
CALL_PATH_RE = re.compile(f"^/hotline/calls/({UUID})$")
CALLBACK_PATH_RE = re.compile(f"^/hotline/callbacks/({UUID})$")
CHECK_RE = re.compile(rb'<input type="checkbox" name="checks\[\]" value="([^"]+)" id="check-[^"]+"( checked)?>\s*'
                      rb'<div><label for="check-[^"]+">[^<]*(<span class="required-mark">)?', re.S)
WAITING_RE = re.compile(rb'id="link-callbacks">[^<]*</a> \((\d+) waiting\)')
TAKE_RE = re.compile(f'<form method="post" action="/hotline/callbacks/({UUID})/take"'.encode())
ROW_RE = re.compile(rb'<tr id="teletan-[0-9a-f-]{36}">')
NOTICE_RE = re.compile(rb'<p id="(?:queue-notice|hotline-notice)" class="notice" role="status">([^<]*)</p>')
H1_RE = re.compile(rb"<h1>(.*?)</h1>", re.S)
ERROR_RE = re.compile(rb'class="error[^"]*"[^>]*>(.*?)</p>', re.S)
PHONE_RE = re.compile(rb'<a href="tel:(\+\d+)" id="callback-phone">')
NAME_RE = re.compile(rb'<dd id="callback-name">([^<]*)</dd>')
ATTEMPTS_RE = re.compile(rb'<dd id="callback-attempts">(\d+) of (\d+)</dd>')
READBACK_RESULT_RE = re.compile(rb'<p id="read-back-result" class="(ok|error)" role="status">([^<]*)</p>')


class StopRun(Exception):
    """The run is over: the person stops at the next pause."""


class Failure(Unexpected):
    """A response that is not what the flow expects, with what the report prints about it."""

    def __init__(self, key: str, detail: str):
        super().__init__(key)
        self.detail = detail


def page_summary(body: bytes) -> str:
    """The page's heading and error messages: enough to tell what went wrong, no teleTAN."""
    parts = []
    match = H1_RE.search(body)
    if match:
        parts.append("h1=" + html.unescape(re.sub(rb"<[^>]+>", b"", match.group(1)).decode(errors="replace")).strip())
    for error in ERROR_RE.findall(body)[:2]:
        parts.append("error=" + html.unescape(re.sub(rb"<[^>]+>", b"", error).decode(errors="replace")).strip()[:200])
    if not parts:
        parts.append("body=" + body[:200].decode(errors="replace").replace("\n", " "))
    return "; ".join(parts)


def normalise(path: str) -> str:
    """A request's kind for the latency table: ids replaced."""
    path = path.split("?")[0]
    return re.sub(UUID, "{id}", path)


class Recorder:
    """What locust does not count: the flows' failures (with details), take conflicts and events,
    shared by all people (counters under a lock). Every request goes to locust's request event
    (`fire`, set by run())."""

    def __init__(self, t0: float):
        self.t0 = t0                      # time.monotonic() at the start of the measured run
        self.fire = None                  # locust's events.request.fire
        self.requests = 0                 # requests reported so far (the sampler's requests/s)
        self.failures: list[dict] = []
        self.failure_count = 0
        self.failure_kinds: Counter[str] = Counter()
        self.conflicts: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self.lock = threading.Lock()

    def request(self, started: float, ended: float, method: str, kind: str, size: int, problem: str | None) -> None:
        self.requests += 1
        self.fire(request_type=method, name=kind, response_time=(ended - started) * 1000, response_length=size,
                  exception=Failure(f"{kind}: {problem}", problem) if problem else None, context={})

    def failure(self, who: str, key: str, detail: str) -> None:
        with self.lock:
            self.failure_count += 1
            self.failure_kinds[key] += 1
            if len(self.failures) < FAILURES_KEPT:
                self.failures.append({"t": round(time.monotonic() - self.t0, 2), "who": who, "what": key, "detail": detail})

    def event(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.events[name] += n


class Contacts:
    """The callers queued for a callback: unique numbers, a name derived from each, and the
    answers of the first call, so that the callback page and the reached call can be checked."""

    def __init__(self):
        self.counter = itertools.count(1)
        self.by_phone: dict[str, tuple[str, frozenset[str]]] = {}
        self.lock = threading.Lock()

    def new(self, answers: set[str]) -> tuple[str, str, str]:
        n = next(self.counter)
        typed = f"030 5550 {n:06d}"                  # as typed by the agent
        e164 = f"+49305550{n:06d}"
        name = f"Soak Anrufer-Müller {n}"
        with self.lock:
            self.by_phone[e164] = (name, frozenset(answers))
        return typed, e164, name

    def get(self, e164: str):
        with self.lock:
            return self.by_phone.get(e164)


class Person(Officer):
    """One browser: the keep-alive connection and cookies of portal_load's Officer, plus the
    checked requests and the pauses of the soak."""

    role = "person"
    signin_gate: threading.BoundedSemaphore  # set by run(): SIGNIN_CONCURRENCY_START, then _RUN

    def __init__(self, username: str, args, recorder: Recorder, t_end: float, seed: int):
        super().__init__(username, args.password, args.port, args.timeout)
        self.recorder = recorder
        self.t_end = t_end
        self.think_scale = args.think
        self.rng = random.Random(seed)
        self.csrf = ""
        self.issued = 0          # teleTANs this account issued in this run
        self.last_issue = 0.0
        self.signed_in = False

    # -- checked requests ---------------------------------------------------------------------
    def go(self, method: str, path: str, form=None, *, status: int = 200, location=None,
           marks: tuple[bytes, ...] = (), absent: tuple[bytes, ...] = (), kind: str | None = None,
           statuses: tuple[int, ...] = ()):
        """One request; returns (status, location, body). A different status, a redirect elsewhere
        (`location`: a string, or a compiled pattern that must match), a missing mark or a present
        `absent` is a Failure. `statuses` are further statuses the caller checks itself."""
        kind = kind or f"{method} {normalise(path)}"
        started = time.monotonic()
        try:
            got, where, body = self.request(method, path, form)
        except Unexpected as error:
            self.recorder.request(started, time.monotonic(), method, kind, 0, "no response")
            raise Failure(f"{kind}: {error.key.split(': ', 1)[-1]}", "no response (connection error or timeout)") from error
        ended = time.monotonic()
        problem = None
        if got != status and got not in statuses:
            problem = f"status {got}, expected {status}"
        elif got in (301, 302, 303, 307) and location is not None:
            ok = location.match(where) if hasattr(location, "match") else where == location
            if not ok:
                problem = f"redirect to {where or '-'}, expected {getattr(location, 'pattern', location)}"
        elif got == status:
            for mark in marks:
                if mark not in body:
                    problem = f"page lacks {mark.decode()!r}"
                    break
            for mark in absent:
                if mark in body:
                    problem = f"page has {mark.decode()!r}"
                    break
        self.recorder.request(started, ended, method, kind, len(body), problem)
        if problem:
            key = f"{kind}: {problem.split(',')[0]}"
            detail = f"{method} {path} -> {got}" + (f" Location: {where}" if where else "") + f"; {problem}; {page_summary(body)}"
            raise Failure(key, detail)
        if got == 200:
            match = CSRF_RE.search(body)
            if match:
                self.csrf = match.group(1).decode()
        return got, where, body

    def think(self, low: float, high: float) -> None:
        """A person's pause (seconds, scaled by --think); the run's end stops the person here."""
        pause = self.rng.uniform(low, high) * self.think_scale
        left = self.t_end - time.monotonic()
        if pause >= left:
            time.sleep(max(0.0, left))
            raise StopRun()
        time.sleep(pause)

    def issue_gap(self) -> None:
        """Keeps two issuances of one account at least 1.5 s apart (the portal runs with
        --teletan-interval 1s)."""
        wait = self.last_issue + 1.5 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self.last_issue = time.monotonic()

    # -- sign-in and sign-out -------------------------------------------------------------------
    def sign_in_from(self, signin_page: bytes) -> bytes:
        """POST /signin with the sign-in page's csrf, then the start page; returns it."""
        match = CSRF_RE.search(signin_page)
        if not match:
            raise Failure("GET /signin: no csrf", "sign-in page without csrf")
        with Person.signin_gate:
            self.go("POST", "/signin", {"username": self.username, "password": self.password, "csrf": match.group(1).decode()},
                    status=303, location=LANDING_RE)
        if "portal_session" not in self.cookies:
            raise Failure("POST /signin: no session cookie", "303 without portal_session cookie")
        self.signed_in = True
        self.recorder.event("sign-ins")
        _, _, home = self.go("GET", "/", marks=self.home_marks)
        return home

    def sign_in_fresh(self) -> bytes:
        self.cookies.pop("portal_session", None)
        _, _, page = self.go("GET", "/signin", marks=(b'id="signin"',))
        return self.sign_in_from(page)

    def sign_out_and_in(self) -> bytes:
        self.go("POST", "/signout", {"csrf": self.csrf}, status=303, location="/signin?signedout=1")
        self.signed_in = False
        if "portal_session" in self.cookies:
            raise Failure("POST /signout: session cookie kept", "the session cookie was not cleared")
        self.recorder.event("sign-outs")
        _, _, page = self.go("GET", "/signin?signedout=1", marks=(TEXT["signed_out"].encode(), b'id="signin"'))
        self.think(3, 10)
        return self.sign_in_from(page)

    def recent(self) -> None:
        """My recent teleTANs: one row per teleTAN this account issued in the run (at most 200),
        every status known."""
        _, _, page = self.go("GET", "/teletan/recent", absent=(b'id="status-unknown"',))
        rows = len(ROW_RE.findall(page))
        if rows != min(self.issued, 200):
            expected = min(self.issued, 200)
            self.issued = rows  # in step again, so that one miss is one failure
            raise Failure("GET /teletan/recent: wrong number of rows", f"{rows} rows, expected {expected}")

    def recover(self) -> None:
        """After a failure: back to a known state, as a person would (start page, signing in
        again if the session is gone, taking a teleTAN that waits to be shown)."""
        self.think(1, 3)
        got, where, page = self.go("GET", "/", status=200, statuses=(303,), kind="GET / (recovery)")
        if got == 303:
            if not where.startswith("/signin"):
                raise Failure("GET / (recovery): redirect", f"redirect to {where}")
            self.sign_in_fresh()
        elif b'id="show-waiting"' in page:
            self.go("GET", "/teletan/result", marks=(TELETAN_MARK,), kind="GET /teletan/result (recovery)")
            self.issued += 1
        self.recorder.event("recoveries")

    # -- the loop -------------------------------------------------------------------------------
    def step(self) -> None:
        """One flow, and after a failure the way back (SoakUser's task, repeated until StopRun)."""
        try:
            if not self.signed_in:
                self.sign_in_fresh()
            self.flow()
        except Failure as failure:
            self.recorder.failure(self.username, failure.key, failure.detail)
            try:
                self.recover()
            except Failure as again:
                self.recorder.failure(self.username, again.key, again.detail)
                self.signed_in = False
                self.think(3, 6)

    def flow(self) -> None:
        raise NotImplementedError


def valid_teletan(page: bytes) -> str:
    match = TELETAN_RE.search(page)
    groups = [g.decode() for g in GROUP_RE.findall(match.group(1))] if match else []
    value = "".join(groups)
    if [len(g) for g in groups] != [3, 3, 4] or any(c not in ALPHABET for c in value):
        raise Failure("GET /teletan/result: no valid teleTAN", f"groups {groups!r}")
    return value


class SoakOfficer(Person):
    role = "officer"
    home_marks = (b'id="issue-teletan"', b'name="nonce"')

    def flow(self) -> None:
        _, _, home = self.go("GET", "/", marks=self.home_marks)
        nonce = NONCE_RE.search(home).group(1).decode()
        self.think(2, 6)                    # the caller explains; the officer presses Issue
        self.issue_gap()
        self.go("POST", "/teletan", {"csrf": self.csrf, "nonce": nonce}, status=303, location="/teletan/result")
        _, _, result = self.go("GET", "/teletan/result", marks=(TELETAN_MARK, b'id="passed-on"', b'id="teletan-spelled"'))
        valid_teletan(result)
        self.issued += 1
        self.recorder.event("teleTANs issued by officers")
        self.think(8, 20)                   # read out, group by group
        self.go("POST", "/teletan/done", {"csrf": self.csrf}, status=303, location="/")
        self.go("GET", "/", marks=self.home_marks)
        if self.rng.random() < 0.3:
            self.think(1, 3)
            self.recent()
            self.think(2, 5)
        if self.rng.random() < 0.04:
            self.think(1, 3)
            self.sign_out_and_in()
        self.think(3, 10)                   # the next caller


class SoakAgent(Person):
    role = "agent"
    home_marks = (b'id="link-hotline"',)

    def __init__(self, *args, contacts: Contacts, **kwargs):
        super().__init__(*args, **kwargs)
        self.contacts = contacts

    def hotline(self, query: str = "", marks: tuple[bytes, ...] = ()) -> int:
        """GET /hotline; the number of callbacks waiting."""
        _, _, page = self.go("GET", "/hotline" + query, marks=(b'id="start-call"',) + marks)
        waiting = WAITING_RE.search(page)
        if not waiting:
            raise Failure("GET /hotline: no callbacks count", "no '(N waiting)' next to the queue link")
        if b'id="open-calls"' in page:
            raise Failure("GET /hotline: an open call is listed", "every call of this agent was ended")
        return int(waiting.group(1))

    def flow(self) -> None:
        waiting = self.hotline()
        self.think(2, 6)
        if waiting and self.rng.random() < min(0.8, 0.1 + 0.1 * waiting):
            self.callback()
        else:
            self.new_call()
        roll = self.rng.random()
        if roll < 0.10:
            self.think(1, 3)
            self.recent()
        elif roll < 0.15:
            self.think(1, 3)
            self.go("GET", "/hotline/overview", marks=(b'id="calls-by-outcome"', b'id="callbacks-waiting"'))
        elif roll < 0.18:
            self.think(1, 3)
            self.sign_out_and_in()
            self.go("GET", "/hotline", marks=(b'id="start-call"',))
        self.think(3, 10)                   # the next caller

    def recover(self) -> None:
        """As a person's, then: end a call left open (at its checks: End call; after its teleTAN:
        I have passed it on) and give back a callback left taken (No answer)."""
        super().recover()
        _, _, page = self.go("GET", "/hotline", marks=(b'id="start-call"',), kind="GET /hotline (recovery)")
        for call_id in re.findall(f'<li><a href="/hotline/calls/({UUID})">'.encode(), page):
            call_path = f"/hotline/calls/{call_id.decode()}"
            _, _, call = self.go("GET", call_path, kind="GET /hotline/calls/{id} (recovery)")
            if b'id="call-form"' in call:
                self.go("POST", f"{call_path}/end", self.call_form(call, set(), outcome="other"), status=303,
                        location="/hotline?done=ended", kind="POST /hotline/calls/{id}/end (recovery)")
            elif b'id="passed-on"' in call:
                self.go("POST", f"{call_path}/passed-on", {"csrf": self.csrf}, status=303, location="/hotline?done=passed_on",
                        kind="POST /hotline/calls/{id}/passed-on (recovery)")
        _, _, queue = self.go("GET", "/hotline/callbacks", marks=(b'id="back-hotline"',), kind="GET /hotline/callbacks (recovery)")
        for callback_id in re.findall(f'<a href="/hotline/callbacks/({UUID})" class="continue">'.encode(), queue):
            self.go("POST", f"/hotline/callbacks/{callback_id.decode()}/outcome", {"csrf": self.csrf, "outcome": "no_answer"},
                    status=303, location=re.compile(r"^/hotline/callbacks\?notice=(no_answer|unreachable)$"),
                    kind="POST /hotline/callbacks/{id}/outcome (recovery)")

    # -- a call -------------------------------------------------------------------------------
    def call_page(self, call_id: str, from_callback: bool) -> tuple[bytes, list[str], list[str], set[str]]:
        """GET the call page at its checks: (page, all checks, required ones, ticked ones)."""
        _, _, page = self.go("GET", f"/hotline/calls/{call_id}", marks=(b'id="call-form"', b'name="nonce"', b'id="issue-teletan"'))
        checks = CHECK_RE.findall(page)
        if not checks:
            raise Failure("GET /hotline/calls/{id}: no checks", "no checkbox found")
        if from_callback != (TEXT["from_callback"].encode() in page.split(b"<h1>", 1)[1].split(b"</p>", 1)[0]):
            raise Failure("GET /hotline/calls/{id}: callback mark", f"expected from_callback={from_callback}")
        everything = [c[0].decode() for c in checks]
        required = [c[0].decode() for c in checks if c[2]]
        ticked = {c[0].decode() for c in checks if c[1]}
        return page, everything, required, ticked

    def call_form(self, page: bytes, ticked, **fields) -> list[tuple[str, str]]:
        """The call form as a browser posts it: csrf, nonce, the ticked checks, the text fields."""
        form = [("csrf", self.csrf), ("nonce", NONCE_RE.search(page).group(1).decode())]
        form += [("checks[]", c) for c in ticked]
        form += [("phone", fields.get("phone", "")), ("name", fields.get("name", "")), ("outcome", fields.get("outcome", ""))]
        return form

    def new_call(self) -> None:
        _, where, _ = self.go("POST", "/hotline/calls", {"csrf": self.csrf}, status=303, location=CALL_PATH_RE)
        call_id = CALL_PATH_RE.match(where).group(1)
        page, everything, required, ticked = self.call_page(call_id, from_callback=False)
        if ticked:
            raise Failure("GET /hotline/calls/{id}: new call with ticks", f"ticked {sorted(ticked)}")
        self.recorder.event("calls started")
        self.think(5, 15)                   # asking the checks
        optional = [c for c in everything if c not in required]
        roll = self.rng.random()
        if roll < 0.55:
            answers = set(required) | {c for c in optional if self.rng.random() < 0.5}
            self.issue_in_call(call_id, page, answers)
        elif roll < 0.85:
            answers = {c for c in everything if self.rng.random() < 0.6}
            typed, _, name = self.contacts.new(answers)
            self.think(3, 8)                # noting number and name
            self.go("POST", f"/hotline/calls/{call_id}/callback", self.call_form(page, answers, phone=typed, name=name),
                    status=303, location="/hotline?done=callback_queued")
            self.recorder.event("callbacks queued")
            self.hotline("?done=callback_queued", marks=(TEXT["done_callback_queued"].encode(),))
        else:
            answers = {c for c in everything if self.rng.random() < 0.3}
            outcome = self.rng.choice(END_OUTCOMES)
            self.go("POST", f"/hotline/calls/{call_id}/end", self.call_form(page, answers, outcome=outcome),
                    status=303, location="/hotline?done=ended")
            self.recorder.event("calls ended without teleTAN")
            self.hotline("?done=ended", marks=(TEXT["done_ended"].encode(),))

    def issue_in_call(self, call_id: str, page: bytes, answers: set[str]) -> None:
        """Issue teleTAN with `answers` ticked, the result page, Continue, the read-back (now and
        then misheard first), I have passed it on."""
        self.issue_gap()
        self.go("POST", f"/hotline/calls/{call_id}/issue", self.call_form(page, answers), status=303, location="/teletan/result")
        _, _, result = self.go("GET", "/teletan/result", marks=(TELETAN_MARK, b'id="continue-call"',
                                                                 f'name="call" value="{call_id}"'.encode()))
        teletan = valid_teletan(result)
        self.issued += 1
        self.recorder.event("teleTANs issued in calls")
        self.think(8, 20)                   # read out, group by group
        call_path = f"/hotline/calls/{call_id}"
        self.go("POST", "/teletan/done", {"csrf": self.csrf, "call": call_id}, status=303, location=call_path)
        _, _, step = self.go("GET", call_path, marks=(b'id="read-back"', b'id="passed-on"'), absent=(teletan.encode(),))
        self.think(3, 8)                    # the caller reads it back
        if self.rng.random() < 0.2:
            i = self.rng.randrange(10)
            wrong = teletan[:i] + self.rng.choice([c for c in ALPHABET if c != teletan[i]]) + teletan[i + 1:]
            self.go("POST", f"{call_path}/read-back", {"csrf": self.csrf, "read_back": wrong}, status=303, location=call_path)
            _, _, step = self.go("GET", call_path, marks=(b'id="read-back-differences"', b'id="read-back"'))
            self.read_back_result(step, "error", TEXT["differs"])
            self.recorder.event("read-backs misheard")
            self.think(2, 5)
        typed = f"{teletan[0:3]} {teletan[3:6]} {teletan[6:]}"
        self.go("POST", f"{call_path}/read-back", {"csrf": self.csrf, "read_back": typed.lower() if self.rng.random() < 0.3 else typed},
                status=303, location=call_path)
        _, _, step = self.go("GET", call_path, marks=(b'id="passed-on"',), absent=(b'id="read-back"',))
        self.read_back_result(step, "ok", TEXT["matches"])
        self.think(1, 3)
        self.go("POST", f"{call_path}/passed-on", {"csrf": self.csrf}, status=303, location="/hotline?done=passed_on")
        self.hotline("?done=passed_on", marks=(TEXT["done_passed_on"].encode(),))

    @staticmethod
    def read_back_result(page: bytes, css: str, text: str) -> None:
        match = READBACK_RESULT_RE.search(page)
        if not match or match.group(1).decode() != css or not html.unescape(match.group(2).decode()).startswith(text):
            found = match.group(0).decode() if match else "none"
            raise Failure(f"read-back result: not {css}", f"expected {css} {text!r}, found {found}")

    # -- a callback -----------------------------------------------------------------------------
    def callback(self) -> None:
        _, _, queue = self.go("GET", "/hotline/callbacks", marks=(b'id="back-hotline"',))
        takeable = [m.decode() for m in TAKE_RE.findall(queue)]
        if not takeable:
            self.recorder.event("queue looked at, nothing to take")
            return
        callback_id = self.rng.choice(takeable)
        self.think(0.5, 2)
        got, _, page = self.go("POST", f"/hotline/callbacks/{callback_id}/take", {"csrf": self.csrf},
                               status=303, location=f"/hotline/callbacks/{callback_id}", statuses=(409,))
        if got == 409:
            notice = NOTICE_RE.search(page)
            text = html.unescape(notice.group(1).decode()) if notice else ""
            if text not in (TEXT["taken_by_other"], TEXT["not_waiting"]):
                raise Failure("POST /hotline/callbacks/{id}/take: 409 without its notice", page_summary(page))
            self.recorder.conflicts["taken_by_other" if text == TEXT["taken_by_other"] else "not_waiting"] += 1
            return
        _, _, page = self.go("GET", f"/hotline/callbacks/{callback_id}", marks=(b'id="callback-phone"', b'id="outcome-reached"'))
        phone, name, attempts = PHONE_RE.search(page), NAME_RE.search(page), ATTEMPTS_RE.search(page)
        known = self.contacts.get(phone.group(1).decode()) if phone else None
        if not (phone and name and attempts) or not known or known[0] != html.unescape(name.group(1).decode()):
            raise Failure("GET /hotline/callbacks/{id}: wrong contact", "number and name are not the ones queued together")
        tried, maximum = int(attempts.group(1)), int(attempts.group(2))
        self.recorder.event("callbacks taken")
        self.think(5, 15)                   # calling
        roll = self.rng.random()
        outcome = "reached" if roll < 0.5 else "no_answer" if roll < 0.8 else "wrong_number" if roll < 0.9 else "refused"
        form = {"csrf": self.csrf, "outcome": outcome}
        path = f"/hotline/callbacks/{callback_id}/outcome"
        self.recorder.event(f"callback outcome {outcome}")
        if outcome == "reached":
            _, where, _ = self.go("POST", path, form, status=303, location=CALL_PATH_RE)
            call_id = CALL_PATH_RE.match(where).group(1)
            page, _, required, ticked = self.call_page(call_id, from_callback=True)
            if ticked != set(known[1]):
                raise Failure("GET /hotline/calls/{id}: first call's answers not ticked",
                              f"ticked {sorted(ticked)}, the first call answered {sorted(known[1])}")
            self.think(3, 8)
            if self.rng.random() < 0.85:
                self.issue_in_call(call_id, page, ticked | set(required))
            else:
                self.go("POST", f"/hotline/calls/{call_id}/end", self.call_form(page, ticked, outcome="not_eligible"),
                        status=303, location="/hotline?done=ended")
                self.hotline("?done=ended", marks=(TEXT["done_ended"].encode(),))
            return
        notice = outcome if outcome != "no_answer" else ("unreachable" if tried + 1 >= maximum else "no_answer")
        self.go("POST", path, form, status=303, location=f"/hotline/callbacks?notice={notice}")
        self.go("GET", f"/hotline/callbacks?notice={notice}", marks=(b'id="queue-notice"', TEXT[notice].encode()))


# -- sampling --------------------------------------------------------------------------------
def status_fields(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "Threads"):
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def open_fds(pid: int, prefix: str | None = None) -> int | None:
    """Open file descriptors of the process; with `prefix`, only those open on paths starting
    with it (an SQLite file and its -wal/-shm)."""
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    if prefix is None:
        return len(entries)
    count = 0
    for entry in entries:
        try:
            if os.readlink(f"/proc/{pid}/fd/{entry}").startswith(prefix):
                count += 1
        except OSError:
            pass
    return count


def pg_backends(database: str) -> list[int] | None:
    """The server processes of the connections to `database` (pg_stat_activity), this query's
    own not counted (psql as the role in PGUSER/PGPASSWORD, to the maintenance database)."""
    query = f"SELECT pid FROM pg_stat_activity WHERE datname = '{database}' AND pid <> pg_backend_pid()"
    try:
        out = psql(query, "-h", "127.0.0.1", "-p", os.environ.get("PGPORT", "5432"), "-d", "postgres", timeout=10)
        return [int(line) for line in out.split()]
    except (AssertionError, OSError, ValueError, subprocess.TimeoutExpired):
        return None


def pg_connections(database: str) -> int | None:
    pids = pg_backends(database)
    return None if pids is None else len(pids)


class Sampler(threading.Thread):
    def __init__(self, args, recorder: Recorder, t0: float, client_pid: int):
        super().__init__(daemon=True)
        self.args, self.recorder, self.t0, self.client_pid = args, recorder, t0, client_pid
        self.samples: list[dict] = []
        self.period_hwm: dict[int, int] = {}
        self.hwm_reset = False
        self.error: str | None = None

    def snapshot(self) -> dict:
        pid = self.args.portal_pid
        busy, total = machine_cpu()
        sample = {"status": status_fields(pid), "fds": open_fds(pid),
                  "cpu": {"portal": proc_cpu(pid), "postgres": 0.0, "client": proc_cpu(self.client_pid),
                          "busy": busy, "total": total}}
        if self.args.pg_database:
            backends = pg_backends(self.args.pg_database)
            sample["db"] = None if backends is None else len(backends)
            # CPU time of this database's backends (not of other databases on the same server).
            sample["backends"] = {b: proc_cpu(b) for b in backends or []}
        elif self.args.sqlite_file:
            sample["db"] = open_fds(pid, self.args.sqlite_file)
        return sample

    def run(self) -> None:
        try:
            step, period = self.args.sample, self.args.period
            self.hwm_reset = reset_peak_rss(self.args.portal_pid, "soak_load", "sign-in")
            previous = self.snapshot()
            previous["t"] = 0.0
            self.samples.append(self.flatten(previous, None, 0))
            done = 0
            k = 0
            while True:
                k += 1
                t = k * step
                time.sleep(max(0.0, self.t0 + t - time.monotonic()))
                sample = self.snapshot()
                sample["t"] = t
                if not sample["status"]:
                    self.error = f"the portal (pid {self.args.portal_pid}) is gone at t={t:g} s"
                    return
                requests = self.recorder.requests - done
                done += requests
                self.samples.append(self.flatten(sample, previous, requests))
                previous = sample
                if t % period == 0:  # the period ends: its peak, then a fresh high-water mark
                    self.period_hwm[int(t // period)] = sample["status"].get("VmHWM")
                    reset_peak_rss(self.args.portal_pid, "soak_load", "the previous period")
                if t >= self.args.duration:
                    return
        except Exception:
            self.error = traceback.format_exc()

    def flatten(self, sample: dict, previous: dict | None, requests: int) -> dict:
        row = {"t": sample["t"], "rss_kib": sample["status"].get("VmRSS"), "hwm_kib": sample["status"].get("VmHWM"),
               "threads": sample["status"].get("Threads"), "fds": sample["fds"], "db": sample.get("db"),
               "requests": requests}
        if previous:
            row["rps"] = requests / self.args.sample
            # CPU seconds used since the previous sample (postgres: the backends serving this
            # database; one opened since the previous sample counts with all its time).
            row["cpu"] = {k: round(max(0.0, sample["cpu"][k] - previous["cpu"][k]), 3)
                          for k in ("portal", "client", "busy")}
            before = previous.get("backends", {})
            row["cpu"]["postgres"] = round(sum(max(0.0, cpu - before.get(b, 0.0)) for b, cpu in sample.get("backends", {}).items()), 3)
        return row


# -- run ----------------------------------------------------------------------------------------
class Phases:
    """The driver's hold on the people before the measured run: everyone signs in, then warms
    up (three rounds, everyone at once), then waits for `go`. Greenlets switch only where they
    wait, so the counters need no lock (the threading module's locks, barrier and the Sampler
    thread are gevent's too, once locust is imported)."""

    def __init__(self, people: list[Person]):
        from gevent.event import Event
        self.waiting = list(people)       # handed to the locust users in order (their seeds)
        self.total = len(people)
        self.signed_in, self.warmed_up = 0, 0
        self.all_signed_in, self.all_warmed_up, self.go = Event(), Event(), Event()
        self.barrier: threading.Barrier | None = None


def soak_user_class(phases: Phases):
    """The locust user: one person, who signs in and warms up in on_start, then repeats its flow
    (the think time is in the flow, seeded per person) until the run's end stops it."""
    from locust import User, constant, task
    from locust.exception import StopUser

    class SoakUser(User):
        wait_time = constant(0)
        fixed_count = len(phases.waiting)

        def on_start(self) -> None:
            self.person = person = phases.waiting.pop(0)
            try:
                person.sign_in_fresh()
            except Failure as failure:
                person.recorder.failure(person.username, failure.key, failure.detail)
            except Exception:  # a bug in this script: reported; the phases must not wait for ever
                person.recorder.failure(person.username, "client exception", traceback.format_exc(limit=3))
            phases.signed_in += 1
            if phases.signed_in == phases.total:
                phases.all_signed_in.set()
            phases.all_signed_in.wait()
            if person.signed_in:
                self.warm_up()
            phases.warmed_up += 1
            if phases.warmed_up == phases.total:
                phases.all_warmed_up.set()
            phases.go.wait()
            try:
                person.think(0, 10)       # not everyone starts at once
            except StopRun:
                raise StopUser()

        def warm_up(self, rounds: int = 3) -> None:
            """All signed-in people load their start page at the same moment, a few times: the
            portal's database pool opens connections lazily, up to --database-pool-size, when
            requests wait for one; this burst makes it open what the highest concurrency needs
            before the run, so that a rise of connections later in the run is not the pool
            filling up but a leak."""
            person = self.person
            for _ in range(rounds):
                try:
                    phases.barrier.wait(timeout=60)
                except threading.BrokenBarrierError:
                    return
                try:
                    person.go("GET", "/", marks=person.home_marks, kind="GET / (warm-up)")
                except Failure as failure:
                    person.recorder.failure(person.username, failure.key, failure.detail)
                except Exception:  # a bug in this script: reported
                    person.recorder.failure(person.username, "client exception", traceback.format_exc(limit=3))

        @task
        def flow(self) -> None:
            try:
                self.person.step()
            except StopRun:
                raise StopUser()
            except Exception:  # a bug in this script: reported, never silent; the person stops
                self.person.recorder.failure(self.person.username, "client exception", traceback.format_exc(limit=3))
                raise StopUser()

        def on_stop(self) -> None:
            self.person.conn.close()

    return SoakUser


def run(args) -> int:
    from gevent import sleep as gevent_sleep
    from locust.env import Environment
    from locust.stats import RequestStats

    if not 1 <= args.port <= 65535 or not args.portal_pid:
        sys.exit("soak_load: --port and --portal-pid are required")
    if not (0 <= args.officers <= MAX_PEOPLE and 0 <= args.agents <= MAX_PEOPLE and args.officers + args.agents > 0):
        sys.exit(f"soak_load: --officers and --agents must be 0..{MAX_PEOPLE}, not both 0")
    if not (args.sample > 0 and args.period % args.sample == 0 and args.duration % args.period == 0
            and 0 < args.duration <= MAX_SECONDS):
        sys.exit("soak_load: --duration must be a multiple of --period, --period a multiple of --sample")

    rng = random.Random(args.seed)
    contacts = Contacts()
    # The clock of the measured run starts after the sign-ins; the recorder is re-based then.
    recorder = Recorder(time.monotonic())
    people: list[Person] = []
    for i in range(1, args.officers + 1):
        people.append(SoakOfficer(f"tt-bench-{i:02d}", args, recorder, 0.0, rng.randrange(1 << 30)))
    for i in range(1, args.agents + 1):
        people.append(SoakAgent(f"tt-hotbench-{i:02d}", args, recorder, 0.0, rng.randrange(1 << 30), contacts=contacts))
    Person.signin_gate = threading.BoundedSemaphore(SIGNIN_CONCURRENCY_START)
    # Until the measured run starts, nobody's pause may end the run.
    for p in people:
        p.t_end = float("inf")

    phases = Phases(people)
    env = Environment(user_classes=[soak_user_class(phases)], host=f"http://127.0.0.1:{args.port}")
    recorder.fire = env.events.request.fire
    # Locust's own stats (env.stats) hold the whole run, the sign-in phase included; one more
    # RequestStats per report period, by the time a request ended (after the end: the last).
    periods = int(args.duration // args.period)
    period_stats = [RequestStats() for _ in range(periods)]
    measuring = False

    def per_period(request_type, name, response_time, response_length, exception=None, **_):
        if not measuring:
            return
        t = time.monotonic() - recorder.t0
        stats = period_stats[min(periods, max(1, -int(-t // args.period))) - 1]
        stats.log_request(request_type, name, response_time, response_length)
        if exception:
            stats.log_error(request_type, name, exception)

    env.events.request.add_listener(per_period)
    runner = env.create_local_runner()

    rss_before = status_fields(args.portal_pid)
    started = time.monotonic()
    runner.start(len(people), spawn_rate=len(people))
    phases.all_signed_in.wait()
    signin_seconds = time.monotonic() - started
    phases.barrier = threading.Barrier(max(1, sum(p.signed_in for p in people)))
    phases.all_warmed_up.wait()
    db_after_warm_up = pg_connections(args.pg_database) if args.pg_database else None
    signin_requests = env.stats.total.num_requests
    signin_failures = recorder.failure_count
    rss_after_signin = status_fields(args.portal_pid)
    print(f"soak_load: {sum(p.signed_in for p in people)} of {len(people)} signed in ({signin_seconds:.1f} s, "
          f"{signin_failures} failure(s)); running {args.duration:g} s: {args.officers} officers, {args.agents} hotline agents, "
          f"think time x{args.think:g}", file=sys.stderr)

    # Measured run: t = 0 now.
    Person.signin_gate = threading.BoundedSemaphore(SIGNIN_CONCURRENCY_RUN)
    t0 = time.monotonic()
    recorder.t0 = t0
    t_end = t0 + args.duration
    for p in people:
        p.t_end = t_end
    measuring = True
    sampler = Sampler(args, recorder, t0, os.getpid())
    sampler.start()
    phases.go.set()
    next_note = 60.0
    while runner.user_count and time.monotonic() < t_end + args.timeout + 30:
        gevent_sleep(1.0)
        if time.monotonic() - t0 >= next_note and time.monotonic() < t_end:
            last = sampler.samples[-1] if sampler.samples else {}
            print(f"soak_load: {next_note:4.0f} s: {env.stats.total.num_requests - signin_requests} requests, "
                  f"{recorder.failure_count} failure(s), RSS {fmt_mb(last.get('rss_kib'))}, fds {last.get('fds')}, "
                  f"db {last.get('db')}", file=sys.stderr)
            next_note += 60.0
        if sampler.error:
            break
    sampler.join(args.sample * 2 + 15)
    stuck = [g.args[0].person.username for g in runner.user_greenlets if g.args and hasattr(g.args[0], "person")]
    stuck = stuck or ([f"{runner.user_count} user(s)"] if runner.user_count else [])
    runner.quit()
    broken = sampler.error or (f"{len(stuck)} person(s) did not stop: {', '.join(stuck[:5])}" if stuck else None)

    # Per period.
    rows = []
    for p in range(1, periods + 1):
        lo, hi = (p - 1) * args.period, p * args.period
        reqs = period_stats[p - 1].total
        samples = [s for s in sampler.samples if lo < s["t"] <= hi]
        cpu = Counter()
        for s in samples:
            cpu.update(s.get("cpu", {}))
        seconds = len(samples) * args.sample or args.period

        def top(key, samples=samples):
            values = [s[key] for s in samples if s.get(key) is not None]
            return max(values) if values else None

        def last(key, samples=samples):
            values = [s[key] for s in samples if s.get(key) is not None]
            return values[-1] if values else None

        rows.append({
            "period": p, "from_s": lo, "to_s": hi, "requests": reqs.num_requests, "failures": reqs.num_failures,
            "requests_per_s": reqs.num_requests / args.period, **latencies(reqs),
            "rss_peak_sampled_kib": top("rss_kib"), "rss_hwm_kib": sampler.period_hwm.get(p),
            "fds_max": top("fds"), "fds_last": last("fds"), "db_max": top("db"), "db_last": last("db"),
            "threads_max": top("threads"),
            "cpu_cores": {k: round(cpu.get(k, 0.0) / seconds, 3) for k in ("portal", "postgres", "client", "busy")},
        })
    result = {
        "officers": args.officers, "agents": args.agents, "duration_seconds": args.duration, "period_seconds": args.period,
        "sample_seconds": args.sample, "think_scale": args.think, "seed": args.seed,
        "database": "postgres" if args.pg_database else "sqlite",
        "broken": broken,
        "signin": {"seconds": round(signin_seconds, 2), "requests": signin_requests, "failures": signin_failures,
                   "rss_before_kib": rss_before.get("VmRSS"), "rss_after_kib": rss_after_signin.get("VmRSS"),
                   "hwm_kib": rss_after_signin.get("VmHWM"), "db_after_warm_up": db_after_warm_up},
        "requests": env.stats.total.num_requests, "failures": recorder.failure_count,
        "failed_requests": env.stats.total.num_failures,
        "failure_kinds": dict(recorder.failure_kinds.most_common()), "failure_details": recorder.failures,
        "take_conflicts": dict(recorder.conflicts), "events": dict(sorted(recorder.events.items())),
        "reconnects": sum(max(0, p.conn.connects - 1) for p in people),
        "hwm_reset": sampler.hwm_reset,
        "periods": rows,
        "latency_by_kind_ms": {e.name: {"count": e.num_requests, "mean": e.avg_response_time,
                                        **{f"p{q}": percentile(e, q) for q in (50, 90, 99)},
                                        "max": e.max_response_time}
                               for e in sorted(env.stats.entries.values(), key=lambda e: e.name)},
        "samples": sampler.samples,
    }
    with open(args.json_out, "w") as f:
        json.dump(result, f, indent=1)
    if broken:
        print(f"soak_load: the run broke: {broken}", file=sys.stderr)
        return 2
    return 0


def percentile(stats, q: int) -> float:
    """Locust's percentile of a StatsEntry (ms, rounded to 2 significant digits above 100 ms),
    never above the exact maximum (rounding up would show a p99 above the max)."""
    return min(stats.get_response_time_percentile(q / 100), stats.max_response_time)


def latencies(stats) -> dict:
    """p50, p99 and max (ms) of a locust StatsEntry; None without requests."""
    if not stats.num_requests:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"p50_ms": percentile(stats, 50), "p99_ms": percentile(stats, 99), "max_ms": stats.max_response_time}


# -- report -------------------------------------------------------------------------------------
def fmt_mb(kib) -> str:
    return "n/a" if kib is None else f"{kib * 1024 / 1e6:.1f} MB"


def fmt(value, spec=".1f") -> str:
    return "n/a" if value is None else f"{value:{spec}}"


def verdicts(load: dict, audit_ok: bool | None, audit_text: str) -> list[tuple[str, str, str]]:
    """(target, measured, PASS/FAIL/n/a). The rules:

    * zero failures: no failed request and no other failure (a missing mark, a client error)
      in the sign-in phase or the run;
    * RSS flat: the last period's RSS peak is within 10 % of the second period's, either way
      (0.90 <= last / second <= 1.10). The peak of a period is VmHWM, the kernel's exact
      high-water mark, reset at the period's start (so it includes every short spike, e.g. a
      sign-in's 16 MiB yescrypt hash: sign-ins in the run happen one at a time, see
      SIGNIN_CONCURRENCY_RUN); the highest 5 s VmRSS sample is shown next to it;
    * no growth of fds / database connections: the highest 5 s sample of the last period is not
      above the highest sample of the second period;
    * `portal audit verify --full` passes on the database afterwards.
    With fewer than 3 periods, the first period stands in for the second.
    """
    rows = load["periods"]
    ref = rows[1] if len(rows) >= 3 else rows[0]
    end = rows[-1]
    checks = []
    failures = load["failures"]  # the sign-in phase's included
    checks.append(("zero failed requests", f"{failures} failure(s) in {load['requests']} requests",
                   "PASS" if failures == 0 else "FAIL"))
    a, b = end.get("rss_hwm_kib"), ref.get("rss_hwm_kib")
    if a and b:
        ratio = a / b
        checks.append((f"RSS peak: period {end['period']} within 10 % of period {ref['period']}",
                       f"{fmt_mb(a)} / {fmt_mb(b)} = {ratio:.3f}", "PASS" if abs(ratio - 1) <= RSS_TOLERANCE else "FAIL"))
    else:
        checks.append(("RSS peak within 10 %", "no VmHWM", "n/a"))
    for key, label in (("fds_max", "open fds"), ("db_max", "database connections")):
        a, b = end.get(key), ref.get(key)
        if a is None or b is None:
            checks.append((f"{label}: no growth", "not sampled", "n/a"))
        else:
            checks.append((f"{label}: period {end['period']} max <= period {ref['period']} max", f"{a} vs {b}",
                           "PASS" if a <= b else "FAIL"))
    checks.append(("portal audit verify --full", audit_text[:46],
                   "n/a" if audit_ok is None else "PASS" if audit_ok else "FAIL"))
    return checks


def report(args) -> int:
    load = json.load(open(args.load))
    env = os.environ
    out = []
    out.append("")
    out.append(f"Soak: {load['officers']} officers + {load['agents']} hotline agents, {load['duration_seconds']:g} s, "
               f"database {load['database']}, think time x{load['think_scale']:g}")
    for label, key in (("portal", "SOAK_BIN"), ("build", "SOAK_BUILD"), ("git", "BENCH_GIT"), ("machine", "BENCH_MACHINE"),
                       ("database", "BENCH_PG_VERSION"), ("portal flags", "SOAK_FLAGS")):
        if env.get(key):
            out.append(f"  {label + ':':<14}{env[key]}")
    s = load["signin"]
    out.append(f"  sign-in phase and warm-up: {s['requests']} requests, sign-ins {s['seconds']:.1f} s, {s['failures']} failure(s); "
               f"RSS {fmt_mb(s['rss_before_kib'])} before, {fmt_mb(s['rss_after_kib'])} after (peak {fmt_mb(s['hwm_kib'])})"
               + (f"; {s['db_after_warm_up']} database connections" if s.get("db_after_warm_up") is not None else ""))
    out.append("")
    unit = "min" if load["period_seconds"] == 60 else f"{load['period_seconds']:g}s"
    out.append(f"  {unit:>4} {'requests':>8} {'fail':>4} {'req/s':>6} {'p50 ms':>7} {'p99 ms':>7} "
               f"{'RSS peak':>9} {'RSS max5s':>9} {'fds':>4} {'db':>3} {'thr':>3} {'portal':>6} {'pg':>5} {'client':>6} {'other':>5}")
    for r in load["periods"]:
        c = r["cpu_cores"]
        other = max(0.0, c["busy"] - c["portal"] - c["postgres"] - c["client"])
        out.append(f"  {r['period']:>4} {r['requests']:>8} {r['failures']:>4} {r['requests_per_s']:>6.1f} {fmt(r['p50_ms']):>7} "
                   f"{fmt(r['p99_ms']):>7} {fmt_mb(r['rss_hwm_kib']).replace(' MB', ''):>9} "
                   f"{fmt_mb(r['rss_peak_sampled_kib']).replace(' MB', ''):>9} {fmt(r['fds_max'], 'd'):>4} "
                   f"{fmt(r['db_max'], 'd'):>3} {fmt(r['threads_max'], 'd'):>3} {c['portal']:>6.2f} {c['postgres']:>5.2f} "
                   f"{c['client']:>6.2f} {other:>5.2f}")
    out.append("  (RSS in MB = 10^6 bytes: peak = VmHWM of the period, max5s = highest 5 s VmRSS sample; fds, db = highest")
    out.append("   5 s sample; thr = portal threads; CPU in cores: portal, pg = the database's backends, this client,")
    out.append("   other = the rest of the machine)")
    out.append("")
    out.append(f"  requests {load['requests']} (sign-in phase included), failures {load['failures']}, "
               f"take conflicts {sum(load['take_conflicts'].values())}"
               + (f" {load['take_conflicts']}" if load["take_conflicts"] else "") + ", "
               f"reconnects {load['reconnects']}")
    out.append("  flows: " + ", ".join(f"{k} {v}" for k, v in load["events"].items()))
    if args.rows:
        out.append(f"  rows afterwards: {args.rows}")
    out.append(f"  portal log: {args.portal_log_problems} warning/error line(s)")
    kinds = load["latency_by_kind_ms"]
    out.append("")
    out.append("  latency by request (ms, whole run):     count     p50     p99     max")
    for kind, v in sorted(kinds.items(), key=lambda kv: -kv[1]["count"]):
        out.append(f"    {kind[:36]:<36} {v['count']:>7} {fmt(v.get('p50')):>7} {fmt(v.get('p99')):>7} {fmt(v.get('max')):>7}")
    if load["failures"]:
        out.append("")
        out.append("  failures by kind: " + "; ".join(f"{k} x{v}" for k, v in list(load["failure_kinds"].items())[:10]))
        out.append("  first failures:")
        for f in load["failure_details"][:args.show_failures]:
            out.append(f"    t={f['t']:.1f}s {f['who']}: {f['what']}\n      {f['detail'][:600]}")
    audit_ok = None if args.audit_verify == "not run" else not args.audit_verify.startswith("FAILED")
    checks = verdicts(load, audit_ok, args.audit_verify)
    out.append("")
    out.append(f"  {'Target':<57}{'measured':<48}result")
    for name, value, verdict in checks:
        out.append(f"    {name:<55}{value:<48}{verdict}")
    out.append("")
    print("\n".join(out))
    if args.json_append:
        entry = dict(load)
        entry.pop("samples", None)
        entry["verdicts"] = checks
        entry["audit_verify"] = args.audit_verify
        entry["facts"] = {k: env.get(k) for k in ("SOAK_BIN", "SOAK_BUILD", "BENCH_GIT", "BENCH_MACHINE", "BENCH_PG_VERSION",
                                                  "SOAK_FLAGS")}
        entry["time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(args.json_append, "a") as f:
            f.write(json.dumps(entry) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="the load; writes JSON")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--portal-pid", type=int, required=True)
    r.add_argument("--officers", type=int, default=50)
    r.add_argument("--agents", type=int, default=50)
    r.add_argument("--password", default="Bench-Pass-1")
    r.add_argument("--duration", type=float, default=600, help="seconds of the measured run (after the sign-in phase)")
    r.add_argument("--period", type=float, default=60, help="seconds per report row")
    r.add_argument("--sample", type=float, default=5, help="seconds between samples")
    r.add_argument("--think", type=float, default=1.0, help="scale of every pause (1 = the documented think times)")
    r.add_argument("--timeout", type=float, default=30.0, help="socket timeout per request, seconds")
    r.add_argument("--seed", type=int, default=2026)
    r.add_argument("--pg-database", help="count this PostgreSQL database's connections (PGUSER/PGPASSWORD)")
    r.add_argument("--sqlite-file", help="count the portal's descriptors on this SQLite file")
    r.add_argument("--json-out", required=True)
    p = sub.add_parser("report", help="table and verdicts from the JSON of run")
    p.add_argument("--load", required=True)
    p.add_argument("--audit-verify", default="not run", help="its last line, 'FAILED: ...' if it failed")
    p.add_argument("--portal-log-problems", type=int, default=0)
    p.add_argument("--rows", default="")
    p.add_argument("--show-failures", type=int, default=5)
    p.add_argument("--json-append")
    args = parser.parse_args()
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
