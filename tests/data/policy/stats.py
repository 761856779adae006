#!/usr/bin/env python3
"""Checks and counts the labelled policy sets (issue 15).

Validates dev.json, heldout.json, new_cases.json, fresh.json, fresh2.json,
fresh3.json, fresh4.json, multilingual.json, examples.json,
examples_varied_a.json to examples_varied_d.json and secrets.json and prints
their counts. Exits 1,
listing every problem, when a check fails:

- each file is a JSON array of objects with the expected fields;
- should_store true has memory_type in the six names; false has none;
- every case has a non-empty "why" (policy sets);
- every "secrets" entry occurs verbatim in its transcript;
- "injection" is true when present; "supersedes" only on PREFERENCE/DECISION;
- every payment card number among the secrets passes the Luhn check;
- no transcript is in more than one of dev.json, heldout.json, fresh.json,
  fresh2.json, fresh3.json, fresh4.json, multilingual.json, examples.json
  and the four examples_varied files;
- every type is in each of those files, >= 15 positives of each type over dev
  and held-out, >= 12 of each type in fresh.json, 15 in fresh2.json, 13 in
  fresh3.json and fresh4.json, 8 in multilingual.json, 26 in examples.json,
  20 in examples_varied a, b and d and 17 in c, >= 40 % negatives in each
  file, no duplicate transcript in fresh.json, fresh2.json, fresh3.json,
  fresh4.json, multilingual.json or any training file;
  secrets.json has exactly 50 cases.

Python 3 standard library only: python3 tests/data/policy/stats.py
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The labelled sets the server compiles in (engine/policy/examples.rs); the
# others are only read by tests and stay beside this script.
SHIPPED = HERE.parents[2] / "server" / "data" / "policy"
SHIPPED_FILES = {"dev.json", "examples.json", "examples_varied_a.json", "examples_varied_b.json",
                 "examples_varied_c.json", "examples_varied_d.json"}
TYPES = ["PREFERENCE", "DECISION", "LESSON", "FACT", "EVENT", "NOTE"]
POLICY_FIELDS = {"transcript", "should_store", "memory_type", "why", "secrets", "injection", "supersedes"}
SECRET_FIELDS = {"transcript", "secrets", "kind", "rest_worth_keeping"}
CARD = re.compile(r"^\d(?:[ -]?\d){12,18}$")

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def key(case):
    """A transcript as compared across files: trimmed, lower case."""
    return case["transcript"].strip().lower()


def luhn(number):
    digits = [int(d) for d in number if d.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def load(name):
    try:
        folder = SHIPPED if name in SHIPPED_FILES else HERE
        with open(folder / name, encoding="utf-8") as f:
            cases = json.load(f)
    except (OSError, ValueError) as e:
        problem(name, f"not readable JSON: {e}")
        return []
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        problem(name, "not a JSON array of objects")
        return []
    return cases


def check_secrets(where, case):
    secrets = case.get("secrets")
    if secrets is None:
        return
    if not isinstance(secrets, list) or not secrets:
        problem(where, "secrets must be a non-empty list")
        return
    for s in secrets:
        if not isinstance(s, str) or not s:
            problem(where, f"bad secret {s!r}")
        elif s not in case["transcript"]:
            problem(where, f"secret {s!r} not in the transcript")
        elif CARD.match(s) and not luhn(s):
            problem(where, f"card number {s!r} fails the Luhn check")


def check_policy(name, cases):
    for i, case in enumerate(cases):
        where = f"{name}[{i}]"
        extra = set(case) - POLICY_FIELDS
        if extra:
            problem(where, f"unknown fields {sorted(extra)}")
        if not isinstance(case.get("transcript"), str) or not case["transcript"].strip():
            problem(where, "transcript missing or empty")
            continue
        if not isinstance(case.get("should_store"), bool):
            problem(where, "should_store missing or not a bool")
            continue
        if case["should_store"]:
            if case.get("memory_type") not in TYPES:
                problem(where, f"memory_type {case.get('memory_type')!r} not one of {TYPES}")
        elif "memory_type" in case:
            problem(where, "memory_type present on a negative")
        if not isinstance(case.get("why"), str) or not case["why"].strip():
            problem(where, "why missing or empty")
        if "injection" in case and case["injection"] is not True:
            problem(where, "injection must be true when present")
        if "supersedes" in case:
            if not isinstance(case["supersedes"], str) or not case["supersedes"].strip():
                problem(where, "supersedes must be a non-empty string")
            if case.get("memory_type") not in ("PREFERENCE", "DECISION"):
                problem(where, "supersedes on a case that is not PREFERENCE/DECISION")
        check_secrets(where, case)


def check_secret_set(cases):
    name = "secrets.json"
    if len(cases) != 50:
        problem(name, f"{len(cases)} cases, want exactly 50")
    for i, case in enumerate(cases):
        where = f"{name}[{i}]"
        if set(case) != SECRET_FIELDS:
            problem(where, f"fields {sorted(case)}, want {sorted(SECRET_FIELDS)}")
            continue
        if not isinstance(case["rest_worth_keeping"], bool):
            problem(where, "rest_worth_keeping not a bool")
        if not isinstance(case["kind"], str) or not case["kind"]:
            problem(where, "kind missing")
        if case["kind"] == "card_number":
            for s in case["secrets"]:
                if not CARD.match(s):
                    problem(where, f"card secret {s!r} is not a card number")
        check_secrets(where, case)


def policy_counts(name, cases):
    labels = Counter(c["memory_type"] if c.get("should_store") else "NEGATIVE" for c in cases)
    negatives = labels["NEGATIVE"]
    share = negatives / len(cases) if cases else 0
    print(f"{name}: {len(cases)} transcripts, {len(cases) - negatives} to store, "
          f"{negatives} negatives ({share:.1%})")
    print("  " + ", ".join(f"{t} {labels[t]}" for t in TYPES))
    with_secrets = [c for c in cases if "secrets" in c]
    injections = [c for c in cases if c.get("injection")]
    supersedes = [c for c in cases if "supersedes" in c]
    print(f"  secrets {len(with_secrets)} ({sum(c['should_store'] for c in with_secrets)} stored), "
          f"injections {len(injections)} ({sum(c['should_store'] for c in injections)} stored), "
          f"supersedes {len(supersedes)}")
    return labels, share


def main():
    new = load("new_cases.json")
    dev = load("dev.json")
    held_out = load("heldout.json")
    fresh = load("fresh.json")
    fresh2 = load("fresh2.json")
    fresh3 = load("fresh3.json")
    fresh4 = load("fresh4.json")
    multilingual = load("multilingual.json")
    examples = load("examples.json")
    varied_a = load("examples_varied_a.json")
    varied_b = load("examples_varied_b.json")
    varied_c = load("examples_varied_c.json")
    varied_d = load("examples_varied_d.json")
    secrets = load("secrets.json")
    for name, cases in (("new_cases.json", new), ("dev.json", dev), ("heldout.json", held_out),
                        ("fresh.json", fresh), ("fresh2.json", fresh2),
                        ("fresh3.json", fresh3), ("fresh4.json", fresh4),
                        ("multilingual.json", multilingual), ("examples.json", examples),
                        ("examples_varied_a.json", varied_a), ("examples_varied_b.json", varied_b),
                        ("examples_varied_c.json", varied_c), ("examples_varied_d.json", varied_d)):
        check_policy(name, cases)
    check_secret_set(secrets)
    if problems:
        print("\n".join(problems))
        sys.exit(1)

    overall = Counter()
    for name, cases in (("dev.json", dev), ("heldout.json", held_out)):
        labels, share = policy_counts(name, cases)
        overall += labels
        missing = [t for t in TYPES if labels[t] == 0]
        if missing:
            problem(name, f"no case of {missing}")
        if share < 0.40:
            problem(name, f"negatives {share:.1%} below 40 %")
    policy_counts("new_cases.json (split between the two)", new)
    total = len(dev) + len(held_out)
    print(f"both: {total} transcripts; " + ", ".join(f"{t} {overall[t]}" for t in TYPES)
          + f", negatives {overall['NEGATIVE']}")
    few = [t for t in TYPES if overall[t] < 15]
    if few:
        problem("both", f"fewer than 15 positives of {few}")
    checked = set()
    shared = {key(c) for c in dev} & {key(c) for c in held_out}
    if shared:
        problem("both", f"{len(shared)} transcripts in both dev and held-out")
    if len({c["transcript"] for c in new}) != len(new):
        problem("new_cases.json", "duplicate transcripts")

    later = (("fresh.json", "second held-out set", fresh, 12),
             ("fresh2.json", "third held-out set", fresh2, 15),
             ("fresh3.json", "fourth held-out set", fresh3, 13),
             ("fresh4.json", "fifth held-out set", fresh4, 13),
             ("multilingual.json", "German, French and Spanish held-out set", multilingual, 8),
             ("examples.json", "the vote's training examples", examples, 26),
             ("examples_varied_a.json", "varied training examples", varied_a, 20),
             ("examples_varied_b.json", "varied training examples", varied_b, 20),
             ("examples_varied_c.json", "varied training examples", varied_c, 17),
             ("examples_varied_d.json", "varied training examples", varied_d, 20))
    texts = {"dev.json": dev, "heldout.json": held_out, "fresh.json": fresh,
             "fresh2.json": fresh2, "fresh3.json": fresh3, "fresh4.json": fresh4,
             "multilingual.json": multilingual, "examples.json": examples,
             "examples_varied_a.json": varied_a, "examples_varied_b.json": varied_b,
             "examples_varied_c.json": varied_c, "examples_varied_d.json": varied_d}
    texts = {name: {key(c) for c in cases} for name, cases in texts.items()}
    for name, what, cases, least in later:
        labels, share = policy_counts(f"{name} ({what})", cases)
        missing = [t for t in TYPES if labels[t] == 0]
        if missing:
            problem(name, f"no case of {missing}")
        few = [t for t in TYPES if labels[t] < least]
        if few:
            problem(name, f"fewer than {least} positives of {few}")
        if share < 0.40:
            problem(name, f"negatives {share:.1%} below 40 %")
        if len(texts[name]) != len(cases):
            problem(name, "duplicate transcripts")
        for other, other_texts in texts.items():
            shared = texts[name] & other_texts
            if other != name and shared and (other, name) not in checked:
                problem(name, f"{len(shared)} transcripts also in {other}")
            checked.add((name, other))

    kinds = Counter(c["kind"] for c in secrets)
    keep = sum(c["rest_worth_keeping"] for c in secrets)
    cards = [s for c in secrets if c["kind"] == "card_number" for s in c["secrets"]]
    print(f"secrets.json: {len(secrets)} cases, {sum(len(c['secrets']) for c in secrets)} secrets, "
          f"rest_worth_keeping {keep} true / {len(secrets) - keep} false; "
          f"{len(cards)} card numbers, all pass Luhn")
    print("  " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    if problems:
        print("\n".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
