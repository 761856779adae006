#!/usr/bin/env bash
# Exporting, as the README shows it: run in the server's data folder, with
# the server running or not (tests/tests/e2e/transfer.rs does).
set -euo pipefail

# readme:begin export
engram-server export --database sqlite://engram.db --to engram-export.jsonl
# readme:end export
