#!/usr/bin/env bash
# Taking a backup, as the README shows it: run in the server's data folder
# while the server runs (tests/tests/e2e/backup.rs does).
set -euo pipefail

# readme:begin backup
mkdir -p backups
engram-server backup --database sqlite://engram.db --to backups/engram-backup.db
# readme:end backup
