"""The deployment of docs/deployment.md sections 6 and 8, run for real: two portal instances on one
PostgreSQL database behind Debian's nginx with the shipped config (docs/deploy/nginx-teletan-portal.conf)
and error pages (docs/deploy/proxy-errors/), TLS with a certificate the test makes.

Run from the repository root, as root (the OATH users file of the PAM test stack):

    DEPLOY_DATABASE=postgres://teletan:teletan@127.0.0.1:5432/teletan_deploy \\
        SE_AVOID_STATS=true python3 -m pytest -q Tests/deploy

Environment:
    PORTAL_BIN         portal binary (default: .build/debug/portal of this repository)
    DEPLOY_DATABASE    a PostgreSQL database of the test's own: its schema is dropped and made
                       anew first (default: teletan_deploy on 127.0.0.1:5432)
    DEPLOY_PORT_BASE   nginx listens on this port, the instances on the next four (default 18200)

The instances use the two-step PAM service teletan-portal-otp-test (password, then an HOTP code)
and its account tt-otp, so every sign-in also checks the affinity nginx keeps for it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

from support import oath
from support.database import psql
from support.portal_client import Client, Response
from support.processes_and_browsers import ManagedProcess, PortalProcess

REPO = Path(__file__).resolve().parents[2]
PORTAL_BIN = os.environ.get("PORTAL_BIN", str(REPO / ".build" / "debug" / "portal"))
DATABASE = os.environ.get("DEPLOY_DATABASE", "postgres://teletan:teletan@127.0.0.1:5432/teletan_deploy")
PORT_BASE = int(os.environ.get("DEPLOY_PORT_BASE", "18200"))
NGINX_CONFIG = REPO / "docs" / "deploy" / "nginx-teletan-portal.conf"
ERROR_PAGES = REPO / "docs" / "deploy" / "proxy-errors"

PAM_SERVICE = "teletan-portal-otp-test"
USERNAME, PASSWORD = "tt-otp", "Otp-Pass-1"


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        raise pytest.UsageError("the deployment tests run as root (nginx, the OATH users file)")


class Instance(PortalProcess):
    """One `portal serve` behind nginx, on a fixed port pair of the test's range, with the default
    drain period after SIGTERM (5 s), as deployed."""

    shutdown_drain = None

    def __init__(self, workdir: Path, number: int, port: int, metrics_port: int, public_url: str, secret_file: Path):
        super().__init__(workdir, PORTAL_BIN, PAM_SERVICE, DATABASE, secret_file)
        self.name = f"portal-{number}"
        self.log_path = workdir / f"{self.name}.log"
        self.port, self.metrics_port = port, metrics_port
        self.base_url = f"http://127.0.0.1:{port}"
        self.public_url = public_url

    def settings(self) -> list[str]:
        return [
            "--public-url", self.public_url,
            "--trust-proxy",
            # One account issues from the browser and the request stream at once.
            "--teletan-interval", "0s",
            "--teletans-per-user-per-day", "100000",
            "--teletans-per-hour", "100000",
            "--daily-quota", "100000",
            "--signin-failures-per-address", "1000",
        ]

    def ready_status(self) -> int | None:
        try:
            return requests.get(self.base_url + "/health/ready", timeout=2).status_code
        except requests.RequestException:
            return None

    def live_status(self) -> int | None:
        try:
            return requests.get(self.base_url + "/health/live", timeout=2).status_code
        except requests.RequestException:
            return None


class Nginx(ManagedProcess):
    """Debian's nginx as a non-daemon child with its own prefix, pid file and logs, running the
    shipped site config with the test's values put in."""

    name = "nginx"

    def __init__(self, workdir: Path, port: int, upstreams: list[int], certificate: Path, key: Path, pages: Path):
        super().__init__(workdir)
        site = workdir / "teletan-portal.conf"
        site.write_text(self.site_config(port, upstreams, certificate, key, pages))
        self.config = workdir / "nginx.conf"
        self.config.write_text(f"""
worker_processes 1;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    log_format upstreams '$request_method $uri $status upstream=$upstream_addr upstream_status=$upstream_status';
    access_log {workdir}/access.log upstreams;
    client_body_temp_path {workdir}/client_body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    include {site};
}}
""")
        self.port = port
        self.certificate = certificate

    @staticmethod
    def site_config(port: int, upstreams: list[int], certificate: Path, key: Path, pages: Path) -> str:
        """The shipped file with the test's values; each replaced text must occur exactly as
        often as expected, so a changed config fails here instead of being tested half."""
        text = NGINX_CONFIG.read_text()

        def replace(old: str, new: str, count: int = 1) -> None:
            nonlocal text
            assert text.count(old) == count, f"{NGINX_CONFIG.name}: expected {old!r} {count} time(s)"
            text = text.replace(old, new)

        replace("server 127.0.0.1:8080 ", f"server 127.0.0.1:{upstreams[0]} ")
        replace("server 127.0.0.1:8081 ", f"server 127.0.0.1:{upstreams[1]} ")
        # The port-80 redirect and IPv6 are not needed here (and port 80 is not the test's).
        replace("    listen 80;\n", f"    listen 127.0.0.1:{port + 5};\n")
        replace("    listen [::]:80;\n", "")
        replace("    listen [::]:443 ssl http2;\n", "")
        replace("listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;")
        replace("server_name teletan.example.org;", "server_name localhost;", count=2)
        replace("/etc/letsencrypt/live/teletan.example.org/fullchain.pem", str(certificate))
        replace("/etc/letsencrypt/live/teletan.example.org/privkey.pem", str(key))
        replace("/usr/share/teletan-portal/proxy-errors/", f"{pages}/")
        return text

    def command(self) -> list[str]:
        return ["/usr/sbin/nginx", "-p", f"{self.workdir}/", "-c", str(self.config), "-e", f"{self.workdir}/error.log",
                "-g", f"daemon off; pid {self.workdir}/nginx.pid;"]

    def is_ready(self) -> bool:
        try:
            requests.get(f"https://localhost:{self.port}/health/live", verify=str(self.certificate), timeout=2)
            return True
        except requests.RequestException:
            return False

    def kill(self) -> None:
        """SIGTERM (nginx's fast shutdown): the master stops its workers too; a SIGKILL would
        leave them holding the port."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def access_log(self) -> list[str]:
        path = self.workdir / "access.log"
        return path.read_text().splitlines() if path.exists() else []


class Deployment:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.public_url = f"https://localhost:{PORT_BASE}"
        self.certificate = workdir / "tls" / "cert.pem"
        self.key = workdir / "tls" / "key.pem"
        secret = workdir / "portal.secret"
        self.instances = [
            Instance(self._directory(f"portal-{n}"), n, PORT_BASE + n, PORT_BASE + 2 + n, self.public_url, secret)
            for n in (1, 2)
        ]
        pages = self._directory("proxy-errors")
        for page in ERROR_PAGES.glob("*.html"):
            shutil.copy(page, pages / page.name)
            (pages / page.name).chmod(0o644)
        self._make_certificate()
        self.nginx = Nginx(self._directory("nginx"), PORT_BASE, [i.port for i in self.instances],
                           self.certificate, self.key, pages)

    def _directory(self, name: str) -> Path:
        path = self.workdir / name
        path.mkdir(mode=0o755)
        path.chmod(0o755)  # nginx's workers (nobody) read the error pages
        return path

    def _make_certificate(self) -> None:
        self.certificate.parent.mkdir(mode=0o700)
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(self.key), "-out", str(self.certificate), "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost"],
            check=True, capture_output=True)
        self.key.chmod(0o600)

    def client(self, language: str = "en") -> "Officer":
        return Officer(self.public_url, self.certificate, language)


def reset_database() -> None:
    psql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", DATABASE)


@pytest.fixture(scope="session")
def deployment():
    """nginx and two instances, running; whatever still runs at the end is stopped."""
    reset_database()
    workdir = Path(tempfile.mkdtemp(prefix="teletan-deploy-"))
    workdir.chmod(0o755)
    made = Deployment(workdir)
    try:
        for instance in made.instances:  # one after the other: the first runs the migrations
            instance.start()
        made.nginx.start()
        yield made
    finally:
        for process in [made.nginx, *made.instances]:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# An officer outside a browser (the request stream, the affinity check)


class Officer(Client):
    """One officer's HTTPS session through nginx (the shared client: cookies kept, redirects not
    followed), trusting the test's certificate."""

    def __init__(self, public_url: str, certificate: Path, language: str):
        super().__init__(public_url, language, cafile=certificate)

    def sign_in(self) -> None:
        """Both steps: password, then the one-time code (the second step must reach the
        instance holding the PAM transaction)."""
        with oath.code_lock():
            done = super().sign_in(USERNAME, PASSWORD, second_step=lambda: oath.next_code(USERNAME)[1])
        assert done.status == 303 and done.location == "/", done.describe()

    def issue(self) -> list[Response]:
        """GET /, POST /teletan, GET /teletan/result: the answers, stopping at an unexpected one
        (whatever it is: the stream test counts them)."""
        answers = [self.get("/")]
        if answers[-1].status != 200:
            return answers
        answers.append(self.post("/teletan", {"csrf": answers[-1].hidden("csrf"), "nonce": answers[-1].hidden("nonce")}))
        if answers[-1].status != 303:
            return answers
        answers.append(self.get("/teletan/result"))
        return answers


def wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"not within {timeout} s: {what}")


def terminate(instance: Instance) -> None:
    """SIGTERM (as `systemctl stop` sends it)."""
    instance.process.send_signal(signal.SIGTERM)
