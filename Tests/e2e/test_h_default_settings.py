"""(h) The defaults an operator gets without any flag, as `portal serve --help` states them: the
values the issue asks for (sessions, sign-in throttling, teleTAN limits, display time)."""

from __future__ import annotations

import os
import re
import subprocess

from e2e_support import PORTAL_BIN

EXPECTED = {
    "--host": "127.0.0.1",
    "--port": "8080",
    "--database": "sqlite:portal.sqlite",
    "--pam-service": "teletan-portal",
    "--pam-threads": "16",
    "--pam-timeout": "20s",
    "--idle-timeout": "15m",
    "--session-lifetime": "8h",
    "--signin-failures-per-user": "5",
    "--signin-failures-per-address": "50",
    "--signin-window": "15m",
    "--signin-lockout": "15m",
    "--signin-failure-time": "1s",
    "--teletan-interval": "30s",
    "--teletans-per-user-per-day": "100",
    "--teletans-per-hour": "1000",
    "--daily-quota": "1000",
    "--daily-quota-minimum": "10",
    "--daily-quota-maximum": "20000",
    "--daily-quota-factor": "1.25",
    "--teletan-display-time": "10m",
    "--secret-file": "portal.secret",
    "--metrics-host": "127.0.0.1",
    "--metrics-port": "9464",
    "--time-zone": "Europe/Berlin",
    "--audit-checkpoint-key": "audit-checkpoint-key.pem",
    "--audit-checkpoint-interval": "1h",
    "--audit-full-check-interval": "1d",
    "--audit-retention": "400d",
    "--callback-numbers": "DE",
    "--shutdown-drain": "5s",
}


def help_defaults() -> dict[str, str]:
    # `--help` shows a PORTAL_* variable's value as the default: leave them all out.
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    text = subprocess.run([PORTAL_BIN, "serve", "--help"], capture_output=True, text=True, timeout=30, check=True,
                          env=environment).stdout
    defaults = {}
    # Each option's entry runs from its "--name <value>" line to the next option.
    for match in re.finditer(r"^\s+(--[a-z-]+)(?: <[^>]+>)?(.*?)(?=^\s+--[a-z]|\Z)", text, re.S | re.M):
        default = re.search(r"\(default:\s*([^)]*)\)", re.sub(r"\s+", " ", match.group(2)))
        if default:
            defaults[match.group(1)] = default.group(1).strip()
    return defaults


def test_serve_defaults_are_the_required_ones():
    defaults = help_defaults()
    assert {flag: defaults.get(flag) for flag in EXPECTED} == EXPECTED


def test_a_pam_timeout_out_of_range_stops_start_up_naming_the_flag(tmp_path):
    """--pam-timeout takes 1 s to 300 s: a wait of 0 would fail every sign-in, one of hours would
    let a hanging directory hold every sign-in for hours."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    for value in ("0s", "301s", "1h", "soon"):
        result = subprocess.run([PORTAL_BIN, "serve", "--pam-timeout", value, "--database", f"sqlite:{tmp_path / 'p.sqlite'}"],
                                capture_output=True, text=True, timeout=30, env=environment, cwd=tmp_path)
        assert result.returncode != 0, value
        assert "--pam-timeout" in result.stderr + result.stdout, (value, result.stderr)
    assert not (tmp_path / "p.sqlite").exists(), "start-up went on to the database"


def test_a_bad_full_check_interval_stops_start_up_naming_the_flag(tmp_path):
    """--audit-full-check-interval (issue 28, item 1): a value that is not a duration stops
    start-up naming the flag and its variable, before the database is opened."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    for value in ("0s", "daily", "400d"):
        result = subprocess.run([PORTAL_BIN, "serve", "--audit-full-check-interval", value, "--database", f"sqlite:{tmp_path / 'p.sqlite'}"],
                                capture_output=True, text=True, timeout=30, env=environment, cwd=tmp_path)
        assert result.returncode != 0, value
        output = result.stderr + result.stdout
        assert "--audit-full-check-interval (PORTAL_AUDIT_FULL_CHECK_INTERVAL): expected a duration" in output, (value, output)
    assert not (tmp_path / "p.sqlite").exists(), "start-up went on to the database"


