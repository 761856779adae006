#!/usr/bin/env bash
# Restoring a backup, as the README shows it: run in the server's data
# folder with the server stopped (tests/tests/e2e/backup.rs does).
set -euo pipefail

# readme:begin restore
# With the server stopped: the database's write-ahead log belongs to the
# database being replaced, so it goes first; then the backup takes its place.
rm -f engram.db-wal engram.db-shm
cp backups/engram-backup.db engram.db
# readme:end restore
