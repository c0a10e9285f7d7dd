#!/usr/bin/env python3
"""Load generator for the teleTAN portal: N signed-in officers issuing teleTANs.

Each officer is one thread with one keep-alive HTTP/1.1 connection (http.client) to
127.0.0.1 -- no other address can be targeted. It signs in once (GET /signin, POST
/signin) and then repeats the issuing cycle until the run is over:

    GET /                 200, hidden inputs csrf and nonce
    POST /teletan         303 -> /teletan/result        (the measured "issue" latency)
    GET /teletan/result   200, contains id="teletan"

One completed cycle is one issuance. The run is a warm-up (not counted) followed by a
measured window of fixed length; a cycle counts if its POST /teletan completed inside
the window. Officers may be spread over several processes (--processes) so that the
client is not limited to one core by the GIL.

While the window runs, the coordinating process samples CPU time (from /proc) of the
portal, of all postgres processes, of this client and of the whole machine, so the
report shows where the CPU went.

Standard library only. Writes a JSON result (--json-out) and a short summary on stderr.
Bounded: at most 50 officers, 600 s, per-request socket timeout; stops by itself.
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import re
import sys
import threading
import time
import traceback
import urllib.parse
from collections import Counter

HOST = "127.0.0.1"  # the only address this tool ever connects to
MAX_OFFICERS = 50
MAX_SECONDS = 600
SIGNIN_CONCURRENCY = 4   # sign-ins in progress at once: one address may have a quarter of the portal's 16 places
SIGNIN_ATTEMPTS = 10

CSRF_RE = re.compile(rb'name="csrf" value="([^"]+)"')
NONCE_RE = re.compile(rb'name="nonce" value="([^"]+)"')
TELETAN_MARK = b'id="teletan"'
FORM_TYPE = "application/x-www-form-urlencoded"


class CountingConnection(http.client.HTTPConnection):
    """An HTTPConnection that counts how often it (re)connects: keep-alive should mean once."""

    def __init__(self, port: int, timeout: float):
        super().__init__(HOST, port, timeout=timeout)
        self.connects = 0

    def connect(self):
        if self.host != HOST:  # belt and braces: never anything but loopback
            raise RuntimeError(f"refusing to connect to {self.host}")
        self.connects += 1
        super().connect()


class Unexpected(Exception):
    """A response that is not what the flow expects; `key` classifies it for the report."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class Stats:
    """Per-officer results for the measured window (merged at the end, no locking needed)."""

    def __init__(self):
        self.issue_ms: list[float] = []    # POST /teletan
        self.cycle_ms: list[float] = []    # GET / + POST /teletan + GET /teletan/result
        self.home_ms: list[float] = []     # GET /
        self.result_ms: list[float] = []   # GET /teletan/result
        self.requests = 0                  # requests completed (any status) in the window
        self.errors: Counter[str] = Counter()
        self.warmup_issuances = 0
        self.warmup_errors: Counter[str] = Counter()
        self.signin_ms = 0.0
        self.connects = 0
        self.resignins = 0
        self.signin_retries = 0

    def to_dict(self) -> dict:
        return {k: (dict(v) if isinstance(v, Counter) else v) for k, v in self.__dict__.items()}


