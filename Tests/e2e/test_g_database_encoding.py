"""(g) A PostgreSQL database that is not UTF8 is refused at start-up with a clear message: the
audit chain's hashes are computed by PostgreSQL over UTF-8 text. Runs in the PostgreSQL pass
(E2E_DATABASE), as root (it creates a scratch database as the postgres superuser)."""

from __future__ import annotations

import os
import subprocess
from urllib.parse import urlsplit

import pytest

from e2e_support import E2E_DATABASE, PORTAL_BIN, VERIFICATION_BIN

pytestmark = pytest.mark.skipif(not (E2E_DATABASE and os.geteuid() == 0),
                                reason="needs E2E_DATABASE (PostgreSQL) and root")


def _postgres(*arguments: str) -> None:
    subprocess.run(["runuser", "-u", "postgres", "--", *arguments], check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize("binary", [PORTAL_BIN, VERIFICATION_BIN])
def test_a_database_that_is_not_utf8_is_refused(binary):
    url = urlsplit(E2E_DATABASE)
    name = "teletan_e2e_sql_ascii"
    _postgres("dropdb", "--if-exists", name)
    _postgres("createdb", "-E", "SQL_ASCII", "-T", "template0", "-O", url.username, name)
    try:
        result = subprocess.run([binary, "migrate", "--database", url._replace(path=f"/{name}").geturl()],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode != 0
        assert "must use the UTF8 encoding (it uses SQL_ASCII)" in result.stderr, result.stderr
        assert f":{url.password}@" not in result.stderr, "the connection string (with its password) is not printed"
    finally:
        _postgres("dropdb", "--if-exists", name)