def test_bad_callback_numbers_stop_start_up_naming_the_flag_and_the_entry(tmp_path):
    """--callback-numbers: a list the portal cannot read must not start a hotline that calls
    numbers no one meant to allow (or none at all)."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    for value, says in (("", "at least one entry"), ("DE,,AT", "empty entry"), ("XX", "unknown region 'XX'"),
                        ("AT:fixed-line+paid", "unknown number type 'paid'"), ("+999", "'+999'"), ("+49 30", "'+49 30'")):
        result = subprocess.run([PORTAL_BIN, "serve", "--callback-numbers", value, "--database", f"sqlite:{tmp_path / 'p.sqlite'}"],
                                capture_output=True, text=True, timeout=30, env=environment, cwd=tmp_path)
        output = result.stderr + result.stdout
        assert result.returncode != 0, value
        assert "--callback-numbers" in output and says in output, (value, output)
    assert not (tmp_path / "p.sqlite").exists(), "start-up went on to the database"


def test_a_daily_quota_setting_that_makes_no_sense_stops_start_up_and_check_config(tmp_path):
    """--daily-quota and its prediction's bounds and factor: a quota of nothing, bounds the wrong
    way round or a factor below 1 would refuse every teleTAN (or allow fewer than an ordinary
    day), so serve and check-config refuse them with the flag's name."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    cases = (
        (["--daily-quota", "0"], "--daily-quota (PORTAL_DAILY_QUOTA)"),
        (["--daily-quota", "many"], "--daily-quota (PORTAL_DAILY_QUOTA)"),
        (["--daily-quota-minimum", "-1"], "--daily-quota-minimum"),
        (["--daily-quota-minimum", "500", "--daily-quota-maximum", "100"], "is above --daily-quota-maximum"),
        (["--daily-quota-factor", "0.5"], "--daily-quota-factor"),
        (["--daily-quota-factor", "1.255"], "at most two decimals"),
        (["--daily-quota-factor", "11"], "--daily-quota-factor"),
    )
    for arguments, says in cases:
        for command in ("serve", "check-config"):
            result = subprocess.run([PORTAL_BIN, command, *arguments, "--database", f"sqlite:{tmp_path / 'p.sqlite'}"],
                                    capture_output=True, text=True, timeout=30, env=environment, cwd=tmp_path)
            output = result.stderr + result.stdout
            assert result.returncode != 0, (command, arguments)
            assert says in output, (command, arguments, output)
    assert not (tmp_path / "p.sqlite").exists(), "start-up went on to the database"


def test_check_config_reports_every_key_file_problem_at_once(tmp_path):
    """Issue 29, section 3: the verification server's key files (token key, client certificate
    and key, CA) are all reported in one run, not one per run."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PORTAL_")}
    missing = {
        "--verification-key": tmp_path / "keys/portal-key.pem",
        "--verification-client-certificate": tmp_path / "tls/portal-1.pem",
        "--verification-client-key": tmp_path / "tls/portal-1.key",
        "--verification-ca": tmp_path / "tls/verification-ca.pem",
    }
    arguments = ["--verification-server", "https://verification.example:8082"]
    for flag, path in missing.items():
        arguments += [flag, str(path)]
    result = subprocess.run([PORTAL_BIN, "check-config", *arguments, "--database", f"sqlite:{tmp_path / 'p.sqlite'}"],
                            capture_output=True, text=True, timeout=30, env=environment, cwd=tmp_path)
    assert result.returncode != 0, result
    problems = [line for line in result.stdout.splitlines() if line.startswith("problem: ")]
    for flag, path in missing.items():
        assert any(line.startswith(f"problem: {flag} ") and f"{path} does not exist" in line for line in problems), (flag, problems)


def test_verification_server_check_config_reports_every_file_problem_and_then_ok(tmp_path):
    """`verification-server check-config` (docs/deployment.md section 13): every unreadable file
    (trusted portal keys, the internal listener's certificate and key) in one run, a database
    without its tables, exit non-zero, nothing created; after `migrate` with good files, OK."""
    from e2e_support import VERIFICATION_BIN
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("PORTAL_", "VERIFICATION_"))}
    database = f"sqlite:{tmp_path / 'v.sqlite'}"
    files = {"--trusted-portal-key": tmp_path / "portals/a.pub.pem", "--internal-tls-certificate": tmp_path / "tls/server.pem",
             "--internal-tls-key": tmp_path / "tls/server.key"}
    arguments = ["--database", database, "--secret-file", str(tmp_path / "v.secret")]
    for flag, path in files.items():
        arguments += [flag, str(path)]

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([VERIFICATION_BIN, "check-config", *arguments, *extra], capture_output=True, text=True,
                              timeout=30, env=environment, cwd=tmp_path)

    result = check()
    assert result.returncode != 0, result
    problems = [line for line in result.stdout.splitlines() if line.startswith("problem: ")]
    for flag, path in files.items():
        assert any(line.startswith(f"problem: {flag} ") and f"{path} does not exist" in line for line in problems), (flag, problems)
    assert any("v.sqlite does not exist" in line and "verification-server migrate" in line for line in problems), problems
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)

    # Good files and a migrated database.
    (tmp_path / "portals").mkdir()
    (tmp_path / "tls").mkdir()
    subprocess.run([PORTAL_BIN, "keygen", "--out", str(tmp_path / "keys")], check=True, capture_output=True, timeout=30)
    (tmp_path / "keys/portal-key.pub.pem").rename(files["--trusted-portal-key"])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-keyout", str(files["--internal-tls-key"]), "-out", str(files["--internal-tls-certificate"])],
                   check=True, capture_output=True, timeout=30)
    migrated = subprocess.run([VERIFICATION_BIN, "migrate", "--database", database], capture_output=True, text=True,
                              timeout=60, env=environment, cwd=tmp_path)
    assert migrated.returncode == 0, migrated
    result = check()
    assert result.returncode == 0 and result.stdout.startswith("configuration OK"), result
    assert not (tmp_path / "v.secret").exists()  # created by serve, not by the check
