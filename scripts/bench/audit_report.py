#!/usr/bin/env python3
"""Prints the result of scripts/bench-audit.sh as a table (Markdown, like docs/benchmarks.md)
from audit_load.py's JSON and the seed's timings; optionally appends everything as one JSON line."""
from __future__ import annotations

import argparse
import json
import sys

LATENCY_TARGET_MS = 50
EXPORT_ROWS_PER_S = 100_000
RSS_TARGET_MB = 100


def ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", required=True)
    parser.add_argument("--seed", default="", help="the seed's JSON line ('' if the data was reused)")
    parser.add_argument("--facts", default="", help="one line about build, machine, database")
    parser.add_argument("--audit-verify", default="not run")
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()
    load = json.load(open(args.load))
    seed = json.loads(args.seed) if args.seed else None

    print()
    print(f"## Audit review benchmark ({load['database']})")
    if args.facts:
        print(args.facts)
    if seed:
        print(f"Seed: {seed['rows']:,} entries over {seed['days']} days in {seed['total_s']} s "
              f"({', '.join(f'{k} {v}' for k, v in seed.items() if k.endswith('_s') and k != 'total_s')}).")
    if "settle_s" in load:
        print(f"Portal settled {load['settle_s']} s after start; idle RSS {load['idle_rss_kib'] / 1000:.1f} MB.")
    else:
        print("Database baselines only (no portal run).")
    print()
    print("| Figure | Portal p50 / p99 ms | Database p50 / p99 ms | Ratio p50 / p99 | Target | Result |")
    print("|---|---|---|---|---|---|")
    for row in load["latencies"]:
        portal, base = row["portal"], row["baseline"]
        if portal is None:
            print(f"| {row['figure']} | - | {ms(base['p50'])} / {ms(base['p99'])} | - | p99 < {LATENCY_TARGET_MS} ms | - |")
            continue
        ratio = (f"{portal['p50'] / base['p50']:.1f}x / {portal['p99'] / base['p99']:.1f}x"
                 if base["p50"] and base["p99"] else "-")
        verdict = "PASS" if portal["p99"] < LATENCY_TARGET_MS else "FAIL"
        print(f"| {row['figure']} | {ms(portal['p50'])} / {ms(portal['p99'])} | {ms(base['p50'])} / {ms(base['p99'])} | "
              f"{ratio} | p99 < {LATENCY_TARGET_MS} ms | {verdict} |")
    for export in load.get("exports", []):
        rate = export["rows_per_s"] or 0
        peak_kib = export["vmhwm_kib"] or export["peak_rss_sampled_kib"]
        peak_mb = peak_kib / 1000
        print(f"| export .{export['format']}: {export['rows']:,} rows in {export['seconds']:.1f} s | {rate:,.0f} rows/s | - | - | "
              f">= {EXPORT_ROWS_PER_S:,} rows/s | {'PASS' if rate >= EXPORT_ROWS_PER_S else 'FAIL'} |")
        print(f"| export .{export['format']}: portal peak RSS | {peak_mb:.1f} MB | - | - | < {RSS_TARGET_MB} MB | "
              f"{'PASS' if peak_mb < RSS_TARGET_MB else 'FAIL'} |")
    print()
    print("Database baselines (same query, same run):")
    for row in load["latencies"]:
        base = row["baseline"]
        plan = " / ".join(line.strip().split("  (cost")[0] for line in base["plan"] if "Buffers:" not in line)
        print(f"  {row['figure']}: {base['tool']}; plan: {plan}")
    if "exports" in load:
        print(f"Export filter: {load['export_filter']} ({load['export_expected_rows']:,} entries matched in the database).")
    for export in load.get("exports", []):
        extra = f"; independent re-check: {export['independent_check']} ({export['independent_check_s']} s)" if "independent_check" in export else ""
        print(f"  .{export['format']}: {export['bytes'] / 1e6:,.1f} MB, first byte after {export['ttfb_s'] * 1000:.0f} ms, "
              f"RSS before {export['rss_before_kib'] / 1000:.1f} MB, sampled peak {export['peak_rss_sampled_kib'] / 1000:.1f} MB, "
              f"VmHWM {'%.1f MB' % (export['vmhwm_kib'] / 1000) if export['vmhwm_kib'] else 'not reset (not root)'}{extra}")
    for export in load.get("exports", []):
        if "independent_check" in export and not export["independent_check"].startswith("intact"):
            print(f"  .{export['format']} begins: {export['sample'][:200]!r}")
    lookups = [row for row in load["latencies"] if row["figure"].startswith("lookup") and row["portal"]]
    for row in lookups:
        print(f"  {row['figure']}: POST alone p50 {ms(row['portal']['post_only']['p50'])} ms; fingerprint {row['portal']['fingerprint'][:16]}...")
    print(f"Audit chain after the run: {args.audit_verify}")
    if args.json_out:
        with open(args.json_out, "a") as handle:
            handle.write(json.dumps({"load": load, "seed": seed, "facts": args.facts, "audit_verify": args.audit_verify}, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
