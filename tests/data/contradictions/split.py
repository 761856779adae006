#!/usr/bin/env python3
"""Validates cases.json and splits it into dev.json and heldout.json.

cases.json is the labelled contradiction set, in the order it was written. The
split is stratified by (lang, has_invalidation): the cases of each stratum are
shuffled with one random.Random(SEED), strata taken in sorted order, and the
first round(50 %) of each stratum (half rounded up) go to dev, the rest to
held-out. Each output file keeps the written order. Running it again gives the
same files byte for byte.

Python 3 standard library only:  python3 tests/data/contradictions/split.py
"""

import json
import random
from collections import Counter
from pathlib import Path

SEED = 20270027  # fixed before any tuning on this set
DEV_SHARE = 0.5

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.json"
DEV = HERE / "dev.json"
HELD_OUT = HERE / "heldout.json"

TYPES = {"FACT", "PREFERENCE", "DECISION", "LESSON", "EVENT", "NOTE"}
LANGS = {"en", "es", "de", "fr", "pt"}
DOMAINS = {"people", "infrastructure", "project", "preferences", "decisions", "personal", "business"}


def fail(msg):
    raise SystemExit(f"cases.json: {msg}")


def validate(cases):
    if not isinstance(cases, list):
        fail("not a JSON array")
    ids = set()
    for case in cases:
        cid = case.get("id")
        if not isinstance(cid, str) or cid in ids:
            fail(f"missing or duplicate id {cid!r}")
        ids.add(cid)
        if set(case) != {"id", "lang", "domain", "why", "writes"}:
            fail(f"{cid}: unexpected keys {sorted(case)}")
        if case["lang"] not in LANGS:
            fail(f"{cid}: bad lang {case['lang']!r}")
        if case["domain"] not in DOMAINS:
            fail(f"{cid}: bad domain {case['domain']!r}")
        if not isinstance(case["why"], str) or not case["why"].strip():
            fail(f"{cid}: empty why")
        writes = case["writes"]
        if not isinstance(writes, list) or not 2 <= len(writes) <= 5:
            fail(f"{cid}: needs 2 to 5 writes")
        invalidated = set()
        for i, write in enumerate(writes):
            if not set(write) <= {"content", "type", "invalidates"}:
                fail(f"{cid}[{i}]: unexpected keys {sorted(write)}")
            if not isinstance(write.get("content"), str) or not write["content"].strip():
                fail(f"{cid}[{i}]: empty content")
            if write.get("type") not in TYPES:
                fail(f"{cid}[{i}]: bad type {write.get('type')!r}")
            if "invalidates" in write:
                targets = write["invalidates"]
                if not isinstance(targets, list) or not targets:
                    fail(f"{cid}[{i}]: invalidates must be a non-empty list (omit when empty)")
                if len(set(targets)) != len(targets):
                    fail(f"{cid}[{i}]: repeated index in invalidates")
                for j in targets:
                    if not isinstance(j, int) or isinstance(j, bool) or not 0 <= j < i:
                        fail(f"{cid}[{i}]: invalidates index {j!r} is not an earlier write")
                    if j in invalidated:
                        fail(f"{cid}[{i}]: write {j} was already invalidated")
                    invalidated.add(j)


def positive(case):
    return any("invalidates" in w for w in case["writes"])


def split(cases):
    strata = {}
    for i, case in enumerate(cases):
        strata.setdefault((case["lang"], positive(case)), []).append(i)
    rng = random.Random(SEED)
    dev = set()
    for key in sorted(strata):
        indices = strata[key]
        rng.shuffle(indices)
        dev.update(indices[: int(len(indices) * DEV_SHARE + 0.5)])
    return ([c for i, c in enumerate(cases) if i in dev],
            [c for i, c in enumerate(cases) if i not in dev])


def write(path, cases):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(cases, f, indent=2, ensure_ascii=False)
        f.write("\n")


def stats(name, cases):
    counts = Counter((c["lang"], positive(c)) for c in cases)
    langs = sorted({c["lang"] for c in cases}, key=lambda l: (l != "en", l))
    invalidations = sum(len(w.get("invalidates", [])) for c in cases for w in c["writes"])
    pos = sum(1 for c in cases if positive(c))
    print(f"{name}: {len(cases)} sequences, {pos} positive, {len(cases) - pos} negative, "
          f"{sum(len(c['writes']) for c in cases)} writes, {invalidations} invalidations")
    for lang in langs:
        p, n = counts[(lang, True)], counts[(lang, False)]
        print(f"  {lang}: {p + n:4d}  positive {p:4d}  negative {n:4d}")


def main():
    with open(CASES, encoding="utf-8") as f:
        cases = json.load(f)
    validate(cases)
    dev, held_out = split(cases)
    write(DEV, dev)
    write(HELD_OUT, held_out)
    print(f"seed {SEED}")
    stats("cases.json", cases)
    stats("dev.json", dev)
    stats("heldout.json", held_out)


if __name__ == "__main__":
    main()
