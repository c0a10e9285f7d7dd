"""The Debian packages from build to purge, in order (one installation shared by the tests of this
module; each step depends on the one before):

1. scripts/package-deb.sh makes both packages; lintian reports no errors;
2. dpkg installs them (the PAM service file already on this machine is kept, no prompt): files,
   modes, owners, conffiles, the system users (portal in group shadow), the secret and the
   checkpoint key, units identical to docs/deploy/, `systemd-analyze verify`, `--version`;
3. the portal runs as teletan-portal@.service runs it: User=, Group=, Environment=,
   EnvironmentFile=, WorkingDirectory=, ExecStart=, UMask=, LimitCORE= and the sandbox
   (ProtectSystem=strict with ReadWritePaths=, ProtectHome=, PrivateTmp=, PrivateDevices=,
   ProtectHostname=, NoNewPrivileges=, CapabilityBoundingSet=) emulated with bubblewrap and
   setpriv, and the Swift toolchain hidden; an officer signs in through PAM and issues a teleTAN;
4. `dpkg --remove` keeps /var/lib/teletan-portal and the secret, `dpkg --purge` deletes them.

docs/deployment.md sections 1, 2 and 5 name this test.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import resource
import shlex
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from support.portal_client import Client

REPO = Path(__file__).resolve().parents[2]

PACKAGES = ("teletan-portal", "teletan-verification-server")
PAM_FILE = Path("/etc/pam.d/teletan-portal")
INSTANCE = "pkgtest"
INSTANCE_ENV = Path(f"/etc/teletan-portal/{INSTANCE}.env")
PORT, METRICS_PORT = 18101, 18102
OFFICER = ("tt-officer", "Officer-Pass-1")
CHECKPOINT_UNITS = ("teletan-portal-checkpoint.service", "teletan-portal-checkpoint.timer")

# [Service] settings of the portal's units and how run_as_unit() applies them. Every setting the
# unit has must be in one of the two tables: a new one makes this test fail until it is handled.
EMULATED = {
    "Type", "User", "Group", "Environment", "EnvironmentFile", "WorkingDirectory", "ExecStart",
    "UMask", "LimitCORE", "NoNewPrivileges", "ProtectSystem", "ReadWritePaths", "ProtectHome",
    "PrivateTmp", "PrivateDevices", "ProtectHostname", "CapabilityBoundingSet",
}
NOT_EMULATED = {
    # systemd's supervision, not the process's surroundings.
    "Restart": "restarting is systemd's job",
    "RestartSec": "restarting is systemd's job",
    # Kernel interfaces a container cannot take away from itself without systemd: bwrap has no
    # switch for them, and the portal does not touch them.
    "ProtectKernelTunables": "no bwrap switch (read-only /proc/sys)",
    "ProtectKernelModules": "no bwrap switch",
    "ProtectKernelLogs": "no bwrap switch",
    "ProtectControlGroups": "no bwrap switch",
    "ProtectClock": "needs a seccomp filter",
    "RestrictNamespaces": "needs a seccomp filter",
    "RestrictRealtime": "needs a seccomp filter",
    "RestrictSUIDSGID": "needs a seccomp filter",
    "LockPersonality": "needs a seccomp filter",
    "SystemCallArchitectures": "needs a seccomp filter",
    "RestrictAddressFamilies": "needs a seccomp filter",
}


def run(*command: str, check: bool = True, **options) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **options)
    if check and result.returncode != 0:
        pytest.fail(f"{shlex.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def purge() -> None:
    run("dpkg", "--purge", *PACKAGES, check=False)


# ---------------------------------------------------------------------------------------------
# The packages (built once for the session: conftest.py), installed once for the module


@pytest.fixture(scope="module")
def installed(debs):
    """Both packages installed; purged at the end whatever happened, and the machine's PAM
    service file (the test stack's, identical to the package's) put back."""
    pam_backup = PAM_FILE.read_bytes() if PAM_FILE.exists() else None
    purge()  # left over from an interrupted run
    # A fresh host: the users a purge keeps are made again by postinst (with group shadow).
    for user in ("teletan-portal", "teletan-verification"):
        run("userdel", user, check=False)
        run("groupdel", user, check=False)
    try:
        result = run("dpkg", "--force-confdef", "--force-confold", "--install", *map(str, debs),
                     env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdin=subprocess.DEVNULL)
        yield result
    finally:
        INSTANCE_ENV.unlink(missing_ok=True)
        purge()
        if pam_backup is not None:
            PAM_FILE.write_bytes(pam_backup)
            os.chmod(PAM_FILE, 0o644)


def mode_and_owner(path: str) -> tuple[int, str, str]:
    info = os.stat(path)
    return stat.S_IMODE(info.st_mode), pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name


def expected_commit() -> str:
    commit = run("git", "-c", "safe.directory=*", "-C", str(REPO), "rev-parse", "--short=7", "HEAD").stdout.strip()
    return commit


# ---------------------------------------------------------------------------------------------
# 1. lintian


def test_1_lintian_reports_no_errors(debs):
    # --fail-on error: warnings are listed (and overridden with reasons in scripts/debian/).
    result = run("lintian", "--fail-on", "error", "--no-tag-display-limit", *map(str, debs), check=False)
    errors = [line for line in result.stdout.splitlines() if line.startswith("E:")]
    assert result.returncode == 0 and not errors, result.stdout + result.stderr


def test_1_both_depend_on_the_system_trust_store(debs):
    """ca-certificates: without /etc/ssl/certs no certificate can be checked (a PostgreSQL URL
    with sslmode=verify-full, an https verification server or realm)."""
    for deb in debs:
        depends = [name.strip().split()[0] for name in run("dpkg-deb", "-f", str(deb), "Depends").stdout.split(",")]
        assert "ca-certificates" in depends, f"{deb.name}: {depends}"


# ---------------------------------------------------------------------------------------------
# 2. Installed: files, users, units, version


def test_2_files_modes_and_owners(installed):
    assert mode_and_owner("/usr/bin/portal") == (0o755, "root", "root")
    assert mode_and_owner("/usr/bin/verification-server") == (0o755, "root", "root")
    assert mode_and_owner("/etc/pam.d/teletan-portal") == (0o644, "root", "root")
    # Settings hold the database password: root only (systemd reads them as root).
    assert mode_and_owner("/etc/teletan-portal/portal.env") == (0o600, "root", "root")
    assert mode_and_owner("/etc/teletan-verification/verification.env") == (0o600, "root", "root")
    # Made by `portal secret init` in postinst, handed to the service user.
    assert mode_and_owner("/var/lib/teletan-portal/portal.secret") == (0o600, "teletan-portal", "teletan-portal")
    assert mode_and_owner("/var/lib/teletan-portal/audit-checkpoint-key.pem") == (0o600, "teletan-portal", "teletan-portal")
    assert Path("/var/lib/teletan-portal/audit-checkpoint-key.pub.pem").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    # The portal user's too: `as-portal audit rotate-key` replaces it (section 12a).
    assert mode_and_owner("/var/lib/teletan-portal/audit-checkpoint-key.pub.pem")[1:] == ("teletan-portal", "teletan-portal")
    assert mode_and_owner("/var/lib/teletan-portal") == (0o700, "teletan-portal", "teletan-portal")
    assert mode_and_owner("/var/lib/teletan-verification") == (0o700, "teletan-verification", "teletan-verification")
    # The test stack's PAM file was there before: kept without a prompt (identical content).
    assert PAM_FILE.read_text() == (REPO / "docs/pam/teletan-portal").read_text()

    conffiles = run("dpkg-query", "--showformat=${Conffiles}", "--show", "teletan-portal").stdout
    assert "/etc/pam.d/teletan-portal " in conffiles and "/etc/teletan-portal/portal.env " in conffiles, conffiles
    conffiles = run("dpkg-query", "--showformat=${Conffiles}", "--show", "teletan-verification-server").stdout
    assert "/etc/teletan-verification/verification.env " in conffiles, conffiles


SHARED = {  # /usr/share/teletan-portal/NAME: the file of this repository it is
    **{name: f"docs/deploy/{name}" for name in (
        "nginx-teletan-portal.conf", "alerts.yml", "alerts.test.yml", "postgresql-archiving.conf",
        "postgresql-synchronous-wal.conf", "teletan-wal-receiver.service", "backup-sqlite.sh",
        "backup-pg-dump.sh", "pg-base-backup.sh", "pg-restore-base-backup.sh",
        "proxy-errors/de.html", "proxy-errors/en.html")},
    "health-authorities.example.csv": "docs/health-authorities.example.csv",
    "hotline-checks.example.json": "docs/hotline-checks.example.json",
    **{f"pam/{name}": f"docs/pam/{name}" for name in ("teletan-portal", "README.md", "sssd.conf", "nslcd.conf")},
}


def test_2_the_guide_needs_no_checkout(installed):
    """What docs/deployment.md installs or runs comes from the package (/usr/share/teletan-portal/),
    identical to this repository's file; the guide's commands name no file of a checkout."""
    share = Path("/usr/share/teletan-portal")
    for name, source in SHARED.items():
        assert (share / name).read_bytes() == (REPO / source).read_bytes(), name
        expected = 0o755 if name.endswith(".sh") else 0o644
        assert mode_and_owner(str(share / name)) == (expected, "root", "root"), name
    shipped = {str(path.relative_to(share)) for path in share.rglob("*") if path.is_file()}
    assert shipped == set(SHARED), shipped ^ set(SHARED)
    assert not any("-test" in name for name in shipped)
    guide = (REPO / "docs/deployment.md").read_text()
    for path in sorted(set(re.findall(r"/usr/share/teletan-portal/[\w./-]*[\w/]", guide))):
        assert Path(path).exists(), f"deployment.md names {path}, which the package does not install"
    # Command lines (indented four spaces), except those of the build from source in section 1.
    before, _, rest = guide.partition("**From source**")
    after = rest.partition("\n## 2. ")[2]
    commands = [line for line in (before + after).splitlines() if line.startswith("    ") and "docs/" in line]
    assert commands == [], "commands of deployment.md that need a checkout:\n" + "\n".join(commands)


def test_2_system_users(installed):
    portal = pwd.getpwnam("teletan-portal")
    assert portal.pw_uid < 1000 and portal.pw_shell == "/usr/sbin/nologin" and portal.pw_dir == "/var/lib/teletan-portal"
    # pam_unix reads /etc/shadow itself to check other accounts' passwords.
    assert "teletan-portal" in grp.getgrnam("shadow").gr_mem
    verification = pwd.getpwnam("teletan-verification")
    assert verification.pw_uid < 1000 and verification.pw_shell == "/usr/sbin/nologin"
    assert "teletan-verification" not in grp.getgrnam("shadow").gr_mem


def test_2_units_are_the_documented_ones(installed):
    """What deployment.md section 5 includes from docs/deploy/ is what the package installs."""
    units = ["teletan-portal.service", "teletan-portal@.service", "teletan-verification.service"]
    units += [unit for unit in CHECKPOINT_UNITS if (REPO / "docs/deploy" / unit).exists()]
    for unit in units:
        assert Path("/lib/systemd/system", unit).read_text() == (REPO / "docs/deploy" / unit).read_text(), unit
    assert Path("/etc/teletan-portal/portal.env").read_text() == (REPO / "docs/deploy/portal.env").read_text()


def test_2_systemd_analyze_verify(installed):
    if run("systemd-analyze", "--version", check=False).returncode != 0:
        pytest.skip("systemd-analyze does not run here")
    INSTANCE_ENV.write_text("")  # the instance's file must exist for the template
    units = ["teletan-portal.service", f"teletan-portal@{INSTANCE}.service", "teletan-verification.service"]
    units += [unit for unit in CHECKPOINT_UNITS if Path("/lib/systemd/system", unit).exists()]
    result = run("systemd-analyze", "verify", *units, check=False)
    INSTANCE_ENV.unlink()
    assert result.returncode == 0 and not result.stderr.strip(), result.stdout + result.stderr


def test_2_version_names_the_release_and_commit(installed):
    commit = expected_commit()
    for program in ("portal", "verification-server"):
        printed = run(f"/usr/bin/{program}", "--version").stdout.strip()
        match = re.fullmatch(rf"{program} (\d+\.\d+\.\d+) \(commit ([0-9a-f]{{7}})(\+dirty)?\)", printed)
        assert match, printed
        assert match.group(2) == commit, f"{printed}: built from {commit}"
        version = match.group(1)
    assert run("dpkg-query", "--showformat=${Version}", "--show", "teletan-portal").stdout == version
    changelog = REPO / "CHANGELOG.md"
    if changelog.exists():  # its newest release is this one
        newest = re.search(r"^## \[?(\d+\.\d+\.\d+)", changelog.read_text(), re.M)
        assert newest and newest.group(1) == version, f"CHANGELOG.md's newest release is not {version}"


def test_2_binaries_need_no_swift_toolchain(installed):
    for program in ("/usr/bin/portal", "/usr/bin/verification-server"):
        libraries = run("ldd", program).stdout
        assert not re.search(r"not found|/opt/swift|libswift|libFoundation|libdispatch", libraries), libraries
        # And it runs with the toolchain out of sight.
        hidden = run("bwrap", "--ro-bind", "/", "/", "--tmpfs", "/opt", "--dev", "/dev", "--proc", "/proc",
                     "--", program, "--version")
        assert hidden.stdout.startswith(Path(program).name + " "), hidden.stdout


# ---------------------------------------------------------------------------------------------
# 3. The portal as its unit runs it


def unit_service_settings(path: Path) -> list[tuple[str, str]]:
    """The [Service] section's `Key=Value` lines, in order (keys may repeat)."""
    settings, section = [], None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            settings.append((key.strip(), value.strip()))
    return settings


