"""The portal binary carries its pages and static files: copied alone into a bin directory, as
docs/deployment.md installs it, and started from an empty directory with no flag but the ports
and the PAM service, it serves styled pages and an officer signs in."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import DEFAULT_PAM_SERVICE, PORTAL_BIN
from processes_and_browsers import ManagedProcess, free_ports
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
    # Nothing was needed from the working directory but room for the database and the secret.
    assert {p.name for p in rundir.iterdir()} <= {"portal.sqlite", "portal.sqlite-wal", "portal.sqlite-shm", "portal.secret"}
