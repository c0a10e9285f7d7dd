#!/usr/bin/env python3
"""Seeds the portal's audit trail with N realistic entries that form a correct hash chain, for
scripts/bench-audit.sh. The schema must exist (`portal migrate`) and audit_log must be empty.

    audit_seed.py --database postgres://teletan:teletan@127.0.0.1:5432/teletan_bench --rows 10000000
    audit_seed.py --database sqlite:/tmp/bench.sqlite --rows 1000000

The chain rule (docs/architecture.md; the same as Tests/support/audit_chain.py, written here
again for speed): hash = sha256_hex(prev_hash || "\\n" || canonical JSON), the canonical JSON
having the sorted keys action, actor, address, at_ms, details, outcome, request_id, role, seq,
subject without whitespace and without null values; genesis = 64 zeros; seq from 1.

What is generated (fixed random seed, so two runs give the same data):
  * times over --days days (400) ending now, following office hours (weekdays 7-19 h busy,
    evenings and nights quiet, weekends a fifth), never decreasing with seq;
  * a few hundred users with a skewed (Zipf) share of the entries, each with fixed roles and a
    usual client address; failed sign-ins also come from mistyped or unknown names;
  * the actions the portal writes, in a realistic mix (teleTAN issuance about 38 %, sign-in,
    sign-out and session expiry, the hotline's call and callback entries, refusals, revocations,
    approvals, admin views), outcomes mostly success;
  * teleTAN entries carry a 64-hex fingerprint as subject, calls "call:<uuid>", callbacks
    "callback:<uuid>"; details as the portal encodes them (sorted keys, e.g. {"type":"TEST",...});
  * a handful of "escaping probes" (quotes, backslashes, control characters, U+2028, emoji,
    non-ASCII) in actor and details, so that `portal audit verify` also checks the JSON escaping.

PostgreSQL: the non-primary indexes of audit_log are read from pg_indexes, dropped, the rows
streamed with COPY FROM STDIN through psql, the indexes recreated, ANALYZE run. SQLite: the
same with Python's sqlite3 module (occurred_at stored as Fluent's SQLite driver stores a Date:
a REAL of seconds since 1970). Then audit_head is set to the last entry. Prints one JSON line of
timings on stdout.
"""
from __future__ import annotations

import argparse
import bisect
import datetime as dt
import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import uuid

from support import database  # Tests/support, on PYTHONPATH (scripts/bench-audit.sh)

GENESIS = "0" * 64
COLUMNS = "seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash"
DAY_MS = 86_400_000

SURNAMES = ("mueller schmidt schneider fischer weber meyer wagner becker schulz hoffmann schaefer koch bauer richter "
            "klein wolf schroeder neumann schwarz zimmermann braun krueger hofmann hartmann lange schmitt werner "
            "schmitz krause meier lehmann schmid schulze maier koehler herrmann koenig walter mayer huber kaiser "
            "fuchs peters lang scholz moeller weiss jung hahn schubert vogel friedrich keller guenther frank berger "
            "winkler roth beck lorenz baumann franke albrecht schuster simon ludwig boehm winter kraus martin "
            "schumacher kraemer vogt stein jaeger otto sommer gross seidel heinrich brandt haas schreiber graf "
            "schulte dietrich ziegler kuhn kuehn pohl engel horn busch bergmann thomas voigt sauer arnold wolff "
            "pfeiffer").split()


def json_str(text: str) -> str:
    """A JSON string by the rule (= json.dumps with ensure_ascii=False; C speed)."""
    return json.dumps(text, ensure_ascii=False)


