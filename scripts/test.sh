#!/usr/bin/env bash
# Runs every check and test of the project, as CI does. Needs the Rust
# toolchain, Python 3 and Node.js (20 or later) with npm; installs everything
# else the tests need by itself (a virtualenv and npm packages under
# tests/interop/, the Python package's virtualenv in clients/python/.venv, the
# TypeScript package's npm packages in clients/typescript/node_modules, and
# PostgreSQL's server with apt-get when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "interop tools (tests/interop/setup.sh: grpcio-tools, grpcurl, @grpc/grpc-js, buf)"
tests/interop/setup.sh

step "embedding model for the semantic search tests (scripts/fetch-model.sh)"
scripts/fetch-model.sh

step "PostgreSQL server binaries for the tests (scripts/postgres.sh --install)"
scripts/postgres.sh --install

step "proto lint (buf lint, STANDARD rules; see buf.yaml)"
tests/interop/node/node_modules/.bin/buf lint

step "formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (cargo clippy, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The client crate's documentation examples run against a live server.
step "a server for the client's doc examples"
cargo build --locked --quiet --workspace --bins
scratch="$(mktemp -d)"
"${CARGO_TARGET_DIR:-target}/debug/engram-server" --listen 127.0.0.1:0 \
  --database "sqlite://$scratch/doc-examples.db" --log warn \
  >"$scratch/stdout" 2>"$scratch/stderr" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
for _ in $(seq 300); do
  grep -q "listening on" "$scratch/stdout" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$scratch/stderr" >&2; exit 1; }
  sleep 0.1
done
address="$(sed -n 's/^engram-server listening on //p' "$scratch/stdout")"
[[ -n $address ]] || { echo "the doc-example server did not start" >&2; cat "$scratch/stderr" >&2; exit 1; }
export ENGRAM_SERVER="http://$address"
echo "listening on $address"

# The Python package (issue 14), against servers of the build above that its
# tests start themselves: the generated code regenerated and compared, mypy,
# an sdist and a wheel, the wheel installed and tested with pytest.
step "Python package (clients/python/check.sh: generate.py --check, mypy, build, install, pytest)"
clients/python/check.sh

# The TypeScript package, likewise: its generated code regenerated and
# compared, tsc, npm pack, the tarball installed into a scratch project and
# tested there with node --test against servers of the build above.
step "TypeScript package (clients/typescript/check.sh: generated code, tsc, npm pack, install, node --test)"
clients/typescript/check.sh

# The tests of the PostgreSQL backend need a server: scripts/postgres.sh
# starts a throwaway one for the run, sets ENGRAM_TEST_POSTGRES_URL and
# stops it afterwards.
step "unit, doc and end-to-end tests (cargo test), with a throwaway PostgreSQL (scripts/postgres.sh)"
scripts/postgres.sh cargo test --workspace --locked

# The end-to-end tests of what depends on the database, again against
# PostgreSQL (issue 13): the same tests, each server on a fresh database of
# the throwaway server (ENGRAM_TEST_BACKEND=postgres; see Backend in
# tests/src/backend.rs). Left out, as the database is incidental to them: the
# clients, the command line, interop, MCP, the README, keys and TLS,
# overload, request validation, secrets screening, the classifier's
# accuracy and strategy grouping; and the files that choose their database
# themselves (backup, transfer and a full disk keep to SQLite; postgres and
# replicas ran on PostgreSQL above). A new test file that stores or reads
# data belongs in this list.
postgres_tests=(
  bounded contradiction_judge contradictions conversation_context embedder_api entities entity_model episodes hardening
  history llm near_duplicates
  memories metrics occurred_at outcomes provenance retention scopes search_and_context search_cues
  search_index semantic_search server supersede watch writer_limits
)
step "end-to-end tests of the database against PostgreSQL (ENGRAM_TEST_BACKEND=postgres): ${postgres_tests[*]}"
# --workspace resolves features as the first run did, so nothing is rebuilt;
# each area is a module of the one end-to-end test binary (tests/tests/e2e),
# chosen by its path.
ENGRAM_TEST_BACKEND=postgres scripts/postgres.sh cargo test --locked --workspace --test e2e \
  -- "${postgres_tests[@]/%/::}"
