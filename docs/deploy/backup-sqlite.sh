#!/bin/bash
# Online backup of the portal's SQLite database while the portal runs (SQLite's backup API:
# a consistent copy, taken between two transactions). docs/deployment.md section 9.
#
# Usage, as the portal user or root:  backup-sqlite.sh DATABASE_FILE BACKUP_DIR
# Writes BACKUP_DIR/teletan-YYYYmmddTHHMMSSZ.sqlite, mode 600, and prints its name. A failed
# backup leaves no file: it is written under a temporary name and renamed when complete.
set -euo pipefail
umask 077
database=$1
directory=$2
command -v sqlite3 >/dev/null || { echo "backup-sqlite.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
# sqlite3 would create an empty database at a wrong path and back that up.
[ -f "$database" ] || { echo "backup-sqlite.sh: $database does not exist" >&2; exit 1; }
target="$directory/teletan-$(date -u +%Y%m%dT%H%M%SZ).sqlite"
partial="$target.partial"
trap 'rm -f "$partial"' EXIT
sqlite3 -bail "$database" ".timeout 10000" ".backup '$partial'"
[ "$(sqlite3 -bail "$partial" 'PRAGMA integrity_check')" = ok ]
sync "$partial"
mv "$partial" "$target"
echo "$target"
