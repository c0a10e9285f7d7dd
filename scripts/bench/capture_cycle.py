#!/usr/bin/env python3
"""The issuance benchmark's floor (scripts/bench-portal.sh): what PostgreSQL does for one officer
cycle, captured from PostgreSQL itself, and pgbench replaying it.

Statements are counted with pg_stat_statements, by difference of two snapshots (no reset, so
nothing else that uses the view is disturbed): only this database's rows of the connecting role,
without the snapshot queries themselves.

Subcommands:

  capture   Signs one officer in, runs --warmup-cycles cycles, snapshots, runs exactly --cycles
            cycles (GET /, POST /teletan, GET /teletan/result, one after the other), snapshots.
            Writes {"cycles": N, "statements": [...]} (calls, total_exec_ms, rows, query per
            statement): the statements and calls per cycle the portal sends.
  snapshot  Writes one snapshot (for the driver, around a portal load run).
  diff      Writes the difference of two snapshots.
  pgbench   Runs pgbench (the command after --) with snapshots around it and the CPU of
            postgres, pgbench and the machine sampled inside the run (from 1 s after the start to
            0.5 s before the planned end, so connecting and disconnecting are left out). Writes
            pgbench's output to --output and {"cpu_cores_used", "statements"} to --json-out.
  cpu-window  The CPU of the portal and of postgres over a portal_load.py window.

CPU of postgres is that of the server's own processes and of the bench database's backends only
(by process title), so other databases' sessions (other people's tests) do not count.

Standard library only; connects to PostgreSQL with psql (PGPASSWORD etc. from the environment)
and to the portal on 127.0.0.1 only. Bounded: at most 10,000 cycles, 600 s.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from portal_load import Officer, Stats, Unexpected, is_postgres, machine_cpu, processes  # noqa: E402

SNAPSHOT_SQL = """
SELECT coalesce(json_agg(json_build_object(
         'queryid', queryid::text, 'calls', calls, 'total_exec_ms', total_exec_time, 'rows', rows,
         'query', regexp_replace(query, '\\s+', ' ', 'g'))), '[]')
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
  AND query NOT LIKE '%pg_stat_statements%'
"""


def snapshot(psql: list[str]) -> dict[str, dict]:
    """pg_stat_statements now, by queryid."""
    out = subprocess.run(psql + ["-qAtX", "-v", "ON_ERROR_STOP=1", "-c", SNAPSHOT_SQL],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    return {row["queryid"]: row for row in json.loads(out)}


def difference(before: dict[str, dict], after: dict[str, dict]) -> list[dict]:
    """Statements run between two snapshots, most calls first."""
    rows = []
    for queryid, now in after.items():
        then = before.get(queryid, {"calls": 0, "total_exec_ms": 0.0, "rows": 0})
        calls = now["calls"] - then["calls"]
        if calls > 0:
            rows.append({"queryid": queryid, "query": now["query"], "calls": calls, "rows": now["rows"] - then["rows"],
                         "total_exec_ms": round(now["total_exec_ms"] - then["total_exec_ms"], 3)})
    return sorted(rows, key=lambda r: (-r["calls"], r["query"]))


BENCH_DB = "teletan_bench"


def ours(pid: str) -> bool:
    """Whether a postgres process works for this benchmark: a backend of the bench database, or
    one of the server's own processes (postmaster, WAL writer, checkpointer, ...), which do
    everyone's work. Backends of other databases (other people's tests) are left out: their
    process title names their database and client address."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            title = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    if f" {BENCH_DB} " in title:
        return True
    return "(" not in title and "[local]" not in title and "autovacuum worker" not in title


def cpu_by_pid(portal_pid: int = 0) -> dict[str, dict[int, float]]:
    """utime + stime in seconds of each process of interest, by kind and pid: postgres (see
    ours()), pgbench, and the portal if its pid is given."""
    out: dict[str, dict[int, float]] = {"postgres": {}, "pgbench": {}, "portal": {}}
    for pid, command, cpu in processes():
        if pid == portal_pid:
            kind = "portal"
        elif is_postgres(command):
            kind = "postgres" if ours(str(pid)) else None
        else:
            kind = "pgbench" if command == "pgbench" else None
        if kind:
            out[kind][pid] = cpu
    return out


def cpu_now(portal_pid: int = 0) -> dict:
    busy, total = machine_cpu()
    return {"pids": cpu_by_pid(portal_pid), "busy": busy, "total": total}


