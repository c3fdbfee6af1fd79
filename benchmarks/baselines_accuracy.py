"""Extraction (and judgment) accuracy of the RegEx baselines on a labelled JSONL file (KAF style).

    .venv/bin/python benchmarks/baselines_accuracy.py [data.jsonl] [--all] [--failures NAME]

Prints the markdown tables of docs/baselines.md: per framework dispatcher (``opencompass``,
``lm-eval``, ``ultraeval``, with ``rules`` for reference), extraction accuracy overall and per
key_answer_type, and judgment accuracy. ``--all`` adds every registered baseline, scored on the
key_answer_types it is meant for (APPLIES). The default file is the shared dev set, ../shared/data/kaf_dev.jsonl from the repository root.

Extraction is correct when the extracted answer equals ``gold_key_answer`` (both ``[No valid
answer]`` counts); for math, a pair of real answers also counts when the project's judge
(``xfinder_ray.judging.judge``, math-verify) finds them equivalent -- the rule of
benchmarks/rules_accuracy.py. Judgment is correct when judging the extracted answer against
``correct_answer`` with that judge gives ``gold_judgment``.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from xfinder_ray.extractors import extractor_identity, get_record_extractor
from xfinder_ray.extractors.baselines import BASELINES
from xfinder_ray.extractors.rules_eval import extraction_matches, load_judge, load_rows
from xfinder_ray.records import NO_VALID_ANSWER, validate

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "kaf_dev.jsonl"
DISPATCHERS = ("opencompass", "lm-eval", "ultraeval", "rules")
TYPES = ("alphabet_option", "short_text", "categorical_label", "math")
TEXT = ("short_text", "categorical_label")
# The key_answer_types a single-purpose baseline is meant for (it returns [No valid answer] or an
# arbitrary string elsewhere); --all scores it on those rows only.
APPLIES = {
    "opencompass:first_option": ("alphabet_option",),
    "opencompass:first_capital": ("alphabet_option",),
    "opencompass:gsm8k": ("math",),
    "opencompass:math_v2": ("math",),
    "opencompass:general": TEXT,
    "lm-eval:gsm8k-strict": ("math",),
    "lm-eval:gsm8k-flexible": ("math",),
    "lm-eval:gsm8k-cot": ("math",),
    "lm-eval:multi_choice": ("alphabet_option", *TEXT),
    "lm-eval:math-boxed": ("math",),
    "ultraeval:gsm8k": ("math",),
    "ultraeval:math": ("math",),
    "ultraeval:single_choice": ("alphabet_option",),
    "ultraeval:agieval_single_answer": ("alphabet_option",),
    "ultraeval:prefix_match": ("alphabet_option", *TEXT),
    "ultraeval:qa_match": ("alphabet_option",),
}


def score(name: str, rows: list[dict], records: list, judge) -> list[dict]:
    extract = get_record_extractor(name)
    out = []
    for row, rec in zip(rows, records, strict=True):
        extracted = extract(rec)
        gold = row["gold_key_answer"]
        ext_ok = extraction_matches(rec.key_answer_type, rec.answer_range, extracted, gold, judge)
        verdict = (
            False
            if extracted == NO_VALID_ANSWER or judge is None
            else bool(judge(rec.key_answer_type, rec.answer_range, extracted, rec.correct_answer))
        )
        out.append(
            {
                "id": rec.record_id,
                "kat": rec.key_answer_type,
                "task": rec.task,
                "extracted": extracted,
                "gold": gold,
                "extraction_ok": ext_ok,
                "judgment_ok": verdict == bool(row["gold_judgment"]),
            }
        )
    return out


def pct(items: list[dict], key: str) -> str:
    if not items:
        return "-"
    k = sum(r[key] for r in items)
    return f"{k / len(items):.1%} ({k})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT), help="labelled JSONL (default: %(default)s)")
    ap.add_argument("--all", action="store_true", help="also score every registered baseline")
    ap.add_argument("--failures", metavar="NAME", help="list the rows NAME extracts wrongly")
    args = ap.parse_args(argv)

    rows = load_rows(args.path)
    records = [validate(r) for r in rows]
    judge = load_judge()
    counts = defaultdict(int)
    for rec in records:
        counts[rec.key_answer_type] += 1
    how = "xfinder_ray.judging.judge (math-verify)" if judge else "simple normalized equality"
    print(f"`{Path(args.path).name}`: {len(rows)} rows ({', '.join(f'{t} {counts[t]}' for t in TYPES)}); ")
    print(f"math extraction also counts when equivalent by {how}.\n")

    names = list(DISPATCHERS) + ([n for n in BASELINES if n not in DISPATCHERS] if args.all else [])
    scored = {name: score(name, rows, records, judge) for name in names}

    print("| extractor | extraction | " + " | ".join(TYPES) + " | judgment |")
    print("|---|---:|" + "---:|" * len(TYPES) + "---:|")
    for name in names:
        kinds = APPLIES.get(name, TYPES)
        items = [r for r in scored[name] if r["kat"] in kinds]
        by_type = [
            pct([r for r in items if r["kat"] == t], "extraction_ok") if t in kinds else "n/a" for t in TYPES
        ]
        print(
            f"| `{name}` | {pct(items, 'extraction_ok')} | "
            + " | ".join(by_type)
            + f" | {pct(items, 'judgment_ok')} |"
        )
    strata = sorted({r.get("stratum") for r in rows if r.get("stratum")})
    if strata:  # labelled real sets (real_dev) are drawn in strata: uniform and hard
        print(
            "\n| extractor | "
            + " | ".join(f"{s}: {t}" for s in strata for t in ("extraction", "judgment"))
            + " |"
        )
        print("|---|" + "---:|" * (2 * len(strata)))
        for name in DISPATCHERS:
            cells = []
            for s in strata:
                items = [r for r, row in zip(scored[name], rows, strict=True) if row.get("stratum") == s]
                cells += [pct(items, "extraction_ok"), pct(items, "judgment_ok")]
            print(f"| `{name}` | " + " | ".join(cells) + " |")
        print("\n| extractor | " + " | ".join(f"{t} judgment" for t in TYPES if counts[t]) + " |")
        print("|---|" + "---:|" * sum(1 for t in TYPES if counts[t]))
        for name in DISPATCHERS:
            cells = [
                pct([r for r in scored[name] if r["kat"] == t], "judgment_ok") for t in TYPES if counts[t]
            ]
            print(f"| `{name}` | " + " | ".join(cells) + " |")
    print("\nIdentities: " + "; ".join(f"`{n}` = `{extractor_identity(n)}`" for n in names[:3]))

    if args.failures:
        items = scored.get(args.failures) or score(args.failures, rows, records, judge)
        print("\n| id | task | type | extracted | gold |\n|---|---|---|---|---|")
        for r in items:
            if not r["extraction_ok"]:
                ext = r["extracted"].replace("|", "\\|").replace("\n", " ")[:60]
                print(f"| {r['id']} | {r['task']} | {r['kat']} | `{ext}` | `{r['gold']}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