class Officer:
    def __init__(self, username: str, password: str, port: int, timeout: float):
        self.username = username
        self.password = password
        self.port = port
        self.timeout = timeout
        self.conn = CountingConnection(port, timeout)
        self.cookies: dict[str, str] = {}

    # -- HTTP -------------------------------------------------------------------------------
    def request(self, method: str, path: str, form: dict | None = None):
        headers = {"Host": f"{HOST}:{self.port}", "Accept": "text/html", "Accept-Language": "en"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = FORM_TYPE
            headers["Content-Length"] = str(len(body))
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.conn.close()  # the next request reconnects
            raise Unexpected(f"{method} {path}: {type(error).__name__}") from error
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                self._store_cookie(value)
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return response.status, response.getheader("Location", ""), data

    def _store_cookie(self, header: str) -> None:
        parts = [p.strip() for p in header.split(";")]
        name, _, value = parts[0].partition("=")
        attributes = {p.split("=", 1)[0].lower(): (p.split("=", 1)[1] if "=" in p else "") for p in parts[1:]}
        if not value or attributes.get("max-age") == "0":
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = value

    # -- Flow -------------------------------------------------------------------------------
    def sign_in(self) -> None:
        self.cookies.pop("portal_session", None)
        status, _, page = self.request("GET", "/signin")
        if status != 200:
            raise Unexpected(f"GET /signin {status}")
        match = CSRF_RE.search(page)
        if not match or "portal_presession" not in self.cookies:
            raise Unexpected("GET /signin: no csrf/presession")
        status, location, _ = self.request(
            "POST", "/signin",
            {"username": self.username, "password": self.password, "csrf": match.group(1).decode()})
        if status != 303 or location != "/" or "portal_session" not in self.cookies:
            raise Unexpected(f"POST /signin {status} -> {location or '-'}")

    def cycle(self, stats: Stats, counting) -> None:
        """One issuance; `counting()` tells whether a result completed now is in the window."""
        t0 = time.perf_counter()
        status, location, page = self.request("GET", "/")
        t1 = time.perf_counter()
        if counting():
            stats.requests += 1
        if status == 303 and location.startswith("/signin"):
            raise Unexpected("GET / -> /signin (session lost)")
        if status != 200:
            raise Unexpected(f"GET / {status}")
        csrf, nonce = CSRF_RE.search(page), NONCE_RE.search(page)
        if not csrf or not nonce:
            raise Unexpected("GET /: no csrf/nonce in page")

        t2 = time.perf_counter()
        status, location, _ = self.request(
            "POST", "/teletan", {"csrf": csrf.group(1).decode(), "nonce": nonce.group(1).decode()})
        t3 = time.perf_counter()
        issue_counted = counting()
        if issue_counted:
            stats.requests += 1
        if status != 303 or location != "/teletan/result":
            raise Unexpected(f"POST /teletan {status}" + (f" -> {location}" if location else ""))

        status, _, page = self.request("GET", "/teletan/result")
        t4 = time.perf_counter()
        if counting():
            stats.requests += 1
        if status != 200 or TELETAN_MARK not in page:
            raise Unexpected(f"GET /teletan/result {status}" + ("" if status != 200 else " without teleTAN"))

        if issue_counted:
            stats.issue_ms.append((t3 - t2) * 1000)
            stats.cycle_ms.append((t4 - t0) * 1000)
            stats.home_ms.append((t1 - t0) * 1000)
            stats.result_ms.append((t4 - t3) * 1000)
        else:
            stats.warmup_issuances += 1


def run_officer(officer: Officer, stats: Stats, t_measure: float, t_end: float, pace: float) -> None:
    """Runs one officer's cycles until t_end (time.monotonic())."""
    counting = lambda: t_measure <= time.monotonic() <= t_end  # noqa: E731
    last_issue = 0.0
    while time.monotonic() < t_end:
        if pace > 0:
            wait = last_issue + pace - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, max(0.0, t_end - time.monotonic())))
                continue
        last_issue = time.monotonic()
        try:
            officer.cycle(stats, counting)
        except Unexpected as error:
            bucket = stats.errors if counting() else stats.warmup_errors
            bucket[error.key] += 1
            if "session lost" in error.key:
                try:
                    officer.sign_in()
                    stats.resignins += 1
                except Unexpected as again:
                    bucket[again.key] += 1
            time.sleep(0.05)  # never spin on a failing server
    stats.connects = officer.conn.connects
    officer.conn.close()


