"""etcd and two Patroni nodes on 127.0.0.1 (free ports, a temporary folder each), made from
docs/deploy/patroni.yml as shipped; officers issuing in threads while a node fails."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from support.processes_and_browsers import free_ports

REPO = Path(__file__).resolve().parents[2]
PATRONI_TEMPLATE = REPO / "docs" / "deploy" / "patroni.yml"
GUIDE = REPO / "docs" / "deployment.md"
SUPERUSER_PASSWORD = "CHANGE-superuser-password"


def as_postgres(*command, timeout: float = 60, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(["runuser", "-u", "postgres", "--", *map(str, command)], cwd="/", capture_output=True,
                            text=True, timeout=timeout, env={**os.environ, **(env or {})})
    assert not check or result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result


class Node:
    """One Patroni node (and its PostgreSQL), as user postgres."""

    def __init__(self, name: str, directory: Path, etcd: str):
        self.name = name
        self.directory = directory
        self.pg_port, self.rest_port = free_ports(2)
        self.config = directory / "patroni.yml"
        self.log = directory / "patroni.log"
        self.process: subprocess.Popen | None = None
        text = PATRONI_TEMPLATE.read_text()
        for old, new in [("name: pg1", f"name: {name}"), ("127.0.0.1:8008", f"127.0.0.1:{self.rest_port}"),
                         ("127.0.0.1:2379", etcd), ("127.0.0.1:5432", f"127.0.0.1:{self.pg_port}"),
                         ("/var/lib/postgresql/15/teletan", str(directory / "data")),
                         ("/var/lib/postgresql/patroni.pgpass", str(directory / "pgpass")),
                         ("/var/run/postgresql", str(directory))]:
            assert old in text, f"{old} is not in {PATRONI_TEMPLATE}"
            text = text.replace(old, new)
        self.config.write_text(text)
        shutil.chown(self.config, "postgres", "postgres")

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(["runuser", "-u", "postgres", "--", "patroni", str(self.config)], cwd="/",
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def rest(self, path: str) -> int | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.rest_port}{path}", timeout=2) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return None

    def status(self) -> dict:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.rest_port}/patroni", timeout=2) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return json.loads(error.read() or b"{}")
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
            return {}

    def is_primary(self) -> bool:
        return self.rest("/primary") == 200

    def is_sync_standby(self) -> bool:
        return self.rest("/sync") == 200

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.directory / "data" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill(self) -> None:
        """SIGKILL to Patroni and to PostgreSQL with every one of its processes: the machine is gone."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        postmaster = self.postmaster_pid()
        if postmaster:
            children = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == postmaster]
            for pid in [postmaster, *children]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:]) if self.log.exists() else ""


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class Cluster:
    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="teletan-cluster-"))
        os.chmod(self.directory, 0o755)
        client, peer = free_ports(2)
        self.etcd_url = f"127.0.0.1:{client}"
        self.etcd_log = self.directory / "etcd.log"
        self.etcd_command = ["etcd", "--name", "e1", "--data-dir", str(self.directory / "etcd"),
                             "--listen-client-urls", f"http://127.0.0.1:{client}",
                             "--advertise-client-urls", f"http://127.0.0.1:{client}",
                             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                             "--initial-cluster", f"e1=http://127.0.0.1:{peer}"]
        self.etcd: subprocess.Popen | None = None
        self.nodes = []
        for name in ("pg1", "pg2"):
            folder = self.directory / name
            folder.mkdir()
            shutil.chown(folder, "postgres", "postgres")
            os.chmod(folder, 0o700)
            self.nodes.append(Node(name, folder, self.etcd_url))

    def start(self) -> None:
        with open(self.etcd_log, "ab") as log:
            self.etcd = subprocess.Popen(self.etcd_command, cwd=self.directory, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: _answers(f"http://{self.etcd_url}/health"), 30, "etcd")
        first, second = self.nodes
        first.start()
        wait_for(first.is_primary, 90, f"{first.name} the primary:\n{first.log_tail()}")
        second.start()
        wait_for(second.is_sync_standby, 90, f"{second.name} the synchronous standby:\n{second.log_tail()}")

    def primary(self) -> Node | None:
        found = [node for node in self.nodes if node.is_primary()]
        return found[0] if len(found) == 1 else None

    def url(self, database: str) -> str:
        hosts = ",".join(f"127.0.0.1:{node.pg_port}" for node in self.nodes)
        return f"postgres://teletan:teletan@{hosts}/{database}?target_session_attrs=read-write"

    def psql(self, sql: str, database: str = "postgres") -> str:
        hosts = ",".join("127.0.0.1" for _ in self.nodes)
        ports = ",".join(str(node.pg_port) for node in self.nodes)
        result = as_postgres("psql", "-X", "-Atc", sql, "-h", hosts, "-p", ports, "-U", "postgres", "-d", database,
                             env={"PGPASSWORD": SUPERUSER_PASSWORD, "PGTARGETSESSIONATTRS": "read-write"})
        return result.stdout.strip()

    def patronictl(self, node: Node, *arguments: str) -> subprocess.CompletedProcess:
        return as_postgres("patronictl", "-c", node.config, *arguments, timeout=120)

    def remove(self) -> None:
        for node in self.nodes:
            node.kill()
        if self.etcd and self.etcd.poll() is None:
            os.killpg(self.etcd.pid, signal.SIGKILL)
            self.etcd.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def wait_for(condition, timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")


@dataclass
class Officers:
    """Officers issuing on every portal, each in a thread, as fast as the portal answers. Records
    each attempt's time, final status and teleTAN shown."""

    clients: list
    attempts: list[tuple[float, int, str | None]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        for client in self.clients:
            thread = threading.Thread(target=self._issue, args=(client,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _issue(self, client) -> None:
        while not self._stop.is_set():
            try:
                issued = client.issue()
                record = (time.monotonic(), issued.last.status, issued.teletan)
            except Exception as error:  # noqa: BLE001 (a broken connection is a finding, not a crash)
                record = (time.monotonic(), 0, None)
                with self._lock:
                    self.errors.append(type(error).__name__)
            with self._lock:
                self.attempts.append(record)
            if record[1] != 200:
                time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def since(self, start: float) -> list[tuple[float, int, str | None]]:
        with self._lock:
            return [a for a in self.attempts if a[0] >= start]

    def shown(self) -> list[str]:
        with self._lock:
            return [a[2] for a in self.attempts if a[2]]

    def issued_after(self, start: float) -> bool:
        return any(teletan for _, _, teletan in self.since(start))

    def seconds_without_issuing(self, start: float) -> float:
        """From `start` (the fault) to the first teleTAN shown after the first refusal since it."""
        attempts = self.since(start)
        refused = [t for t, status, teletan in attempts if not teletan]
        if not refused:
            return 0.0
        after = [t for t, _, teletan in attempts if teletan and t > refused[0]]
        return (after[0] if after else time.monotonic()) - start
