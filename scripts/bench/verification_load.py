#!/usr/bin/env python3
"""Load generator for the verification server's app-facing chain (scripts/bench-verification.sh).

Two phases, both against 127.0.0.1 only:

1. Setup (not measured): creates --teletans teleTANs through the internal listener,
   POST /version/v1/tan/teletan with an ES256 portal token (kid = key thumbprint), from a few
   threads. The teleTANs are kept in memory and dealt out to the clients.
2. Load: N clients, each a thread with two keep-alive HTTP/1.1 connections (http.client), one
   to the app-facing port and one to the internal port, repeat the chain with no think time:

       POST :P/version/v1/registrationToken {"key": teleTAN, "keyType": "TELETAN"}  201
       POST :P/version/v1/tan               {"registrationToken": ...}               201
       POST :Q/version/v1/tan/verify        {"tan": ...}                              200

   One completed chain uses one teleTAN. After a warm-up (not counted) a fixed window is
   measured; a request counts if it completed inside the window, a chain if its last request
   did. Clients may be spread over processes (--processes) so that the GIL does not limit
   the client.

CPU time (portal_load.py's helpers: server, postgres, client, machine) is sampled at the
window's edges, the server's RSS every 0.25 s; VmHWM is read at the end.

`report` subcommand: prints the result table from the load JSON and pgbench's output.

Standard library only for the load; the setup signs tokens with the `cryptography` package.
Bounded: at most 200 clients, 600 s, 200,000 teleTANs, per-request socket timeout.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import multiprocessing as mp
import os
import sys
import threading
import time
import traceback
from collections import Counter

from portal_load import CountingConnection, HOST, measure_window, reset_peak_rss, rss_kib, summarize  # noqa: E402
from report import fmt, parse_pgbench, run_failed, target_lines  # noqa: E402

MAX_CLIENTS = 200
MAX_SECONDS = 600
MAX_TELETANS = 200_000
# The order n of P-256: the server refuses an ES256 signature with s > n/2 (malleable).
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}

TARGET_RATIO = 0.60   # issue 22 (was 0.30, met since the second round)
TARGET_P99_MS = 20.0


class Unexpected(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def post(conn: CountingConnection, path: str, body: dict, headers: dict | None = None):
    data = json.dumps(body).encode()
    all_headers = {"Host": f"{HOST}:{conn.port}", "Content-Length": str(len(data)), **JSON_HEADERS, **(headers or {})}
    try:
        conn.request("POST", path, body=data, headers=all_headers)
        response = conn.getresponse()
        payload = response.read()
    except (OSError, http.client.HTTPException) as error:
        conn.close()
        raise Unexpected(f"POST {path}: {type(error).__name__}") from error
    if response.getheader("Connection", "").lower() == "close":
        conn.close()
    return response.status, payload


# -- Setup: teleTANs through the internal API ---------------------------------------------------
def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenMaker:
    """ES256 portal tokens as PortalTokenSigner makes them (kid = thumbprint of the public PEM,
    the default audience, low S)."""

    def __init__(self, key_dir: str):
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        self._ec, self._hashes, self._decode = ec, hashes, decode_dss_signature
        with open(os.path.join(key_dir, "portal-key.pem"), "rb") as f:
            self.key = serialization.load_pem_private_key(f.read(), password=None)
        with open(os.path.join(key_dir, "portal-key.pub.pem"), "rb") as f:
            self.kid = hashlib.sha256(f.read()).hexdigest()[:16]

    def token(self, lifetime: int = 60) -> str:
        now = int(time.time())
        header = b64url(json.dumps({"alg": "ES256", "typ": "JWT", "kid": self.kid}, separators=(",", ":")).encode())
        payload = b64url(json.dumps({"sub": "bench", "roles": ["c19hotline"], "aud": "teletan-verification-server",
                                     "iat": now, "exp": now + lifetime}, separators=(",", ":")).encode())
        signing_input = f"{header}.{payload}".encode()
        r, s = self._decode(self.key.sign(signing_input, self._ec.ECDSA(self._hashes.SHA256())))
        s = min(s, P256_ORDER - s)  # low S, as the server requires (docs/security.md)
        return f"{header}.{payload}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def create_teletans(args) -> tuple[list[str], float, Counter]:
    maker = TokenMaker(args.key_dir)
    out: list[list[str]] = [[] for _ in range(args.setup_threads)]
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + args.setup_timeout

    def run(i: int, count: int) -> None:
        conn = CountingConnection(args.internal_port, args.timeout)
        token, token_at = maker.token(), time.monotonic()
        failures = 0
        while len(out[i]) < count and time.monotonic() < deadline:
            if time.monotonic() - token_at > 30:
                token, token_at = maker.token(), time.monotonic()
            try:
                status, body = post(conn, "/version/v1/tan/teletan", {}, {"Authorization": f"Bearer {token}"})
                if status != 201:
                    raise Unexpected(f"POST /tan/teletan {status}: {body[:120]!r}")
                out[i].append(json.loads(body)["value"])
            except (Unexpected, ValueError, KeyError) as error:
                with lock:
                    errors[getattr(error, "key", repr(error))] += 1
                failures += 1
                if failures > 20:
                    return
                time.sleep(0.05)
        conn.close()

    t0 = time.monotonic()
    per = [args.teletans // args.setup_threads + (1 if i < args.teletans % args.setup_threads else 0)
           for i in range(args.setup_threads)]
    threads = [threading.Thread(target=run, args=(i, n)) for i, n in enumerate(per)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [v for part in out for v in part], time.monotonic() - t0, errors


# -- Load ------------------------------------------------------------------------------------
class Stats:
    def __init__(self):
        self.reg_ms: list[float] = []
        self.tan_ms: list[float] = []
        self.verify_ms: list[float] = []
        self.chain_ms: list[float] = []
        self.requests = 0
        self.errors: Counter[str] = Counter()
        self.warmup_chains = 0
        self.warmup_errors: Counter[str] = Counter()
        self.connects = 0
        self.ran_out = 0          # 1 when this client used up its teleTANs before the end

    def to_dict(self) -> dict:
        return {k: (dict(v) if isinstance(v, Counter) else v) for k, v in self.__dict__.items()}


def run_client(teletans: list[str], args, stats: Stats, t_measure: float, t_end: float, client: int) -> None:
    app = CountingConnection(args.port, args.timeout)
    # Each simulated app comes from its own address, as behind the load balancer in production
    # (the server runs with --trust-proxy): the guessing protection counts per address.
    forwarded = {"X-Forwarded-For": f"10.{(client >> 16) & 255}.{(client >> 8) & 255}.{client & 255}"}
    internal = CountingConnection(args.internal_port, args.timeout)
    inside = lambda: t_measure <= time.monotonic() <= t_end  # noqa: E731
    it = iter(teletans)
    while time.monotonic() < t_end:
        teletan = next(it, None)
        if teletan is None:
            stats.ran_out = 1
            break
        try:
            t0 = time.perf_counter()
            status, body = post(app, "/version/v1/registrationToken", {"key": teletan, "keyType": "TELETAN"}, forwarded)
            t1 = time.perf_counter()
            stats.requests += inside()
            if status != 201:
                raise Unexpected(f"POST /registrationToken {status}")
            token = json.loads(body)["registrationToken"]
            status, body = post(app, "/version/v1/tan", {"registrationToken": token}, forwarded)
            t2 = time.perf_counter()
            stats.requests += inside()
            if status != 201:
                raise Unexpected(f"POST /tan {status}")
            tan = json.loads(body)["tan"]
            status, _ = post(internal, "/version/v1/tan/verify", {"tan": tan})
            t3 = time.perf_counter()
            counted = inside()
            stats.requests += counted
            if status != 200:
                raise Unexpected(f"POST /tan/verify {status}")
        except (Unexpected, ValueError, KeyError) as error:
            (stats.errors if inside() else stats.warmup_errors)[getattr(error, "key", repr(error))] += 1
            time.sleep(0.05)  # never spin on a failing server
            continue
        if counted:
            stats.reg_ms.append((t1 - t0) * 1000)
            stats.tan_ms.append((t2 - t1) * 1000)
            stats.verify_ms.append((t3 - t2) * 1000)
            stats.chain_ms.append((t3 - t0) * 1000)
        elif time.monotonic() < t_measure:
            stats.warmup_chains += 1
    stats.connects = app.connects + internal.connects
    app.close()
    internal.close()


def worker(index: int, shares: list[list[str]], args, go_conn, result_queue) -> None:
    try:
        stats = [Stats() for _ in shares]
        message = go_conn.recv()
        if message is None:
            return
        t_measure, t_end = message
        threads = [threading.Thread(target=run_client, args=(share, args, s, t_measure, t_end, index * 10_000 + n))
                   for n, (share, s) in enumerate(zip(shares, stats))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result_queue.put((index, [s.to_dict() for s in stats], None))
    except Exception:
        result_queue.put((index, [], traceback.format_exc()))


def get_metrics(port: int, timeout: float) -> dict[str, float]:
    conn = CountingConnection(port, timeout)
    try:
        conn.request("GET", "/metrics", headers={"Host": f"{HOST}:{port}"})
        text = conn.getresponse().read().decode(errors="replace")
    except (OSError, http.client.HTTPException):
        return {}
    finally:
        conn.close()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out


def load_main(args) -> int:
    # Setup.
    teletans, setup_s, setup_errors = create_teletans(args)
    print(f"verification_load: created {len(teletans)} teleTANs in {setup_s:.1f} s "
          f"({len(teletans) / setup_s if setup_s else 0:.0f}/s, {args.setup_threads} threads)"
          + (f"; errors: {dict(setup_errors)}" if setup_errors else ""), file=sys.stderr)
    if len(teletans) < args.clients:
        print("verification_load: setup failed: fewer teleTANs than clients", file=sys.stderr)
        return 2
    if len(teletans) < args.teletans:
        print(f"verification_load: warning: only {len(teletans)} of {args.teletans} teleTANs created", file=sys.stderr)

    metrics_before = get_metrics(args.internal_port, args.timeout)
    shares = [teletans[i::args.clients] for i in range(args.clients)]
    groups = [shares[i::args.processes] for i in range(args.processes)]
    ctx = mp.get_context("fork")  # the setup threads have all ended
    result_queue = ctx.Queue()
    pipes, procs = [], []
    for i, group in enumerate(groups):
        parent_end, child_end = ctx.Pipe()
        p = ctx.Process(target=worker, args=(i, group, args, child_end, result_queue), daemon=True)
        p.start()
        pipes.append(parent_end)
        procs.append(p)

    rss_before = rss_kib(args.server_pid) if args.server_pid else {}  # VmHWM here: the setup's peak
    reset_peak_rss(args.server_pid, "verification_load", "the setup")  # the peak of the load phase only
    start = time.monotonic() + 0.2
    t_measure, t_end = start + args.warmup, start + args.warmup + args.duration
    for pipe in pipes:
        pipe.send((t_measure, t_end))
    client_pids = [os.getpid()] + [p.pid for p in procs]
    measured = measure_window(args.server_pid, client_pids, start, t_measure, t_end)
    rss_series = measured["rss_series"]

    merged, failures = Stats(), []
    for _ in procs:
        try:
            _, stats_list, failure = result_queue.get(timeout=args.timeout * 3 + 30)
        except Exception:
            print("verification_load: client processes did not report in time", file=sys.stderr)
            for p in procs:
                p.terminate()
            return 2
        if failure:
            failures.append(failure)
        for s in stats_list:
            for key in ("reg_ms", "tan_ms", "verify_ms", "chain_ms"):
                getattr(merged, key).extend(s[key])
            merged.requests += s["requests"]
            merged.errors.update(s["errors"])
            merged.warmup_chains += s["warmup_chains"]
            merged.warmup_errors.update(s["warmup_errors"])
            merged.connects += s["connects"]
            merged.ran_out += s["ran_out"]
    for p in procs:
        p.join(5)
    if failures:
        print("verification_load: a client process failed:\n" + failures[0], file=sys.stderr)
        return 2
    rss_end = rss_kib(args.server_pid) if args.server_pid else {}
    metrics_after = get_metrics(args.internal_port, args.timeout)

    window, cpu = measured["window"], measured["cpu"]
    cores = {k: cpu[k] / window for k in ("portal", "postgres", "client", "busy")}
    cores["server"] = cores.pop("portal")
    cores["other"] = max(0.0, cores["busy"] - cores["server"] - cores["postgres"] - cores["client"])
    cores["machine"] = cpu["total"] / window
    error_count = sum(merged.errors.values())
    invalid = {k: v - metrics_before.get(k, 0.0) for k, v in metrics_after.items() if "invalid_teletans" in k}
    result = {
        "clients": args.clients, "client_processes": args.processes,
        "warmup_seconds": args.warmup, "duration_seconds": round(window, 3),
        "teletans_created": len(teletans), "setup_seconds": round(setup_s, 3),
        "setup_rate_per_s": len(teletans) / setup_s if setup_s else None, "setup_errors": dict(setup_errors),
        "chains": len(merged.chain_ms), "chains_per_s": len(merged.chain_ms) / window,
        "requests": merged.requests, "requests_per_s": merged.requests / window,
        "errors": error_count,
        "error_rate": error_count / merged.requests if merged.requests else (1.0 if error_count else 0.0),
        "error_kinds": dict(merged.errors.most_common()),
        "warmup_chains": merged.warmup_chains, "warmup_errors": dict(merged.warmup_errors.most_common()),
        "clients_out_of_teletans": merged.ran_out,
        "latency_ms": {"registration_token": summarize(merged.reg_ms), "tan": summarize(merged.tan_ms),
                       "verify": summarize(merged.verify_ms), "chain": summarize(merged.chain_ms)},
        "connections_opened": merged.connects,
        "invalid_teletans_counted_by_server": invalid,
        "cpu_cores_used": {k: round(v, 3) for k, v in cores.items()},
        "server_rss_kib": {"before_load": rss_before.get("VmRSS"), "setup_peak": rss_before.get("VmHWM"),
                           "end": rss_end.get("VmRSS"), "peak": rss_end.get("VmHWM"),
                           "max_sampled": max((r for _, r in rss_series), default=None)},
        "server_rss_series_kib": rss_series[:: max(1, len(rss_series) // 40)],
    }
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=2)
    chain = result["latency_ms"]["chain"]
    print(f"verification_load: {result['chains']} chains in {window:.1f} s = {result['chains_per_s']:.1f}/s "
          f"({result['requests_per_s']:.0f} requests/s); chain p50 {chain.get('p50') or 0:.1f} ms "
          f"p99 {chain.get('p99') or 0:.1f} ms; errors {error_count}/{merged.requests}", file=sys.stderr)
    if merged.ran_out:
        print(f"verification_load: WARNING: {merged.ran_out} client(s) ran out of teleTANs before the end; "
              f"raise BENCH_TELETANS", file=sys.stderr)
    return 0


# -- Report ------------------------------------------------------------------------------------
def report_main(args) -> int:
    load = json.load(open(args.load))
    pg = parse_pgbench(args.pgbench)
    env = os.environ
    lat = load["latency_ms"]
    pg_tps = pg.get("tps") if pg else None
    # pgbench runs the three steps as one script (= one pgbench "transaction") per chain.
    ratio = load["chains_per_s"] / pg_tps if pg_tps else None
    peak_kib = args.peak_rss_kib or load["server_rss_kib"].get("peak")
    mb = lambda kib: fmt(kib * 1024 / 1e6 if kib else None, ".1f", " MB")  # noqa: E731
    mib = lambda kib: fmt(kib / 1024 if kib else None, ".1f", " MiB")  # noqa: E731
    worst_p99 = max((lat[k].get("p99") or 0.0) for k in ("registration_token", "tan", "verify"))
    checks = [
        (f"chains/s >= {TARGET_RATIO:.0%} of pgbench", fmt(ratio, ".1%") if ratio is not None else "n/a",
         ratio is not None and ratio >= TARGET_RATIO),
        (f"p99 of each request < {TARGET_P99_MS:g} ms", fmt(worst_p99, ".1f", " ms"), worst_p99 < TARGET_P99_MS),
        (f"p99 of the chain < {TARGET_P99_MS:g} ms", fmt(lat["chain"].get("p99"), ".1f", " ms"),
         (lat["chain"].get("p99") or 1e9) < TARGET_P99_MS),
    ]
    cores = load["cpu_cores_used"]
    lines = [
        "",
        f"Verification server benchmark (app-facing chain) -- {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"  server:    {env.get('BENCH_SERVER_BIN', '?')} ({env.get('BENCH_BUILD', '?')} build), git {env.get('BENCH_GIT', '?')}",
        f"  machine:   {env.get('BENCH_MACHINE', '?')}",
        f"  database:  {env.get('BENCH_PG_VERSION', '?')} on 127.0.0.1:5432, db teletan_bench",
        f"  run:       {load['clients']} clients, {load['client_processes']} client process(es), "
        f"warm-up {load['warmup_seconds']:g} s, measured {load['duration_seconds']:.1f} s",
        f"  setup:     {load['teletans_created']} teleTANs created in {load['setup_seconds']:.1f} s "
        f"({fmt(load['setup_rate_per_s'], '.0f')}/s, not measured)",
        "",
        "  Chain (POST /registrationToken + POST /tan on the app port, POST /tan/verify on the internal port)",
        f"    chains                {load['chains']}  ({load['warmup_chains']} more in warm-up)",
        f"    throughput            {load['chains_per_s']:.1f} chains/s  ({load['requests_per_s']:.0f} requests/s)",
        f"    errors                {load['errors']} of {load['requests']} requests ({load['error_rate']:.2%})"
        + ("" if not load["error_kinds"] else "  " + ", ".join(f"{k}: {v}" for k, v in load["error_kinds"].items())),
    ]
    if load["warmup_errors"]:
        lines.append("    warm-up errors        " + ", ".join(f"{k}: {v}" for k, v in load["warmup_errors"].items()))
    if load["clients_out_of_teletans"]:
        lines.append(f"    WARNING: {load['clients_out_of_teletans']} client(s) ran out of teleTANs: raise BENCH_TELETANS")
    lines.append("    latency ms            p50      p90      p99      max     mean")
    for name, key in [("/registrationToken", "registration_token"), ("/tan", "tan"), ("/tan/verify", "verify"),
                      ("whole chain", "chain")]:
        s = lat[key]
        if s.get("count"):
            lines.append(f"      {name:<20}{s['p50']:7.1f}  {s['p90']:7.1f}  {s['p99']:7.1f}  {s['max']:7.1f}  {s['mean']:7.1f}")
    rss = load["server_rss_kib"]
    lines += [
        f"    server RSS            peak under load (VmHWM) {mb(peak_kib)} = {mib(peak_kib)}; before load {mib(rss.get('before_load'))}, "
        f"end {mib(rss.get('end'))}, setup peak {mib(rss.get('setup_peak'))}",
        f"    CPU (cores of {cores['machine']:.0f})    server {cores['server']:.2f}, postgres {cores['postgres']:.2f}, "
        f"load client {cores['client']:.2f}, other {cores['other']:.2f}, idle {cores['machine'] - cores['busy']:.2f}",
    ]
    if cores["other"] > 0.1:
        lines.append(f"    WARNING: other processes used {cores['other']:.2f} cores during the window: the figures are skewed")
    invalid = sum(load["invalid_teletans_counted_by_server"].values())
    lines += [
        f"    connections opened    {load['connections_opened']} (keep-alive: two per client expected)",
        f"    guessing protection   {invalid:g} invalid teleTANs counted by the server during the load (0 expected)",
        f"    server log            {args.server_log_problems} warning/error line(s)",
    ]
    if args.rows:
        lines.append(f"    rows                  {args.rows}")
    lines += ["", f"  pgbench, same server, {env.get('BENCH_PGBENCH_CLIENTS', '?')} clients (-j 2), scripts/bench/verification-chain.sql"]
    if pg:
        lines.append(f"    equivalent chain      {fmt(pg.get('tps'), '.1f')} chains/s (3 commits each), latency avg "
                     f"{fmt(pg.get('latency_avg_ms'), '.2f', ' ms')}" + (f", failed {pg['failed']}" if pg.get("failed") else ""))
    lines += target_lines(checks)
    print("\n".join(lines))
    failed = run_failed("bench-verification", load, pg_tps)
    if env.get("BENCH_JSON"):
        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "server_bin": env.get("BENCH_SERVER_BIN"),
                  "build": env.get("BENCH_BUILD"), "git": env.get("BENCH_GIT"), "machine": env.get("BENCH_MACHINE"),
                  "postgres": env.get("BENCH_PG_VERSION"), "load": load, "peak_rss_kib": peak_kib,
                  "server_log_problems": args.server_log_problems,
                  "pgbench": {k: v for k, v in (pg or {}).items() if k != "raw_tail"}, "ratio": ratio,
                  "targets": {name: {"measured": value, "pass": ok} for name, value, ok in checks}}
        with open(env["BENCH_JSON"], "a") as f:
            f.write(json.dumps(record) + "\n")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    load = sub.add_parser("load", help="create teleTANs, then run the chain")
    load.add_argument("--port", type=int, required=True, help="app-facing port on 127.0.0.1")
    load.add_argument("--internal-port", type=int, required=True, help="internal port on 127.0.0.1")
    load.add_argument("--key-dir", required=True, help="directory with portal-key.pem and portal-key.pub.pem")
    load.add_argument("--clients", type=int, default=100)
    load.add_argument("--teletans", type=int, default=20000, help="teleTANs to create before the load")
    load.add_argument("--setup-threads", type=int, default=8)
    load.add_argument("--setup-timeout", type=float, default=300.0, help="seconds for creating the teleTANs")
    load.add_argument("--warmup", type=float, default=3.0)
    load.add_argument("--duration", type=float, default=20.0)
    load.add_argument("--processes", type=int, default=1)
    load.add_argument("--timeout", type=float, default=10.0, help="socket timeout per request, seconds")
    load.add_argument("--server-pid", type=int, default=0)
    load.add_argument("--json-out")
    rep = sub.add_parser("report", help="print the result table")
    rep.add_argument("--load", required=True)
    rep.add_argument("--pgbench", required=True)
    rep.add_argument("--peak-rss-kib", type=int)
    rep.add_argument("--server-log-problems", type=int, default=0)
    rep.add_argument("--rows", default="")
    args = parser.parse_args()
    if args.command == "report":
        return report_main(args)
    for port in (args.port, args.internal_port):
        if not 1 <= port <= 65535:
            parser.error("port out of range")
    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients must be 1..{MAX_CLIENTS}")
    if not args.clients <= args.teletans <= MAX_TELETANS:
        parser.error(f"--teletans must be --clients..{MAX_TELETANS}")
    if not (0 <= args.warmup <= 60 and 1 <= args.duration <= MAX_SECONDS and 1 <= args.setup_timeout <= 1200):
        parser.error(f"--warmup must be 0..60, --duration 1..{MAX_SECONDS}, --setup-timeout 1..1200 seconds")
    if not 0 < args.timeout <= 60 or not 1 <= args.setup_threads <= 32:
        parser.error("--timeout must be 0..60 s, --setup-threads 1..32")
    args.processes = max(1, min(args.processes, args.clients, 8))
    return load_main(args)


if __name__ == "__main__":
    sys.exit(main())
