"""The PostgreSQL URL's sslmode and sslrootcert mean what they mean to libpq (docs/configuration.md,
"Database URL"): against a cluster set up like Debian's default one (TLS on, a self-signed
"snakeoil" certificate for the host's name), `portal migrate --status` connects exactly when psql
connects with the same URL, psql being the oracle. The cluster accepts role teletan over TLS only
(hostssl), so a connection shows that TLS was used. A missing system trust store (no
/etc/ssl/certs: the package ca-certificates) is named."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from faults_support import PORTAL_BIN, PostgresCluster


def make_certificate(directory, name: str, host: str) -> tuple[str, str]:
    """A self-signed certificate for `host`, as Debian's make-ssl-cert makes the snakeoil one."""
    certificate, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={host}",
                    "-addext", f"subjectAltName=DNS:{host}", "-keyout", str(key), "-out", str(certificate)],
                   check=True, capture_output=True, timeout=60)
    for path in (certificate, key):
        shutil.chown(path, "postgres", "postgres")
    os.chmod(key, 0o600)
    os.chmod(certificate, 0o644)
    return str(certificate), str(key)


@pytest.fixture(scope="module")
def tls_cluster():
    cluster = PostgresCluster()
    try:
        snakeoil, key = make_certificate(cluster.directory, "snakeoil", "localhost")
        other, _ = make_certificate(cluster.directory, "other-ca", "localhost")
        (cluster.data / "pg_hba.conf").write_text(
            "local all postgres trust\n"
            "host all postgres 127.0.0.1/32 trust\n"
            "hostssl all teletan 127.0.0.1/32 trust\n"
            "hostnossl all teletan 127.0.0.1/32 reject\n")
        cluster.start(f"-c ssl=on -c ssl_cert_file={snakeoil} -c ssl_key_file={key}")
        cluster.psql("CREATE ROLE teletan LOGIN")
        cluster.psql("CREATE DATABASE teletan_tls OWNER teletan ENCODING 'UTF8' TEMPLATE template0")
        yield cluster, snakeoil, other
    finally:
        cluster.remove()


def connect(command: list[str], prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("PORTAL_", "PG"))}
    return subprocess.run([*(prefix or []), *command], capture_output=True, text=True, timeout=60, cwd="/",
                          env={**clean, "HOME": "/nonexistent"})


QUERIES = [
    ("127.0.0.1", "", True),  # libpq's default, prefer: Debian's cluster with the guide's URL
    ("127.0.0.1", "?sslmode=disable", False),  # no TLS: refused by hostssl
    ("127.0.0.1", "?sslmode=allow", True),
    ("127.0.0.1", "?sslmode=prefer", True),
    ("127.0.0.1", "?sslmode=require", True),  # TLS, the certificate unchecked
    ("127.0.0.1", "?sslmode=require&sslrootcert={snakeoil}", True),  # checked as verify-ca
    ("127.0.0.1", "?sslmode=require&sslrootcert={other}", False),
    ("127.0.0.1", "?sslmode=verify-ca&sslrootcert={snakeoil}", True),
    ("127.0.0.1", "?sslmode=verify-ca&sslrootcert={other}", False),
    ("127.0.0.1", "?sslmode=verify-full&sslrootcert={snakeoil}", False),  # the name is localhost
    ("localhost", "?sslmode=verify-full&sslrootcert={snakeoil}", True),
    ("localhost", "?sslmode=verify-full", False),  # not in the system's trust store
]


@pytest.mark.parametrize(("host", "query", "connects"), QUERIES)
def test_every_sslmode_connects_exactly_when_psql_does(tls_cluster, host, query, connects):
    cluster, snakeoil, other = tls_cluster
    url = f"postgres://teletan@{host}:{cluster.port}/teletan_tls" + query.format(snakeoil=snakeoil, other=other)
    oracle = connect(["psql", "-X", "-Atc", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", url])
    assert (oracle.returncode == 0) == connects, f"psql, the oracle, on {url}: {oracle.stdout}{oracle.stderr}"
    if connects:
        assert oracle.stdout.strip() == "t"
    portal = connect([PORTAL_BIN, "migrate", "--status", "--database", url])
    assert (portal.returncode == 0) == connects, f"portal on {url}: {portal.stdout}{portal.stderr}"


def test_a_missing_trust_store_is_named(tls_cluster):
    """No /etc/ssl/certs (an empty tmpfs over /etc/ssl, in a mount namespace of its own), as on a
    machine without ca-certificates: verify-full names the trust store; require, which checks
    no certificate, still connects."""
    cluster, _, _ = tls_cluster
    url = f"postgres://teletan@localhost:{cluster.port}/teletan_tls"
    hide = ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount -t tmpfs none /etc/ssl && exec "$@"', "hide"]
    message = ("the PostgreSQL URL asks to check the server's certificate against the system's trust store, but "
               "/etc/ssl/certs/ca-certificates.crt and /etc/ssl/certs do not exist: install the package ca-certificates, "
               "or name the server's CA with sslrootcert=FILE")
    refused = connect([PORTAL_BIN, "migrate", "--status", "--database", url + "?sslmode=verify-full"], prefix=hide)
    assert refused.returncode != 0 and message in refused.stderr, refused.stderr
    checked = connect([PORTAL_BIN, "check-config", "--database", url + "?sslmode=verify-full"], prefix=hide)
    assert f"problem: --database (PORTAL_DATABASE): {message}" in checked.stdout.splitlines(), checked.stdout
    plain = connect([PORTAL_BIN, "migrate", "--status", "--database", url + "?sslmode=require"], prefix=hide)
    assert plain.returncode == 0, plain.stderr
