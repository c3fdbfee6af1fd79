"""`rules` answers over a whole published output pool, and what a change does to them.

    # each pool is a git clone (e.g. the search tool's fetch of TIGER-AI-Lab/MMLU-Pro)
    .venv/bin/python benchmarks/pool_answers.py dump mmlu-pro PATH/TO/MMLU-Pro new.json
    .venv/bin/python benchmarks/pool_answers.py dump skythought PATH/TO/SkyThought new.json --judge
    # the same with an older commit's code: a worktree of it on PYTHONPATH
    git worktree add /tmp/old HEAD~3 && PYTHONPATH=/tmp/old .venv/bin/python benchmarks/pool_answers.py dump ...
    .venv/bin/python benchmarks/pool_answers.py compare old.json new.json [--show 30]

`dump` writes {record: [answer, confidence, reason, judgment, source_judgment]}; `compare` counts the
answers that changed, by (was no answer, is no answer, reason), and lists the first ones, so that
every changed class can be read before a change lands (docs/accuracy.md, "Published output pools").
Pools (read from git objects; nothing is copied into this repository):
- mmlu-pro: TIGER-AI-Lab/MMLU-Pro `eval_results/*.zip` at HEAD (5-shot CoT outputs of 29 models);
- skythought: NovaSky-AI/SkyThought's `evaluation/outputs/**.jsonl`, deleted later, at three commits.
"""

from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator

SKYTHOUGHT_COMMITS = (
    "f7bcf0b4e7d429e798a39524acd4a68031c905ba",
    "6840eb7df638ab178d20122099286db08e376851",
    "e78bc0515831b0a7e0ad045a7860c52aba9bfe0f",
)


def _tree(repo: str, rev: str) -> list[tuple[str, str]]:
    """(blob id, path) of every file at rev."""
    out = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", rev], capture_output=True, text=True, check=True
    )
    rows = []
    for line in out.stdout.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            rows.append((parts[2], path))
    return rows


def _blob(repo: str, blob: str) -> bytes | None:
    """A file's bytes, or None where the clone lacks it (the largest files may be left out)."""
    out = subprocess.run(["git", "-C", repo, "cat-file", "blob", blob], capture_output=True)
    return out.stdout if out.returncode == 0 else None


def mmlu_pro(repo: str) -> Iterator[dict]:
    for blob, path in _tree(repo, "HEAD"):
        if not (path.startswith("eval_results/") and path.endswith(".zip")):
            continue
        data = _blob(repo, blob)
        try:
            z = zipfile.ZipFile(io.BytesIO(data or b""))
        except zipfile.BadZipFile:
            continue  # a Git LFS pointer: the archive itself is not in the clone
        model = path.split("model_outputs_", 1)[-1].removesuffix(".zip").removesuffix("_5shots")
        for member in z.namelist():
            if not member.endswith(".json"):
                continue
            try:
                data = json.loads(z.read(member))
            except ValueError:
                continue
            for r in data.values() if isinstance(data, dict) else data:
                text = r.get("generated_text") or r.get("model_outputs") if isinstance(r, dict) else None
                if not isinstance(text, str) or "options" not in r:
                    continue
                options = [[chr(65 + i), str(o)] for i, o in enumerate(r["options"])]
                yield {
                    "record_id": f"{model}/{r['question_id']}",
                    "key_answer_type": "alphabet_option",
                    "question": r["question"]
                    + "\nAnswer Choices: "
                    + " ".join(f"({a}) {o}" for a, o in options),
                    "llm_output": text,
                    "standard_answer_range": options,
                    "correct_answer": r.get("answer"),
                    "source_judgment": r.get("pred") == r.get("answer") if r.get("pred") else None,
                }


