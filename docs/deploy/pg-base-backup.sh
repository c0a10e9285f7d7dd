#!/bin/bash
# Base backup of the whole PostgreSQL cluster, the starting point of a point-in-time recovery
# with the WAL archive (postgresql-archiving.conf). docs/deployment.md section 9.
#
# Usage, as the postgres user:  pg-base-backup.sh BACKUP_DIR [pg_basebackup options, e.g. -p 5433]
# Writes the directory BACKUP_DIR/base-YYYYmmddTHHMMSSZ (base.tar.gz and pg_wal.tar.gz, mode
# 600) and prints its name. A failed backup leaves nothing: it is written under a temporary
# name and renamed when complete.
set -euo pipefail
umask 077
directory=$1
shift
target="$directory/base-$(date -u +%Y%m%dT%H%M%SZ)"
partial="$target.partial"
trap 'rm -rf "$partial"' EXIT
# --checkpoint=fast: start now rather than at the next scheduled checkpoint.
pg_basebackup --pgdata="$partial" --format=tar --gzip --wal-method=stream --checkpoint=fast "$@"
sync "$partial"/*
mv "$partial" "$target"
echo "$target"
