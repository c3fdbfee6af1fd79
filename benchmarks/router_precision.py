"""Share routed and precision of the strict router on labelled data (kaf_dev, the shipped sample, real_dev).

python benchmarks/router_precision.py [path/to/kaf_dev.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.extractors.rules_eval import extraction_matches
from xfinder_ray.judging import judge
from xfinder_ray.records import InvalidRecord, validate
from xfinder_ray.sample_data import read_sample

KAF_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "kaf_dev.jsonl"
REAL_DEV = KAF_DEV.with_name("real_dev.jsonl")


def evaluate(name: str, rows: list[dict]) -> dict:
    n = routed = exact = judged_ok = 0
    for r in rows:
        try:
            rec = validate(r)
        except InvalidRecord:
            continue
        n += 1
        answer = strict_answer(rec)
        if answer is None:
            continue
        routed += 1
        exact += extraction_matches(
            rec.key_answer_type, rec.answer_range, answer, r["gold_key_answer"], judge
        )
        judged_ok += (
            judge(rec.key_answer_type, rec.answer_range, answer, rec.correct_answer) == r["gold_judgment"]
        )
    out = {
        "set": name,
        "records": n,
        "routed": routed,
        "share": routed / n,
        "precision": exact / routed if routed else None,
        "judgment_accuracy": judged_ok / routed if routed else None,
    }
    print(f"| {name} | {n} | {routed} | {routed / n:.1%} | {exact}/{routed} | {judged_ok}/{routed} |")
    return out


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else KAF_DEV
    print(
        "| set | records | routed | share | extraction exact | judgment correct |\n|---|---|---|---|---|---|"
    )
    results = [evaluate("kaf_dev", [json.loads(x) for x in path.read_text().splitlines() if x.strip()])]
    results.append(evaluate("sample", [r for r in read_sample() if r.get("defect") is None]))
    if REAL_DEV.exists():  # real responses: the share the router can settle is what matters most
        results.append(
            evaluate("real_dev", [json.loads(x) for x in REAL_DEV.read_text().splitlines() if x.strip()])
        )
    print("BENCH_JSON " + json.dumps({"router": results}))


if __name__ == "__main__":
    main()
