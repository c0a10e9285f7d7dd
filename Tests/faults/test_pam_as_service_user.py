"""PAM for a portal that runs as its own user, as the Debian package runs it (issue 21, item 8),
and `portal check-config` (item 2).

The portal runs as tt-portal-svc (scripts/install-pam-stack.sh: a system account in group shadow
that owns /var/lib/teletan-portal-test/users.oath and its directory, as docs/pam/README.md tells
an operator to set up /var/lib/teletan-portal/users.oath):
- a two-step sign-in (password, then a one-time code from pam_oath) works, and pam_oath can write
  the new counter back;
- a token file the portal's user cannot rewrite: pam_oath reports "Authentication failure", which
  the portal cannot tell from a wrong code, so the start-up log and `check-config` name the file;
- a PAM service naming a module that is not installed: 503 with "a problem on the server" in the
  person's language (not "wrong password", not "try again"), and an error line for the operator.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from faults_support import PORTAL_BIN, Client, Portal, REPO
from support import oath

SERVICE_USER = "tt-portal-svc"
OTP_SERVICE = "teletan-portal-otp-test"
BROKEN_SERVICE = "teletan-portal-broken-test"
USERS_FILE = oath.USERS_FILE


def run_as_service_user(command: list[str]) -> list[str]:
    # --init-groups: the supplementary group shadow, as systemd's User= gives it.
    return ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--init-groups", *command]


class ServicePortal(Portal):
    def command(self) -> list[str]:
        return run_as_service_user(super().command())


@pytest.fixture
def service_workdir():
    """A directory the service user owns, as /var/lib/teletan-portal is for the packaged portal."""
    workdir = Path(tempfile.mkdtemp(prefix="portal-svc-"))
    account = pwd.getpwnam(SERVICE_USER)
    os.chown(workdir, account.pw_uid, account.pw_gid)
    os.chmod(workdir, 0o700)
    try:
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def sign_in_with_code(client: Client, username: str, password: str) -> tuple:
    step = client.sign_in(username, password)
    assert step.status == 200 and 'action="/signin/continue"' in step.body, step.describe()
    with oath.code_lock():
        answer = client.post("/signin/continue", {"csrf": step.hidden("csrf"), "answer": oath.next_code(username)[1]})
    return step, answer


def test_one_time_codes_work_for_a_portal_running_as_its_own_user(service_workdir):
    oath.reset_token_file()
    portal = ServicePortal(service_workdir, pam_service=OTP_SERVICE)
    portal.start()
    try:
        uid_line = next(line for line in Path(f"/proc/{portal.process.pid}/status").read_text().splitlines() if line.startswith("Uid:"))
        assert uid_line.split()[1] == str(pwd.getpwnam(SERVICE_USER).pw_uid)
        counter_before = USERS_FILE.read_text()
        _, answer = sign_in_with_code(portal.client(), "tt-otp", "Otp-Pass-1")
        assert answer.status == 303 and answer.location == "/", answer.describe()
        assert USERS_FILE.read_text() != counter_before, "pam_oath did not write the new counter back"
        assert USERS_FILE.stat().st_uid == pwd.getpwnam(SERVICE_USER).pw_uid
        assert "PAM service problem" not in portal.log_text()
    finally:
        portal.stop_cleanly()


def test_a_token_file_the_portal_cannot_rewrite_is_named_at_start_and_by_check_config(service_workdir):
    oath.reset_token_file()
    os.chown(USERS_FILE, 0, 0)  # as docs/pam said before: root's file in a directory the portal cannot write
    try:
        portal = ServicePortal(service_workdir, pam_service=OTP_SERVICE)
        portal.start()
        try:
            _, answer = sign_in_with_code(portal.client(), "tt-otp", "Otp-Pass-1")
            # pam_oath answers "Authentication failure" for the right code: PAM gives the portal nothing better.
            assert answer.status == 401, answer.describe()
            problems = [line for line in portal.log_text().splitlines() if "PAM service problem" in line]
            assert len(problems) == 1 and str(USERS_FILE) in problems[0] and " error " in problems[0], portal.log_tail()
        finally:
            portal.stop_cleanly()
        check = check_config(service_workdir, ["--pam-service", OTP_SERVICE], as_service_user=True)
        assert check.returncode != 0
        assert any(str(USERS_FILE) in line and "pam_oath" in line for line in problem_lines(check)), check.stdout
    finally:
        oath.reset_token_file()


@pytest.mark.parametrize("language,message", [
    ("en", "Sign-in is not possible because of a problem on the server. Please contact your administrator."),
    ("de", "Die Anmeldung ist wegen eines Problems auf dem Server nicht möglich. Bitte wenden Sie sich an Ihre Administration."),
])
def test_a_missing_pam_module_gets_its_own_message_and_log_line(service_workdir, language, message):
    portal = ServicePortal(service_workdir, pam_service=BROKEN_SERVICE)
    portal.start()
    try:
        answer = portal.client(language).sign_in("tt-officer", "Officer-Pass-1")
        assert answer.status == 503, answer.describe()
        assert message in answer.body, answer.describe()
        log = portal.log_text()
        # The log line: the level, then the metadata, then the message.
        assert re.search(r" error .*pam_error=module_unknown.*PAM failed: the PAM service file or one of its modules is broken", log), portal.log_tail()
        assert re.search(r" error .*pam_teletan_no_such_module\.so, which is not installed.*PAM service problem", log), portal.log_tail()
        assert "Officer-Pass-1" not in log
    finally:
        portal.stop_cleanly()


# ---------------------------------------------------------------------------------------------
# portal check-config


def check_config(workdir: Path, arguments: list[str], as_service_user: bool = False,
                 environment: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [PORTAL_BIN, "check-config", *arguments]
    env = {"PATH": os.environ["PATH"], **(environment or {})}
    return subprocess.run(run_as_service_user(command) if as_service_user else command,
                          capture_output=True, text=True, timeout=60, cwd=workdir, env=env)


def problem_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line.removeprefix("problem: ") for line in result.stdout.splitlines() if line.startswith("problem: ")]


def prepared(workdir: Path) -> dict[str, str]:
    """A configuration that is right: secret, checkpoint key and a migrated SQLite database,
    made the way an operator makes them (a first start), in the environment the unit gives."""
    portal = Portal(workdir)
    portal.start()
    portal.stop_cleanly()
    return {
        "PORTAL_DATABASE": portal.database,
        "PORTAL_SECRET_FILE": str(portal.secret_file),
        "PORTAL_AUDIT_CHECKPOINT_KEY": str(portal.checkpoint_key),
        "PORTAL_PAM_SERVICE": "teletan-portal-test",
    }


def test_check_config_passes_a_good_configuration_read_from_the_environment(tmp_path):
    result = check_config(tmp_path, [], environment=prepared(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert problem_lines(result) == []
    assert result.stdout.startswith("configuration OK"), result.stdout


def documented_settings(text: str) -> dict[str, str]:
    """The NAME=VALUE lines of an env file (comments skipped)."""
    pairs = [line.strip().split("=", 1) for line in text.splitlines() if re.match(r"\s*PORTAL_[A-Z_]+=", line)]
    return {name: value for name, value in pairs}


def test_check_config_says_ok_with_the_documented_portal_env_and_the_unit_reads_only_it(tmp_path):
    """Section 4's portal.env and the shipped one (with this test's files, database and PAM
    service), behind nginx with an https public URL: `check-config` through as-portal says OK.
    The units pass `serve` no option, so serve reads the same settings as every as-portal command."""
    environment = prepared(tmp_path)
    guide = (REPO / "docs/deployment.md").read_text()
    section_4 = guide.split("## 4. Configuration", 1)[1].split("The same settings exist", 1)[0]
    shipped = (REPO / "docs/deploy/portal.env").read_text()
    for text in (section_4, shipped):
        settings = documented_settings(text) | environment
        settings.setdefault("PORTAL_PUBLIC_URL", "https://teletan.example.org")
        assert settings["PORTAL_PUBLIC_URL"].startswith("https://")
        result = check_config(tmp_path, [], environment=settings)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith("configuration OK"), result.stdout
    for unit in ("teletan-portal.service", "teletan-portal@.service"):
        exec_start = [line for line in (REPO / "docs/deploy" / unit).read_text().splitlines() if line.startswith("ExecStart=")]
        assert exec_start == ["ExecStart=/usr/bin/portal serve"], f"{unit}: {exec_start}"


def test_check_config_reports_every_problem_one_line_each_and_creates_nothing(tmp_path):
    environment = prepared(tmp_path)
    (tmp_path / "portal.secret").chmod(0o644)
    environment |= {
        "PORTAL_PORT": "99999",
        "PORTAL_TIME_ZONE": "Europe/Atlantis",
        "PORTAL_HOTLINE_GROUP": "teletan-no-such-group",
        "PORTAL_PUBLIC_URL": "http://teletan.example.org",
        "PORTAL_PAM_SERVICE": "teletan-portal-no-such-service",
        "PORTAL_AUDIT_CHECKPOINT_KEY": str(tmp_path / "missing-key.pem"),
        "PORTAL_HEALTH_AUTHORITIES": str(tmp_path / "missing.csv"),
        "PORTAL_VERIFICATION_SERVER": "https://verification.example.org",
        "PORTAL_VERIFICATION_KEY": str(tmp_path / "missing-portal-key.pem"),
    }
    before = sorted(path.name for path in tmp_path.iterdir())
    result = check_config(tmp_path, [], environment=environment)
    assert result.returncode != 0
    problems = problem_lines(result)
    expected = [
        "--port (PORTAL_PORT)",
        "--time-zone (PORTAL_TIME_ZONE): unknown time zone 'Europe/Atlantis'",
        "--health-authorities (PORTAL_HEALTH_AUTHORITIES)",
        "--secret-file (PORTAL_SECRET_FILE)",
        "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY)",
        "--hotline-group (PORTAL_HOTLINE_GROUP): the group teletan-no-such-group does not exist",
        "--pam-service (PORTAL_PAM_SERVICE): /etc/pam.d/teletan-portal-no-such-service does not exist",
        "--public-url (PORTAL_PUBLIC_URL): http://teletan.example.org is plain http",
        "--verification-key (PORTAL_VERIFICATION_KEY)",
    ]
    for start in expected:
        assert sum(line.startswith(start) for line in problems) == 1, f"{start!r} not reported once in:\n{result.stdout}"
    assert len(problems) == len(expected), result.stdout
    assert f"{len(expected)} problems found" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == before, "check-config created or removed files"


def test_check_config_reports_an_unmigrated_database_and_migrate_status_lists_what_is_pending(tmp_path):
    environment = prepared(tmp_path)
    fresh = tmp_path / "previous.sqlite"
    subprocess.run(["sqlite3", str(fresh), f".read {REPO / 'Tests/fixtures/previous-release/sqlite.sql'}"], check=True)
    environment["PORTAL_DATABASE"] = f"sqlite:{fresh}"
    result = check_config(tmp_path, [], environment=environment)
    assert result.returncode != 0
    [problem] = problem_lines(result)
    assert re.match(r"--database \(PORTAL_DATABASE\): \d+ migrations pending \(.*Audit\.AddCheckpointsAndRetention.*\): run `portal migrate`", problem), problem

    def status() -> list[str]:
        out = subprocess.run([PORTAL_BIN, "migrate", "--status"], capture_output=True, text=True, check=True,
                             cwd=tmp_path, env={"PATH": os.environ["PATH"], **environment}).stdout
        return out.splitlines()

    lines = status()
    assert any(re.fullmatch(r"applied  \S+Z  Audit\.CreateAuditLog", line) for line in lines), lines
    assert "pending  Audit.AddCheckpointsAndRetention" in lines
    assert re.fullmatch(r"4 applied, \d+ pending: `migrate` applies them", lines[-1]), lines[-1]
    subprocess.run([PORTAL_BIN, "migrate"], capture_output=True, check=True, cwd=tmp_path,
                   env={"PATH": os.environ["PATH"], **environment})
    assert re.fullmatch(r"\d+ applied, 0 pending", status()[-1])
    assert check_config(tmp_path, [], environment=environment).returncode == 0


def test_check_config_as_a_user_without_shadow_names_pam_unix():
    workdir = Path(tempfile.mkdtemp(prefix="portal-nobody-"))
    try:
        environment = prepared(workdir)
        os.chown(workdir, 65534, 65534)  # SQLite writes its -shm file beside the database
        for path in workdir.iterdir():
            os.chown(path, 65534, 65534)
        result = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", PORTAL_BIN, "check-config"],
                                capture_output=True, text=True, timeout=60, cwd=workdir, env={"PATH": os.environ["PATH"], **environment})
        problems = problem_lines(result)
        assert len(problems) == 1 and "pam_unix cannot check other accounts' passwords" in problems[0] and "group shadow" in problems[0], result.stdout
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def as_portal_function(env_file: Path) -> str:
    """The `as-portal` shell function of docs/deployment.md section 4, as written there, with the
    test's env file and service user."""
    text = (REPO / "docs/deployment.md").read_text()
    line = next(line.strip() for line in text.splitlines() if line.strip().startswith("as-portal() {"))
    return line.replace("/etc/teletan-portal/portal.env", str(env_file)).replace("runuser -u teletan-portal ", f"runuser -u {SERVICE_USER} ")