def cpu_used(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds between two cpu_now() readings. Per process, so that one that ended in between
    (another database session, say) does not make the sum go down; its last share is lost."""
    used = {k: sum(t - before["pids"][k].get(pid, 0.0) for pid, t in after["pids"][k].items()) for k in after["pids"]}
    used["busy"], used["total"] = after["busy"] - before["busy"], after["total"] - before["total"]
    return used


def write_json(path: str, value) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=1)


def cmd_capture(args, psql: list[str]) -> int:
    if not (1 <= args.cycles <= 10_000 and 0 <= args.warmup_cycles <= 1000):
        sys.exit("capture_cycle: --cycles must be 1..10000, --warmup-cycles 0..1000")
    officer = Officer(args.user, args.password, args.port, 10.0)
    stats = Stats()
    try:
        officer.sign_in()
        for _ in range(args.warmup_cycles):
            officer.cycle(stats, lambda: False)
        time.sleep(0.2)  # let the sign-in's and warm-up's stragglers (if any) finish
        before = snapshot(psql)
        t0 = time.monotonic()
        for _ in range(args.cycles):
            officer.cycle(stats, lambda: True)
        seconds = time.monotonic() - t0
        after = snapshot(psql)
    except Unexpected as error:
        print(f"capture_cycle: the officer cycle failed: {error.key}", file=sys.stderr)
        return 2
    finally:
        officer.conn.close()
    write_json(args.json_out, {"cycles": args.cycles, "seconds": round(seconds, 3), "user": args.user,
                               "statements": difference(before, after)})
    print(f"capture_cycle: {args.cycles} cycles of {args.user} in {seconds:.1f} s captured", file=sys.stderr)
    return 0


def cmd_snapshot(args, psql: list[str]) -> int:
    write_json(args.json_out, snapshot(psql))
    return 0


def cmd_diff(args, psql: list[str]) -> int:
    write_json(args.json_out, difference(json.load(open(args.before)), json.load(open(args.after))))
    return 0


def cmd_pgbench(args, psql: list[str]) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or not 1 <= args.seconds <= 600:
        sys.exit("capture_cycle: pgbench needs --seconds 1..600 and a command after --")
    before = snapshot(psql)
    with open(args.output, "w") as out:
        start = time.monotonic()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd="/")
        cpu0 = cpu1 = None
        try:
            if args.seconds >= 3:
                time.sleep(1.0)
                cpu0, m0 = cpu_now(), time.monotonic()
                time.sleep(max(0.5, start + args.seconds - 0.5 - time.monotonic()))
                if process.poll() is None:
                    cpu1, m1 = cpu_now(), time.monotonic()
            status = process.wait(timeout=args.seconds + 120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            status = -9
    after = snapshot(psql)
    cores = None
    if cpu0 and cpu1:
        window, used = m1 - m0, cpu_used(cpu0, cpu1)
        cores = {k: round(used[k] / window, 3) for k in ("postgres", "pgbench", "busy")}
        cores["machine"] = round(used["total"] / window, 3)
        cores["other"] = round(max(0.0, cores["busy"] - cores["postgres"] - cores["pgbench"]), 3)
        cores["window_seconds"] = round(window, 3)
    write_json(args.json_out, {"status": status, "cpu_cores_used": cores, "statements": difference(before, after)})
    return 0 if status == 0 else 1


def cmd_cpu_window(args, psql: list[str]) -> int:
    """CPU of the portal and of this database's postgres processes over a portal_load.py window:
    from --warmup s after portal_load.py reported the sign-in (a line 'signed in' in --log) for
    --seconds s, like its own window. (portal_load.py sums every postgres process, other
    databases' too, and loses those that end during the window.)"""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if "signed in" in open(args.log).read():
                break
        except OSError:
            pass
        time.sleep(0.05)
    else:
        return 1
    time.sleep(args.warmup + 0.1)
    cpu0, m0, a0 = cpu_now(args.portal_pid), time.monotonic(), allocations(args.malloc_count_file)
    time.sleep(args.seconds)
    cpu1, m1, a1 = cpu_now(args.portal_pid), time.monotonic(), allocations(args.malloc_count_file)
    window, used = m1 - m0, cpu_used(cpu0, cpu1)
    cores = {k: round(used[k] / window, 3) for k in ("portal", "postgres", "busy")}
    cores["machine"] = round(used["total"] / window, 3)
    result = {"cpu_cores_used": cores, "window_seconds": round(window, 3)}
    if a0 is not None and a1 is not None:
        result["portal_allocations_per_s"] = round((a1 - a0) / window, 1)
    write_json(args.json_out, result)
    return 0


def allocations(path: str | None) -> int | None:
    """The server's heap allocations so far, as malloc_count.so last wrote them (every 20 ms)."""
    try:
        return int(open(path).read().strip()) if path else None
    except (OSError, ValueError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--psql", default="psql -h 127.0.0.1 -p 5432 -U teletan -d teletan_bench",
                        help="how to run psql against the bench database (split on spaces)")
    sub = parser.add_subparsers(dest="command_name", required=True)
    p = sub.add_parser("capture")
    p.add_argument("--port", type=int, required=True, help="portal port on 127.0.0.1")
    p.add_argument("--user", default="tt-bench-01")
    p.add_argument("--password", default="Bench-Pass-1")
    p.add_argument("--cycles", type=int, default=200)
    p.add_argument("--warmup-cycles", type=int, default=20)
    p.add_argument("--json-out", required=True)
    p = sub.add_parser("snapshot")
    p.add_argument("--json-out", required=True)
    p = sub.add_parser("diff")
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--json-out", required=True)
    p = sub.add_parser("pgbench")
    p.add_argument("--seconds", type=int, required=True, help="pgbench's -T, for the CPU window")
    p.add_argument("--output", required=True, help="pgbench's output")
    p.add_argument("--json-out", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("cpu-window")
    p.add_argument("--log", required=True, help="portal_load.py's stderr, as it is written")
    p.add_argument("--warmup", type=float, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--portal-pid", type=int, required=True)
    p.add_argument("--malloc-count-file", help="the file malloc_count.so writes the portal's allocations to")
    p.add_argument("--json-out", required=True)
    args = parser.parse_args()
    psql = args.psql.split()
    return {"capture": cmd_capture, "snapshot": cmd_snapshot, "diff": cmd_diff, "pgbench": cmd_pgbench,
            "cpu-window": cmd_cpu_window}[
        args.command_name](args, psql)


if __name__ == "__main__":
    sys.exit(main())
