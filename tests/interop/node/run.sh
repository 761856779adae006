#!/usr/bin/env bash
# Runs the Node.js interop scenario against a running Engram server.
#
#   ENGRAM_ADDR=127.0.0.1:50051 tests/interop/node/run.sh
#
# ENGRAM_ADDR (host:port) is required; ENGRAM_NAMESPACE is optional (the
# scenario picks a fresh "interop-node-<hex>" one). The npm packages come from
# tests/interop/setup.sh; the scenario loads the repo's proto/ at run time, so
# it always speaks the current API.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

: "${ENGRAM_ADDR:?set ENGRAM_ADDR to the server address, host:port}"

if [[ ! -d "$here/node_modules/@grpc/grpc-js" ]]; then
  echo "tests/interop/node/node_modules is missing: run tests/interop/setup.sh first" >&2
  exit 2
fi

cd "$here"
exec node scenario.js
