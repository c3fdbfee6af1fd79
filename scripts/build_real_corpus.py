#!/usr/bin/env python3
"""Build benchmarks/data/zeroeval/: a compact corpus of real LLM responses from the public ZeroEval
repository (https://github.com/WildEval/ZeroEval, Apache-2.0), in this project's input record schema.

    .venv/bin/python scripts/build_real_corpus.py --mirror /path/to/ZeroEval.git --out benchmarks/data/zeroeval

The source is a git directory of the repository (a bare clone is enough). Files are read with
`git show <commit>:<path>` at fixed commits, so the corpus does not depend on later changes upstream.
Deterministic: a fixed seed, sorted inputs, no extraction of answers involved in the sampling.

What is sampled (see benchmarks/data/zeroeval/README.md):
  * GSM8K and MATH-L5 (`result_dirs/gsm`, `result_dirs/math-l5` at HEAD_COMMIT): per task one seeded
    set of question ids, then every readable model file's records for those ids, so every model answers
    the same questions (per-model accuracy is comparable, and the files look like a leaderboard's).
  * MMLU-Redux: its result files at HEAD are not in the mirror; the three versions that are
    (MMLU_SOURCES, the same ones the shared data folder's build_real_dev.py uses) are taken whole.
  * Every (file, id) in the labelled dev set (real_dev.jsonl's `source`) is left out, so the corpus never
    overlaps it; the sampling is done before that exclusion, so it does not depend on the dev set's size.
  * Every record must pass xfinder_ray.records.validate; the few that do not are left out and counted.

Responses (`llm_output`: the first element of the record's `output`) are kept byte for byte. The
repository's LICENSE is copied beside the data; README.md there is written by hand.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xfinder_ray.records import FIELDS, MATH_ANSWER_RANGE, InvalidRecord, validate  # noqa: E402

REPO = "WildEval/ZeroEval"
# The repository's HEAD when the corpus was built (the same commit real_dev.jsonl's GSM8K/MATH come from).
HEAD_COMMIT = "8c1485edf12c6efb5f69135a562927c5ad484059"
# (model, commit, path): the only MMLU-Redux result files whose contents are in the mirror (at HEAD every
# one is listed but absent). Athene-70B has three readable versions; the newest full run is used.
MMLU_SOURCES = [
    ("Athene-70B", "5db1a561249211b8c7ce0eb7aa4f26ddaf40fdfe", "result_dirs/mmlu-redux/Athene-70B.json"),
    (
        "Qwen2-72B-Instruct",
        "e26c69c4f9d4268d9044c72e2b38a25c29f4b1e3",
        "result_dirs/mmlu-redux/Qwen2-72B-Instruct.json",
    ),
    (
        "Meta-Llama-3.1-405B-Instruct@hyperbolic",
        "f90d6d947ed9bed3f5af354d48f297929d8b0666",
        "result_dirs/mmlu-redux/Meta-Llama-3.1-405B-Instruct@hyperbolic.json",
    ),
]
# task folder -> (task name in the corpus, questions sampled per task = records per model file)
MATH_TASKS = {"gsm": ("GSM8K", 300), "math-l5": ("MATH-L5", 300)}
SEED = 20241201
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DEFAULT_EXCLUDE = ROOT.parent / "shared" / "data" / "real_dev.jsonl"
COLUMNS = FIELDS  # the job's input record schema (xfinder_ray.records)
SOURCE_TYPE = pa.struct([(k, pa.string()) for k in ("repo", "commit", "file", "id")])
SCHEMA = pa.schema([*[(c, pa.string()) for c in COLUMNS], ("source", SOURCE_TYPE)])


class Mirror:
    """Read-only access to a git directory of the ZeroEval repository."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args], check=True, capture_output=True
        ).stdout

    def readable_json_files(self, commit: str, folder: str) -> list[str]:
        """The folder's .json files whose blobs are present (a partial mirror lists files it lacks)."""
        paths, shas = [], []
        for line in self.git("ls-tree", commit, folder + "/").decode().splitlines():
            meta, path = line.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind == "blob" and path.endswith(".json"):
                paths.append(path)
                shas.append(sha)
        check = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "cat-file", "--batch-check"],
            input="\n".join(shas) + "\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        return sorted(p for p, c in zip(paths, check, strict=True) if not c.endswith(" missing"))

    def load(self, commit: str, path: str) -> list[dict[str, Any]]:
        return json.loads(self.git("show", f"{commit}:{path}"))


def as_list(value: Any) -> list:
    # MMLU-Redux files store `output` and `choices` as Python reprs, the others as JSON lists.
    return ast.literal_eval(value) if isinstance(value, str) else value


def first_generation(rec: dict[str, Any]) -> str:
    out = as_list(rec["output"])
    return out[0] if out else ""


def source(commit: str, path: str, rid: str) -> dict[str, str]:
    return {"repo": REPO, "commit": commit, "file": path, "id": str(rid)}


def record(model: str, folder: str, rid: str, **fields: str) -> dict[str, Any]:
    # record_id: unique and readable; source keeps the exact provenance.
    return {"record_id": f"zeroeval/{folder}/{model}/{rid}", "model": model, **fields}


