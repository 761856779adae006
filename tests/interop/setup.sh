#!/usr/bin/env bash
# Installs what the interop tests and the proto lint need, and nothing
# outside this folder: a Python virtualenv in tests/interop/.venv (grpcio,
# grpcio-tools, grpcio-status, the grpcurl binary) and the npm packages of
# tests/interop/node (@grpc/grpc-js, @grpc/proto-loader, protobufjs, buf).
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")"

venv=.venv
requirements=python/requirements.txt
if [[ ! -x $venv/bin/python ]]; then
  echo "creating the Python virtualenv in tests/interop/$venv"
  python3 -m venv "$venv"
fi
# pip is slow to decide that nothing needs doing; remember what was installed.
if ! cmp -s "$requirements" "$venv/installed-requirements.txt"; then
  echo "installing Python packages from tests/interop/$requirements"
  "$venv/bin/pip" install --disable-pip-version-check --quiet --requirement "$requirements"
  cp "$requirements" "$venv/installed-requirements.txt"
fi

# `npm install --no-save` rather than `npm ci`: the lock holds only the buf
# binaries the registry here serves (Linux), and `npm ci` refuses a lock
# without the other platforms' optional packages. It installs the locked
# versions all the same and leaves the lock alone.
if ! cmp -s node/package-lock.json node/node_modules/.installed-lock.json; then
  echo "installing npm packages from tests/interop/node/package-lock.json"
  (cd node && npm install --no-save --no-audit --no-fund --loglevel=error)
  cp node/package-lock.json node/node_modules/.installed-lock.json
fi
echo "interop tools ready: $("$venv/bin/grpcurl" -version 2>&1), buf $(node/node_modules/.bin/buf --version), node $(node --version)"
