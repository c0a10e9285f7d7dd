"""PostgreSQL: continuous archiving and point-in-time recovery with Debian's own tools, run as
the runbook writes them (docs/deployment.md section 9; docs/deploy/postgresql-archiving.conf,
pg-base-backup.sh, pg-restore-base-backup.sh, backup-pg-dump.sh), as user postgres, on a cluster
of this test's own (`pg_createcluster 15 teletan_pitr -p 18450`, dropped at the end).

A base backup and a plain dump; more issuance and a checkpoint handed out; four teleTANs more,
then the portal and PostgreSQL killed (SIGKILL) before archive_timeout archived their WAL segment,
and the data directory moved aside; recovery from the base backup, the WAL archive and the
unarchived segments of the old pg_wal brings back every entry, `portal audit verify` passes and
the handed-out checkpoint still verifies. Then the plain dump, older than the checkpoint, is
restored: the precise report. The disk lost as well (no old pg_wal): the WAL that pg_receivewal
--synchronous received brings back every committed entry."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from support import database as database_helper

from backup_support import DEPLOY, OFFICER, REPO, checkpoint_seq, missing_report, mode, script

VERSION, CLUSTER, PORT = "15", "teletan_pitr", 18450
DATA = Path(f"/var/lib/postgresql/{VERSION}/{CLUSTER}")
CONF_D = Path(f"/etc/postgresql/{VERSION}/{CLUSTER}/conf.d")
BROKEN = DATA.with_name(f"{CLUSTER}.broken")
DOCUMENTED_ARCHIVE = "/var/backups/teletan-portal/wal"
URL = f"postgres://teletan:teletan@127.0.0.1:{PORT}/teletan?sslmode=disable"


def as_postgres(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["runuser", "-u", "postgres", "--", *command], capture_output=True, text=True, timeout=120, cwd="/")
    if check:
        assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result


def psql(sql: str, database: str = "postgres") -> str:
    return database_helper.psql(sql, "-p", str(PORT), "-d", database, as_postgres=True, timeout=120)


def drop_cluster() -> None:
    subprocess.run(["pg_dropcluster", "--stop", VERSION, CLUSTER], capture_output=True, timeout=120)
    shutil.rmtree(BROKEN, ignore_errors=True)
    # pg_dropcluster keeps the files it did not make (the test's conf.d settings): the synchronous
    # receiver's setting left there would make the next cluster wait for a receiver on every COMMIT.
    shutil.rmtree(CONF_D.parent, ignore_errors=True)


@pytest.fixture
def cluster():
    """The cluster with the runbook's archiving settings (the archive in a directory of the
    test's; archive_timeout 600 s instead of 60 s, so that the failure surely falls within it)."""
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
        settings = re.sub(r"(?m)^archive_timeout = 60$", "archive_timeout = 600", settings)
        assert str(archive) in settings and "archive_timeout = 600" in settings
        (CONF_D / "teletan-archiving.conf").write_text(settings)
        subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "start"], check=True, capture_output=True, timeout=120)
        psql("CREATE ROLE teletan LOGIN PASSWORD 'teletan'")
        psql("CREATE DATABASE teletan OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
        yield backups
    finally:
        drop_cluster()
        shutil.rmtree(backups, ignore_errors=True)


def kill_postgres_within_archive_timeout(archive: Path) -> None:
    """The power failure: PostgreSQL killed (SIGKILL, every process of the cluster) while the WAL
    segment holding the last commit is not yet archived, which this checks first."""
    segment = psql("SELECT pg_walfile_name(pg_current_wal_lsn())")
    assert not (archive / segment).exists(), f"segment {segment} archived already: the test shows nothing"
    postmaster = int((DATA / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True).stdout.split()
    for pid in [postmaster, *map(int, children)]:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{postmaster}").exists():
        assert time.monotonic() < deadline, "PostgreSQL still running 30 s after SIGKILL"
        time.sleep(0.1)
    assert not (archive / segment).exists(), f"segment {segment} archived while being killed"


def recover() -> None:
    """Starts the cluster (recovery.signal: replays the WAL) and waits until it is open."""
    subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "start"], check=True, capture_output=True, timeout=300)
    deadline = time.monotonic() + 120
    while psql("SELECT pg_is_in_recovery()") != "f":
        assert time.monotonic() < deadline, "still recovering after 120 s"
        time.sleep(0.5)


def entries() -> list[str]:
    return psql("SELECT seq || ' ' || hash FROM audit_log ORDER BY seq", "teletan").splitlines()


