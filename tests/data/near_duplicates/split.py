#!/usr/bin/env python3
"""Validates the near-duplicate pairs and splits them into dev and held-out.

Reads cases.json (the labelled pairs, in the order they were written) and writes,
in the same directory:

  dev.json      the pairs drawn for dev (tune the detector's threshold here)
  heldout.json  the rest (measure only; never tune on it)

The draw is a fixed-seed random split stratified by (lang, near_duplicate): the
strata are visited in sorted order, and each one is shuffled with one shared
random.Random(SEED); the first round(50 %) of a stratum (halves rounded up) go
to dev, the rest to held-out. Both files keep the written order of cases.json.
Running it again gives the same files byte for byte.

Before splitting it checks every pair (ids unique, fields and values valid,
a != b after lower-casing and collapsing whitespace) and exits non-zero on any
error. Afterwards it prints the counts per language and label for each split
(the table in README.md).

Python 3 standard library only: python3 tests/data/near_duplicates/split.py
"""

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

SEED = 20270027  # fixed before any tuning on these pairs
DEV_SHARE = 0.5

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.json"
DEV = HERE / "dev.json"
HELD_OUT = HERE / "heldout.json"

FIELDS = ["id", "lang", "type", "a", "b", "near_duplicate", "why"]
LANGS = ["en", "es", "de", "fr", "pt"]
TYPES = {"FACT", "PREFERENCE", "DECISION", "LESSON", "EVENT", "NOTE"}
WHY_POSITIVE = {
    "paraphrase", "synonym", "reorder", "terse", "wordy", "typo",
    "case_punct", "number_form", "passive", "abbreviation",
}
WHY_NEGATIVE = {
    "value_change", "negation", "different_subject", "swapped_roles",
    "added_detail", "general_vs_specific", "related_fact", "unrelated",
}


def normalise(text):
    return " ".join(text.lower().split())


def validate(cases):
    errors = []
    if not isinstance(cases, list):
        return ["cases.json is not a JSON array"]
    seen_ids = set()
    seen_pairs = {}
    for n, case in enumerate(cases):
        where = f"case {n} ({case.get('id', '?') if isinstance(case, dict) else '?'})"
        if not isinstance(case, dict) or sorted(case) != sorted(FIELDS):
            errors.append(f"{where}: fields must be exactly {FIELDS}")
            continue
        cid = case["id"]
        if not isinstance(cid, str) or not re.fullmatch(r"n\d{4}", cid):
            errors.append(f"{where}: id must look like n0001")
        if cid in seen_ids:
            errors.append(f"{where}: duplicate id")
        seen_ids.add(cid)
        if case["lang"] not in LANGS:
            errors.append(f"{where}: lang must be one of {LANGS}")
        if case["type"] not in TYPES:
            errors.append(f"{where}: type must be one of {sorted(TYPES)}")
        if not isinstance(case["near_duplicate"], bool):
            errors.append(f"{where}: near_duplicate must be true or false")
        allowed = WHY_POSITIVE if case["near_duplicate"] is True else WHY_NEGATIVE
        if case["why"] not in allowed:
            errors.append(f"{where}: why {case['why']!r} is not a reason for this label")
        for side in ("a", "b"):
            if not isinstance(case[side], str) or not case[side].strip():
                errors.append(f"{where}: {side} must be non-empty text")
        if isinstance(case["a"], str) and isinstance(case["b"], str):
            a, b = normalise(case["a"]), normalise(case["b"])
            if a == b:
                errors.append(f"{where}: a and b are exact duplicates (out of scope)")
            pair = tuple(sorted((a, b)))
            if pair in seen_pairs:
                errors.append(f"{where}: same pair as {seen_pairs[pair]}")
            seen_pairs[pair] = cid
    return errors


def split(cases):
    strata = {}
    for i, case in enumerate(cases):
        strata.setdefault((case["lang"], case["near_duplicate"]), []).append(i)
    rng = random.Random(SEED)
    dev = set()
    for key in sorted(strata):
        indices = strata[key]
        rng.shuffle(indices)
        dev.update(indices[: int(len(indices) * DEV_SHARE + 0.5)])
    dev_cases = [c for i, c in enumerate(cases) if i in dev]
    held_out_cases = [c for i, c in enumerate(cases) if i not in dev]
    return dev_cases, held_out_cases


def write(path, cases):
    # One pair per line: readable, and diffs stay small.
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("[\n")
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]\n")


def stats(name, cases):
    """Counts per language and label, as a Markdown table."""
    counts = Counter((c["lang"], c["near_duplicate"]) for c in cases)
    hard = sum(1 for c in cases if not c["near_duplicate"] and c["why"] != "unrelated")
    lines = [
        f"{name}: {len(cases)} pairs",
        "",
        "| lang | near-duplicate | not | total |",
        "|------|---------------:|----:|------:|",
    ]
    for lang in LANGS:
        pos, neg = counts[(lang, True)], counts[(lang, False)]
        lines.append(f"| {lang} | {pos} | {neg} | {pos + neg} |")
    pos = sum(v for (_, label), v in counts.items() if label)
    neg = len(cases) - pos
    lines.append(f"| all | {pos} | {neg} | {pos + neg} |")
    lines.append("")
    lines.append(f"hard negatives (why != unrelated): {hard} of {neg}")
    return "\n".join(lines)


def main():
    with open(CASES, encoding="utf-8") as f:
        cases = json.load(f)
    errors = validate(cases)
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        sys.exit(f"{len(errors)} error(s) in {CASES.name}")
    dev, held_out = split(cases)
    write(DEV, dev)
    write(HELD_OUT, held_out)
    for name, subset in (("cases.json", cases), ("dev.json", dev), ("heldout.json", held_out)):
        print(stats(name, subset))
        print()


if __name__ == "__main__":
    main()
