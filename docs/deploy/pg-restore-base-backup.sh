#!/bin/bash
# Puts a base backup (pg-base-backup.sh) into an empty data directory and asks PostgreSQL to
# recover: at its next start it replays the WAL archive (restore_command of
# postgresql-archiving.conf) to the last archived transaction, then opens for writing.
# docs/deployment.md section 9.
#
# Usage, as the postgres user, with the cluster stopped:
#   pg-restore-base-backup.sh BASE_BACKUP_DIR DATA_DIR
#   e.g. pg-restore-base-backup.sh /var/backups/teletan-portal/base/base-20261125T030000Z /var/lib/postgresql/15/main
set -euo pipefail
umask 077
base=$1
data=$2
if [ -e "$data" ]; then
    echo "pg-restore-base-backup.sh: $data exists; move it aside first (keep it until the restore is checked)" >&2
    exit 1
fi
mkdir -m 700 "$data"
tar -xzf "$base/base.tar.gz" -C "$data"
tar -xzf "$base/pg_wal.tar.gz" -C "$data/pg_wal"
touch "$data/recovery.signal"
echo "restored $base into $data; start the cluster to replay the WAL archive"