def skythought(repo: str) -> Iterator[dict]:
    seen = set()
    for commit in SKYTHOUGHT_COMMITS:
        for blob, path in _tree(repo, commit):
            if "evaluation/outputs/" not in path or not path.endswith(".jsonl"):
                continue
            segs = path.split("evaluation/outputs/", 1)[1].split("/")
            k = next((i for i, s in enumerate(segs) if s.endswith("_eval")), None)
            if k is None:
                continue
            model, task = "/".join(segs[max(0, k - 2) : k]), segs[k].removesuffix("_eval")
            if (model, task) in seen:
                continue
            seen.add((model, task))
            for line in (_blob(repo, blob) or b"").decode("utf-8", "replace").splitlines():
                try:
                    r = json.loads(line)
                    code = r["code"] if isinstance(r["code"], list) else ast.literal_eval(r["code"])
                    score = r.get("score")
                    score = score if isinstance(score, list) else ast.literal_eval(score or "[None]")
                except (ValueError, SyntaxError, KeyError, TypeError):
                    continue
                if not code:
                    continue
                yield {
                    "record_id": f"{model}/{task}/{r.get('idx')}",
                    "key_answer_type": "math",
                    "question": r.get("question") or r.get("problem") or "",
                    "llm_output": code[0],
                    "standard_answer_range": None,
                    "correct_answer": str(r.get("gt") if r.get("gt") is not None else r.get("answer")),
                    "source_judgment": score[0] if score else None,
                }


POOLS = {"mmlu-pro": mmlu_pro, "skythought": skythought}


def dump(pool: str, repo: str, out: str, with_judgment: bool) -> int:
    from xfinder_ray.extractors.rules import extract_scored
    from xfinder_ray.judging import judge
    from xfinder_ray.records import NO_VALID_ANSWER, parse_answer_range

    answers = {}
    for r in POOLS[pool](repo):
        rng = parse_answer_range(r["standard_answer_range"], r["key_answer_type"])
        e = extract_scored(r["key_answer_type"], r["question"], r["llm_output"], rng)
        verdict = None
        if with_judgment:
            verdict = e.answer != NO_VALID_ANSWER and bool(
                judge(r["key_answer_type"], rng, e.answer, r["correct_answer"])
            )
        answers[r["record_id"]] = [e.answer, e.confidence, e.reason, verdict, r["source_judgment"]]
    with open(out, "w") as f:
        json.dump(answers, f)
    agree = [v[3] == v[4] for v in answers.values() if v[3] is not None and v[4] is not None]
    print(f"{pool}: {len(answers)} responses -> {out}", end="")
    print(f"; judgment agrees with the source's on {sum(agree)} of {len(agree)}" if agree else "")
    return 0


def compare(old_path: str, new_path: str, show: int) -> int:
    with open(old_path) as f:
        old = json.load(f)
    with open(new_path) as f:
        new = json.load(f)
    common = [k for k in old if k in new]
    changed = [k for k in common if old[k][0] != new[k][0]]
    tiers = [k for k in common if old[k][0] == new[k][0] and old[k][1:3] != new[k][1:3]]
    none = "[No valid answer]"
    classes = collections.Counter((old[k][0] == none, new[k][0] == none, new[k][2]) for k in changed)
    print(f"{len(common)} responses in both; {len(changed)} answers changed, {len(tiers)} tiers or reasons")
    for (was_none, is_none, reason), n in classes.most_common():
        print(
            f"  {n:6d}  {'no answer' if was_none else 'answer'} -> {'no answer (' + reason + ')' if is_none else 'answer'}"
        )
    for k in changed[:show]:
        print(f"  {k}: {old[k][0][:60]!r} -> {new[k][0][:60]!r} ({new[k][1]})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="rules answers over a pool")
    d.add_argument("pool", choices=sorted(POOLS))
    d.add_argument("repo", help="the pool's git clone")
    d.add_argument("out", help="the answers' JSON file")
    d.add_argument("--judge", action="store_true", help="judge each answer too (slower)")
    c = sub.add_parser("compare", help="what changed between two dumps")
    c.add_argument("old")
    c.add_argument("new")
    c.add_argument("--show", type=int, default=30, help="list this many changed answers")
    args = ap.parse_args(argv)
    if args.command == "dump":
        return dump(args.pool, args.repo, args.out, args.judge)
    return compare(args.old, args.new, args.show)


if __name__ == "__main__":
    sys.exit(main())
