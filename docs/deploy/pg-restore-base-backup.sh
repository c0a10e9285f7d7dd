#!/bin/bash
# Puts a base backup (pg-base-backup.sh) into an empty data directory and asks PostgreSQL to
# recover: at its next start it replays the WAL archive (restore_command of
# postgresql-archiving.conf), then the WAL that never reached the archive, to the last committed
# transaction, then opens for writing. docs/deployment.md section 9.5.
#
# Usage, as the postgres user, with the cluster stopped:
#   pg-restore-base-backup.sh BASE_BACKUP_DIR DATA_DIR [UNARCHIVED_WAL_DIR]
#   e.g. pg-restore-base-backup.sh /var/backups/teletan-portal/base/base-20261125T030000Z \
#            /var/lib/postgresql/15/main /var/lib/postgresql/15/main.broken/pg_wal
#
# UNARCHIVED_WAL_DIR holds the WAL written after the last archived segment (up to archive_timeout
# of committed transactions): the old data directory's pg_wal, or the folder pg_receivewal
# writes into (section 9.2). Its segments are copied, not moved, as PostgreSQL's recovery
# procedure says, so the restore can be started over. Without it, what was committed after the
# last archived segment is lost.
set -euo pipefail
umask 077
base=$1
data=$2
unarchived=${3:-}
if [ -e "$data" ]; then
    echo "pg-restore-base-backup.sh: $data exists; move it aside first (keep it until the restore is checked)" >&2
    exit 1
fi
if [ -n "$unarchived" ] && [ ! -d "$unarchived" ]; then
    echo "pg-restore-base-backup.sh: $unarchived is not a directory" >&2
    exit 1
fi
mkdir -m 700 "$data"
tar -xzf "$base/base.tar.gz" -C "$data"
tar -xzf "$base/pg_wal.tar.gz" -C "$data/pg_wal"
if [ -n "$unarchived" ]; then
    # Segments (24 hexadecimal digits) and timeline history files; pg_receivewal's segment in
    # progress ends in .partial and is used under its segment's name unless the whole segment is
    # there too. Newer than the base backup's copies of the same segments, so they replace them.
    copied=0
    for file in "$unarchived"/*; do
        name=${file##*/}
        if [[ $name =~ ^[0-9A-F]{24}$ || $name =~ ^[0-9A-F]{8}\.history$ ]]; then
            cp "$file" "$data/pg_wal/$name"
        elif [[ $name =~ ^([0-9A-F]{24})\.partial$ ]] && [ ! -e "$unarchived/${BASH_REMATCH[1]}" ]; then
            cp "$file" "$data/pg_wal/${BASH_REMATCH[1]}"
        else
            continue
        fi
        copied=$((copied + 1))
    done
    echo "copied $copied WAL files from $unarchived"
else
    echo "no unarchived WAL given: transactions committed after the last archived segment are lost;" \
        "nothing written after the last audit entry restored is vouched for (docs/deployment.md section 9.5)"
fi
touch "$data/recovery.signal"
echo "restored $base into $data; start the cluster to replay the WAL"