def test_the_documented_upgrade_steps_run_as_written(service_workdir):
    """Section 11's step 3 through section 4's `as-portal`: on a database of the previous release,
    `migrate --status` lists what is pending, `migrate` applies it as the service user, and
    `check-config` then passes; then section 12a's rotations as the service user."""
    environment = prepared(service_workdir)
    previous = service_workdir / "previous.sqlite"
    subprocess.run(["sqlite3", str(previous), f".read {REPO / 'Tests/fixtures/previous-release/sqlite.sql'}"], check=True)
    account = pwd.getpwnam(SERVICE_USER)
    for path in service_workdir.iterdir():
        os.chown(path, account.pw_uid, account.pw_gid)
    env_file = service_workdir / "portal.env"
    environment["PORTAL_DATABASE"] = f"sqlite:{previous}"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in environment.items()))
    env_file.chmod(0o600)  # root's, as /etc/teletan-portal/portal.env: the user itself cannot read it

    # `portal` on the PATH, as the package's /usr/bin/portal is.
    bin_directory = service_workdir / "bin"
    bin_directory.mkdir()
    (bin_directory / "portal").symlink_to(PORTAL_BIN)
    path = f"{bin_directory}:/usr/sbin:/usr/bin:/sbin:/bin"

    def as_portal(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", f"{as_portal_function(env_file)}; as-portal {command}"],
                              capture_output=True, text=True, timeout=120, cwd="/", env={"PATH": path})

    status = as_portal("migrate --status")
    assert status.returncode == 0, status.stderr
    assert "pending  Audit.AddCheckpointsAndRetention" in status.stdout
    assert as_portal("check-config").returncode != 0
    migrated = as_portal("migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert previous.stat().st_uid == account.pw_uid
    assert re.search(r"\n\d+ applied, 0 pending\n$", as_portal("migrate --status").stdout)
    check = as_portal("check-config")
    assert check.returncode == 0, check.stdout + check.stderr

    # Section 12a's rotations, as the service user: the new files are the user's, mode 600, and
    # the service can still read them.
    for command in ("secret rotate", "audit rotate-key"):
        rotated = as_portal(command)
        assert rotated.returncode == 0, f"{command}: {rotated.stdout}{rotated.stderr}"
    for name in ("PORTAL_SECRET_FILE", "PORTAL_AUDIT_CHECKPOINT_KEY"):
        status = Path(environment[name]).stat()
        assert (status.st_uid, status.st_mode & 0o777) == (account.pw_uid, 0o600), name
    assert re.search(r"^key 2: current from ", as_portal("secret list").stdout, re.M)
    check = as_portal("check-config")
    assert check.returncode == 0, check.stdout + check.stderr
