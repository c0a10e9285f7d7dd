"""Fault 5 (SQLite): the disk under the database file fills up (a 4 MiB tmpfs and a filler file
that takes every byte left). Issuing and signing in get the localised 503 page with
Retry-After: 5 and no teleTAN, the portal keeps running, and once space is free again issuing
works without a restart. Nothing shown that was not stored."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from faults_support import (ADMIN, OFFICER, bench_officer, check_recovered, check_refused_while_unavailable,
                            check_unavailable_page)

TMPFS_SIZE = "4m"
RECOVERY_LIMIT = 5.0
# With the write-ahead log emptied first, the first write on a full disk fails; a few attempts
# more are allowed in case SQLite finds room in pages it has already (each one that shows a
# teleTAN must then have stored it, which the checks at the end prove).
MAX_ATTEMPTS_UNTIL_FULL = 10


def fill(path: Path) -> int:
    """Writes `path` until the file system has no byte left; returns the bytes written."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            chunk = b"\0" * size
            while True:
                try:
                    written += os.write(fd, chunk)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    return written


def empty_write_ahead_log(database: Path) -> None:
    """Checkpoints SQLite's write-ahead log into the database file and truncates it to zero
    bytes (another connection may do that while the portal's is idle), so that the portal's next
    write must grow the log and needs new space."""
    deadline = time.monotonic() + 10
    while True:
        connection = sqlite3.connect(database, timeout=5)
        try:
            busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            connection.close()
        wal = database.with_name(database.name + "-wal")
        if busy == 0 and (not wal.exists() or wal.stat().st_size == 0):
            return
        assert time.monotonic() < deadline, "the write-ahead log could not be emptied"
        time.sleep(0.1)


def test_sqlite_disk_full(tmp_path, portals):
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(mount_point)], check=True)
    portal = None
    try:
        # Only the database on the small file system; secret, checkpoint key and log beside it.
        database = mount_point / "portal.sqlite"
        portal = portals(database=f"sqlite:{database}")
        portal.start()
        admin = portal.client().signed_in(*ADMIN)
        officer = portal.client().signed_in(*OFFICER)
        german = portal.client("de").signed_in(*bench_officer(12))
        shown = []
        for client in (officer, german):
            issued = client.issue()
            assert issued.teletan, issued.last.describe()
            shown.append(issued.teletan)

        empty_write_ahead_log(database)
        filler = mount_point / "filler"
        fill(filler)

        for attempt in range(MAX_ATTEMPTS_UNTIL_FULL):
            issued = officer.issue()
            if issued.teletan is None:
                check_unavailable_page(issued.last, "en")
                break
            shown.append(issued.teletan)
        else:
            raise AssertionError(f"{MAX_ATTEMPTS_UNTIL_FULL} teleTANs issued on a full disk, never the 503 page")
        check_refused_while_unavailable(portal, [(officer, "en"), (german, "de")], 1, bench_officer(13), "on a full disk")

        # Space again: issuing works without a restart.
        filler.unlink()
        check_recovered(portal, admin, officer, german, shown, bench_officer(13), RECOVERY_LIMIT, "a teleTAN after space was freed")
    finally:
        if portal is not None:
            portal.kill()
        if subprocess.run(["umount", str(mount_point)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)])
