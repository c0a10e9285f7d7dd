"""Helpers of the directory tests (Tests/directory): portals that sign people in through the test
directory (slapd) by either route, nslcd (PAM service teletan-portal-ldap-test) or SSSD
(teletan-portal-sss-test); the directory's accounts; switching NSS between the routes; stopping
and starting slapd; changing group memberships in the directory; reading the portal's audit
trail, metrics and log.

The stack is scripts/install-directory-stack.sh (docs/pam/README.md, "Directory accounts"); the
plain HTTP client is the one of every suite (Tests/support/portal_client.py).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import time
import urllib.request
from pathlib import Path

from support.database import DatabaseAccess
from support.portal_client import Client, Response, wait_until  # noqa: F401
from support.processes_and_browsers import PortalProcess

REPO = Path(__file__).resolve().parents[2]

PORTAL_BIN = os.environ.get("PORTAL_BIN") or str(REPO / ".build" / "debug" / "portal")
INSTALL_SCRIPT = REPO / "scripts" / "install-directory-stack.sh"

# Route -> PAM service (docs/pam/teletan-portal-ldap-test, docs/pam/teletan-portal-sss-test).
ROUTES = {"ldap": "teletan-portal-ldap-test", "sss": "teletan-portal-sss-test"}
DOMAIN = "example.org"  # SSSD's domain: ldap-alice@example.org
BASE = "dc=example,dc=org"
ADMIN_DN = f"cn=admin,{BASE}"
ADMIN_PASSWORD = "Directory-Admin-1"  # the test directory's administrator (install-directory-stack.sh)

# The directory's role groups (docs/pam/directory.ldif): not the local teletan-* groups.
ROLE_GROUP_ARGUMENTS = ["--officer-group", "dir-teletan-officer", "--hotline-group", "dir-teletan-hotline",
                        "--event-group", "dir-teletan-event", "--admin-group", "dir-teletan-admin"]
FAILURES_PER_USER = 3
TELETAN_INTERVAL = 30  # the default: one teleTAN per user per 30 s

# docs/pam/directory.ldif
PASSWORDS = {
    "ldap-officer": "Ldap-Officer-1",
    "ldap-hotline": "Ldap-Hotline-1",
    "ldap-event": "Ldap-Event-1",
    "ldap-admin": "Ldap-Admin-1",
    "ldap-norole": "Ldap-Norole-1",
    "ldap-expired": "Ldap-Expired-1",
    "ldap-locked": "Ldap-Locked-1",
    "ldap-pwexpired": "Ldap-Pwexpired-1",
    "Ldap-Mixed": "Ldap-Mixed-1",
    "ldap-umlaut": "Grüße-Pass-1",
    "ldap-alice": "Ldap-Alice-1",
    "ldap-rolechange": "Ldap-Rolechange-1",
    "ldap-bob": "Ldap-Bob-1",
}

# The sign-in page's messages (Sources/SignIn/SignInStrings.swift).
ACCOUNT_REFUSED = {"en": "Your account cannot sign in right now", "de": "Ihr Konto kann sich gerade nicht anmelden"}
SIGN_IN_FAILED = {"en": "Sign-in failed. Check your username and password",
                  "de": "Anmeldung fehlgeschlagen. Prüfen Sie Benutzername und Passwort"}
SIGN_IN_UNAVAILABLE = {"en": "Sign-in is unavailable right now.", "de": "Die Anmeldung ist gerade nicht verfügbar."}


def password(name: str) -> str:
    """The password of a directory account, whatever spelling of its name."""
    bare = name.split("@")[0].split("\\")[-1]
    for account, secret in PASSWORDS.items():
        if account.lower() == bare.lower():
            return secret
    raise KeyError(name)


def canonical(name: str) -> str:
    """The account's own name as NSS gives it (getpwnam's pw_name), which the portal must use."""
    return pwd.getpwnam(name).pw_name


# ---------------------------------------------------------------------------------------------
# The stack


def reset_stack() -> None:
    """scripts/install-directory-stack.sh: the directory as in directory.ldif, nslcd and sssd
    restarted with empty caches, NSS on the SSSD route."""
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"install-directory-stack.sh failed:\n{result.stdout}\n{result.stderr}"


def use_nss(route: str) -> None:
    """passwd, group and shadow: files, then this route's NSS module (sss or ldap)."""
    subprocess.run(["bash", str(INSTALL_SCRIPT), "nss", route], check=True, timeout=30)


def sssd_go_online() -> None:
    """SIGUSR2 to sssd: back online at once if an earlier outage left it offline (sssd(8))."""
    pid = int(Path("/var/run/sssd.pid").read_text().strip())
    os.kill(pid, 12)


