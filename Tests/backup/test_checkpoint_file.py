"""`portal audit checkpoint --sign --out FILE`, as teletan-portal-checkpoint.service runs it
(docs/deploy/teletan-portal-checkpoint.{service,timer}, docs/deployment.md section 9): the file is
replaced at once with mode 640, a failed run leaves the previous file as it was and no other file,
errors go to standard error, and a run without a database setting fails and creates nothing."""

from __future__ import annotations

import os
import shutil
import sqlite3

from backup_support import OFFICER, PORTAL_BIN, checkpoint_seq, missing_report, mode, run_portal

def test_no_database_setting_fails_and_creates_nothing(tmp_path):
    """The timer's job without its environment file: one line naming PORTAL_DATABASE, exit 78
    (configuration), and no portal.sqlite, no checkpoint file, nothing at all in the directory."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    out = workdir / "checkpoint.txt"
    for command in (["audit", "checkpoint", "--sign", "--out", str(out)], ["audit", "checkpoint"],
                    ["audit", "verify"], ["sessions", "end-all"]):
        result = run_portal([PORTAL_BIN, *command], cwd=workdir)
        assert result.returncode == 78, (command, result)
        assert result.stdout == "", (command, result.stdout)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and "PORTAL_DATABASE" in lines[0] and "not set" in lines[0], (command, result.stderr)
        assert os.listdir(workdir) == [], (command, os.listdir(workdir))
    # A SQLite path that does not exist is not created either.
    result = run_portal([PORTAL_BIN, "audit", "checkpoint", "--out", str(out), "--database", f"sqlite:{workdir}/portal.sqlite"],
                        cwd=workdir)
    assert result.returncode == 78 and "does not exist" in result.stderr, result
    assert os.listdir(workdir) == []


def test_out_is_written_whole_with_mode_640_and_failures_keep_the_previous_file(portals, tmp_path):
    portal = portals()
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, 2)

    handed_out = tmp_path / "handed-out"
    handed_out.mkdir()
    out = handed_out / "checkpoint.txt"
    written = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert written.returncode == 0 and written.stdout == "" and written.stderr == "", written
    assert mode(out) == 0o640
    first = out.read_text()
    seq = checkpoint_seq(out)
    assert seq > 0
    assert os.listdir(handed_out) == ["checkpoint.txt"]
    verified = portal.run("audit", "verify", "--checkpoint", str(out))
    assert verified.returncode == 0, verified
    assert f"checkpoint {seq}: its entry is in the database with the hash it signed" in verified.stdout

    # The next run compares the file with the database, then replaces it.
    portal.issue(officer, 1)
    again = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert again.returncode == 0, again
    assert checkpoint_seq(out) > seq and mode(out) == 0o640
    assert os.listdir(handed_out) == ["checkpoint.txt"]
    second = out.read_text()

    # A run that fails (an entry after the checkpoint rewritten: not signing) keeps the file.
    portal.issue(officer, 1)
    portal.stop_cleanly()
    database = sqlite3.connect(portal.database.removeprefix("sqlite:"))
    database.execute("DROP TRIGGER audit_log_no_update")  # as someone with file access could
    database.execute("UPDATE audit_log SET details = '{\"x\":\"1\"}' WHERE seq = (SELECT MAX(seq) FROM audit_log)")
    database.commit()
    database.close()
    broken = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert broken.returncode == 1 and broken.stdout == "", broken
    assert "not signing: audit trail broken at entry" in broken.stderr, broken.stderr
    assert out.read_text() == second and mode(out) == 0o640
    assert os.listdir(handed_out) == ["checkpoint.txt"]
    assert second != first


def test_a_failed_write_leaves_no_file(portals, tmp_path):
    """Failures at writing: a directory that does not exist (nothing created), and a target that
    cannot be replaced (a directory of that name: the temporary file is removed again)."""
    portal = portals()
    portal.start()
    portal.issue(portal.client().signed_in(*OFFICER), 1)
    missing = tmp_path / "no-such-directory" / "checkpoint.txt"
    result = portal.run("audit", "checkpoint", "--sign", "--out", str(missing))
    assert result.returncode == 1 and "--out: cannot create a file in" in result.stderr, result
    assert not missing.parent.exists()

    handed_out = tmp_path / "handed-out"
    (handed_out / "checkpoint.txt").mkdir(parents=True)
    (handed_out / "checkpoint.txt" / "keep").write_text("x")
    result = portal.run("audit", "checkpoint", "--sign", "--out", str(handed_out / "checkpoint.txt"))
    assert result.returncode == 1 and "--out: cannot replace" in result.stderr, result
    assert sorted(os.listdir(handed_out)) == ["checkpoint.txt"]
    assert os.listdir(handed_out / "checkpoint.txt") == ["keep"]


def test_a_change_below_the_checkpoint_is_reported_by_the_routine_commands_after_a_full_check(portals):
    """Issue 28, item 1: `audit verify` without --full walks from the newest checkpoint and says
    so; an entry below it changed around the triggers is seen by `verify --full`, and from then on
    `audit verify` reports it too and `audit checkpoint --sign` refuses (exit 1), saying why."""
    portal = portals()
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, 2)
    portal.stop_cleanly()
    signed = portal.run("audit", "checkpoint", "--sign")
    assert signed.returncode == 0, signed
    seq = int(next(line for line in signed.stdout.splitlines() if line.startswith("seq ")).split()[1])
    assert seq > 2

    database = sqlite3.connect(portal.database.removeprefix("sqlite:"))
    (trigger,) = database.execute("SELECT sql FROM sqlite_master WHERE name = 'audit_log_no_update'").fetchone()
    database.execute("DROP TRIGGER audit_log_no_update")  # as someone with file access could
    database.execute("UPDATE audit_log SET details = '{\"x\":\"1\"}' WHERE seq = 2")
    database.execute(trigger)  # and put back
    database.commit()
    database.close()

    routine = portal.run("audit", "verify")
    assert routine.returncode == 0, routine
    assert "audit trail intact" in routine.stdout and f"checked from checkpoint {seq};" in routine.stdout, routine.stdout
    assert "--full" in routine.stdout, routine.stdout
    full = portal.run("audit", "verify", "--full")
    assert full.returncode == 1, full
    assert "audit trail broken at entry 2: entry 2 was changed after it was written" in full.stderr, full.stderr
    assert "checked in full" in full.stderr, full.stderr

    after = portal.run("audit", "verify")
    assert after.returncode == 1 and after.stdout == "", after
    assert "audit trail broken at entry 2: the full check of " in after.stderr, after.stderr
    refused = portal.run("audit", "checkpoint", "--sign")
    assert refused.returncode == 1 and refused.stdout == "", refused
    assert "not signing: audit trail broken at entry 2: the full check of " in refused.stderr, refused.stderr
    assert "no checkpoint is signed" in refused.stderr, refused.stderr



def test_after_a_key_rotation_a_restore_from_an_older_backup_is_still_detected_and_the_file_kept(portals, tmp_path):
    """Issue 29, section 3: after `portal audit rotate-key` the checkpoint in the file is signed by
    the kept old key. The timer's command trusts the kept public keys as `verify` does, so a restore
    from a backup older than that checkpoint is reported (exit 1) and the file is kept; a file
    signed by a key it does not know is never replaced by a checkpoint with a lower seq."""
    portal = portals()
    portal.start()
    officer = portal.client().signed_in(*OFFICER)
    portal.issue(officer, 2)
    portal.stop_cleanly()
    database = portal.database.removeprefix("sqlite:")
    backup = tmp_path / "backup.sqlite"
    shutil.copyfile(database, backup)
    backup_head = sqlite3.connect(backup).execute("SELECT seq FROM audit_head").fetchone()[0]

    portal.start()
    portal.issue(portal.client().signed_in(*OFFICER), 2)
    portal.stop_cleanly()
    out = tmp_path / "checkpoint.txt"
    assert portal.run("audit", "checkpoint", "--sign", "--out", str(out)).returncode == 0
    handed_out = checkpoint_seq(out)
    evidence = out.read_text()
    rotated = portal.run("audit", "rotate-key", database=False)
    assert rotated.returncode == 0, rotated

    # The restore from the older backup.
    for suffix in ("-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.remove(database + suffix)
    shutil.copyfile(backup, database)

    # A file signed by a key not kept (its .pub.pem deleted): not compared, but never replaced by
    # a lower seq.
    kept = next(portal.checkpoint_key.parent.glob(portal.checkpoint_key.stem + ".*.pub.pem"))
    aside = tmp_path / kept.name
    kept.rename(aside)
    unknown = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert unknown.returncode == 1, unknown
    assert f"not replaced: it names entry {handed_out}, above the database's newest checkpoint" in unknown.stderr, unknown.stderr
    assert out.read_text() == evidence
    aside.rename(kept)

    refused = portal.run("audit", "checkpoint", "--sign", "--out", str(out))
    assert refused.returncode == 1, refused
    assert missing_report(handed_out, backup_head + 1) in refused.stderr, refused.stderr
    assert "signed by another key" not in refused.stderr, refused.stderr
    assert out.read_text() == evidence
