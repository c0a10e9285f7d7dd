"""SQLite: the online backup of the runbook (docs/deploy/backup-sqlite.sh) while officers issue,
mode 600, no file from a failed backup; then a restore from that backup, older than a checkpoint
handed out since, is reported precisely by `portal audit verify --checkpoint`, recorded in the
trail, and ends every session (docs/deployment.md section 9)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import threading

from backup_support import DEPLOY, OFFICER, Client, checkpoint_seq, missing_report, mode, script


def sqlite_rows(path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(path, timeout=10)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def test_online_backup_while_issuing_then_restore_is_detected(portals, tmp_path):
    portal = portals()
    portal.start()
    database = portal.database.removeprefix("sqlite:")
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, 2)

    # Online backups while another officer issues without pause.
    backups = tmp_path / "backups"
    backups.mkdir(mode=0o700)
    stop = threading.Event()
    busy = portal.client().signed_in(*OFFICER)

    issued_meanwhile: list[str | None] = []

    def issue_until_stopped():
        while not stop.is_set():
            issued_meanwhile.append(busy.issue().teletan)

    issuing = threading.Thread(target=issue_until_stopped)
    issuing.start()
    try:
        result = script("backup-sqlite.sh", database, str(backups))
    finally:
        stop.set()
        issuing.join(60)
    assert result.returncode == 0, result
    assert issued_meanwhile and all(issued_meanwhile), "issuing during the backup failed"
    backup = backups / result.stdout.strip().rsplit("/", 1)[-1]
    assert os.listdir(backups) == [backup.name] and mode(backup) == 0o600
    verified = portal.run("audit", "verify", "--full", database=False, env={"PORTAL_DATABASE": f"sqlite:{backup}"})
    assert verified.returncode == 0, verified
    backup_head = sqlite_rows(backup, "SELECT seq FROM audit_head")[0][0]

    # A failed backup (not a database) leaves no file.
    not_a_database = tmp_path / "garbage.sqlite"
    not_a_database.write_bytes(b"not a database" * 100)
    failed = script("backup-sqlite.sh", str(not_a_database), str(backups))
    assert failed.returncode != 0
    assert os.listdir(backups) == [backup.name]

    # After the backup: more issuance, a checkpoint handed out, a session that a restore brings back.
    portal.issue(officer, 2)
    out = tmp_path / "checkpoint.txt"
    assert portal.run("audit", "checkpoint", "--sign", "--out", str(out)).returncode == 0
    handed_out = checkpoint_seq(out)
    assert handed_out > backup_head
    before_restore = Client(portal.base_url)
    before_restore.cookies = dict(officer.cookies)

    # The runbook: stop the portal, put the backup in place (mode 600), start it.
    portal.stop_cleanly()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.remove(database + suffix)
    shutil.copyfile(backup, database)
    os.chmod(database, 0o600)

    report = missing_report(handed_out, backup_head + 1)
    detected = portal.run("audit", "verify", "--checkpoint", str(out))
    assert detected.returncode == 1, detected
    assert report in detected.stderr and "sessions ended" in detected.stderr, detected.stderr
    events = sqlite_rows(database, "SELECT seq, details FROM audit_log WHERE action = 'audit.restore_detected'")
    assert len(events) == 1
    assert json.loads(events[0][1]) == {"checkpoint_seq": str(handed_out), "missing_from": str(backup_head + 1),
                                        "missing_to": str(handed_out), "missing_count": str(handed_out - backup_head)}
    assert sqlite_rows(database, "SELECT COUNT(*) FROM sessions") == [(0,)]
    ended = sqlite_rows(database, "SELECT details FROM audit_log WHERE action = 'sessions.end_all'")
    assert len(ended) == 1 and json.loads(ended[0][0])["reason"] == "restore_detected"

    # The portal runs on and writes over the lost seqs: the report stays the same, recorded once.
    portal.start()
    assert before_restore.get("/").status == 303, "a session from before the restore still works"
    portal.issue(portal.client().signed_in(*OFFICER), 3)
    again = portal.run("audit", "verify", "--checkpoint", str(out))
    assert again.returncode == 1 and report in again.stderr and f"recorded as audit entry {events[0][0]}" in again.stderr, again
    assert len(sqlite_rows(database, "SELECT seq FROM audit_log WHERE action = 'audit.restore_detected'")) == 1

    # The checkpoint job refuses to replace the evidence until the runbook moves it aside.
    refused = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert refused.returncode == 1 and report in refused.stderr, refused
    assert checkpoint_seq(out) == handed_out
    out.rename(tmp_path / "checkpoint-before-restore.txt")
    assert portal.run("audit", "checkpoint", "--sign", "--out", str(out)).returncode == 0

    # `portal sessions end-all`, the runbook's step after any restore.
    ended = portal.run("sessions", "end-all")
    assert ended.returncode == 0 and re.fullmatch(r"[1-9][0-9]* sessions ended", ended.stdout.strip()), ended
    reasons = [json.loads(row[0])["reason"] for row in sqlite_rows(database, "SELECT details FROM audit_log WHERE action = 'sessions.end_all'")]
    assert reasons == ["restore_detected", "command"]
    assert portal.run("audit", "verify", "--full").returncode == 0


def test_backup_without_sqlite3_says_what_is_missing(tmp_path):
    """backup-sqlite.sh on a host without sqlite3 (the package does not depend on it): one line
    naming the package to install, exit 1, no file."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("date", "rm", "sync", "mv"):
        (tools / tool).symlink_to(shutil.which(tool))
    database = tmp_path / "portal.sqlite"
    sqlite3.connect(database).close()
    backups = tmp_path / "backups"
    backups.mkdir()
    result = subprocess.run([str(DEPLOY / "backup-sqlite.sh"), str(database), str(backups)],
                            capture_output=True, text=True, env={"PATH": str(tools)})
    assert result.returncode == 1, result
    assert result.stderr == "backup-sqlite.sh: needs sqlite3 (apt-get install sqlite3)\n", result.stderr
    assert os.listdir(backups) == []