class Slapd:
    """The test directory's server, started as install-directory-stack.sh starts it."""

    PIDFILE = Path("/var/run/slapd/slapd.pid")
    COMMAND = ["/usr/sbin/slapd", "-h", "ldap://127.0.0.1:389/ ldapi:///", "-g", "openldap", "-u", "openldap",
               "-F", "/etc/ldap/slapd.d"]

    @classmethod
    def pid(cls) -> int | None:
        try:
            pid = int(cls.PIDFILE.read_text().strip())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    @classmethod
    def stop(cls) -> None:
        pid = cls.pid()
        assert pid, "slapd is not running"
        os.kill(pid, 15)
        wait_until(lambda: cls.pid() is None, 10, what="slapd stopped")

    @classmethod
    def start(cls) -> None:
        if cls.pid():
            return
        Path("/var/run/slapd").mkdir(exist_ok=True)
        subprocess.run(cls.COMMAND, check=True, timeout=30)
        wait_until(lambda: subprocess.run(["ldapsearch", "-x", "-H", "ldap://127.0.0.1/", "-b", "", "-s", "base"],
                                          capture_output=True).returncode == 0, 30, interval=0.2, what="slapd answering")


def ldap_modify(ldif: str) -> None:
    """ldapmodify as the directory's administrator."""
    result = subprocess.run(["ldapmodify", "-x", "-H", "ldap://127.0.0.1/", "-D", ADMIN_DN, "-w", ADMIN_PASSWORD],
                            input=ldif, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, f"ldapmodify failed: {result.stderr}"


def set_group_member(group: str, uid: str, member: bool) -> None:
    change = "add" if member else "delete"
    ldap_modify(f"dn: cn={group},ou=groups,{BASE}\nchangetype: modify\n{change}: memberUid\nmemberUid: {uid}\n")


# ---------------------------------------------------------------------------------------------
# The portal


class DirectoryPortal(PortalProcess):
    """`portal serve` on a SQLite file of its own, signing in through `route`'s PAM service, with
    the directory's role groups, a lock after FAILURES_PER_USER wrong passwords per name (the
    address lock out of the way) and the default 30-second interval between two teleTANs."""

    def __init__(self, workdir: Path, route: str):
        super().__init__(workdir, PORTAL_BIN, ROUTES[route])
        self.route = route

    def settings(self) -> list[str]:
        return [*ROLE_GROUP_ARGUMENTS,
                "--signin-failures-per-user", str(FAILURES_PER_USER),
                "--signin-failures-per-address", "10000",
                "--teletan-interval", f"{TELETAN_INTERVAL}s"]

    def client(self, language: str = "en") -> Client:
        return Client(self.base_url, language)

    def signed_in(self, name: str, language: str = "en") -> Client:
        client = self.client(language)
        answer = client.sign_in(name, password(name))
        assert answer.status == 303, f"{name} through {self.route}: {answer.describe()}"
        return client

    def db(self) -> DatabaseAccess:
        return DatabaseAccess(self.database)

    def sign_ins(self, after: int = 0) -> list[tuple[int, str, str, dict]]:
        """The audit trail's sign-in entries after sequence number `after`: (seq, actor, outcome, details)."""
        rows = self.db().rows(f"SELECT seq, actor, outcome, details FROM audit_log WHERE action = 'signin' "
                              f"AND seq > {int(after)} ORDER BY seq")
        return [(seq, actor, outcome, json.loads(details or "{}")) for seq, actor, outcome, details in rows]

    def last_seq(self) -> int:
        return self.db().scalar("SELECT COALESCE(MAX(seq), 0) FROM audit_log")

    def metric(self, name: str, **labels: str) -> float:
        """One sample of the metrics listener's GET /metrics (0 when absent)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=30) as response:
            text = response.read().decode()
        wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
        for line in text.splitlines():
            match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? ([0-9.e+-]+)", line.strip())
            if match and match.group(1) == name and ",".join(sorted((match.group(2) or "").split(","))) == wanted:
                return float(match.group(3))
        return 0.0

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_since(self, offset: int) -> str:
        return self.log_path.read_bytes()[offset:].decode(errors="replace")


def recent_rows(client: Client) -> list[str]:
    """The row ids of "My recent teleTANs" (/teletan/recent)."""
    page = client.get("/teletan/recent")
    assert page.status == 200, page.describe()
    return re.findall(r'<tr id="teletan-([0-9a-f-]{36})"', page.body)


def issue_refused_by_interval(client: Client) -> Response:
    """Presses "Issue teleTAN" and expects the interval's refusal (429, no teleTAN)."""
    issued = client.issue()
    last = issued.last
    assert issued.teletan is None, f"a second teleTAN within {TELETAN_INTERVAL} s: {last.describe()}"
    assert last.status == 429 and last.path == "/teletan", last.describe()
    return last
