"""The portal binary carries its pages and static files: copied alone into a bin directory, as
docs/deployment.md installs it, and started from an empty directory with no flag but the ports
and the PAM service, it serves styled pages and an officer signs in."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import DEFAULT_PAM_SERVICE, PORTAL_BIN
from support.processes_and_browsers import ManagedProcess, free_ports
from test_portal_browser import OFFICER, assert_no_error_page, path_of, sign_in, signed_in_user


class InstalledPortal(ManagedProcess):
    """`portal serve` from a copy of the binary, in an empty working directory; its log beside."""

    name = "installed-portal"

    def __init__(self, binary: Path, rundir: Path, logdir: Path):
        super().__init__(logdir, cwd=rundir)
        self.binary = binary
        self.port, self.metrics_port = free_ports(2)
        self.base_url = f"http://127.0.0.1:{self.port}"
        # The default database and secret file: portal.sqlite and portal.secret in the working directory.
        self.database = f"sqlite:{rundir / 'portal.sqlite'}"

    def command(self) -> list[str]:
        return [str(self.binary), "serve", "--port", str(self.port), "--metrics-port", str(self.metrics_port),
                "--pam-service", DEFAULT_PAM_SERVICE]

    def is_ready(self) -> bool:
        return self.answers_ready(self.base_url)


def test_installed_binary_runs_from_an_empty_directory(browser, secrets_ledger, tmp_path):
    bin_dir, rundir, logdir = tmp_path / "bin", tmp_path / "run", tmp_path / "log"
    for directory in (bin_dir, rundir, logdir):
        directory.mkdir()
    binary = bin_dir / "portal"
    shutil.copy2(PORTAL_BIN, binary)
    assert list(rundir.iterdir()) == []
    portal = InstalledPortal(binary, rundir, logdir)
    secrets_ledger.watch(portal, portal.database, log_marker=b"[PortalWeb] request")
    portal.start()
    try:
        with urllib.request.urlopen(portal.base_url + "/css/portal.css", timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/css")
            assert b".teletan" in response.read()
        sign_in(browser, portal, secrets_ledger, *OFFICER)
        assert path_of(browser) == "/"
        assert_no_error_page(browser)
        assert signed_in_user(browser) == OFFICER[0]
        assert browser.find_element(By.ID, "issue-teletan").is_displayed()
        # The stylesheet applied: the skip link is moved out of sight, as portal.css says.
        skip = browser.find_element(By.CSS_SELECTOR, "a.skip-link")
        assert skip.location["x"] < 0
    finally:
        portal.stop_cleanly()
    # Nothing was needed from the working directory but room for the database, the secret and
    # the checkpoint key pair, which the portal made itself (the private key for its user only).
    made = {p.name for p in rundir.iterdir()}
    assert made <= {"portal.sqlite", "portal.sqlite-wal", "portal.sqlite-shm", "portal.secret",
                    "audit-checkpoint-key.pem", "audit-checkpoint-key.pub.pem"}, made
    assert {"audit-checkpoint-key.pem", "audit-checkpoint-key.pub.pem"} <= made
    assert (rundir / "audit-checkpoint-key.pem").stat().st_mode & 0o777 == 0o600


def test_checkpoint_key_made_as_deployment_md_says_signs_what_openssl_accepts(tmp_path):
    """A key pair made with openssl (an authority's own tooling; docs/deployment.md section 2 makes
    it with `portal secret init`): the portal signs checkpoints with it, and openssl checks them
    with the public key alone."""
    key, public = tmp_path / "audit-checkpoint-key.pem", tmp_path / "audit-checkpoint-key.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)],
                   check=True, capture_output=True, timeout=30)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(public)], check=True, capture_output=True, timeout=30)
    database = f"sqlite:{tmp_path / 'portal.sqlite'}"
    environment = {**os.environ, "PORTAL_AUDIT_CHECKPOINT_KEY": str(key), "PORTAL_DATABASE": database}
    subprocess.run([PORTAL_BIN, "migrate"], check=True, capture_output=True, timeout=60, env=environment)
    signed = subprocess.run([PORTAL_BIN, "audit", "checkpoint", "--sign"], capture_output=True, text=True, timeout=60, env=environment)
    assert signed.returncode == 0, signed.stderr
    printed = subprocess.run([PORTAL_BIN, "audit", "checkpoint"], capture_output=True, text=True, timeout=60, env=environment)
    assert printed.stdout == signed.stdout
    lines = printed.stdout.splitlines(keepends=True)
    assert lines[0] == "teletan-portal audit checkpoint\n" and lines[5] == "\n" and lines[6].startswith("signature ")
    (tmp_path / "body.txt").write_text("".join(lines[:5]))
    (tmp_path / "sig.der").write_bytes(base64.b64decode(lines[6].split()[1]))
    check = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(public), "-signature", str(tmp_path / "sig.der"),
                            str(tmp_path / "body.txt")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0 and "Verified OK" in check.stdout, check.stdout + check.stderr
    # Another key's signature is not accepted.
    other = tmp_path / "other.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(other)],
                   check=True, capture_output=True, timeout=30)
    subprocess.run(["openssl", "pkey", "-in", str(other), "-pubout", "-out", str(tmp_path / "other.pub.pem")],
                   check=True, capture_output=True, timeout=30)
    wrong = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(tmp_path / "other.pub.pem"), "-signature",
                            str(tmp_path / "sig.der"), str(tmp_path / "body.txt")], capture_output=True, text=True, timeout=30)
    assert wrong.returncode != 0
    verified = subprocess.run([PORTAL_BIN, "audit", "verify", "--full"], capture_output=True, text=True, timeout=60, env=environment)
    assert verified.returncode == 0 and "intact" in verified.stdout, verified.stdout + verified.stderr
