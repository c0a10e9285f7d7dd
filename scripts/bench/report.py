#!/usr/bin/env python3
"""Prints the result table of scripts/bench-portal.sh and optionally appends it as JSON.

Inputs: the JSON of portal_load.py, pgbench's output file(s), the portal's peak RSS and a
few facts about the run (environment variables set by the shell script). Exit status: 0,
or 1 when more than 1 % of the portal's requests failed or pgbench failed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

TARGET_RATIO = 0.30      # portal throughput / pgbench throughput
TARGET_P99_MS = 50.0     # POST /teletan
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


def fmt(value, spec=".1f", unit=""):
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def target_lines(checks: list[tuple[str, str, bool]]) -> list[str]:
    """The closing table: each target, what was measured, PASS or FAIL."""
    return ["", "  Target                                   measured        result"] + [
        f"    {name:<37}{value:<16}{'PASS' if ok else 'FAIL'}" for name, value, ok in checks] + [""]


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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", required=True)
    parser.add_argument("--pgbench", required=True)
    parser.add_argument("--pgbench-chained")
    parser.add_argument("--peak-rss-kib", type=int)
    parser.add_argument("--idle-rss-kib", type=int)
    parser.add_argument("--portal-log-problems", type=int, default=0)
    parser.add_argument("--audit-verify", default="not run")
    parser.add_argument("--rows", default="")
    args = parser.parse_args()

    load = json.load(open(args.load))
    pg = parse_pgbench(args.pgbench)
    chained = parse_pgbench(args.pgbench_chained)
    env = os.environ

    issue = load["latency_ms"]["issue_post"]
    cycle = load["latency_ms"]["cycle"]
    home = load["latency_ms"]["get_home"]
    result = load["latency_ms"]["get_result"]
    throughput = load["throughput_per_s"]
    pg_tps = pg.get("tps") if pg else None
    ratio = throughput / pg_tps if pg_tps else None
    peak_rss_kib = args.peak_rss_kib or load["portal_rss_kib"].get("peak")
    peak_rss_mib = peak_rss_kib / 1024 if peak_rss_kib else None
    peak_rss_mb = peak_rss_kib * 1024 / 1e6 if peak_rss_kib else None  # the target is in MB (10^6 bytes)
    rss = load["portal_rss_kib"]
    mib = lambda kib: fmt(kib / 1024 if kib else None, ".1f", " MiB")  # noqa: E731
    cores = load["cpu_cores_used"]

    checks = [
        (f"throughput >= {TARGET_RATIO:.0%} of pgbench", fmt(ratio, ".1%") if ratio is not None else "n/a",
         ratio is not None and ratio >= TARGET_RATIO),
        (f"p99 POST /teletan < {TARGET_P99_MS:g} ms", fmt(issue.get("p99"), ".1f", " ms"),
         issue.get("p99") is not None and issue["p99"] < TARGET_P99_MS),
        (f"peak RSS issuing < {TARGET_RSS_MB:g} MB", fmt(peak_rss_mb, ".1f", " MB"),
         peak_rss_mb is not None and peak_rss_mb < TARGET_RSS_MB),
    ]

    lines = []
    add = lines.append
    add("")
    add(f"teleTAN portal benchmark -- {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    add(f"  portal:    {env.get('BENCH_PORTAL_BIN', '?')} ({env.get('BENCH_BUILD', '?')} build), "
        f"git {env.get('BENCH_GIT', '?')}")
    add(f"  machine:   {env.get('BENCH_MACHINE', '?')}")
    add(f"  database:  {env.get('BENCH_PG_VERSION', '?')} on 127.0.0.1:5432, db teletan_bench")
    add(f"  run:       {load['officers']} officers, {load['client_processes']} client process(es), "
        f"warm-up {load['warmup_seconds']:g} s, measured {load['duration_seconds']:.1f} s, "
        f"--teletan-interval {env.get('BENCH_TELETAN_INTERVAL', '?')}, --database-pool-size {env.get('BENCH_POOL_SIZE', '?')}"
        + (f", pace {load['pace_seconds']:g} s/officer" if load["pace_seconds"] else ""))
    add("")
    add("  Portal (one issuance = GET / + POST /teletan + GET /teletan/result)")
    add(f"    issuances             {load['issuances']}  ({load['warmup_issuances']} more in warm-up)")
    add(f"    throughput            {throughput:.1f} teleTANs/s  ({load['requests_per_s']:.0f} requests/s)")
    add(f"    errors                {load['errors']} of {load['requests']} requests ({load['error_rate']:.2%})"
        + ("" if not load["error_kinds"] else "  " + ", ".join(f"{k}: {v}" for k, v in load["error_kinds"].items())))
    if load["warmup_errors"]:
        add("    warm-up errors        " + ", ".join(f"{k}: {v}" for k, v in load["warmup_errors"].items()))
    add("    latency ms            p50      p90      p99      max     mean")
    for name, s in [("POST /teletan", issue), ("full cycle", cycle), ("GET /", home), ("GET /teletan/result", result)]:
        if s.get("count"):
            add(f"      {name:<20}{s['p50']:7.1f}  {s['p90']:7.1f}  {s['p99']:7.1f}  {s['max']:7.1f}  {s['mean']:7.1f}")
    peak_label = "peak while issuing" if rss.get("peak_excludes_signin") else "peak incl. sign-in"
    add(f"    portal RSS            {peak_label} (VmHWM) {fmt(peak_rss_mb, '.1f', ' MB')} = {fmt(peak_rss_mib, '.1f', ' MiB')}")
    add(f"                          VmRSS: idle {mib(args.idle_rss_kib)}, after sign-in {mib(rss.get('after_signin'))}, "
        f"window start {mib(rss.get('window_start'))}, end {mib(rss.get('end'))}")
    if rss.get("peak_excludes_signin"):
        add(f"                          sign-in burst peak {mib(rss.get('signin_peak'))} "
            f"(pam_unix/yescrypt, ~16 MiB per sign-in in progress; not part of the target)")
    add(f"    CPU (cores of {cores['machine']:.0f})    portal {cores['portal']:.2f}, postgres {cores['postgres']:.2f}, "
        f"load client {cores['client']:.2f}, other {cores['other']:.2f}, idle {cores['machine'] - cores['busy']:.2f}")
    if cores["other"] > 0.1:
        add(f"    WARNING: other processes used {cores['other']:.2f} cores during the window: the figures are skewed")
    add(f"    connections opened    {load['connections_opened']} (keep-alive: one per officer expected)"
        + (f", re-sign-ins {load['resignins']}" if load["resignins"] else ""))
    add(f"    sign-in               {load['officers']} officers in {load['signin_seconds']:.1f} s"
        + (f" ({load['signin_retries_after_503']} retries after 503 'busy')" if load.get("signin_retries_after_503") else ""))
    add(f"    portal log            {args.portal_log_problems} warning/error line(s); audit chain: {args.audit_verify}")
    if args.rows:
        add(f"    rows written          {args.rows}")
    add("")
    add("  pgbench, same server, same number of clients (-j 2), scripts/bench/issue.sql")
    if pg:
        add(f"    equivalent tx         {fmt(pg.get('tps'), '.1f')} tps, latency avg {fmt(pg.get('latency_avg_ms'), '.2f', ' ms')}"
            + (f", failed {pg['failed']}" if pg.get("failed") else ""))
    if chained:
        add(f"    + audit chain lock    {fmt(chained.get('tps'), '.1f')} tps, latency avg "
            f"{fmt(chained.get('latency_avg_ms'), '.2f', ' ms')}  (issue-chained.sql, informational)")
    lines += target_lines(checks)
    print("\n".join(lines))
    failed = run_failed("bench-portal", load, pg_tps)

    if env.get("BENCH_JSON"):
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "portal_bin": env.get("BENCH_PORTAL_BIN"), "build": env.get("BENCH_BUILD"), "git": env.get("BENCH_GIT"),
            "machine": env.get("BENCH_MACHINE"), "postgres": env.get("BENCH_PG_VERSION"),
            "teletan_interval": env.get("BENCH_TELETAN_INTERVAL"), "pool_size": env.get("BENCH_POOL_SIZE"),
            "portal": load, "portal_peak_rss_kib": peak_rss_kib, "portal_idle_rss_kib": args.idle_rss_kib,
            "portal_log_problems": args.portal_log_problems, "audit_verify": args.audit_verify,
            "pgbench": {k: v for k, v in (pg or {}).items() if k != "raw_tail"},
            "pgbench_chained": {k: v for k, v in (chained or {}).items() if k != "raw_tail"} if chained else None,
            "ratio": ratio,
            "targets": {name: {"measured": value, "pass": ok} for name, value, ok in checks},
        }
        with open(env["BENCH_JSON"], "a") as f:
            f.write(json.dumps(record) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