def worker(index: int, usernames: list[str], args, ready_queue, go_conn, result_queue) -> None:
    """One client process: signs its officers in, waits for the common start, runs, reports."""
    try:
        officers = [Officer(u, args.password, args.port, args.timeout) for u in usernames]
        stats = [Stats() for _ in officers]
        signin_errors = []

        # The portal runs at most --pam-threads (16) sign-ins at once, a quarter of them from one
        # address, and answers 503 (PAM busy) or 429 (too many under way) to more, by design; so
        # sign in a few at a time and retry those a few times.
        gate = threading.Semaphore(max(1, SIGNIN_CONCURRENCY // args.processes))

        def sign_in(i):
            t = time.perf_counter()
            with gate:
                for attempt in range(SIGNIN_ATTEMPTS):
                    try:
                        officers[i].sign_in()
                        break
                    except Unexpected as error:
                        if error.key.startswith(("POST /signin 503", "POST /signin 429")) and attempt + 1 < SIGNIN_ATTEMPTS:
                            stats[i].signin_retries += 1
                            time.sleep(0.2 * (attempt + 1))
                            continue
                        signin_errors.append(f"{officers[i].username}: {error.key}")
                        break
            stats[i].signin_ms = (time.perf_counter() - t) * 1000

        threads = [threading.Thread(target=sign_in, args=(i,)) for i in range(len(officers))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ready_queue.put((index, os.getpid(), signin_errors))
        message = go_conn.recv()
        if message is None:  # aborted by the coordinator
            return
        t_measure, t_end = message
        threads = [threading.Thread(target=run_officer, args=(o, s, t_measure, t_end, args.pace))
                   for o, s in zip(officers, stats)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result_queue.put((index, [s.to_dict() for s in stats], None))
    except Exception:  # report, never hang the coordinator
        result_queue.put((index, [], traceback.format_exc()))


# -- CPU sampling ---------------------------------------------------------------------------
CLK_TCK = os.sysconf("SC_CLK_TCK")


def stat_of(path: str) -> tuple[str, float] | None:
    """The command name and CPU seconds (utime + stime) from a /proc/PID/stat or
    /proc/PID/task/TID/stat file; None if the process is gone."""
    try:
        with open(path) as f:
            text = f.read()
        fields = text.rsplit(")", 1)[1].split()
        return text[text.find("(") + 1:text.rfind(")")], (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def processes() -> list[tuple[int, str, float]]:
    """(pid, command name, CPU seconds) of every process on the machine."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := stat_of(f"/proc/{entry}/stat")) is not None:
            found.append((int(entry), *stat))
    return found


def is_postgres(command: str) -> bool:
    return command == "postgres" or command.startswith("postgres:")


def proc_cpu(pid: int) -> float:
    """utime + stime of one process in seconds (0 if it is gone)."""
    stat = stat_of(f"/proc/{pid}/stat")
    return stat[1] if stat else 0.0


def postgres_cpu() -> float:
    return sum(cpu for _, command, cpu in processes() if is_postgres(command))


def machine_cpu() -> tuple[float, float]:
    """(busy, total) seconds of all CPUs from /proc/stat (iowait counts as idle)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    total = sum(values[:8])  # guest time is already included in user
    return (total - idle) / CLK_TCK, total / CLK_TCK


def cpu_snapshot(portal_pid: int, client_pids: list[int]) -> dict:
    busy, total = machine_cpu()
    return {
        "portal": proc_cpu(portal_pid) if portal_pid else 0.0,
        "postgres": postgres_cpu(),
        "client": sum(proc_cpu(p) for p in client_pids),
        "busy": busy,
        "total": total,
    }


def rss_kib(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return out


# -- Statistics -----------------------------------------------------------------------------
def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), int(-(-p * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


def summarize(values: list[float]) -> dict:
    values = sorted(values)
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "mean": sum(values) / len(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": values[-1],
    }


def reset_peak_rss(pid: int | None, tool: str, excluded: str) -> bool:
    """Resets the kernel's RSS high-water mark (Linux: clear_refs 5), so that VmHWM read later is
    the peak from now on; `excluded` names the phase that is left out (for the warning)."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError as error:
        print(f"{tool}: cannot reset VmHWM ({error}); the peak includes {excluded}", file=sys.stderr)
        return False


def measure_window(pid: int | None, client_pids: list[int], start: float, t_measure: float, t_end: float) -> dict:
    """Waits through warm-up and window: RSS every 0.25 s (growth over the window hints at a
    leak), CPU of everyone at the window's edges. Returns the CPU cores used in the window."""
    series: list[tuple[float, int]] = []

    def sample_until(deadline: float) -> None:
        while True:
            if pid:
                rss = rss_kib(pid).get("VmRSS")
                if rss:
                    series.append((round(time.monotonic() - start, 2), rss))
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(0.25, left))

    sample_until(t_measure)
    cpu0, m0 = cpu_snapshot(pid, client_pids), time.monotonic()
    rss_start = rss_kib(pid).get("VmRSS") if pid else None
    sample_until(t_end)
    cpu1, m1 = cpu_snapshot(pid, client_pids), time.monotonic()
    return {"rss_series": series, "rss_start": rss_start, "window": m1 - m0,
            "cpu": {k: cpu1[k] - cpu0[k] for k in cpu0}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True, help="portal port on 127.0.0.1")
    parser.add_argument("--officers", type=int, default=50)
    parser.add_argument("--user-format", default="tt-bench-{:02d}", help="username for officer i (1-based)")
    parser.add_argument("--password", default="Bench-Pass-1")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds, not counted")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    parser.add_argument("--processes", type=int, default=1, help="client processes the officers are spread over")
    parser.add_argument("--pace", type=float, default=0.0,
                        help="minimum seconds between two issuances of one officer (0: as fast as possible)")
    parser.add_argument("--timeout", type=float, default=10.0, help="socket timeout per request, seconds")
    parser.add_argument("--portal-pid", type=int, default=0, help="for CPU and RSS sampling")
    parser.add_argument("--json-out", help="write the result as JSON here")
    args = parser.parse_args()

    if not 1 <= args.port <= 65535:
        parser.error("--port out of range")
    if not 1 <= args.officers <= MAX_OFFICERS:
        parser.error(f"--officers must be 1..{MAX_OFFICERS} (there are {MAX_OFFICERS} bench accounts)")
    if not (0 <= args.warmup <= 60 and 1 <= args.duration <= MAX_SECONDS):
        parser.error(f"--warmup must be 0..60 and --duration 1..{MAX_SECONDS} seconds")
    if not 0 < args.timeout <= 60 or not 0 <= args.pace <= 60:
        parser.error("--timeout must be 0..60 s, --pace 0..60 s")
    args.processes = max(1, min(args.processes, args.officers, os.cpu_count() or 1, 8))

    usernames = [args.user_format.format(i) for i in range(1, args.officers + 1)]
    groups = [usernames[i::args.processes] for i in range(args.processes)]
    ctx = mp.get_context("fork")  # no threads exist yet in this process
    ready_queue, result_queue = ctx.Queue(), ctx.Queue()
    pipes, procs = [], []
    for i, group in enumerate(groups):
        parent_end, child_end = ctx.Pipe()
        p = ctx.Process(target=worker, args=(i, group, args, ready_queue, child_end, result_queue), daemon=True)
        p.start()
        pipes.append(parent_end)
        procs.append(p)

    def abort(message: str) -> int:
        for pipe in pipes:
            try:
                pipe.send(None)
            except OSError:
                pass
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.terminate()
        print(f"portal_load: {message}", file=sys.stderr)
        return 2

    # Sign-in phase (bounded).
    t_signin = time.monotonic()
    signin_errors: list[str] = []
    for _ in procs:
        try:
            _, _, errors = ready_queue.get(timeout=120)
        except Exception:
            return abort("sign-in did not finish within 120 s")
        signin_errors += errors
    signin_seconds = time.monotonic() - t_signin
    if signin_errors:
        return abort("sign-in failed: " + "; ".join(signin_errors[:5]) + (" ..." if len(signin_errors) > 5 else ""))
    rss_after_signin = rss_kib(args.portal_pid) if args.portal_pid else {}
    # The sign-in burst has its own peak (pam_unix hashes with yescrypt, about 16 MiB per
    # sign-in in progress). Keep it, then reset the high-water mark so that VmHWM at the end is
    # the peak while officers issue.
    hwm_reset = reset_peak_rss(args.portal_pid, "portal_load", "sign-in")
    print(f"portal_load: {args.officers} officers signed in ({signin_seconds:.2f} s), "
          f"{args.processes} client process(es); warm-up {args.warmup:g} s, measuring {args.duration:g} s",
          file=sys.stderr)

    start = time.monotonic() + 0.1
    t_measure, t_end = start + args.warmup, start + args.warmup + args.duration
    for pipe in pipes:
        pipe.send((t_measure, t_end))
    client_pids = [os.getpid()] + [p.pid for p in procs]

    measured = measure_window(args.portal_pid, client_pids, start, t_measure, t_end)
    rss_series, rss_start = measured["rss_series"], measured["rss_start"]
    rss_end = rss_kib(args.portal_pid) if args.portal_pid else {}

    # Results (officers finish the cycle they are in: at most one timeout past the end).
    merged = Stats()
    worker_failures = []
    for _ in procs:
        try:
            _, stats_list, failure = result_queue.get(timeout=args.timeout * 3 + 30)
        except Exception:
            return abort("client processes did not report in time")
        if failure:
            worker_failures.append(failure)
        for s in stats_list:
            for key in ("issue_ms", "cycle_ms", "home_ms", "result_ms"):
                getattr(merged, key).extend(s[key])
            merged.requests += s["requests"]
            merged.errors.update(s["errors"])
            merged.warmup_issuances += s["warmup_issuances"]
            merged.warmup_errors.update(s["warmup_errors"])
            merged.connects += s["connects"]
            merged.resignins += s["resignins"]
            merged.signin_retries += s["signin_retries"]
            merged.signin_ms = max(merged.signin_ms, s["signin_ms"])
    for p in procs:
        p.join(5)
    if worker_failures:
        print("portal_load: a client process failed:\n" + worker_failures[0], file=sys.stderr)
        return 2

    window, cpu = measured["window"], measured["cpu"]
    cores = {k: cpu[k] / window for k in ("portal", "postgres", "client", "busy")}
    cores["other"] = max(0.0, cores["busy"] - cores["portal"] - cores["postgres"] - cores["client"])
    cores["machine"] = cpu["total"] / window  # = number of CPUs
    error_count = sum(merged.errors.values())
    result = {
        "officers": args.officers,
        "client_processes": args.processes,
        "pace_seconds": args.pace,
        "warmup_seconds": args.warmup,
        "duration_seconds": round(window, 3),
        "issuances": len(merged.issue_ms),
        "throughput_per_s": len(merged.issue_ms) / window,
        "requests": merged.requests,
        "requests_per_s": merged.requests / window,
        "errors": error_count,
        "error_rate": error_count / merged.requests if merged.requests else (1.0 if error_count else 0.0),
        "error_kinds": dict(merged.errors.most_common()),
        "warmup_issuances": merged.warmup_issuances,
        "warmup_errors": dict(merged.warmup_errors.most_common()),
        "latency_ms": {
            "issue_post": summarize(merged.issue_ms),
            "cycle": summarize(merged.cycle_ms),
            "get_home": summarize(merged.home_ms),
            "get_result": summarize(merged.result_ms),
        },
        "signin_seconds": round(signin_seconds, 3),
        "signin_retries_after_503": merged.signin_retries,
        "connections_opened": merged.connects,
        "resignins": merged.resignins,
        "cpu_cores_used": {k: round(v, 3) for k, v in cores.items()},
        "portal_rss_kib": {"signin_peak": rss_after_signin.get("VmHWM"), "after_signin": rss_after_signin.get("VmRSS"),
                           "window_start": rss_start, "end": rss_end.get("VmRSS"),
                           "max_sampled": max((r for _, r in rss_series), default=None),
                           # VmHWM since the reset after sign-in: the peak while issuing.
                           "peak": rss_end.get("VmHWM"), "peak_excludes_signin": hwm_reset},
        "portal_rss_series_kib": rss_series[:: max(1, len(rss_series) // 40)],
    }
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=2)
    issue = result["latency_ms"]["issue_post"]
    print(f"portal_load: {result['issuances']} issuances in {window:.1f} s = {result['throughput_per_s']:.1f}/s; "
          f"POST /teletan p50 {issue.get('p50', 0) or 0:.1f} ms p99 {issue.get('p99', 0) or 0:.1f} ms; "
          f"errors {error_count}/{merged.requests}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
