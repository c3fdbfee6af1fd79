"""Each `rules` confidence tier's share and precision per labelled set; the `certain` tier is what the
router settles without the model, so its precision must be near 100%.

python benchmarks/router_precision.py [more.jsonl ...]

Sets: kaf_dev, real_dev (../shared/data), the shipped sample, the reasoning dev set
(benchmarks/data/reasoning_dev) and the multiple-choice chain-of-thought set (benchmarks/data/mc_cot_dev),
their held-out models reported apart, and any labelled JSONL given.
Targets (issue #21): `certain` >= 99.5% precise on >= 40% of rows, `likely` >= 97%, tiers monotone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.extractors.rules import CONFIDENCE_TIERS, extract_scored
from xfinder_ray.extractors.rules_eval import extraction_matches
from xfinder_ray.judging import judge
from xfinder_ray.records import InvalidRecord, validate
from xfinder_ray.sample_data import read_sample

HERE = Path(__file__).resolve().parent
KAF_DEV = HERE.parents[1] / "shared" / "data" / "kaf_dev.jsonl"
REAL_DEV = KAF_DEV.with_name("real_dev.jsonl")
REASONING_DEV = HERE / "data" / "reasoning_dev" / "reasoning_dev.jsonl"
THINK_DEV = HERE / "data" / "think_dev" / "think_dev.jsonl"
MC_COT_DEV = HERE / "data" / "mc_cot_dev" / "mc_cot_dev.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def evaluate(name: str, rows: list[dict]) -> dict:
    """Per tier: rows, share and extraction precision; and the router's (certain) share."""
    counts = {t: [0, 0] for t in CONFIDENCE_TIERS}
    n = routed = 0
    for r in rows:
        try:
            rec = validate(r)
        except InvalidRecord:
            continue
        n += 1
        e = extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
        right = extraction_matches(
            rec.key_answer_type, rec.answer_range, e.answer, r["gold_key_answer"], judge
        )
        counts[e.confidence][0] += 1
        counts[e.confidence][1] += right
        routed += strict_answer(rec) is not None
    tiers = {
        t: {"rows": m, "share": m / n if n else 0.0, "precision": ok / m if m else None}
        for t, (m, ok) in counts.items()
    }
    cells = " | ".join(
        f"{v['share']:.1%} @ {v['precision']:.1%}" if v["rows"] else "0" for v in tiers.values()
    )
    print(f"| {name} | {n} | {cells} | {routed / n if n else 0:.1%} |")
    return {"set": name, "records": n, "tiers": tiers, "routed": routed}


def main() -> None:
    print("| set | records | certain | likely | unsure | routed |\n|---|---|---|---|---|---|")
    results = []
    for name, path in (("kaf_dev", KAF_DEV), ("real_dev", REAL_DEV)):
        if path.exists():
            results.append(evaluate(name, read_jsonl(path)))
    results.append(evaluate("sample", [r for r in read_sample() if r.get("defect") is None]))
    for name, path in (
        ("reasoning_dev", REASONING_DEV),
        ("mc_cot_dev", MC_COT_DEV),
        ("think_dev", THINK_DEV),
    ):
        if path.exists():
            rows = read_jsonl(path)
            results.append(evaluate(f"{name} (tuned)", [r for r in rows if not r.get("held_out")]))
            results.append(evaluate(f"{name} (held out)", [r for r in rows if r.get("held_out")]))
    for extra in sys.argv[1:]:
        results.append(evaluate(Path(extra).stem, read_jsonl(Path(extra))))
    print("BENCH_JSON " + json.dumps({"router": results}))


if __name__ == "__main__":
    main()
