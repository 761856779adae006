#!/usr/bin/env python3
"""Validates the labelled entity cases and splits them into dev and held-out.

Reads cases.json (the labelled texts, in the order they were written), checks
them, and writes, in this directory:

  dev.json      the cases drawn for dev (tune on these)
  heldout.json  the rest (measure on these; never tune on them)

The draw is a fixed-seed random split, stratified by language: the cases of
each language are shuffled with a fresh random.Random(SEED) and the first
round(50 %) of them go to dev. Both files keep the written order of cases.json.
Running it again gives the same files byte for byte.

Then it prints the counts per language and per entity type in each split
(the figures quoted in README.md).

Python 3 standard library only: python3 tests/data/entities/split.py
"""

import json
import random
import sys
from collections import Counter
from pathlib import Path

SEED = 20270027  # fixed before any tuning on these cases
DEV_SHARE = 0.5
TYPES = ("PERSON", "ORGANIZATION", "PROJECT", "SERVICE", "TOOL", "PLACE", "OTHER")
LANGS = ("en", "es", "de", "fr", "pt")

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.json"
DEV = HERE / "dev.json"
HELD_OUT = HERE / "heldout.json"


def load(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    if not isinstance(cases, list):
        raise SystemExit(f"{path}: not a JSON array")
    return cases


def validate(cases):
    """Every id unique, every lang and type known, every name in its text
    (case-insensitively), no name twice in one text. Returns the problems."""
    problems = []
    ids = set()
    for n, case in enumerate(cases):
        where = f"case {n} ({case.get('id')!r})"
        if set(case) != {"id", "lang", "text", "entities"}:
            problems.append(f"{where}: keys {sorted(case)}")
            continue
        if case["id"] in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(case["id"])
        if case["lang"] not in LANGS:
            problems.append(f"{where}: unknown lang {case['lang']!r}")
        text = case["text"]
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: empty text")
            continue
        names = set()
        for entity in case["entities"]:
            if set(entity) != {"name", "type"}:
                problems.append(f"{where}: entity keys {sorted(entity)}")
                continue
            name, kind = entity["name"], entity["type"]
            if kind not in TYPES:
                problems.append(f"{where}: {name!r} has unknown type {kind!r}")
            if not name or name != name.strip():
                problems.append(f"{where}: bad name {name!r}")
            if name.lower() not in text.lower():
                problems.append(f"{where}: {name!r} does not occur in the text")
            if name.lower() in names:
                problems.append(f"{where}: {name!r} listed twice")
            names.add(name.lower())
    return problems


def split(cases):
    strata = {}
    for i, case in enumerate(cases):
        strata.setdefault(case["lang"], []).append(i)
    dev = set()
    for lang in sorted(strata):
        indices = list(strata[lang])
        random.Random(SEED).shuffle(indices)
        dev.update(indices[: round(len(indices) * DEV_SHARE)])
    dev_cases = [c for i, c in enumerate(cases) if i in dev]
    held_out_cases = [c for i, c in enumerate(cases) if i not in dev]
    return dev_cases, held_out_cases


def write(path, cases):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(cases, f, indent=2, ensure_ascii=False)
        f.write("\n")


def stats(name, cases):
    langs = Counter(c["lang"] for c in cases)
    types = Counter(e["type"] for c in cases for e in c["entities"])
    empty = sum(1 for c in cases if not c["entities"])
    entities = sum(types.values())
    print(f"{name}: {len(cases)} texts, {entities} entities, {empty} texts with none")
    print("  texts per language: " + ", ".join(f"{l} {langs[l]}" for l in LANGS))
    print("  entities per type:  " + ", ".join(f"{t} {types[t]}" for t in TYPES))


def main():
    cases = load(CASES)
    problems = validate(cases)
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        raise SystemExit(f"{len(problems)} problem(s) in {CASES.name}; nothing written")
    dev, held_out = split(cases)
    write(DEV, dev)
    write(HELD_OUT, held_out)
    print(f"seed {SEED}; wrote {DEV.name} and {HELD_OUT.name}")
    stats("all", cases)
    stats("dev", dev)
    stats("heldout", held_out)


if __name__ == "__main__":
    main()