def restore_report() -> str:
    """Runbook 9.5's restore report, as written there: "seq|occurred_at" of the last entry restored."""
    guide = (REPO / "docs/deployment.md").read_text()
    query = re.search(r"psql -d teletan -Atc \\\n\s+'([^']+)'\s+# the last entry restored", guide)
    assert query, "the restore report's query is not in docs/deployment.md section 9.5"
    return psql(query.group(1), "teletan")


def teletans() -> list[str]:
    return psql("SELECT hash FROM teletans ORDER BY hash", "teletan").splitlines()


def portal_and_base_backup(portals, backups: Path, issued: int):
    """A portal on the cluster and an officer who issues `issued` teleTANs, then the nightly base
    backup (runbook 9.2, as user postgres). Returns the portal, the officer and the backup."""
    portal = portals(database=URL)
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, issued)
    base = script("pg-base-backup.sh", str(backups / "base"), "-p", str(PORT), user="postgres")
    assert base.returncode == 0, base
    return portal, officer, Path(base.stdout.strip())


def the_failure(portal, backups: Path) -> tuple[list[str], list[str]]:
    """The portal dies, then PostgreSQL within archive_timeout; returns the entries and teleTANs
    written up to then."""
    portal.kill()
    written = entries(), teletans()
    kill_postgres_within_archive_timeout(backups / "wal")
    return written


def test_point_in_time_recovery_loses_nothing_and_an_older_dump_is_reported(cluster, portals, tmp_path):
    backups = cluster
    # The nightly backups, as user postgres: a base backup and a plain dump, both mode 600.
    portal, officer, base_dir = portal_and_base_backup(portals, backups, 3)
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

    # After the backups: more issuance, a checkpoint handed out, four teleTANs more (read to
    # their callers), a new session.
    portal.issue(officer, 3)
    out = tmp_path / "checkpoint.txt"
    assert portal.run("audit", "checkpoint", "--sign", "--out", str(out)).returncode == 0
    handed_out = checkpoint_seq(out)
    portal.issue(officer, 4)
    late = portal.client().signed_in(*OFFICER)
    # What pg_archivecleanup takes to delete the segments before this base backup (runbook 9.2).
    assert [name for name in os.listdir(backups / "wal") if name.endswith(".backup")], "no .backup file in the archive"
    assert {oct(mode(file)) for file in (backups / "wal").iterdir()} == {oct(0o600)}, "archived WAL not mode 600"

    # The failure: the portal dies, then PostgreSQL, within archive_timeout; the data directory is
    # lost, but its pg_wal is still readable (runbook 9.5 moves it aside).
    before, teletans_before = the_failure(portal, backups)
    assert int(before[-1].split()[0]) > handed_out > dump_head
    DATA.rename(BROKEN)

    # Recovery, as user postgres: the base backup, the WAL archive and the old pg_wal's segments.
    restored = script("pg-restore-base-backup.sh", str(base_dir), str(DATA), str(BROKEN / "pg_wal"), user="postgres")
    assert restored.returncode == 0, restored
    recover()
    assert entries() == before, "entries lost or changed by the recovery"
    assert teletans() == teletans_before, "teleTANs lost or changed by the recovery"
    # The restore report (runbook 9.5): the last entry restored, here the last one written.
    assert restore_report().split("|")[0] == before[-1].split()[0]
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


RECEIVER_UNIT = DEPLOY / "teletan-wal-receiver.service"
DOCUMENTED_RECEIVER_FOLDER = "/var/lib/teletan-wal"


def unit_commands(unit: Path, key: str, folder: Path) -> list[str]:
    """The unit's ExecStartPre or ExecStart, split, with the test's folder."""
    line = next(line for line in unit.read_text().splitlines() if line.startswith(f"{key}="))
    return shlex.split(line.removeprefix(f"{key}=").replace(DOCUMENTED_RECEIVER_FOLDER, str(folder)))


