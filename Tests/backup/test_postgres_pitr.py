"""PostgreSQL: continuous archiving and point-in-time recovery with Debian's own tools, run as
the runbook writes them (docs/deployment.md section 9; docs/deploy/postgresql-archiving.conf,
pg-base-backup.sh, pg-restore-base-backup.sh, backup-pg-dump.sh), as user postgres, on a cluster
of this test's own (`pg_createcluster 15 teletan_pitr -p 18450`, dropped at the end).

A base backup and a plain dump; more issuance and a checkpoint handed out; the portal killed and
the data directory deleted; recovery from the base backup and the WAL archive brings back every
entry, `portal audit verify` passes and the handed-out checkpoint still verifies. Then the plain
dump, older than the checkpoint, is restored: the precise report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from support import database as database_helper

from backup_support import DEPLOY, OFFICER, checkpoint_seq, missing_report, mode, script

VERSION, CLUSTER, PORT = "15", "teletan_pitr", 18450
DATA = Path(f"/var/lib/postgresql/{VERSION}/{CLUSTER}")
CONF_D = Path(f"/etc/postgresql/{VERSION}/{CLUSTER}/conf.d")
DOCUMENTED_ARCHIVE = "/var/backups/teletan-portal/wal"


def as_postgres(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["runuser", "-u", "postgres", "--", *command], capture_output=True, text=True, timeout=120, cwd="/")
    if check:
        assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result


def psql(sql: str, database: str = "postgres") -> str:
    return database_helper.psql(sql, "-p", str(PORT), "-d", database, as_postgres=True, timeout=120)


def drop_cluster() -> None:
    subprocess.run(["pg_dropcluster", "--stop", VERSION, CLUSTER], capture_output=True, timeout=120)


@pytest.fixture
def cluster():
    """The cluster with the runbook's archiving settings (the archive in a directory of the
    test's; archive_timeout 2 s instead of 60 s, so the test need not wait a minute)."""
    drop_cluster()  # left over from an interrupted run
    backups = Path(tempfile.mkdtemp(prefix="teletan-pitr-", dir="/var/tmp"))
    archive = backups / "wal"
    for directory in (backups, archive, backups / "base", backups / "dumps"):
        directory.mkdir(exist_ok=True)
        os.chmod(directory, 0o700)
        shutil.chown(directory, "postgres", "postgres")
    subprocess.run(["pg_createcluster", VERSION, CLUSTER, "-p", str(PORT)], check=True, capture_output=True, timeout=120)
    try:
        settings = (DEPLOY / "postgresql-archiving.conf").read_text().replace(DOCUMENTED_ARCHIVE, str(archive))
        settings = re.sub(r"(?m)^archive_timeout = 60$", "archive_timeout = 2", settings)
        assert str(archive) in settings and "archive_timeout = 2" in settings
        (CONF_D / "teletan-archiving.conf").write_text(settings)
        subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "start"], check=True, capture_output=True, timeout=120)
        psql("CREATE ROLE teletan LOGIN PASSWORD 'teletan'")
        psql("CREATE DATABASE teletan OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
        yield backups
    finally:
        drop_cluster()
        shutil.rmtree(backups, ignore_errors=True)


def wait_archived() -> None:
    """Until the WAL segment holding the last write is in the archive (archive_timeout)."""
    segment = psql("SELECT pg_walfile_name(pg_current_wal_lsn())")
    deadline = time.monotonic() + 60
    while (psql("SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver") or "") < segment:
        assert time.monotonic() < deadline, f"segment {segment} not archived within 60 s"
        time.sleep(0.5)


def entries() -> list[str]:
    return psql("SELECT seq || ' ' || hash FROM audit_log ORDER BY seq", "teletan").splitlines()


def test_point_in_time_recovery_loses_nothing_and_an_older_dump_is_reported(cluster, portals, tmp_path):
    backups = cluster
    portal = portals(database=f"postgres://teletan:teletan@127.0.0.1:{PORT}/teletan?sslmode=disable")
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, 3)

    # The nightly backups, as user postgres: a base backup and a plain dump, both mode 600.
    base = script("pg-base-backup.sh", str(backups / "base"), "-p", str(PORT), user="postgres")
    assert base.returncode == 0, base
    base_dir = Path(base.stdout.strip())
    assert sorted(os.listdir(base_dir)) == ["backup_manifest", "base.tar.gz", "pg_wal.tar.gz"]
    assert mode(base_dir) == 0o700 and all(mode(file) == 0o600 for file in base_dir.iterdir())
    # A failed base backup (no server on that port) leaves nothing.
    assert script("pg-base-backup.sh", str(backups / "base"), "-p", str(PORT + 1), user="postgres").returncode != 0
    assert os.listdir(backups / "base") == [base_dir.name]
    dump = script("backup-pg-dump.sh", "teletan", str(backups / "dumps"), "-p", str(PORT), user="postgres")
    assert dump.returncode == 0, dump
    dump_file = Path(dump.stdout.strip())
    assert os.listdir(backups / "dumps") == [dump_file.name] and mode(dump_file) == 0o600
    dump_head = int(psql("SELECT seq FROM audit_head", "teletan"))
    # A failed dump (no such database) leaves no file.
    assert script("backup-pg-dump.sh", "no_such_database", str(backups / "dumps"), "-p", str(PORT), user="postgres").returncode != 0
    assert os.listdir(backups / "dumps") == [dump_file.name]

    # After the backups: more issuance, a checkpoint handed out, more issuance, a new session.
    portal.issue(officer, 3)
    out = tmp_path / "checkpoint.txt"
    assert portal.run("audit", "checkpoint", "--sign", "--out", str(out)).returncode == 0
    handed_out = checkpoint_seq(out)
    portal.issue(officer, 2)
    late = portal.client().signed_in(*OFFICER)

    # The failure: the portal dies, then the database's disk (the data directory) is lost.
    portal.kill()
    before = entries()
    assert int(before[-1].split()[0]) > handed_out > dump_head
    wait_archived()
    # What pg_archivecleanup takes to delete the segments before this base backup (runbook 9.2).
    assert [name for name in os.listdir(backups / "wal") if name.endswith(".backup")], "no .backup file in the archive"
    assert {oct(mode(file)) for file in (backups / "wal").iterdir()} == {oct(0o600)}, "archived WAL not mode 600"
    subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "stop", "-m", "immediate"], check=True, capture_output=True, timeout=120)
    shutil.rmtree(DATA)

    # Recovery, as user postgres: the base backup, then the WAL archive replayed at start.
    restored = script("pg-restore-base-backup.sh", str(base_dir), str(DATA), user="postgres")
    assert restored.returncode == 0, restored
    subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "start"], check=True, capture_output=True, timeout=300)
    deadline = time.monotonic() + 120
    while psql("SELECT pg_is_in_recovery()") != "f":
        assert time.monotonic() < deadline, "still recovering after 120 s"
        time.sleep(0.5)
    assert entries() == before, "entries lost or changed by the recovery"
    verified = portal.run("audit", "verify", "--full")
    assert verified.returncode == 0, verified
    checked = portal.run("audit", "verify", "--checkpoint", str(out))
    assert checked.returncode == 0, checked
    assert f"checkpoint {handed_out}: its entry is in the database with the hash it signed" in checked.stdout
    # Sessions of before the failure come back with the database: the runbook ends them all.
    ended = portal.run("sessions", "end-all")
    assert ended.returncode == 0 and re.fullmatch(r"[1-9][0-9]* sessions ended", ended.stdout.strip()), ended
    portal.start()
    assert late.get("/").status == 303, "a session survived `portal sessions end-all`"
    portal.issue(portal.client().signed_in(*OFFICER), 1)
    portal.stop_cleanly()

    # The plain dump, older than the checkpoint, restored as the runbook says (as postgres).
    as_postgres("pg_restore", "-p", str(PORT), "--clean", "--if-exists", "--exit-on-error", "--dbname", "teletan", str(dump_file))
    report = missing_report(handed_out, dump_head + 1)
    detected = portal.run("audit", "verify", "--checkpoint", str(out))
    assert detected.returncode == 1 and report in detected.stderr, detected
    recorded = psql("SELECT details FROM audit_log WHERE action = 'audit.restore_detected'", "teletan").splitlines()
    assert [json.loads(line) for line in recorded] == [{
        "checkpoint_seq": str(handed_out), "missing_from": str(dump_head + 1),
        "missing_to": str(handed_out), "missing_count": str(handed_out - dump_head)}]
    assert psql("SELECT COUNT(*) FROM sessions", "teletan") == "0"
    assert portal.run("audit", "verify", "--full").returncode == 0
