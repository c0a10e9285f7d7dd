"""docs/deployment.md section 16 run as written: Patroni with etcd and a synchronous standby, two
portals on the cluster's URL (several hosts, target_session_attrs=read-write) behind the shipped
nginx file (Tests/deploy's Nginx), officers issuing through nginx all along. Then:

(a) the primary is killed with SIGKILL (Patroni and PostgreSQL: the machine is gone) under load;
    Patroni promotes the synchronous standby;
(b) the old primary's Patroni is started again and it comes back as a standby by itself, then
    `patronictl switchover` moves the primary back on purpose.

Each time: no answer is a 500 (the 503 page while no primary answers), officers issue again on
the new primary without a restart of the portals, and the seconds without issuing are printed
(docs/benchmarks.md, "PostgreSQL cluster: failover"). At the end: every teleTAN shown has its
audit entry and its rows on the cluster (nothing lost with the old primary), and
`portal audit verify --full` passes."""

from __future__ import annotations

import time

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cluster_support import GUIDE, REPO, Officers, wait_for
from faults_support import OFFICER, Client, Portal, bench_officer, check_nothing_half_written


def deploy_module():
    """Tests/deploy/conftest.py, for its Nginx (the shipped site file with the test's values)."""
    spec = importlib.util.spec_from_file_location("deploy_conftest", REPO / "Tests" / "deploy" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def behind_nginx(tmp_path: Path, portals: list[Portal], port: int):
    """nginx with the shipped site file, a certificate of the test's and the shipped error pages."""
    deploy = deploy_module()
    folder = Path(tempfile.mkdtemp(prefix="teletan-cluster-nginx-"))
    folder.chmod(0o755)  # nginx's workers (nobody) read the error pages (tmp_path is the owner's only)
    pages = folder / "proxy-errors"
    pages.mkdir(mode=0o755)
    for page in deploy.ERROR_PAGES.glob("*.html"):
        shutil.copy(page, pages / page.name)
        (pages / page.name).chmod(0o644)
    certificate, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(certificate), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    workdir = tmp_path / "nginx"
    workdir.mkdir(mode=0o755)
    nginx = deploy.Nginx(workdir, port, [portal.port for portal in portals], certificate, key, pages)
    return nginx, certificate, folder

FAILOVER_LIMIT = 60.0
# nginx listens here and on the port 5 above (the shipped file's port-80 redirect); Tests/deploy uses 18200.
NGINX_PORT = int(os.environ.get("CLUSTER_NGINX_PORT", "18300"))


def guide_section() -> str:
    text = GUIDE.read_text()
    return text[text.index("## 16. A PostgreSQL cluster"):]


def in_guide(command: str) -> None:
    assert command in guide_section(), f"not in docs/deployment.md section 16 as run: {command}"


def check_no_500(officers: Officers, what: str) -> None:
    statuses = sorted({status for _, status, _ in officers.attempts})
    assert all(status in (200, 503) for status in statuses), f"answers other than 200 and 503 {what}: {statuses}"


def test_failover_and_switchover_lose_nothing_shown(cluster, tmp_path):
    in_guide("CREATE ROLE teletan LOGIN PASSWORD")
    cluster.psql("CREATE ROLE teletan LOGIN PASSWORD 'teletan'")
    in_guide("CREATE DATABASE teletan OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
    cluster.psql("CREATE DATABASE teletan OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
    url = cluster.url("teletan")
    in_guide("?target_session_attrs=read-write")

    nginx_port = NGINX_PORT
    public_url = f"https://localhost:{nginx_port}"
    portals = []
    for number in (1, 2):
        workdir = tmp_path / f"portal-{number}"
        workdir.mkdir()
        portal = Portal(workdir, database=url, extra_arguments=["--public-url", public_url, "--trust-proxy"])
        if portals:  # instances share the secret and the checkpoint key, as an operator's do
            portal.secret_file, portal.checkpoint_key = portals[0].secret_file, portals[0].checkpoint_key
        portal.start()
        portals.append(portal)
    nginx, certificate, nginx_files = behind_nginx(tmp_path, portals, nginx_port)
    nginx.start()

    def client(language: str = "en") -> Client:
        return Client(public_url, language, cafile=certificate)

    clients = [client().signed_in(*OFFICER), client().signed_in(*bench_officer(20)),
               client("de").signed_in(*bench_officer(21)), client().signed_in(*bench_officer(22))]
    officers = Officers(clients)
    officers.start()
    try:
        wait_for(lambda: len(officers.shown()) >= 8, 30, "officers issuing")
        first, second = cluster.nodes
        assert cluster.primary() is first

        # (a) SIGKILL of the primary under load.
        killed_at = time.monotonic()
        first.kill()
        wait_for(second.is_primary, FAILOVER_LIMIT, f"{second.name} promoted:\n{second.log_tail()}")
        wait_for(lambda: officers.issued_after(time.monotonic() - 0.5) and officers.issued_after(killed_at + 0.1),
                 FAILOVER_LIMIT, "officers issuing on the new primary")
        time.sleep(2)
        without_primary = officers.seconds_without_issuing(killed_at)
        print(f"\n(a) SIGKILL of the primary: {without_primary:.1f} s without issuing")
        check_no_500(officers, "during the failover")

        # (b) The old primary back as a standby, then a switchover on purpose.
        in_guide("systemctl start patroni")
        first.start()
        wait_for(first.is_sync_standby, 120, f"{first.name} back as the synchronous standby:\n{first.log_tail()}")
        in_guide("patronictl -c /etc/patroni/config.yml list")
        listing = cluster.patronictl(second, "list")
        assert "Sync Standby" in listing.stdout, listing.stdout
        in_guide("patronictl -c /etc/patroni/config.yml switchover --leader pg2 --candidate pg1 --force")
        switched_at = time.monotonic()
        cluster.patronictl(second, "switchover", "--leader", second.name, "--candidate", first.name, "--force")
        wait_for(first.is_primary, FAILOVER_LIMIT, f"{first.name} the primary again:\n{first.log_tail()}")
        wait_for(lambda: officers.issued_after(time.monotonic() - 0.5), FAILOVER_LIMIT, "officers issuing after the switchover")
        time.sleep(2)
        switchover = officers.seconds_without_issuing(switched_at)
        print(f"(b) switchover: {switchover:.1f} s without issuing")
        check_no_500(officers, "during the switchover")
    finally:
        officers.stop()
        nginx.kill()
        shutil.rmtree(nginx_files, ignore_errors=True)

    assert not officers.errors, f"requests that got no answer: {officers.errors}"
    check_no_500(officers, "at all")
    shown = officers.shown()
    assert len(shown) >= 20, f"only {len(shown)} teleTANs shown"
    for portal in portals:
        portal.stop_cleanly()
    counts = check_nothing_half_written(portals[0], shown)
    print(f"teleTANs shown: {len(shown)}; {counts}")
