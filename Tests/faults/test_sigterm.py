"""Fault 4: SIGTERM while officers issue. Requests in flight finish (a request whose body is
still arriving when the signal comes gets its full answer), every answer is a whole page (never a
500), new connections are refused after, the portal exits with status 0 within 10 s, nothing is
half-done, and the next start is clean: no errors in its log, `portal audit verify` passes, the
sessions still work, and a teleTAN whose page the signal cut off is shown after the restart."""

from __future__ import annotations

import http.client
import re
import signal
import socket
import time

import pytest
from urllib.parse import urlencode

from faults_support import (ADMIN, Load, OFFICER, admin_finds, bench_officer, check_nothing_half_written)

OFFICERS = 4
LOAD_SECONDS = 2.0
SHUTDOWN_LIMIT = 10.0  # ManagedProcess.shutdown_timeout, the suites' rule for every server


class SlowPost:
    """POST /teletan whose body arrives in two parts: the request is in flight (headers read,
    handler waiting for the body) for as long as the test likes."""

    def __init__(self, port: int, cookies: dict[str, str], form: dict[str, str]):
        body = urlencode(form).encode()
        self.head = (f"POST /teletan HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Language: en\r\n"
                     f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
                     f"Cookie: {'; '.join(f'{k}={v}' for k, v in cookies.items())}\r\nConnection: close\r\n\r\n").encode()
        self.first, self.rest = body[:len(body) // 2], body[len(body) // 2:]
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=30)

    def send_first_part(self) -> None:
        self.socket.sendall(self.head + self.first)

    def finish(self) -> tuple[int, dict[str, str], str]:
        """Sends the rest of the body and reads the whole answer: (status, headers, body)."""
        self.socket.sendall(self.rest)
        response = http.client.HTTPResponse(self.socket)
        response.begin()
        body = response.read().decode(errors="replace")
        self.socket.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except ConnectionRefusedError:
        return True


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_sigterm_under_load(portals, database, request):
    location = request.getfixturevalue("postgres_cluster").create_database("faults_sigterm") if database == "postgresql" else None
    portal = portals(database=location)
    portal.start()
    admin = portal.client().signed_in(*ADMIN)
    officers = {f"officer-{n}": portal.client().signed_in(*bench_officer(20 + n)) for n in range(1, OFFICERS + 1)}
    slow_officer = portal.client().signed_in(*OFFICER)
    home = slow_officer.get("/")
    assert home.status == 200, home.describe()
    slow = SlowPost(portal.port, slow_officer.cookies, {"csrf": home.hidden("csrf"), "nonce": home.hidden("nonce")})

    load = Load(officers, stop_on_connection_error=True).start()
    try:
        time.sleep(LOAD_SECONDS)
        slow.send_first_part()
        time.sleep(0.3)  # the portal has read the head and waits for the body
        sigterm_at = time.monotonic()
        portal.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        status, headers, body = slow.finish()
        try:
            code = portal.process.wait(timeout=SHUTDOWN_LIMIT)
        except Exception:
            raise AssertionError(f"the portal did not exit within {SHUTDOWN_LIMIT} s of SIGTERM:\n{portal.log_tail()}")
        exited_at = time.monotonic()
    finally:
        load.stop()
    assert code == 0, f"exit status {code} after SIGTERM:\n{portal.log_tail()}"
    assert refuses_connections(portal.port), "the port still takes connections after the exit"

    # The request in flight got its whole answer: the teleTAN was issued (303 to the result page).
    assert status == 303 and headers.get("location") == "/teletan/result", (status, headers, body[:500])

    # Every answer under load is a whole page of the cycle; connections fail only after SIGTERM,
    # and then only by being refused or closed before an answer began.
    responses = load.responses()
    unexpected = [r for r in responses if r.status not in (200, 303, 503)]
    assert not unexpected, f"{len(unexpected)} unexpected answers, first: {unexpected[0].describe()}"
    for response in responses:
        if response.status == 503:
            assert response.headers.get("retry-after") and response.lang == "en", response.describe()
    errors = load.errors()
    early = [a for a in errors if a.ended < sigterm_at]
    assert not early, f"connection errors before SIGTERM: {early[:3]}"
    for attempt in errors:
        assert isinstance(attempt.error, (ConnectionRefusedError, ConnectionResetError, BrokenPipeError,
                                          http.client.RemoteDisconnected)), attempt
    print(f"sigterm: {len(responses)} answers, {len(errors)} connection errors after SIGTERM "
          f"({sorted({type(a.error).__name__ for a in errors})}), exit {exited_at - sigterm_at:.2f} s after it")

    # The next start is clean.
    log_offset = portal.log_size()
    portal.start()
    load_shown = [t for _, t, _ in load.shown]
    problems = portal.log_problems(since=log_offset)
    assert not problems, "errors in the log of the next start:\n" + "\n".join(problems)
    # Sessions survive; a teleTAN whose result page the shutdown cut off waits for its officer
    # (the slow request's, and any of the load's).
    slow_result = slow_officer.get("/teletan/result")
    assert slow_result.status == 200 and slow_result.teletan, slow_result.describe()
    load.drain()
    shown = [t for _, t, _ in load.shown] + [slow_result.teletan]
    for client in officers.values():
        issued = client.issue()
        assert issued.teletan, issued.last.describe()
        shown.append(issued.teletan)
    admin_finds(admin, [slow_result.teletan, load_shown[-1]])
    portal.stop_cleanly()
    assert not portal.log_problems(since=log_offset), portal.log_tail()
    counts = check_nothing_half_written(portal, shown)
    assert counts["pending_displays"] == 0, counts
    assert re.search(r"portal stopped", portal.log_text()), portal.log_tail()
