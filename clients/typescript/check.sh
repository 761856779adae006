#!/usr/bin/env bash
# Builds, packs, installs and tests the TypeScript package against a real
# engram-server, as the test command (scripts/test.sh) does:
#
#   1. npm ci from package-lock.json (pinned; skipped when the lock is what
#      node_modules was installed from);
#   2. the package's version is the Cargo workspace's ([workspace.package]
#      in ../../Cargo.toml);
#   3. the generated code (src/gen) is what buf.gen.yaml makes of the protos
#      (run `npm run generate` to update it);
#   4. tsc: the package (dist/src, ESM with type declarations) and its tests
#      (dist/test), strict;
#   5. npm pack: the tarball users install, in dist-pack/;
#   6. that tarball installed into a scratch project in a temporary folder,
#      and node --test run there on the compiled tests, so they import the
#      installed package ("engram-client"), not this folder; each test file
#      starts its servers from the workspace's engram-server (target/debug,
#      or $ENGRAM_SERVER_BINARY; build it first).
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd)"
repo="$(cd ../.. && pwd)"

step() { printf '\n--> %s\n' "$*"; }

# `npm ci`, not `npm install --no-save` as tests/interop/setup.sh needs: this
# lock lists @bufbuild/buf's binary packages for every platform (npm 11 wrote
# them all), so npm ci accepts it anywhere and installs only this machine's.
# --ignore-scripts: buf's postinstall only swaps its JavaScript launcher for
# the binary, and newer npm versions skip it anyway unless allowed; buf runs
# the same either way.
if ! cmp -s package-lock.json node_modules/.installed-lock.json; then
  step "installing npm packages from clients/typescript/package-lock.json (npm ci)"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.installed-lock.json
fi

step "the package's version is the workspace's (../../Cargo.toml)"
workspace_version="$(sed -n '/^\[workspace\.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' ../../Cargo.toml)"
package_version="$(node -p 'require("./package.json").version')"
if [[ -z $workspace_version || $package_version != "$workspace_version" ]]; then
  echo "package.json has version $package_version, the Cargo workspace ${workspace_version:-none}: set package.json's \"version\" (and package-lock.json's, npm install does it) to the workspace's" >&2
  exit 1
fi
echo "engram-client $package_version"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

step "generated code is up to date (buf generate, compared with src/gen)"
node_modules/.bin/buf generate --output "$scratch/generated"
if ! diff -ru src/gen "$scratch/generated/src/gen"; then
  echo "src/gen differs from what buf.gen.yaml generates from the protos: run \`npm run generate\` in clients/typescript and commit src/gen" >&2
  exit 1
fi
echo "src/gen is up to date"

step "types and build (tsc, strict)"
rm -rf dist
node_modules/.bin/tsc -p .

step "the tarball (npm pack into dist-pack/)"
rm -rf dist-pack
mkdir dist-pack
# --ignore-scripts: prepack (tsc) has just run above.
tarball="$here/dist-pack/$(npm pack --silent --ignore-scripts --pack-destination dist-pack)"
tar -tzf "$tarball" | sort | sed 's/^/  /'

step "install the tarball into a scratch project"
# The tests import the package by its name, and what they use beside it at
# the versions this package pins.
pinned() { node -p "const p = require('./package.json'); p.dependencies['$1'] ?? p.devDependencies['$1']"; }
project="$scratch/project"
mkdir -p "$project"
echo '{ "name": "engram-client-tests", "private": true, "type": "module" }' >"$project/package.json"
(
  cd "$project"
  npm install --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error \
    "$tarball" \
    "@bufbuild/protobuf@$(cd "$here" && pinned @bufbuild/protobuf)" \
    "@connectrpc/connect@$(cd "$here" && pinned @connectrpc/connect)" \
    "@connectrpc/connect-node@$(cd "$here" && pinned @connectrpc/connect-node)" \
    "@connectrpc/connect-web@$(cd "$here" && pinned @connectrpc/connect-web)"
)
cp -r dist/test "$project/test"
installed="$(cd "$project" && node --input-type=module -e 'console.log(import.meta.resolve("engram-client"))')"
echo "engram-client resolves to $installed"
[[ $installed == "file://$project/node_modules/engram-client/"* ]] || { echo "the tests would not use the installed package" >&2; exit 1; }

step "node --test against a real engram-server"
export ENGRAM_REPO="$repo"
if [[ -n ${ENGRAM_SERVER_BINARY:-} ]]; then
  ENGRAM_SERVER_BINARY="$(cd "$here" && realpath -m "$ENGRAM_SERVER_BINARY")"
  export ENGRAM_SERVER_BINARY
fi
cd "$project"
# The test files by name (server.js is their harness, not a test); a test
# that hangs fails after two minutes instead of holding up the run.
node --test --test-timeout=120000 test/*.test.js
