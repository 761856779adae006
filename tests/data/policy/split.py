#!/usr/bin/env python3
"""Splits the new labelled policy transcripts into dev and held-out (issue 15).

Reads new_cases.json (the new cases, in the order they were written) and the two
older sets, ../policy_transcripts.json (tuned on) and
../policy_transcripts_heldout.json (never tuned on), and writes:

  dev.json      the 122 old tuning cases, then the new cases drawn for dev (in
                server/data/policy/: the server compiles it in, as examples)
  heldout.json  the 60 old held-out cases, then the new cases drawn for held-out

The draw is a fixed-seed random split, stratified by label (each memory type,
and negatives, split on its own) so that every type lands in both files and
both keep the share of negatives: in each stratum the cases are shuffled with
random.Random(SEED) and the first round(55 %) go to dev. New cases keep their
written order inside each file. Old cases are copied unchanged, except that a
negative's "memory_type": null is dropped (memory_type is absent when
should_store is false). Running it again gives the same files byte for byte.

Python 3 standard library only: python3 tests/data/policy/split.py
"""

import json
import random
from pathlib import Path

SEED = 20150015  # issue 15; fixed before any tuning on the new cases
DEV_SHARE = 0.55

HERE = Path(__file__).resolve().parent
OLD_DEV = HERE.parent / "policy_transcripts.json"
OLD_HELD_OUT = HERE.parent / "policy_transcripts_heldout.json"
NEW = HERE / "new_cases.json"
# The labelled sets the server compiles in (engine/policy/examples.rs).
SHIPPED = HERE.parents[2] / "server" / "data" / "policy"


def load(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    if not isinstance(cases, list):
        raise SystemExit(f"{path}: not a JSON array")
    return cases


def normalise(case):
    case = dict(case)
    if not case["should_store"]:
        case.pop("memory_type", None)
    return case


def label(case):
    return case["memory_type"] if case["should_store"] else "NEGATIVE"


def split(new):
    strata = {}
    for i, case in enumerate(new):
        strata.setdefault(label(case), []).append(i)
    rng = random.Random(SEED)
    dev = set()
    for name in sorted(strata):
        indices = strata[name]
        rng.shuffle(indices)
        dev.update(indices[: int(len(indices) * DEV_SHARE + 0.5)])
    dev_cases = [c for i, c in enumerate(new) if i in dev]
    held_out_cases = [c for i, c in enumerate(new) if i not in dev]
    return dev_cases, held_out_cases


def write(path, cases):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    new = [normalise(c) for c in load(NEW)]
    dev_new, held_out_new = split(new)
    dev = [normalise(c) for c in load(OLD_DEV)] + dev_new
    held_out = [normalise(c) for c in load(OLD_HELD_OUT)] + held_out_new
    write(SHIPPED / "dev.json", dev)
    write(HERE / "heldout.json", held_out)
    print(
        f"seed {SEED}: {len(new)} new cases -> {len(dev_new)} dev, "
        f"{len(held_out_new)} held-out; dev.json {len(dev)}, heldout.json {len(held_out)}"
    )


if __name__ == "__main__":
    main()
