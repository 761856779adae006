#!/usr/bin/env bash
# Importing, as the README shows it: run in a new server's data folder
# holding the export, with no server running (tests/tests/e2e/transfer.rs does).
set -euo pipefail

# readme:begin import
# With the server stopped; engram.db is created if it does not exist.
engram-server import --database sqlite://engram.db --from engram-export.jsonl
# readme:end import