def details_json(values: dict) -> str:
    """How the portal encodes details: sorted keys, no whitespace, "/" unescaped."""
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def iso(at_ms: int) -> str:
    moment = dt.datetime.fromtimestamp(at_ms / 1000, dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + "Z"


class Users:
    """A few hundred accounts: name, roles (as the audit stores them: sorted, comma-joined),
    usual address; drawn with a Zipf-like skew (the first is the busiest)."""

    def __init__(self, rng: random.Random, count: int):
        names, seen = [], set()
        while len(names) < count:
            name = f"{rng.choice('abcdefghijklmnoprstuvwz')}.{rng.choice(SURNAMES)}"
            if name in seen:
                name = f"{name}{len([n for n in seen if n.startswith(name)]) + 1}"
            seen.add(name)
            names.append(name)
        self.users = []
        for index, name in enumerate(names):
            r = rng.random()
            roles = ("officer" if r < 0.55 else "hotline" if r < 0.85 else "event,officer" if r < 0.96
                     else "hotline,officer")
            if index % 97 == 5:
                roles = "admin"
            elif index % 131 == 7:
                roles = "admin,officer"
            address = (f"10.{rng.randrange(1, 40)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}" if rng.random() < 0.8
                       else f"2001:db8:{rng.randrange(0, 65536):x}::{rng.randrange(1, 65536):x}")
            self.users.append((name, roles, address))
        weights = [1 / (rank ** 1.07) for rank in range(1, count + 1)]
        total = sum(weights)
        self.cumulative, acc = [], 0.0
        for weight in weights:
            acc += weight / total
            self.cumulative.append(acc)
        self.by_role = {}
        for index, (_, roles, _) in enumerate(self.users):
            for role in roles.split(","):
                self.by_role.setdefault(role, []).append(index)

    def pick(self, rng: random.Random, role: str | None = None):
        """A user drawn by the skew; with `role`, the first drawn who has it (fallback: any of them)."""
        for _ in range(8):
            user = self.users[min(bisect.bisect_left(self.cumulative, rng.random()), len(self.users) - 1)]
            if role is None or role in user[1].split(","):
                return user
        return self.users[rng.choice(self.by_role[role])]


class Clock:
    """Maps entry i of n to a time in [start, end]: the cumulative activity of office hours
    (Europe/Berlin, approximated as UTC+1) inverted hour by hour, so times rise with seq."""

    def __init__(self, start_ms: int, end_ms: int, n: int):
        self.start_ms, self.n = start_ms, n
        hours = max(1, (end_ms - start_ms) // 3_600_000)
        self.cumulative = [0.0]
        self.weights = []
        for h in range(hours):
            local = dt.datetime.fromtimestamp((start_ms + h * 3_600_000) / 1000 + 3600, dt.timezone.utc)
            hour, weekend = local.hour, local.weekday() >= 5
            weight = 1.0 if 7 <= hour < 19 else 0.25 if 19 <= hour < 22 or hour == 6 else 0.04
            if weekend:
                weight *= 0.2
            self.weights.append(weight)
            self.cumulative.append(self.cumulative[-1] + weight)
        self.total = self.cumulative[-1]
        self.hour = 0

    def at(self, i: int) -> int:
        target = (i + 0.5) / self.n * self.total
        while self.cumulative[self.hour + 1] < target:   # i only grows: the hour pointer too
            self.hour += 1
        fraction = (target - self.cumulative[self.hour]) / self.weights[self.hour]
        return self.start_ms + int((self.hour + fraction) * 3_600_000)


PROBES = [  # strings that exercise the escaping rule (no NUL: PostgreSQL text cannot hold it)
    'Ünïcødé "quoted" name',
    "back\\slash and /slash/",
    "tab\tnewline\ncr\rbell\x07 esc\x1b unit\x1f del\x7f",
    "line\u2028para\u2029sep",
    "emoji 😀 中文 ﬀ",
    "' OR 1=1 --",
    "=cmd|' /C calc'!A0",
]


def entries(rows: int, days: int, end_ms: int, seed: int, user_count: int):
    """Yields (seq, at_ms, actor, role, action, outcome, address, request_id, subject, details,
    prev_hash, hash), correctly chained."""
    rng = random.Random(seed)
    users = Users(rng, user_count)
    clock = Clock(end_ms - days * DAY_MS, end_ms, rows)
    randbits, rand = rng.getrandbits, rng.random
    sha256 = hashlib.sha256
    prev = GENESIS
    probe_every = max(1, rows // 50)
    # action, outcome, cumulative share
    mix = [
        ("teletan.issue", 0.38), ("signin", 0.50), ("signout", 0.56), ("session.expired", 0.64),
        ("hotline.call.started", 0.70), ("hotline.call.checks", 0.745), ("hotline.call.ended", 0.80),
        ("hotline.readback", 0.84), ("signin.failure", 0.87), ("teletan.refused", 0.885),
        ("hotline.callback.queued", 0.90), ("hotline.callback.taken", 0.91), ("hotline.callback.attempt", 0.925),
        ("hotline.callback.expired", 0.93), ("teletan.expired_unshown", 0.94), ("teletan.revoke", 0.945),
        ("access.denied", 0.955), ("event.approval.requested", 0.962), ("event.approval.given", 0.968),
        ("event.approval.declined", 0.970), ("audit.view", 1.0),
    ]
    kinds = [kind for kind, _ in mix]
    bounds = [bound for _, bound in mix]
    valid_for = {"TEST": 3_600_000, "EVENT": 2 * DAY_MS}
    refusals = ("form_already_used", "teletan_waiting", "user_day_limit", "interval", "service_hour_limit")
    for seq in range(1, rows + 1):
        at_ms = clock.at(seq - 1)
        kind = kinds[bisect.bisect_left(bounds, rand())]
        actor = role = address = request_id = subject = None
        outcome, details = "success", "{}"
        request_id = "%032x" % randbits(128)
        if kind == "teletan.issue":
            actor, role, address = users.pick(rng, "officer" if rand() < 0.55 else "hotline")
            action = kind
            subject = "%064x" % randbits(256)
            if "event" in role and rand() < 0.3:
                details = details_json({"type": "EVENT", "health_authority": f"GA-{randbits(8) % 40 + 1:03d}",
                                        "valid_until": iso(at_ms + valid_for["EVENT"])})
            elif "hotline" in role:
                details = details_json({"type": "TEST", "call": str(uuid.UUID(int=randbits(128), version=4)),
                                        "valid_until": iso(at_ms + valid_for["TEST"])})
            else:
                details = details_json({"type": "TEST", "valid_until": iso(at_ms + valid_for["TEST"])})
        elif kind == "teletan.refused":
            actor, role, address = users.pick(rng)
            action, outcome = "teletan.issue", "refused"
            details = details_json({"type": "TEST", "reason": refusals[randbits(8) % len(refusals)]})
        elif kind == "signin":
            actor, role, address = users.pick(rng)
            action = kind
        elif kind == "signin.failure":
            action, outcome = "signin", "failure"
            name, role, address = users.pick(rng)
            role = None
            r = rand()
            actor = name if r < 0.6 else name.upper() if r < 0.7 else name[:-1] if r < 0.85 else f"user{randbits(16)}"
            if rand() < 0.1:
                address = f"198.51.100.{randbits(8) % 254 + 1}"
            details = details_json({"reason": "bad_credentials" if rand() < 0.93 else "locked"})
        elif kind in ("signout", "session.expired"):
            actor, role, address = users.pick(rng)
            action = kind
            if kind == "session.expired":
                role = address = request_id = None
        elif kind.startswith("hotline.call") or kind == "hotline.readback":
            actor, role, address = users.pick(rng, "hotline")
            action = kind
            if kind == "hotline.readback":
                subject = "%064x" % randbits(256)
                outcome = "success" if rand() < 0.9 else "failure"
                details = details_json({"attempt": str(1 + (randbits(2) == 0)),
                                        "call": str(uuid.UUID(int=randbits(128), version=4)),
                                        "result": "matches" if outcome == "success" else "differs"})
            else:
                subject = f"call:{uuid.UUID(int=randbits(128), version=4)}"
                if kind == "hotline.call.ended":
                    details = details_json({"outcome": ("teletan_issued", "teletan_issued", "teletan_issued",
                                                        "callback", "declined", "abandoned")[randbits(8) % 6]})
                elif kind == "hotline.call.checks":
                    details = details_json({"answered": str(3 + randbits(2) % 3)})
        elif kind.startswith("hotline.callback"):
            action = kind
            subject = f"callback:{uuid.UUID(int=randbits(128), version=4)}"
            if kind == "hotline.callback.expired":
                request_id = None
                details = details_json({"reason": "retention"})
            else:
                actor, role, address = users.pick(rng, "hotline")
                if kind == "hotline.callback.attempt":
                    details = details_json({"result": ("reached", "no_answer", "busy")[randbits(8) % 3]})
        elif kind == "teletan.expired_unshown":
            actor = users.pick(rng)[0]
            action, outcome, request_id = kind, "failure", None
            subject = "%064x" % randbits(256)
            details = details_json({"type": "TEST", "issued_at": iso(at_ms - 600_000)})
        elif kind == "teletan.revoke":
            actor, role, address = users.pick(rng, "officer")
            action = kind
            subject = "%064x" % randbits(256)
            details = details_json({"type": "TEST", "result": "revoked"})
        elif kind == "access.denied":
            actor, role, address = users.pick(rng)
            action, outcome = kind, "refused"
            details = details_json({"method": "GET", "path": ("/hotline", "/admin/audit", "/event")[randbits(8) % 3]})
        elif kind.startswith("event.approval"):
            actor, role, address = users.pick(rng, "event")
            action = kind
            subject = f"event-request:{uuid.UUID(int=randbits(128), version=4)}"
            details = details_json({"health_authority": f"GA-{randbits(8) % 40 + 1:03d}"})
        else:  # audit.view
            actor, role, address = users.pick(rng, "admin")
            action = kind
            details = details_json({"page": "search"})
        if seq % probe_every == 3 or 1 < seq <= len(PROBES) + 1:
            probe = PROBES[seq % len(PROBES)]
            action, outcome, role, subject = "signin", "failure", None, None
            actor = probe
            details = details_json({"reason": "bad_credentials", "typed": probe})

        # The canonical JSON, keys in sorted order (action, actor, address, at_ms, details, outcome,
        # request_id, role, seq, subject); address, outcome, request_id, role and subject are
        # plain ASCII without anything to escape.
        parts = ['{"action":' + json_str(action)]
        if actor is not None:
            parts.append('"actor":' + json_str(actor))
        if address is not None:
            parts.append('"address":"' + address + '"')
        parts.append('"at_ms":%d' % at_ms)
        parts.append('"details":' + json_str(details))
        parts.append('"outcome":"' + outcome + '"')
        if request_id is not None:
            parts.append('"request_id":"' + request_id + '"')
        if role is not None:
            parts.append('"role":"' + role + '"')
        parts.append('"seq":%d' % seq)
        if subject is not None:
            parts.append('"subject":"' + subject + '"')
        canonical = ",".join(parts) + "}"
        digest = sha256((prev + "\n" + canonical).encode()).hexdigest()
        yield (seq, at_ms, actor, role, action, outcome, address, request_id, subject, details, prev, digest)
        prev = digest


# --- PostgreSQL --------------------------------------------------------------------------------

def psql(url: str, sql: str) -> str:
    try:
        return database.psql(sql, url, timeout=None)  # a seed of millions of rows takes its time
    except AssertionError as error:
        sys.exit(f"audit_seed: {error}")


_COPY_ESCAPE = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def seed_postgres(url: str, args) -> dict:
    timings = {}
    if psql(url, "SELECT EXISTS (SELECT 1 FROM audit_log)").strip() != "f":
        sys.exit("audit_seed: audit_log is not empty (reset the database and run `portal migrate` first)")
    indexes = [line.split("|", 1) for line in psql(url, """
        SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'audit_log'
          AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'audit_log'::regclass)
        ORDER BY indexname""").splitlines() if line]
    if indexes:
        psql(url, "".join(f'DROP INDEX "{name}";\n' for name, _ in indexes))
    started = time.monotonic()
    copy = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c",
                             f"COPY audit_log ({COLUMNS}) FROM STDIN"],
                            stdin=subprocess.PIPE, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})
    out = copy.stdin
    buffer, last = [], None
    for row in entries(args.rows, args.days, args.end_ms, args.seed, args.users):
        seq, at_ms, actor, role, action, outcome, address, request_id, subject, details, prev, digest = row
        occurred = dt.datetime.fromtimestamp(at_ms // 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S") + ".%03d+00" % (at_ms % 1000)
        if actor is not None and ("\\" in actor or "\t" in actor or "\n" in actor or "\r" in actor):
            actor = actor.translate(_COPY_ESCAPE)
        if "\\" in details or "\t" in details or "\n" in details or "\r" in details:
            details = details.translate(_COPY_ESCAPE)
        buffer.append("\t".join((str(seq), occurred, actor if actor is not None else "\\N", role or "\\N", action, outcome,
                                 address or "\\N", request_id or "\\N", subject or "\\N", details, prev, digest)))
        if len(buffer) >= 5000:
            out.write(("\n".join(buffer) + "\n").encode())
            buffer.clear()
            progress(seq, args.rows, started)
        last = (seq, digest)
    if buffer:
        out.write(("\n".join(buffer) + "\n").encode())
    out.close()
    if copy.wait() != 0:
        sys.exit("audit_seed: COPY failed")
    timings["generate_and_copy_s"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    statements = ["SET maintenance_work_mem = '512MB';"] + [definition + ";" for _, definition in indexes]
    psql(url, "\n".join(statements))
    timings["indexes_s"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    psql(url, f"UPDATE audit_head SET seq = {last[0]}, hash = '{last[1]}' WHERE id = 1;\nANALYZE audit_log;")
    timings["analyze_s"] = round(time.monotonic() - started, 1)
    timings["indexes"] = [name for name, _ in indexes]
    return timings


# --- SQLite --------------------------------------------------------------------------------------

def seed_sqlite(path: str, args) -> dict:
    timings = {}
    connection = sqlite3.connect(path, isolation_level=None)
    if connection.execute("SELECT EXISTS (SELECT 1 FROM audit_log)").fetchone()[0]:
        sys.exit("audit_seed: audit_log is not empty (start from a fresh file and run `portal migrate` first)")
    journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    connection.execute("PRAGMA journal_mode=OFF")
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute("PRAGMA cache_size=-262144")
    indexes = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_log' AND sql IS NOT NULL").fetchall()
    for name, _ in indexes:
        connection.execute(f'DROP INDEX "{name}"')
    started = time.monotonic()
    last = None

    def rows():
        nonlocal last
        for row in entries(args.rows, args.days, args.end_ms, args.seed, args.users):
            seq = row[0]
            if seq % 5000 == 0:
                progress(seq, args.rows, started)
            last = (seq, row[11])
            # Fluent's SQLite driver stores a Date as REAL seconds since 1970.
            yield (seq, row[1] / 1000, *row[2:])

    connection.execute("BEGIN")
    connection.executemany(f"INSERT INTO audit_log ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows())
    connection.execute("COMMIT")
    timings["generate_and_insert_s"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    connection.execute("BEGIN")
    for _, sql in indexes:
        connection.execute(sql)
    connection.execute("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1", last)
    connection.execute("COMMIT")
    connection.execute("ANALYZE")
    timings["indexes_s"] = round(time.monotonic() - started, 1)
    connection.execute(f"PRAGMA journal_mode={journal}")
    connection.close()
    timings["indexes"] = [name for name, _ in indexes]
    return timings


def progress(seq: int, rows: int, started: float) -> None:
    if sys.stderr.isatty() or seq % 1_000_000 == 0:
        elapsed = time.monotonic() - started
        print(f"\raudit_seed: {seq:,}/{rows:,} rows, {seq / max(elapsed, 1e-9):,.0f} rows/s", end="" if sys.stderr.isatty() else "\n",
              file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="sqlite:PATH or postgres://...")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=400, help="time span ending now")
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--end-ms", type=int, default=None, help="time of the last entry (default: now)")
    args = parser.parse_args()
    if args.rows < 1 or args.days < 1 or args.users < 10:
        parser.error("--rows, --days must be positive, --users at least 10")
    args.end_ms = args.end_ms or int(time.time() * 1000)
    started = time.monotonic()
    if args.database.startswith(("postgres://", "postgresql://")):
        timings = seed_postgres(args.database, args)
    elif args.database.startswith("sqlite:"):
        timings = seed_sqlite(args.database[len("sqlite:"):], args)
    else:
        parser.error("--database must be sqlite:PATH or postgres://...")
    if sys.stderr.isatty():
        print(file=sys.stderr)
    timings.update(rows=args.rows, days=args.days, total_s=round(time.monotonic() - started, 1),
                   first_ms=args.end_ms - args.days * DAY_MS, end_ms=args.end_ms)
    print(json.dumps(timings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