def read_environment_file(path: str) -> dict[str, str]:
    """systemd's EnvironmentFile=: KEY=VALUE lines, comments and blank lines skipped, quotes
    around a value removed. A leading `-` on the name makes a missing file no error."""
    optional = path.startswith("-")
    path = path.removeprefix("-")
    if optional and not os.path.exists(path):
        return {}
    values = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def run_as_unit(unit: Path, instance: str, log: Path) -> subprocess.Popen:
    settings = [(key, value.replace("%i", instance)) for key, value in unit_service_settings(unit)]
    unknown = {key for key, _ in settings} - EMULATED - set(NOT_EMULATED)
    assert not unknown, f"{unit.name}: settings this test neither applies nor explains: {sorted(unknown)}"
    single = dict(settings)
    assert single["Type"] == "simple" and single["NoNewPrivileges"] == "yes" and single["CapabilityBoundingSet"] == ""

    user = single["User"]
    account = pwd.getpwnam(user)
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                   "USER": user, "LOGNAME": user, "HOME": account.pw_dir, "SHELL": account.pw_shell}
    for key, value in settings:
        if key == "Environment":
            for assignment in shlex.split(value):
                name, _, content = assignment.partition("=")
                environment[name] = content
    for key, value in settings:  # files after Environment=, later files win
        if key == "EnvironmentFile":
            environment.update(read_environment_file(value))

    # Its own PID namespace: should the test die, no portal outlives it (the process that drops
    # privileges loses --die-with-parent, but the namespace ends with bwrap's init).
    sandbox = ["bwrap", "--die-with-parent", "--unshare-pid"]
    assert single["ProtectSystem"] == "strict"
    sandbox += ["--ro-bind", "/", "/"]  # the whole file system read-only ...
    if single.get("PrivateDevices") == "yes":
        sandbox += ["--dev", "/dev"]  # ... with only the pseudo devices
    sandbox += ["--proc", "/proc"]
    if single.get("ProtectHome") == "yes":
        sandbox += ["--tmpfs", "/home", "--tmpfs", "/root", "--tmpfs", "/run/user"]
    if single.get("PrivateTmp") == "yes":
        sandbox += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    if single.get("ProtectHostname") == "yes":
        sandbox += ["--unshare-uts"]
    for key, value in settings:  # ... but these
        if key == "ReadWritePaths":
            for path in value.split():
                sandbox += ["--bind", path, path]
    # Not a unit setting: a production host has no Swift toolchain.
    sandbox += ["--tmpfs", "/opt"]
    sandbox += ["--chdir", single["WorkingDirectory"], "--"]
    # Then, as systemd does after setting up the namespace: the user, its groups (shadow), no
    # capabilities, no new privileges.
    drop = ["setpriv", f"--reuid={user}", f"--regid={single['Group']}", "--init-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    command = shlex.split(single["ExecStart"])
    umask = int(single["UMask"], 8)
    core = int(single["LimitCORE"])

    def limits():
        os.umask(umask)
        resource.setrlimit(resource.RLIMIT_CORE, (core, core))

    with log.open("wb") as output:
        return subprocess.Popen(sandbox + drop + command, env=environment, stdout=output,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=limits)


def main_process(root: int, executable: str) -> int:
    """The process under `root` (bwrap) that runs `executable`."""
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            if os.readlink(f"/proc/{pid}/exe") == executable:
                return pid
            pending += map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
        except FileNotFoundError:
            continue
    pytest.fail(f"no process runs {executable} under {root}")


def wait_ready(process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the portal exited with {process.returncode}:\n{log.read_text()}")
        try:
            if Client(f"http://127.0.0.1:{PORT}").get("/health/ready").status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"the portal was not ready after {timeout} s:\n{log.read_text()}")


def test_3_portal_runs_as_its_unit_signs_in_through_pam_and_issues(installed, tmp_path):
    with socket.socket() as probe:  # a portal left over would answer in its place
        assert probe.connect_ex(("127.0.0.1", PORT)) != 0, f"port {PORT} is taken"
    # The instance's own file: its ports (from the test's range); the rest comes from portal.env.
    INSTANCE_ENV.write_text(f"PORTAL_PORT={PORT}\nPORTAL_METRICS_PORT={METRICS_PORT}\n")
    os.chmod(INSTANCE_ENV, 0o600)
    log = tmp_path / "portal.log"
    process = run_as_unit(Path("/lib/systemd/system/teletan-portal@.service"), INSTANCE, log)
    try:
        wait_ready(process, log)
        officer = Client(f"http://127.0.0.1:{PORT}").signed_in(*OFFICER)
        issuance = officer.issue()
        assert issuance.teletan and re.fullmatch(r"[0-9A-Z]{10}", issuance.teletan), issuance.last.describe()
    finally:
        # systemd signals the service's main process; bwrap, its ancestor here, forwards nothing.
        os.kill(main_process(process.pid, "/usr/bin/portal"), signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()  # and with it the namespace
            process.wait()
        INSTANCE_ENV.unlink(missing_ok=True)
    assert process.returncode == 0, log.read_text()
    # What it wrote is its own and private (UMask=0077); the package's SQLite default.
    assert mode_and_owner("/var/lib/teletan-portal/portal.sqlite") == (0o600, "teletan-portal", "teletan-portal")
    for secret in ("Officer-Pass-1", issuance.teletan):
        assert secret not in log.read_text()


# ---------------------------------------------------------------------------------------------
# 4. Remove keeps the data, purge deletes it


def test_4_remove_keeps_data_and_purge_deletes_it(installed):
    run("dpkg", "--remove", *PACKAGES)
    assert not Path("/usr/bin/portal").exists()
    assert Path("/var/lib/teletan-portal").is_dir() and Path("/var/lib/teletan-verification").is_dir()
    assert Path("/var/lib/teletan-portal/portal.secret").exists()
    assert Path("/var/lib/teletan-portal/audit-checkpoint-key.pem").exists()
    assert Path("/etc/teletan-portal/portal.env").exists()  # conffiles stay until purge

    run("dpkg", "--purge", *PACKAGES)
    for gone in ("/var/lib/teletan-portal", "/var/lib/teletan-verification", "/etc/teletan-portal",
                 "/etc/teletan-verification"):
        assert not Path(gone).exists(), gone
    # The system user stays (files elsewhere may still belong to it); that is Debian's practice.
    pwd.getpwnam("teletan-portal")
