#!/usr/bin/env bash
# Runs the Python interop scenario against a running Engram server.
#
#   ENGRAM_ADDR=127.0.0.1:50051 tests/interop/python/run.sh
#
# ENGRAM_ADDR (host:port) is required; ENGRAM_NAMESPACE is optional (the
# scenario picks a fresh "interop-python-<hex>" one). PYTHON defaults to the
# virtualenv made by tests/interop/setup.sh.
#
# The stubs are generated from the repo's proto/ into a temporary directory
# on every run, so the scenario always speaks the current API.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
PYTHON="${PYTHON:-$repo/tests/interop/.venv/bin/python}"

: "${ENGRAM_ADDR:?set ENGRAM_ADDR to the server address, host:port}"

out="$(mktemp -d "${TMPDIR:-/tmp}/engram-interop-python.XXXXXX")"
trap 'rm -rf "$out"' EXIT

"$PYTHON" -m grpc_tools.protoc -I "$repo/proto" --python_out="$out" --grpc_python_out="$out" "$repo"/proto/engram/v1/*.proto

PYTHONPATH="$out" "$PYTHON" "$here/scenario.py"
