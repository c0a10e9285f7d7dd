"""The one database helper of the tests and the scripts: `psql()` (every psql call goes through
it), and `DatabaseAccess`, direct access to a server's database (a `sqlite:PATH` file or a
PostgreSQL URL), only for what no API offers (counting rows, making a teleTAN expire)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time


def psql(sql: str, *connection: str, separator: str = "|", variables: dict[str, str] | None = None,
         as_postgres: bool = False, timeout: float | None = 30, check: bool = True) -> str:
    """Runs `sql` with psql (no psqlrc, quiet, unaligned, tuples only, stopping at the first
    error) and returns its output without surrounding white space. `connection`: psql's own
    arguments, a URL (`postgres://...`) or options such as `-h HOST -p PORT -d DB`. `sql` is
    read from standard input, so several statements run in one session and `:'name'` takes one
    of `variables`, quoted. `as_postgres`: run as the user postgres (runuser, from /), for a
    cluster's superuser. `timeout`: seconds, None for no limit. A failure raises AssertionError
    with psql's message, unless `check` is False (then the output is returned all the same)."""
    options = [argument for name, value in (variables or {}).items() for argument in ("-v", f"{name}={value}")]
    command = ["psql", "-X", "-q", "-A", "-t", "-F", separator, "-v", "ON_ERROR_STOP=1", *options, *connection]
    if as_postgres:
        command = ["runuser", "-u", "postgres", "--", *command]
    # From /: a user switched to may not enter the caller's directory, and psql reads no file there.
    result = subprocess.run(command, input=sql, capture_output=True, text=True, timeout=timeout, cwd="/")
    if check:
        assert result.returncode == 0, f"psql failed ({result.returncode}): {result.stderr.strip()}\n{sql[:400]}"
    return result.stdout.strip()


class DatabaseAccess:
    def __init__(self, location: str):
        self.location = location

    @property
    def is_postgres(self) -> bool:
        return self.location.startswith(("postgres://", "postgresql://"))

    def _sqlite(self, sql: str, parameters: tuple = ()) -> tuple[int, list]:
        connection = sqlite3.connect(self.location[len("sqlite:"):], timeout=10)
        try:
            cursor = connection.execute(sql, parameters)
            rows = cursor.fetchall()
            connection.commit()
            return cursor.rowcount, rows
        finally:
            connection.close()

    def _psql(self, sql: str, field_separator: str = "|", **variables: str) -> str:
        return psql(sql, self.location, separator=field_separator, variables=variables)

    def rows(self, sql: str) -> list[tuple]:
        """The rows of a read-only query, for checks: integers as int, everything else as text
        (PostgreSQL) or as SQLite gives it."""
        if self.is_postgres:
            return [tuple(int(value) if re.fullmatch(r"-?\d+", value) else value for value in line.split("\t"))
                    for line in self._psql(sql, field_separator="\t").splitlines() if line]
        return self._sqlite(sql)[1]

    def scalar(self, sql: str):
        return self.rows(sql)[0][0]

    def expire_newest_teletan(self) -> None:
        """Sets valid_until of the newest teleTAN into the past (the hash column holds only
        keyed hashes, so the row is found by its creation time)."""
        if self.is_postgres:
            out = self._psql("UPDATE teletans SET valid_until = now() - interval '1 minute' WHERE id = "
                             "(SELECT id FROM teletans ORDER BY created_at DESC LIMIT 1) RETURNING id")
            assert len(out.splitlines()) == 1, f"expected one updated row, got {out!r}"
        else:
            changed, _ = self._sqlite("UPDATE teletans SET valid_until = ? WHERE id = "
                                      "(SELECT id FROM teletans ORDER BY created_at DESC LIMIT 1)", (time.time() - 60,))
            assert changed == 1, f"expected one updated row, got {changed}"

    def count(self, table: str, where: str | None = None, equals: str | None = None) -> int:
        """Rows of `table`, or those whose column `where` equals `equals`."""
        assert re.fullmatch(r"[a-z_]+", table) and (where is None or re.fullmatch(r"[a-z_]+", where))
        if self.is_postgres:
            if where is None:
                return int(self._psql(f"SELECT COUNT(*) FROM {table}"))
            return int(self._psql(f"SELECT COUNT(*) FROM {table} WHERE {where} = :'value'", value=equals))
        if where is None:
            return self._sqlite(f"SELECT COUNT(*) FROM {table}")[1][0][0]
        return self._sqlite(f"SELECT COUNT(*) FROM {table} WHERE {where} = ?", (equals,))[1][0][0]

    def values(self, table: str, column: str, where: str, equals: str, order_by: str) -> list[str]:
        """`column` of the rows of `table` whose column `where` equals `equals`, as text."""
        assert all(re.fullmatch(r"[a-z_]+", name) for name in (table, column, where, order_by))
        if self.is_postgres:
            out = self._psql(f"SELECT {column} FROM {table} WHERE {where} = :'value' ORDER BY {order_by}", value=equals)
            return out.splitlines()
        rows = self._sqlite(f"SELECT {column} FROM {table} WHERE {where} = ? ORDER BY {order_by}", (equals,))[1]
        return [str(row[0]) for row in rows]
