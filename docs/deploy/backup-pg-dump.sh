#!/bin/bash
# Plain dump of the portal's PostgreSQL database (pg_dump's custom format, for pg_restore).
# A plain dump restores the database as it was when it was taken: entries written after it are
# lost, which `portal audit verify --checkpoint` then reports. For backups that lose nothing,
# see the WAL archive (pg-base-backup.sh, postgresql-archiving.conf). docs/deployment.md section 9.
#
# Usage, as the postgres user:  backup-pg-dump.sh DATABASE BACKUP_DIR [pg_dump options, e.g. -p 5433]
#   e.g. as root:  runuser -u postgres -- /usr/share/teletan-portal/backup-pg-dump.sh teletan /var/backups/teletan-portal/dumps
# Writes BACKUP_DIR/teletan-YYYYmmddTHHMMSSZ.dump, mode 600, and prints its name. A failed dump
# leaves no file: it is written under a temporary name and renamed when complete.
set -euo pipefail
umask 077
database=$1
directory=$2
shift 2
target="$directory/$database-$(date -u +%Y%m%dT%H%M%SZ).dump"
partial="$target.partial"
trap 'rm -f "$partial"' EXIT
pg_dump --format=custom --file="$partial" "$@" "$database"
sync "$partial"
mv "$partial" "$target"
echo "$target"