def mmlu_records(mirror: Mirror, stats: Counter) -> list[dict[str, Any]]:
    rows = []
    for model, commit, path in MMLU_SOURCES:
        for rec in mirror.load(commit, path):
            choices = as_list(rec["choices"])
            if rec["correct_answer"] not in choices:
                stats["mmlu: correct answer not among the choices"] += 1
                continue
            row = record(
                model,
                "mmlu-redux",
                rec["id"],
                task="MMLU-Redux/" + rec["config"],
                key_answer_type="alphabet_option",
                # As real_dev.jsonl writes it: the question, then the options on one line.
                question=rec["question"].strip()
                + "\nAnswer Choices: "
                + " ".join(f"({LETTERS[i]}) {c}" for i, c in enumerate(choices)),
                llm_output=first_generation(rec),
                standard_answer_range=json.dumps(
                    [[LETTERS[i], c] for i, c in enumerate(choices)], ensure_ascii=False
                ),
                correct_answer=LETTERS[choices.index(rec["correct_answer"])],
            )
            row["source"] = source(commit, path, rec["id"])
            rows.append(row)
    return rows


def math_records(mirror: Mirror, folder: str, label: str, per_file: int, stats: Counter) -> list[dict]:
    files = mirror.readable_json_files(HEAD_COMMIT, f"result_dirs/{folder}")
    data = {path: mirror.load(HEAD_COMMIT, path) for path in files}
    # One question set for every model: drawn from the ids every file has (a few files are partial runs),
    # in the benchmark's order.
    common = set.intersection(*({str(r["id"]) for r in recs} for recs in data.values()))
    order = [str(r["id"]) for r in data[files[0]] if str(r["id"]) in common]
    if len(order) < per_file:
        raise SystemExit(f"{folder}: only {len(order)} question ids common to all files")
    wanted = set(random.Random(f"{SEED}/{folder}").sample(order, per_file))
    stats[f"{folder}: files"] = len(files)
    stats[f"{folder}: ids common to all files"] = len(common)
    rows = []
    for path in files:
        model = os.path.basename(path)[: -len(".json")]
        for rec in data[path]:
            rid = str(rec["id"])
            if rid not in wanted:
                continue
            if folder == "gsm":
                question, gold = rec["question"], rec["answer"].replace("#", "").strip()
            else:
                question, gold = rec["problem"], rec["answer"]
            row = record(
                model,
                folder,
                rid,
                task=label,
                key_answer_type="math",
                question=question,
                llm_output=first_generation(rec),
                standard_answer_range=MATH_ANSWER_RANGE,
                correct_answer=str(gold),
            )
            row["source"] = source(HEAD_COMMIT, path, rid)
            rows.append(row)
    return rows


def excluded_sources(path: Path) -> set[tuple[str, str]]:
    with open(path, encoding="utf-8") as f:
        return {(s["file"], str(s["id"])) for s in (json.loads(line)["source"] for line in f if line.strip())}


def build(mirror: Mirror, exclude: set[tuple[str, str]]) -> tuple[dict[str, list[dict]], Counter]:
    stats: Counter = Counter()
    by_task = {"mmlu-redux": mmlu_records(mirror, stats)}
    for folder, (label, per_file) in MATH_TASKS.items():
        by_task[folder] = math_records(mirror, folder, label, per_file, stats)
    out: dict[str, list[dict]] = {}
    for folder, rows in by_task.items():
        kept = []
        for row in rows:
            if (row["source"]["file"], row["source"]["id"]) in exclude:
                stats[f"{folder}: in the labelled dev set (left out)"] += 1
                continue
            try:
                validate(row)
            except InvalidRecord as e:
                stats[f"{folder}: does not validate: {e}"] += 1
                continue
            kept.append(row)
        ids = [r["record_id"] for r in kept]
        assert len(ids) == len(set(ids)), f"{folder}: duplicate record ids"
        out[folder] = kept
    return out, stats


def write(out_dir: Path, by_task: dict[str, list[dict]]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for folder, rows in sorted(by_task.items()):
        table = pa.Table.from_pylist(rows, schema=SCHEMA)
        path = out_dir / f"{folder}.parquet"
        # zstd at a high level: the corpus is committed, so size matters more than write time.
        pq.write_table(
            table, path, compression="zstd", compression_level=19, row_group_size=8192, use_dictionary=True
        )
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", required=True, help="git directory of github.com/WildEval/ZeroEval")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "zeroeval"))
    ap.add_argument(
        "--exclude",
        default=str(DEFAULT_EXCLUDE),
        help="JSONL whose `source` (file, id) pairs are left out (the labelled real_dev set); required, "
        "so a rebuild never overlaps it silently",
    )
    args = ap.parse_args(argv)
    exclude = excluded_sources(Path(args.exclude))
    mirror = Mirror(args.mirror)
    by_task, stats = build(mirror, exclude)
    paths = write(Path(args.out), by_task)
    # The upstream license travels with the data (Apache-2.0 section 4(a)).
    (Path(args.out) / "LICENSE").write_bytes(mirror.git("show", f"{HEAD_COMMIT}:LICENSE"))
    for k, v in sorted(stats.items()):
        print(f"{k}: {v}")
    total = 0
    for folder, rows in sorted(by_task.items()):
        total += len(rows)
        print(f"{folder}: {len(rows)} records, {len({r['model'] for r in rows})} models")
    size = sum(p.stat().st_size for p in paths)
    print(
        f"total: {total} records, {len({r['model'] for rs in by_task.values() for r in rs})} models, "
        f"{size / 1e6:.2f} MB in {len(paths)} files under {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
