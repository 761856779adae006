#!/usr/bin/env bash
# Moving up to PostgreSQL, as the README shows it: run in the SQLite
# server's data folder with that server stopped, ENGRAM_TARGET naming the
# PostgreSQL database (tests/tests/e2e/transfer.rs runs it on a fresh one).
set -euo pipefail

# readme:begin migrate
# With the SQLite server stopped. The target's schema is made; replicas may
# already run on it (they index the copy as it commits).
export ENGRAM_TARGET="${ENGRAM_TARGET:-postgres://engram:secret@db.internal:5432/engram}"
engram-server migrate-data --from sqlite://engram.db --to "$ENGRAM_TARGET"
# readme:end migrate
