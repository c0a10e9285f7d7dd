#!/usr/bin/env python3
"""Prints the result table of scripts/bench-portal.sh and optionally appends it as JSON.

Inputs: the JSON of portal_load.py for each portal run, pgbench's output and capture_cycle.py's
JSON for each replay run, the capture of one officer cycle (capture_cycle.py capture), the
statements of the main portal run, the portal's peak RSS and a few facts about the run
(environment variables set by the shell script). Exit status: 0, or 1 when more than 1 % of the
portal's requests failed, pgbench gave no figure, or the audit chain did not verify.

Also the shared part of the benchmark reports (parse_pgbench, fmt, target_lines, run_failed;
scripts/bench/verification_load.py uses them).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import time

TARGET_RATIO = 0.70      # portal cycles/s / pgbench replaying the cycle (the floor), at BENCH_OFFICERS
TARGET_POOL_RATIO = 0.55  # portal cycles/s / the floor at the pool size, at BENCH_OFFICERS
TARGET_CPU_RATIO = 0.80  # portal CPU per cycle / PostgreSQL's CPU per cycle, at BENCH_OFFICERS
TARGET_P99_RATIO = 2.0   # whole-cycle p99 at BENCH_P99_OFFICERS / the replay's whole-cycle p99, as many clients
TARGET_P99_MS = 50.0     # POST /teletan, at BENCH_P99_OFFICERS (informational since issue 22: absolute times
                         # swing with the machine's other load; the ratio above replaces it)
TARGET_RSS_MB = 100.0    # portal peak RSS, 10^6 bytes
MAX_ERROR_RATE = 0.01


def parse_pgbench(path: str | None) -> dict | None:
    if not path:
        return None
    text = open(path).read()
    out = {"raw_tail": text.strip().splitlines()[-12:]}
    for key, pattern in [
        ("tps", r"tps = ([0-9.]+) \(without initial connection time\)"),
        ("latency_avg_ms", r"latency average = ([0-9.]+) ms"),
        ("latency_stddev_ms", r"latency stddev = ([0-9.]+) ms"),
        ("transactions", r"number of transactions actually processed: (\d+)"),
        ("failed", r"number of failed transactions: (\d+)"),
    ]:
        match = re.search(pattern, text)
        if match:
            out[key] = float(match.group(1)) if "." in match.group(1) else int(match.group(1))
    return out


def pgbench_log_latencies(prefix: str | None) -> dict | None:
    """p50/p99/max in ms of the transactions in pgbench's per-transaction log (-l --log-prefix PREFIX:
    one file per thread, PREFIX.PID and PREFIX.PID.N; the third field is the latency in us)."""
    if not prefix:
        return None
    values = []
    for path in glob.glob(glob.escape(prefix) + ".*"):
        for line in open(path):
            fields = line.split()
            if len(fields) >= 3 and fields[2].isdigit():
                values.append(int(fields[2]) / 1000)
    if not values:
        return None
    values.sort()
    at = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return {"count": len(values), "p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": values[-1]}


def fmt(value, spec=".1f", unit=""):
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def target_lines(checks: list[tuple[str, str, bool]]) -> list[str]:
    """The closing table: each target, what was measured, PASS or FAIL."""
    return ["", "  Target                                   measured        result"] + [
        f"    {name:<37}{value:<16}{'PASS' if ok else 'FAIL'}" if len(name) < 37 else
        f"    {name}\n    {'':<37}{value:<16}{'PASS' if ok else 'FAIL'}" for name, value, ok in checks] + [""]


def run_failed(tool: str, load: dict, pg_tps) -> bool:
    """Whether the run itself failed (not the targets): too many failed requests, or no pgbench figure."""
    failed = False
    if load["error_rate"] > MAX_ERROR_RATE:
        print(f"{tool}: ERROR: {load['error_rate']:.2%} of the requests failed (more than 1 %)", file=sys.stderr)
        failed = True
    elif load["errors"]:
        print(f"{tool}: warning: {load['errors']} request(s) failed", file=sys.stderr)
    if not pg_tps:
        print(f"{tool}: ERROR: no tps in pgbench output", file=sys.stderr)
        failed = True
    return failed


# -- The statements of one cycle: the portal's (captured) next to the replay's ------------------
REPLAY_ONLY = "replay-only"   # marks officer-cycle.sql's own statements (in a leading comment)
PER_CYCLE_TOLERANCE = 0.05    # calls per cycle that may differ (the replay's last cycles, rounding)


def short(query: str, width: int = 64) -> str:
    query = re.sub(r"^/\*.*?\*/\s*", "", query)
    return query if len(query) <= width else query[: width - 3] + "..."


def compare_statements(capture: dict, replay: list[dict], replay_cycles: int | None) -> tuple[list[dict], list[str]]:
    """Rows (one per statement, the portal's first) and the differences found, as warnings."""
    cycles = capture["cycles"]
    by_id = {r["queryid"]: r for r in replay}
    rows, warnings = [], []
    for c in capture["statements"]:
        per = c["calls"] / cycles
        r = by_id.pop(c["queryid"], None)
        rper = r["calls"] / replay_cycles if r and replay_cycles else (0.0 if replay_cycles else None)
        kind = "cycle" if per >= 0.5 else "occasional"
        rows.append({"query": c["query"], "queryid": c["queryid"], "kind": kind, "portal_per_cycle": per,
                     "replay_per_cycle": rper})
        if kind == "occasional":
            continue  # not one cycle's work (a cleanup, a session touch): listed, not compared
        if abs(per - round(per)) > PER_CYCLE_TOLERANCE:
            warnings.append(f"the portal sent {per:.2f} per cycle (not a whole number): {short(c['query'])}")
        if rper is None:
            continue
        if r is None:
            warnings.append(f"the replay does not send: {short(c['query'])}")
        elif abs(rper - per) > PER_CYCLE_TOLERANCE:
            warnings.append(f"portal {per:.2f} vs replay {rper:.2f} per cycle: {short(c['query'])}")
    for r in replay:
        if r["queryid"] not in by_id:
            continue
        rper = r["calls"] / replay_cycles if replay_cycles else None
        replay_only = REPLAY_ONLY in r["query"]
        rows.append({"query": r["query"], "queryid": r["queryid"], "kind": "replay-only" if replay_only else "replay",
                     "portal_per_cycle": 0.0, "replay_per_cycle": rper})
        if not replay_only and rper and rper >= 0.5:
            warnings.append(f"the portal does not send (replay {rper:.2f} per cycle): {short(r['query'])}")
    return rows, warnings


def mean_ms(statements: list[dict] | None) -> dict[str, float]:
    return {s["queryid"]: s["total_exec_ms"] / s["calls"] for s in statements or [] if s["calls"]}


def with_cpu(load: dict, cpu_path: str | None) -> dict:
    """portal_load.py's result, with the CPU of postgres taken from capture_cycle.py cpu-window
    when it measured one (only this database's backends and the server's own processes)."""
    try:
        window = json.load(open(cpu_path))["cpu_cores_used"] if cpu_path else None
    except (OSError, ValueError, KeyError):
        window = None
    if window:
        cores = dict(load["cpu_cores_used"])
        cores["postgres_all_processes"] = cores["postgres"]
        cores["postgres"] = window["postgres"]
        cores["other"] = max(0.0, cores["busy"] - cores["portal"] - cores["postgres"] - cores["client"])
        load = dict(load, cpu_cores_used=cores)
    try:
        allocations = json.load(open(cpu_path)).get("portal_allocations_per_s") if cpu_path else None
    except (OSError, ValueError):
        allocations = None
    if allocations is not None:
        load = dict(load, portal_allocations_per_s=allocations)
    return load


def load_summary(load: dict) -> dict:
    """The figures of one portal run, per cycle."""
    rate = load["throughput_per_s"]
    cores = load["cpu_cores_used"]
    # (postgres can come out negative when other sessions' backends ended during the window:
    # portal_load.py sums the processes alive at each edge.)
    per_cycle = (lambda c: c * 1000 / rate if c >= 0 else None) if rate else (lambda c: None)  # noqa: E731
    allocations = load.get("portal_allocations_per_s")
    return {"officers": load["officers"], "cycles_per_s": rate,
            "cpu_ms_per_cycle": {k: per_cycle(cores[k]) for k in ("portal", "postgres", "client")},
            "allocations_per_cycle": allocations / rate if allocations is not None and rate else None,
            "latency_ms": load["latency_ms"], "cores": cores}


def floor_of(pg: dict | None, pcores: dict, clients) -> dict:
    """A replay's figures: pgbench's tps (cycles/s) and latency, and CPU per cycle."""
    tps = pg.get("tps") if pg else None
    return {"clients": clients, "tps": tps, "transactions": pg.get("transactions") if pg else None,
            "latency_avg_ms": pg.get("latency_avg_ms") if pg else None, "failed": pg.get("failed") if pg else None,
            "cores": pcores,
            "cpu_ms_per_cycle": {k: (pcores[k] * 1000 / tps if tps and k in pcores else None) for k in ("postgres", "pgbench")}}


def floor_lines(floor: dict) -> tuple[list[str], bool]:
    """The report's lines of a replay, and whether other processes skewed it."""
    per_cycle = floor["cpu_ms_per_cycle"]
    lines = [f"    floor (pgbench)       {fmt(floor['tps'], '.1f')} cycles/s, latency avg "
             f"{fmt(floor['latency_avg_ms'], '.2f', ' ms')} per cycle"
             + (f", failed {floor['failed']}" if floor["failed"] else "")
             + f"; CPU per cycle postgres {fmt(per_cycle['postgres'], '.2f')} ms, pgbench {fmt(per_cycle['pgbench'], '.2f')} ms"]
    pcores, skewed = floor["cores"], False
    if pcores:
        lines.append(f"                          cores: postgres {pcores['postgres']:.2f}, pgbench {pcores['pgbench']:.2f}, "
                     f"other {pcores['other']:.2f}, idle {pcores['machine'] - pcores['busy']:.2f}")
        if pcores["other"] > 0.1:
            skewed = True
            lines.append(f"    WARNING: other processes used {pcores['other']:.2f} cores during the replay: the floor is skewed")
    return lines, skewed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", required=True, help="portal_load.py JSON, BENCH_OFFICERS")
    parser.add_argument("--pgbench", required=True, help="pgbench output of the replay, BENCH_OFFICERS clients")
    parser.add_argument("--pgbench-json", required=True, help="capture_cycle.py pgbench JSON of that replay")
    parser.add_argument("--capture", required=True, help="capture_cycle.py capture JSON")
    parser.add_argument("--portal-statements", help="capture_cycle.py diff JSON around the BENCH_OFFICERS portal run")
    parser.add_argument("--cpu", help="capture_cycle.py cpu-window JSON of the BENCH_OFFICERS run")
    parser.add_argument("--load-p99", help="portal_load.py JSON, BENCH_P99_OFFICERS")
    parser.add_argument("--cpu-p99")
    parser.add_argument("--pgbench-p99")
    parser.add_argument("--pgbench-p99-json")
    parser.add_argument("--pgbench-p99-log-prefix", help="pgbench's per-transaction log of the BENCH_P99_OFFICERS replay")
    parser.add_argument("--pgbench-pool", help="pgbench output of the replay with --database-pool-size clients")
    parser.add_argument("--pgbench-pool-json")
    parser.add_argument("--peak-rss-kib", type=int)
    parser.add_argument("--peak-rss-p99-kib", type=int)
    parser.add_argument("--idle-rss-kib", type=int)
    parser.add_argument("--portal-log-problems", type=int, default=0)
    parser.add_argument("--audit-verify", default="not run")
    parser.add_argument("--replay-audit-verify", default="not run")
    parser.add_argument("--rows", default="")
    parser.add_argument("--perf-top", help="perf report lines of the portal (BENCH_PERF=1)")
    args = parser.parse_args()
    env = os.environ

    capture = json.load(open(args.capture))
    runs = []  # (load, pgbench, pgbench json, peak kib) per officer count
    runs.append((with_cpu(json.load(open(args.load)), args.cpu), parse_pgbench(args.pgbench),
                 json.load(open(args.pgbench_json)), args.peak_rss_kib))
    if args.load_p99:
        runs.append((with_cpu(json.load(open(args.load_p99)), args.cpu_p99), parse_pgbench(args.pgbench_p99),
                     json.load(open(args.pgbench_p99_json)) if args.pgbench_p99_json else {}, args.peak_rss_p99_kib))
    portal_statements = json.load(open(args.portal_statements)) if args.portal_statements else None

    mib = lambda kib: fmt(kib / 1024 if kib else None, ".1f", " MiB")  # noqa: E731
    ms = lambda v: fmt(v, ".2f")  # noqa: E731
    lines = []
    add = lines.append
    main_load = runs[0][0]
    add("")
    add(f"teleTAN portal benchmark -- {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    add(f"  portal:    {env.get('BENCH_PORTAL_BIN', '?')} ({env.get('BENCH_BUILD', '?')} build), git {env.get('BENCH_GIT', '?')}")
    add(f"  machine:   {env.get('BENCH_MACHINE', '?')}")
    add(f"  database:  {env.get('BENCH_PG_VERSION', '?')} on 127.0.0.1:5432, db teletan_bench")
    add(f"  run:       portal at {' and '.join(str(r[0]['officers']) for r in runs)} officers "
        f"({main_load['client_processes']} client process(es)), then pgbench replaying the cycle with as many clients; "
        f"warm-up {main_load['warmup_seconds']:g} s, measured {main_load['duration_seconds']:.0f} s each; "
        f"--database-pool-size {env.get('BENCH_POOL_SIZE', '?')}, --teletan-interval 0s")

    summaries, floors, ratios, skewed = [], [], [], False
    for load, pg, pgj, peak_kib in runs:
        s = load_summary(load)
        summaries.append(s)
        cores = load["cpu_cores_used"]
        rss = load["portal_rss_kib"]
        add("")
        add(f"  Portal, {load['officers']} officers (one cycle = GET / + POST /teletan + GET /teletan/result)")
        add(f"    cycles                {load['issuances']} in {load['duration_seconds']:.1f} s  ({load['warmup_issuances']} more in warm-up)")
        add(f"    throughput            {s['cycles_per_s']:.1f} cycles/s  ({load['requests_per_s']:.0f} requests/s)")
        add(f"    errors                {load['errors']} of {load['requests']} requests ({load['error_rate']:.2%})"
            + ("" if not load["error_kinds"] else "  " + ", ".join(f"{k}: {v}" for k, v in load["error_kinds"].items())))
        if load["warmup_errors"]:
            add("    warm-up errors        " + ", ".join(f"{k}: {v}" for k, v in load["warmup_errors"].items()))
        add("    latency ms              p50      p90      p99      max     mean")
        for name, key in [("GET /", "get_home"), ("POST /teletan", "issue_post"), ("GET /teletan/result", "get_result"),
                          ("full cycle", "cycle")]:
            st = load["latency_ms"][key]
            if st.get("count"):
                add(f"      {name:<20}{st['p50']:7.1f}  {st['p90']:7.1f}  {st['p99']:7.1f}  {st['max']:7.1f}  {st['mean']:7.1f}")
        c = s["cpu_ms_per_cycle"]
        add(f"    CPU per cycle         portal {ms(c['portal'])} ms, postgres {ms(c['postgres'])} ms, load client {ms(c['client'])} ms"
            + (f"; portal / postgres {c['portal'] / c['postgres']:.2f}" if c["portal"] and c["postgres"] else ""))
        if s["allocations_per_cycle"] is not None:
            add(f"    heap allocations      {s['allocations_per_cycle']:.0f} per cycle in the portal "
                f"({load['portal_allocations_per_s']:.0f}/s; malloc_count.so)")
        add(f"    CPU (cores of {cores['machine']:.0f})    portal {cores['portal']:.2f}, postgres {cores['postgres']:.2f}, "
            f"load client {cores['client']:.2f}, other {cores['other']:.2f}, idle {cores['machine'] - cores['busy']:.2f}")
        if cores["postgres"] < 0:
            add("    (postgres CPU not measurable: other sessions' backends ended during the window)")
        if cores["other"] > 0.1 or cores["postgres"] < 0:
            skewed = True
            add(f"    WARNING: other processes used {cores['other']:.2f} cores during the window: the figures are skewed")
        peak_mb = peak_kib * 1024 / 1e6 if peak_kib else None
        add(f"    portal RSS            peak while issuing (VmHWM after sign-in) {fmt(peak_mb, '.1f', ' MB')} = {mib(peak_kib)}; "
            f"window start {mib(rss.get('window_start'))}, end {mib(rss.get('end'))}; "
            f"sign-in burst {mib(rss.get('signin_peak'))}")
        add(f"    connections, sign-in  {load['connections_opened']} opened (one per officer expected), "
            f"{load['officers']} signed in in {load['signin_seconds']:.1f} s"
            + (f", re-sign-ins {load['resignins']}" if load["resignins"] else ""))

        floor = floor_of(pg, pgj.get("cpu_cores_used") or {}, load["officers"])
        tps = floor["tps"]
        floors.append(floor)
        ratio = s["cycles_per_s"] / tps if tps else None
        ratios.append(ratio)
        more, floor_skewed = floor_lines(floor)
        lines.extend(more)
        skewed = skewed or floor_skewed
        if load is runs[-1][0] and args.pgbench_p99_log_prefix and len(runs) > 1:
            replay_cycle = pgbench_log_latencies(args.pgbench_p99_log_prefix)
            floor["cycle_latency_ms"] = replay_cycle
            if replay_cycle:
                add(f"    floor whole cycle ms  p50 {replay_cycle['p50']:.1f}, p90 {replay_cycle['p90']:.1f}, "
                    f"p99 {replay_cycle['p99']:.1f}, max {replay_cycle['max']:.1f} "
                    f"(pgbench's per-transaction log, {replay_cycle['count']} cycles)")
        add(f"    portal / floor        {fmt(ratio, '.1%') if ratio is not None else 'n/a'}")

    pool_floor = None
    if args.pgbench_pool:
        pg = parse_pgbench(args.pgbench_pool)
        pcores = (json.load(open(args.pgbench_pool_json)) if args.pgbench_pool_json else {}).get("cpu_cores_used") or {}
        clients = env.get("BENCH_POOL_SIZE", "?")
        pool_floor = floor_of(pg, pcores, clients)
        tps = pool_floor["tps"]
        add("")
        add(f"  Floor at the portal's pool size (informational): pgbench replaying the cycle with {clients} clients, "
            f"as many as --database-pool-size lets the portal use")
        more, floor_skewed = floor_lines(pool_floor)
        lines.extend(more)
        skewed = skewed or floor_skewed
        if tps:
            add("    portal / this floor   " + ", ".join(f"{s['cycles_per_s'] / tps:.1%} at {s['officers']} officers" for s in summaries))
            slower = [f for f in floors if f["tps"] and f["tps"] < 0.9 * tps and f["clients"] > (int(clients) if clients.isdigit() else 10**6)]
            if slower:
                add(f"    NOTE: with {' and '.join(str(f['clients']) for f in slower)} clients the replay is more than 10 % slower "
                    f"than with {clients}: more connections than cores queue on the row locks (audit head, global shards),")
                add("          and a lock holder that is preempted stalls them all; portal / this floor is the stricter ratio")

    # Where the time goes: CPU per cycle, the portal's runs next to their floors.
    add("")
    add(f"  Where the time goes: CPU ms per cycle ({main_load['cpu_cores_used']['machine']:.0f} cores = "
        f"{main_load['cpu_cores_used']['machine'] * 1000:.0f} ms of CPU per second)")
    cols = []
    for sm, fl in zip(summaries, floors):
        cols.append((f"portal@{sm['officers']}", sm["cpu_ms_per_cycle"]["portal"], sm["cpu_ms_per_cycle"]["postgres"],
                     sm["cpu_ms_per_cycle"]["client"], sm["cycles_per_s"]))
        cols.append((f"replay@{fl['clients']}", None, fl["cpu_ms_per_cycle"]["postgres"], fl["cpu_ms_per_cycle"]["pgbench"], fl["tps"]))
    if pool_floor:
        cols.append((f"replay@{pool_floor['clients']}", None, pool_floor["cpu_ms_per_cycle"]["postgres"],
                     pool_floor["cpu_ms_per_cycle"]["pgbench"], pool_floor["tps"]))
    add("    " + " " * 26 + "".join(f"{c[0]:>12}" for c in cols))
    add("    portal                    " + "".join(f"{fmt(c[1], '.2f'):>12}" if c[1] is not None else f"{'-':>12}" for c in cols))
    add("    postgres                  " + "".join(f"{fmt(c[2], '.2f'):>12}" for c in cols))
    add("    load client / pgbench     " + "".join(f"{fmt(c[3], '.2f'):>12}" for c in cols))
    totals = [sum(v for v in c[1:4] if v is not None) if c[2] is not None and c[3] is not None else None for c in cols]
    add("    total                     " + "".join(f"{fmt(t, '.2f'):>12}" for t in totals))
    machine_ms = main_load["cpu_cores_used"]["machine"] * 1000
    add("    cycles/s the CPU allows   " + "".join(f"{fmt(machine_ms / t if t else None, '.0f'):>12}" for t in totals))
    add("    cycles/s measured         " + "".join(f"{fmt(c[4], '.0f'):>12}" for c in cols))

    # Statements.
    main_pgj = runs[0][2]
    replay_cycles = runs[0][1].get("transactions") if runs[0][1] else None
    rows, warnings = compare_statements(capture, main_pgj.get("statements", []), replay_cycles)
    portal_ms, replay_ms = mean_ms(portal_statements), mean_ms(main_pgj.get("statements"))
    n = main_load["officers"]
    add("")
    add(f"  Statements of one cycle, from pg_stat_statements: the portal's (one officer, {capture['cycles']} cycles) "
        f"and pgbench's replay ({n} clients)")
    add(f"    per cycle         mean ms at {n:<3}")
    add("    portal  replay    portal  replay  statement")
    per_cycle_ms = {"portal": 0.0, "replay": 0.0, "replay_only": 0.0}
    for row in rows:
        pm, rm = portal_ms.get(row["queryid"]), replay_ms.get(row["queryid"])
        rper = row["replay_per_cycle"]
        if row["kind"] == "cycle":
            per_cycle_ms["portal"] += (pm or 0.0) * row["portal_per_cycle"]
        if rper:
            per_cycle_ms["replay"] += (rm or 0.0) * rper
            if row["kind"] == "replay-only":
                per_cycle_ms["replay_only"] += (rm or 0.0) * rper
        label = {"occasional": " (occasional, not compared)", "replay-only": " (replay only)"}.get(row["kind"], "")
        add(f"    {row['portal_per_cycle']:6.2f}  {fmt(rper, '6.2f'):>6}  {fmt(pm, '7.3f'):>7} {fmt(rm, '7.3f'):>7}  "
            f"{short(row['query'], 70)}{label}")
    add(f"    time in PostgreSQL per cycle (sum of calls x mean, lock waits and commit flushes included): "
        f"portal {per_cycle_ms['portal']:.2f} ms, replay {per_cycle_ms['replay']:.2f} ms "
        f"(of which the replay-only statements {per_cycle_ms['replay_only']:.2f} ms)")
    if warnings:
        add("")
        add("    " + "!" * 88)
        add("    WARNING: the replay does not send what the portal sends -- the floor is not the portal's work.")
        add("    Update scripts/bench/officer-cycle.sql to the portal's statements:")
        for w in warnings:
            add(f"      - {w}")
        add("    " + "!" * 88)
    else:
        add(f"    The replay sends the portal's statements, as often per cycle ({sum(1 for r in rows if r['kind'] == 'cycle')} "
            f"statements, {sum(r['portal_per_cycle'] for r in rows if r['kind'] == 'cycle'):.0f} calls per cycle).")

    add("")
    add(f"  portal log            {args.portal_log_problems} warning/error line(s)")
    add(f"  audit chain           after the portal: {args.audit_verify}")
    add(f"                        after the replay: {args.replay_audit_verify}"
        + ("" if args.replay_audit_verify.startswith(("audit", "not run")) else
           "  (the replay's entries are not chained as the portal's: its canonical text differs)"))
    if args.rows:
        add(f"  rows written by the portal  {args.rows}")
    if args.perf_top:
        add("")
        add(f"  perf profile of the portal, {n} officers, about the measured window (self time, dso and symbol):")
        for line in open(args.perf_top).read().splitlines():
            add("    " + line.strip()[:150])

    main_ratio = ratios[0]
    p99_load = runs[-1][0]
    p99 = p99_load["latency_ms"]["issue_post"].get("p99")
    peaks = [r[3] for r in runs if r[3]]
    peak_mb = max(peaks) * 1024 / 1e6 if peaks else None
    main_cpu = summaries[0]["cpu_ms_per_cycle"]
    cpu_ratio = main_cpu["portal"] / main_cpu["postgres"] if main_cpu["portal"] and main_cpu["postgres"] else None
    pool_ratio = summaries[0]["cycles_per_s"] / pool_floor["tps"] if pool_floor and pool_floor["tps"] else None
    cycle_p99 = p99_load["latency_ms"]["cycle"].get("p99")
    replay_cycle = floors[-1].get("cycle_latency_ms") if len(runs) > 1 else None
    p99_ratio = cycle_p99 / replay_cycle["p99"] if cycle_p99 and replay_cycle else None
    checks = [
        (f"cycles/s >= {TARGET_RATIO:.0%} of floor ({n} off.)", fmt(main_ratio, ".1%") if main_ratio is not None else "n/a",
         main_ratio is not None and main_ratio >= TARGET_RATIO),
        (f"cycles/s >= {TARGET_POOL_RATIO:.0%} of floor at pool size ({n} off.)", fmt(pool_ratio, ".1%"),
         pool_ratio is not None and pool_ratio >= TARGET_POOL_RATIO),
        (f"CPU/cycle portal <= {TARGET_CPU_RATIO:g}x postgres ({n} off.)", fmt(cpu_ratio, ".2f", "x"),
         cpu_ratio is not None and cpu_ratio <= TARGET_CPU_RATIO),
        (f"cycle p99 <= {TARGET_P99_RATIO:g}x replay's ({p99_load['officers']} off.)",
         f"{fmt(cycle_p99, '.1f')}/{fmt(replay_cycle['p99'] if replay_cycle else None, '.1f')} ms = {fmt(p99_ratio, '.2f', 'x')}",
         p99_ratio is not None and p99_ratio <= TARGET_P99_RATIO),
        (f"(info) p99 POST /teletan < {TARGET_P99_MS:g} ms ({p99_load['officers']} off.)", fmt(p99, ".1f", " ms"),
         p99 is not None and p99 < TARGET_P99_MS),
        (f"peak RSS issuing < {TARGET_RSS_MB:g} MB", fmt(peak_mb, ".1f", " MB"), peak_mb is not None and peak_mb < TARGET_RSS_MB),
    ]
    lines += target_lines(checks)
    if skewed:
        lines.append("  (other processes were busy during a measurement: the figures are skewed)")
    print("\n".join(lines))

    failed = False
    for load, pg, _, _ in runs:
        failed |= run_failed("bench-portal", load, pg.get("tps") if pg else None)
    if args.audit_verify.startswith("FAILED"):
        print(f"bench-portal: ERROR: the audit chain does not verify after the portal's runs: {args.audit_verify}", file=sys.stderr)
        failed = True
    if warnings:
        print(f"bench-portal: WARNING: the replay differs from the portal's statements ({len(warnings)} difference(s)); "
              "see the report", file=sys.stderr)

    if env.get("BENCH_JSON"):
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "portal_bin": env.get("BENCH_PORTAL_BIN"), "build": env.get("BENCH_BUILD"), "git": env.get("BENCH_GIT"),
            "machine": env.get("BENCH_MACHINE"), "postgres": env.get("BENCH_PG_VERSION"), "pool_size": env.get("BENCH_POOL_SIZE"),
            "runs": [{"portal": load, "portal_summary": s, "portal_peak_rss_kib": peak, "floor": floor, "ratio": ratio}
                     for (load, _, _, peak), s, floor, ratio in zip(runs, summaries, floors, ratios)],
            "floor_at_pool_size": pool_floor, "portal_idle_rss_kib": args.idle_rss_kib,
            "statements": rows, "statement_differences": warnings, "postgres_ms_per_cycle": per_cycle_ms,
            "portal_log_problems": args.portal_log_problems, "audit_verify": args.audit_verify,
            "replay_audit_verify": args.replay_audit_verify, "skewed": skewed,
            "targets": {name: {"measured": value, "pass": ok} for name, value, ok in checks},
        }
        with open(env["BENCH_JSON"], "a") as f:
            f.write(json.dumps(record) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
