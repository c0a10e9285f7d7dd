#!/usr/bin/env python3
"""Runs the Swift test suites (XCTest) in several workers side by side, each with its own
PostgreSQL database, and fails unless every listed test ran and passed.

Usage: scripts/swift-test-parallel.py [--workers N] [--log FILE]
  after `swift build --build-tests`; scripts/test.sh runs it with the environment of the Swift
  step (PORTAL_PAM_TESTS, PORTAL_TEST_POSTGRES_URL, PORTAL_TEST_REQUIRE_POSTGRES).

Why not `swift test --parallel`: it starts a process per test (343 of them), and it gives a test
no way to know its worker, so the workers would share one database, which every storage test
empties first (Tests/TestSupport/TestDatabases.swift). Here a worker is a thread that takes the
next suite from a queue and runs the test bundle on it (one process per suite), with
PORTAL_TEST_POSTGRES_URL naming the worker's own database: `<database>_w<N>`, created by
scripts/start-test-postgres.sh (SwiftPackageIndex-Server's `DatabasePool` does the same with
`spi_test_N`).

Suites that share something outside the process run in one worker, one after the other
(SHARED_RESOURCES). The longest suites start first: their seconds from the previous run on this
machine (.build/swift-suite-seconds.json), or their number of tests on a fresh one.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SECONDS_FILE = REPO / ".build" / "swift-suite-seconds.json"

# Suites that must never run at the same time, each set run by one worker in this order.
SHARED_RESOURCES = [
    # The pam_oath token "tt-otp": each one-time code moves its counter in
    # /var/lib/teletan-portal-test/users.oath, so two suites taking codes at once would refuse
    # each other's.
    ["PAMAuthTests.PAMAuthenticatorTests", "PortalTests.SignInAndSessionTests"],
]

# "Executed 5 tests, with 0 failures", or with skipped tests "Executed 5 tests, with 1 test
# skipped and 0 failures" (a skipped test ran: it decided to skip).
EXECUTED = re.compile(r"Executed (\d+) tests?, with (?:\d+ tests? skipped and )?(\d+) failures?")


def test_bundle() -> Path:
    bundles = glob.glob(str(REPO / ".build" / "debug" / "*PackageTests.xctest"))
    if len(bundles) != 1:
        sys.exit(f"swift-test-parallel: expected one test bundle under .build/debug, found {bundles}; run `swift build --build-tests` first")
    return Path(bundles[0])


def list_tests(bundle: Path) -> list[str]:
    output = subprocess.run([str(bundle), "--list-tests"], check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in output.splitlines() if "/" in line and "." in line.split("/")[0]]


def work_items(tests: list[str]) -> list[tuple[list[str], int]]:
    """(suites run together, their number of tests), longest first."""
    counts: dict[str, int] = {}
    for test in tests:
        suite = test.split("/")[0]
        counts[suite] = counts.get(suite, 0) + 1
    grouped = [[suite for suite in group if suite in counts] for group in SHARED_RESOURCES]
    grouped = [group for group in grouped if group]
    in_groups = {suite for group in grouped for suite in group}
    items = grouped + [[suite] for suite in counts if suite not in in_groups]
    previous: dict[str, float] = {}
    if SECONDS_FILE.exists():
        previous = json.loads(SECONDS_FILE.read_text())

    def weight(group: list[str]) -> float:
        # Seconds where known; a test counts as one second otherwise.
        return sum(previous.get(suite, counts[suite]) for suite in group)

    items.sort(key=weight, reverse=True)
    return [(group, sum(counts[suite] for suite in group)) for group in items]


def worker_environment(worker: int) -> dict[str, str]:
    environment = dict(os.environ)
    url = environment.get("PORTAL_TEST_POSTGRES_URL", "")
    if url:
        base, _, rest = url.rpartition("/")
        name, separator, query = rest.partition("?")
        environment["PORTAL_TEST_POSTGRES_URL"] = f"{base}/{name}_w{worker}{separator}{query}"
    return environment


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--log", type=Path, default=REPO / ".build" / "swift-test.log")
    arguments = parser.parse_args()

    bundle = test_bundle()
    tests = list_tests(bundle)
    items = work_items(tests)
    work: queue.Queue[tuple[list[str], int]] = queue.Queue()
    for item in items:
        work.put(item)
    lock = threading.Lock()
    seconds: dict[str, float] = {}
    problems: list[str] = []
    executed_total = 0
    start = time.monotonic()
    arguments.log.parent.mkdir(parents=True, exist_ok=True)
    log = arguments.log.open("w")

    def run_worker(worker: int) -> None:
        nonlocal executed_total
        environment = worker_environment(worker)
        while True:
            try:
                suites, expected = work.get_nowait()
            except queue.Empty:
                return
            began = time.monotonic()
            # XCTest on Linux takes a comma-separated list of suites, run in that order.
            result = subprocess.run([str(bundle), ",".join(suites)], env=environment, cwd=REPO,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            took = time.monotonic() - began
            runs = [(int(m[0]), int(m[1])) for m in EXECUTED.findall(result.stdout)]
            # The last summary line is the whole run's ("Selected tests").
            executed, failures = runs[-1] if runs else (0, 0)
            with lock:
                log.write(result.stdout)
                log.flush()
                executed_total += executed
                for suite in suites:
                    seconds[suite] = round(took / len(suites), 1)
                name = ", ".join(suites)
                print(f"{took:7.1f} s  worker {worker}  {name} ({executed} of {expected} tests)", flush=True)
                if result.returncode != 0 or failures or executed != expected:
                    problems.append(name)
                    print(f"--- {name}: exit {result.returncode}, {failures} failures, {executed} of {expected} tests ran", flush=True)
                    print("\n".join(line for line in result.stdout.splitlines()
                                    if ": error:" in line or "Fatal error" in line or "failed (" in line)[-8000:], flush=True)

    threads = [threading.Thread(target=run_worker, args=(n + 1,)) for n in range(max(1, arguments.workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    SECONDS_FILE.write_text(json.dumps(seconds, indent=1, sort_keys=True))

    print(f"{executed_total} of {len(tests)} tests in {len(items)} runs of {arguments.workers} workers, "
          f"{time.monotonic() - start:.0f} s")
    if problems or executed_total != len(tests):
        print("FAILED: " + ("; ".join(problems) if problems else f"only {executed_total} of {len(tests)} tests ran"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