def start_receiver(folder: Path) -> subprocess.Popen:
    """teletan-wal-receiver.service as its unit runs it (ExecStartPre, then ExecStart), as user
    postgres, on this machine standing in for the second one; the connection from the
    environment, as its env file gives it."""
    environment = {"PATH": os.environ["PATH"], "PGHOST": "127.0.0.1", "PGPORT": str(PORT), "PGUSER": "teletan_wal",
                   "PGPASSWORD": "teletan-wal"}
    as_postgres_exec = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
    slot = subprocess.run(as_postgres_exec + unit_commands(RECEIVER_UNIT, "ExecStartPre", folder), env=environment,
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert slot.returncode == 0, slot.stderr
    receiver = subprocess.Popen(as_postgres_exec + unit_commands(RECEIVER_UNIT, "ExecStart", folder), env=environment,
                                cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while psql("SELECT count(*) FROM pg_stat_replication WHERE application_name = 'teletan_wal'") != "1":
        assert receiver.poll() is None and time.monotonic() < deadline, "pg_receivewal did not connect"
        time.sleep(0.2)
    return receiver


def stop_receiver(receiver: subprocess.Popen) -> None:
    receiver.terminate()
    receiver.wait(timeout=30)


def test_the_disk_lost_too_synchronous_wal_on_a_second_machine_restores_every_committed_entry(cluster, portals, tmp_path):
    """Runbook 9.2's synchronous WAL receiver (pg_receivewal --synchronous with a slot, named by
    synchronous_standby_names): the data directory and its pg_wal are gone, yet the base backup,
    the archive and the receiver's folder bring back every committed entry."""
    backups = cluster
    folder = backups / "wal-received"
    folder.mkdir(mode=0o700)
    shutil.chown(folder, "postgres", "postgres")
    psql("CREATE ROLE teletan_wal LOGIN REPLICATION PASSWORD 'teletan-wal'")
    receiver = start_receiver(folder)
    try:
        (CONF_D / "teletan-synchronous-wal.conf").write_text((DEPLOY / "postgresql-synchronous-wal.conf").read_text())
        subprocess.run(["pg_ctlcluster", VERSION, CLUSTER, "reload"], check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 30
        while psql("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'teletan_wal'") != "sync":
            assert time.monotonic() < deadline, "the receiver is not the synchronous standby"
            time.sleep(0.2)

        portal, officer, base_dir = portal_and_base_backup(portals, backups, 2)
        portal.issue(officer, 4)
        # The failure, and the disk lost with the data directory and its pg_wal.
        before, teletans_before = the_failure(portal, backups)
        shutil.rmtree(DATA)
    finally:
        stop_receiver(receiver)
    assert [name for name in os.listdir(folder) if name.endswith(".partial")], os.listdir(folder)

    restored = script("pg-restore-base-backup.sh", str(base_dir), str(DATA), str(folder), user="postgres")
    assert restored.returncode == 0, restored
    recover()
    assert entries() == before, "entries lost or changed by the recovery"
    assert teletans() == teletans_before, "teleTANs lost or changed by the recovery"

    # Runbook 9.5: the receiver again, into an empty folder (the old one kept aside); its slot is
    # made again, so the portal's COMMITs, which wait for it, go through.
    received_before = folder.rename(backups / "wal-received-before-restore")
    folder.mkdir(mode=0o700)
    shutil.chown(folder, "postgres", "postgres")
    receiver = start_receiver(folder)
    try:
        verified = portal.run("audit", "verify", "--full")
        assert verified.returncode == 0, verified
        portal.start()
        portal.issue(portal.client().signed_in(*OFFICER), 1)
        portal.stop_cleanly()
    finally:
        stop_receiver(receiver)
    assert received_before.exists()


def test_the_archive_alone_the_restore_report_names_the_time_from_which_on_nothing_is_vouched_for(cluster, portals):
    """Runbook 9.5 with neither the old pg_wal nor a receiver's folder: the script says what is
    lost, and the restore report's entry divides the entries exactly: every entry written up to
    its time is back, every one lost was written after it."""
    backups = cluster
    portal, officer, base_dir = portal_and_base_backup(portals, backups, 2)
    portal.issue(officer, 4)
    written = dict(line.split("|") for line in psql(
        "SELECT seq, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') FROM audit_log", "teletan").splitlines())
    the_failure(portal, backups)
    shutil.rmtree(DATA)

    restored = script("pg-restore-base-backup.sh", str(base_dir), str(DATA), user="postgres")
    assert restored.returncode == 0, restored
    assert ("no unarchived WAL given: transactions committed after the last archived segment are lost; nothing written "
            "after the last audit entry restored is vouched for (docs/deployment.md section 9.5)") in restored.stdout
    recover()
    last_seq = restore_report().split("|")[0]
    report = written[last_seq]
    kept = set(psql("SELECT seq FROM audit_log", "teletan").splitlines())
    lost = set(written) - kept
    assert lost, "nothing lost: the failure was not within archive_timeout"
    assert all(written[seq] <= report for seq in kept), (report, written)
    assert all(written[seq] > report for seq in lost), (report, written)
