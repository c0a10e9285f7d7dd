"""The portal keeps its memory to itself (issue 19): it makes itself non-dumpable at start, so the
kernel writes no core file with the passwords, teleTANs and the server secret in it, and no other
process of its user may read its memory. The portal runs as `nobody` here, as a packaged portal
runs as its own user: a dumpable process's /proc files belong to that user, a non-dumpable one's
to root."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from faults_support import PAM_SERVICE, PORTAL_BIN
from support.processes_and_browsers import PortalProcess


class PortalAsNobody(PortalProcess):
    def command(self) -> list[str]:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *super().command()]


def test_the_portal_is_not_dumpable():
    workdir = Path(tempfile.mkdtemp(prefix="portal-nobody-"))
    try:
        os.chmod(workdir, 0o755)
        os.chown(workdir, 65534, 65534)
        portal = PortalAsNobody(workdir, PORTAL_BIN, PAM_SERVICE)
        portal.start()
        try:
            pid = portal.process.pid
            status = Path(f"/proc/{pid}/status").read_text()
            uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert uid_line.split()[1] == "65534", f"the portal does not run as nobody: {uid_line}"
            # A dumpable process's /proc/PID/mem belongs to its user; a non-dumpable one's to root.
            owner = os.stat(f"/proc/{pid}/mem").st_uid
            assert owner == 0, f"/proc/{pid}/mem belongs to uid {owner}: the portal is dumpable"
        finally:
            portal.stop_cleanly()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
