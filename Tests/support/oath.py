"""The HOTP token of the test account tt-otp (scripts/install-pam-stack.sh), for the suites that
sign in with a one-time code (browser, deployment, faults).

pam_oath accepts the code for counter+1 of the one it last recorded, and records each code it
takes. scripts/test.sh runs suites side by side, so two of them could compute the same next code
and one would be refused as a replay: hold `code_lock()` from computing the code until the portal
has answered the step that used it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

USERS_FILE = Path("/var/lib/teletan-portal-test/users.oath")
# RFC 4226's test secret "12345678901234567890", as scripts/install-pam-stack.sh installs it.
SECRET_HEX = "3132333435363738393031323334353637383930"
LOCK_FILE = Path("/tmp/teletan-portal-test-oath.lock")
# pam_oath rewrites the file as the portal's user: the tests' stand-in for the packaged portal's
# system user owns it and its directory (scripts/install-pam-stack.sh).
OWNER = "tt-portal-svc"


def counter(username: str) -> int | None:
    """The counter pam_oath recorded for `username` (line `HOTP user pin secret [counter [time]]`),
    None if there is none yet."""
    for line in USERS_FILE.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == username:
            return int(fields[4]) if len(fields) >= 5 else None
    raise AssertionError(f"{username} has no line in {USERS_FILE}")


def next_code(username: str) -> tuple[int, str]:
    """(counter, code) of the next code pam_oath accepts for `username`."""
    recorded = counter(username)
    step = 0 if recorded is None else recorded + 1
    code = subprocess.run(["oathtool", "--hotp", "-c", str(step), SECRET_HEX],
                          check=True, capture_output=True, text=True).stdout.strip()
    return step, code


@contextmanager
def code_lock() -> Iterator[None]:
    """Held by one process at a time, across the suites running side by side."""
    with LOCK_FILE.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def reset_token_file() -> None:
    """tt-otp's token as scripts/install-pam-stack.sh leaves it (counter 0, owned by OWNER), for a
    test that changed it. Not by re-running that script: it also rewrites /etc/group, the PAM
    service files and every test account's password, which suites running beside sign in with."""
    with code_lock():
        fresh = USERS_FILE.with_name(USERS_FILE.name + ".reset")
        fresh.write_text(f"HOTP tt-otp - {SECRET_HEX}\n")
        os.chmod(fresh, 0o600)
        shutil.chown(fresh, OWNER, OWNER)
        os.replace(fresh, USERS_FILE)
        shutil.chown(USERS_FILE.parent, OWNER, OWNER)
        os.chmod(USERS_FILE.parent, 0o700)
