"""Behaviour unchanged? Digests of what users see, compared with a committed reference.

    scripts/loopback.sh .venv/bin/python scripts/check_behaviour.py           # compare (exit 1 on a change)
    scripts/loopback.sh .venv/bin/python scripts/check_behaviour.py --write   # record a new reference

What it digests: the `rules` answers (and confidence tiers) on the labelled dev sets and on the shipped
sample, their accuracy figures, and the demo job's tables (the shipped sample scored with `rules`:
leaderboard.md, by_model_task.csv, by_model.csv). A refactor must leave every digest as it was; a
deliberate behaviour change records a new reference in the same commit, so the diff shows it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
REFERENCE = ROOT / "scripts" / "behaviour_reference.json"


def _digest(items: list) -> str:
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()[:16]


def extraction_digests() -> dict:
    from xfinder_ray.extractors.rules import extract_scored
    from xfinder_ray.extractors.rules_eval import load_judge, load_rows, score_rows
    from xfinder_ray.records import validate
    from xfinder_ray.sample_data import read_sample

    out: dict = {}
    sets = {name: SHARED / f"{name}.jsonl" for name in ("kaf_dev", "real_dev")}
    for name, path in sets.items():
        if not path.exists():
            continue
        rows = load_rows(path)
        scored = score_rows(rows, judge=load_judge())
        tiers = [
            extract_scored(
                r["key_answer_type"], r["question"], r["llm_output"], validate(r).answer_range
            ).confidence
            for r in rows
        ]
        out[name] = {
            "answers": _digest([s["extracted"] for s in scored]),
            "confidence": _digest(tiers),
            "extraction_ok": sum(s["extraction_ok"] for s in scored),
            "judgment_ok": sum(s["judgment_ok"] for s in scored),
            "rows": len(rows),
        }
    sample = [r for r in read_sample() if r.get("defect") is None]
    answers = []
    for r in sample:
        rec = validate(r)
        e = extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
        answers.append([e.answer, e.confidence])
    out["sample"] = {"answers": _digest(answers), "rows": len(sample)}
    return out


def demo_digests() -> dict:
    from xfinder_ray import score

    with tempfile.TemporaryDirectory() as tmp:
        result = score("configs/local.yaml", [f"output={tmp}/out", "extractor.name=rules"])
        acc = Path(tmp) / "out" / "accuracy"
        files = ("leaderboard.md", "by_model_task.csv", "by_model.csv")
        out = {name: hashlib.sha256((acc / name).read_bytes()).hexdigest()[:16] for name in files}
        out["counts"] = result.manifest["counts"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="record the current behaviour as the reference")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo job (no Ray)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    current = {"extraction": extraction_digests()}
    if not args.no_demo:
        current["demo"] = demo_digests()
    if args.write:
        REFERENCE.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
        print(f"wrote {REFERENCE.relative_to(ROOT)}")
        return 0
    reference = json.loads(REFERENCE.read_text())
    changed = []
    for part, values in current.items():
        for key, value in values.items():
            want = reference.get(part, {}).get(key)
            if want is not None and want != value:
                changed.append(f"{part}.{key}: reference {want} != now {value}")
    for line in changed:
        print("CHANGED", line)
    print("behaviour unchanged" if not changed else f"{len(changed)} digest(s) changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
