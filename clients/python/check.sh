#!/usr/bin/env bash
# Builds, installs and tests the Python package against a real engram-server,
# as the test command (scripts/test.sh) does:
#
#   1. a virtualenv in clients/python/.venv with requirements-dev.txt (pinned);
#   2. generate.py --check: the stubs, the RPC methods and the blocking twin
#      are what the protos and _async/ make (run generate.py to update them);
#   3. mypy --strict over the package, its tests and the generator;
#   4. python -m build: an sdist, and a wheel built from it, as
#      `pip install ./clients/python` builds one (hatchling fetched by pip);
#   5. that wheel installed into the virtualenv, and pytest run against it,
#      each test file's servers started from the workspace's engram-server
#      (target/debug, or $ENGRAM_SERVER_BINARY; build it first).
#
# PYTHON picks the interpreter for the virtualenv (default python3, 3.10+).
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n--> %s\n' "$*"; }

venv=.venv
if [[ ! -x $venv/bin/python ]]; then
  step "creating the virtualenv clients/python/$venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
# pip is slow to decide that nothing needs doing; remember what was installed.
if ! cmp -s requirements-dev.txt "$venv/installed-requirements.txt"; then
  step "installing requirements-dev.txt"
  "$venv/bin/pip" install --disable-pip-version-check --quiet --requirement requirements-dev.txt
  cp requirements-dev.txt "$venv/installed-requirements.txt"
fi

step "generated code is up to date (generate.py --check)"
"$venv/bin/python" generate.py --check

step "types (mypy --strict)"
"$venv/bin/mypy"

step "sdist and wheel (python -m build)"
rm -rf dist
"$venv/bin/python" -m build --outdir dist . >dist.log 2>&1 || { cat dist.log >&2; rm -f dist.log; exit 1; }
rm -f dist.log
ls dist

step "install the wheel"
"$venv/bin/pip" install --disable-pip-version-check --quiet --force-reinstall --no-deps dist/engram_client-*.whl

step "pytest against a real engram-server"
"$venv/bin/python" -m pytest -p no:cacheprovider
