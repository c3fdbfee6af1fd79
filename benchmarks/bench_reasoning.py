"""`rules` on reasoning-model output, measured side by side in one run (issue #21):

(a) per-record cost by response length: `rules` and the `lm-eval` re-implementation, single process,
    over the real corpora (benchmarks/data/zeroeval: chat chain-of-thought; benchmarks/data/
    reasoning_dev: reasoning models, thoughts up to ~100k characters), in length buckets.
(b) the whole `score` job with `rules` (`xfinder-ray score`, configs/local.yaml, a fresh local Ray
    instance; wall time from the command's start, Ray's start included) on --rows records: the
    ZeroEval corpus with the reasoning set tiled in at --reasoning-share of the rows.
(c) one `xfinder-ray extract --extractor rules` process over the same rows (JSONL on stdin, out on
    stdout), the baseline the job must beat by 1.5 x on 2 cores; and the single-process ratio of
    `rules` to `lm-eval` on the same rows (target >= 0.5).

    scripts/loopback.sh .venv/bin/python benchmarks/bench_reasoning.py                 # 100k rows
    scripts/loopback.sh .venv/bin/python benchmarks/bench_reasoning.py --rows 20000    # quicker
    .venv/bin/python benchmarks/bench_reasoning.py --no-job                            # (a) and the ratio only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pipeline import cold_verdict_env  # noqa: E402
from real_corpus import load_real_corpus  # noqa: E402

from xfinder_ray.extractors import get_record_extractor  # noqa: E402
from xfinder_ray.extractors.rules import candidates  # noqa: E402
from xfinder_ray.records import FIELDS, validate  # noqa: E402

REASONING_DEV = ROOT / "benchmarks" / "data" / "reasoning_dev" / "reasoning_dev.jsonl"
MC_COT_DEV = ROOT / "benchmarks" / "data" / "mc_cot_dev" / "mc_cot_dev.jsonl"
BUCKETS = ((2_000, "< 2k chars"), (8_000, "2k-8k"), (32_000, "8k-32k"), (10**9, ">= 32k"))
JOB_TARGET, JOB_RATIO_TARGET, RULES_RATIO_TARGET = 3000.0, 1.5, 0.5
BIN = Path(sys.executable).parent


def input_rows(rows: int, reasoning_share: float, seed: int = 0) -> list[dict]:
    """`rows` records: the ZeroEval corpus and the reasoning set, tiled with distinct record_ids."""
    chat = [{k: r[k] for k in FIELDS} for r in load_real_corpus().to_pylist()]
    long = [
        {**{k: r.get(k) for k in FIELDS}, "record_id": r["id"]}
        for r in map(json.loads, REASONING_DEV.read_text().splitlines())
    ]
    rng = random.Random(seed)
    n_long = int(rows * reasoning_share)
    picked = [rng.choice(long) for _ in range(n_long)] + [chat[i % len(chat)] for i in range(rows - n_long)]
    rng.shuffle(picked)
    return [{**r, "record_id": f"{r['record_id']}#{i}"} for i, r in enumerate(picked)]


def cost_by_length(rows: list[dict]) -> dict:
    """Microseconds per record of rules and lm-eval, per response-length bucket (single process)."""
    out = {}
    extractors = {name: get_record_extractor(name) for name in ("rules", "lm-eval")}
    recs = [validate(r) for r in rows]
    for fn in extractors.values():  # warm-up: compiled patterns, caches of answer ranges
        for rec in recs[:200]:
            fn(rec)
    for limit, label in BUCKETS:
        lo = max([b for b, _ in BUCKETS if b < limit], default=0)
        sel = [r for r in recs if lo <= len(r.llm_output or "") < limit][:3000]
        if not sel:
            continue
        row = {"records": len(sel), "mean_chars": sum(len(r.llm_output) for r in sel) // len(sel)}
        for name, fn in extractors.items():
            t0 = time.perf_counter()
            for rec in sel:
                fn(rec)
            row[f"{name}_us"] = round((time.perf_counter() - t0) / len(sel) * 1e6, 1)
        row["rules_over_lm_eval_speed"] = round(row["lm-eval_us"] / row["rules_us"], 3)
        out[label] = row
        print(f"  {label:>10}: {row}", flush=True)
    return out


def run_extract_process(jsonl: Path) -> float:
    """Wall seconds of one `xfinder-ray extract --extractor rules` over the JSONL file."""
    t0 = time.perf_counter()
    with jsonl.open("rb") as src:
        subprocess.run(
            [str(BIN / "xfinder-ray"), "extract", "--extractor", "rules"],
            stdin=src,
            stdout=subprocess.DEVNULL,
            check=True,
        )
    return time.perf_counter() - t0


def run_score_job(folder: Path, out: Path) -> float:
    """Wall seconds of `xfinder-ray score` with rules on the Parquet folder, Ray's start included."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            str(BIN / "xfinder-ray"),
            "score",
            "--config",
            str(ROOT / "configs" / "local.yaml"),
            f"input={folder}",
            f"output={out}",
            "extractor.name=rules",
            "output.overwrite=true",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **cold_verdict_env()},  # the job starts as on a new machine
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return time.perf_counter() - t0


def _with_cold_ranges(fn):
    """fn, with rules' answer-range index cache emptied before each record (both extractors pay the
    call, only rules uses the cache)."""
    clear = candidates._build_index.cache_clear

    def cold(rec):
        clear()
        return fn(rec)

    return cold


def single_process_ratio(rows: list[dict], passes: int = 3, cold_ranges: bool = False) -> dict:
    """records/s of rules and lm-eval over the same rows, one process: `passes` alternating passes
    each, the best pass of each counted (as timeit does: a slower pass measured the machine's other
    work -- Ray, CI, the page cache -- not the extractor). `cold_ranges`: rules' answer-range index
    cache is emptied before each record, as in a leaderboard job read model by model, where every
    question's options are new to the process (rows tiled from a small set would find them built)."""
    recs = [validate(r) for r in rows]
    extractors = {name: get_record_extractor(name) for name in ("rules", "lm-eval")}
    if cold_ranges:
        extractors = {name: _with_cold_ranges(fn) for name, fn in extractors.items()}
    for fn in extractors.values():
        for rec in recs[:200]:
            fn(rec)
    best = dict.fromkeys(extractors, float("inf"))
    for _ in range(passes):
        for name, fn in extractors.items():
            t0 = time.perf_counter()
            for rec in recs:
                fn(rec)
            best[name] = min(best[name], time.perf_counter() - t0)
    rps = {name: len(recs) / seconds for name, seconds in best.items()}
    return {
        "rules_rps": round(rps["rules"]),
        "lm_eval_rps": round(rps["lm-eval"]),
        "ratio": round(rps["rules"] / rps["lm-eval"], 3),
        "passes": passes,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--reasoning-share", type=float, default=0.1)
    ap.add_argument("--file-rows", type=int, default=10_000)
    ap.add_argument("--no-job", action="store_true", help="only (a) and the single-process ratio: no Ray job")
    args = ap.parse_args()
    rows = input_rows(args.rows, args.reasoning_share)
    chars = sum(len(r["llm_output"] or "") for r in rows)
    print(
        f"input: {len(rows)} rows, {args.reasoning_share:.0%} reasoning-model responses, {chars / 1e6:.0f}M chars"
    )
    print("(a) per-record cost by response length (single process):", flush=True)
    results: dict = {"rows": len(rows), "reasoning_share": args.reasoning_share}
    results["by_length"] = cost_by_length(rows)
    results["single_process"] = single_process_ratio(rows[:20_000])
    sp = results["single_process"]
    print(
        f"single process on 20k of the rows: {sp} (target rules/lm-eval >= {RULES_RATIO_TARGET})", flush=True
    )
    # Multiple-choice chain of thought (MMLU-Pro, 29 models), where lm-eval's one "(X)" regex is
    # cheapest and rules reads each option's text: reported beside the target's rows, not instead.
    mc = [
        {**{k: r.get(k) for k in FIELDS}, "record_id": r["id"]}
        for r in map(json.loads, MC_COT_DEV.read_text().splitlines())
    ]
    mc = [{**r, "record_id": f"{r['record_id']}#{i}"} for i in range(30) for r in mc]
    results["single_process_mc_cot"] = single_process_ratio(mc, cold_ranges=True)
    print(
        f"single process on {len(mc)} multiple-choice chain-of-thought rows (mc_cot_dev tiled, ranges cold): "
        f"{results['single_process_mc_cot']}",
        flush=True,
    )
    if args.no_job:
        print("BENCH_JSON " + json.dumps({"reasoning": results}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder, jsonl = Path(tmp) / "in", Path(tmp) / "in.jsonl"
        folder.mkdir()
        for i in range(0, len(rows), args.file_rows):
            pq.write_table(
                pa.Table.from_pylist(rows[i : i + args.file_rows]), folder / f"part-{i:08d}.parquet"
            )
        with jsonl.open("w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        extract_s = run_extract_process(jsonl)
        job_s = run_score_job(folder, Path(tmp) / "out")
    job_rps, extract_rps = len(rows) / job_s, len(rows) / extract_s
    results["job"] = {"wall_s": round(job_s, 1), "records_per_s": round(job_rps)}
    results["extract_process"] = {"wall_s": round(extract_s, 1), "records_per_s": round(extract_rps)}
    results["job_over_extract"] = round(job_rps / extract_rps, 3)
    print(
        f"(b) score job: {job_rps:,.0f} records/s ({job_s:.1f} s, Ray start included; target {JOB_TARGET:,.0f})\n"
        f"(c) one extract process: {extract_rps:,.0f} records/s ({extract_s:.1f} s); "
        f"job / extract = {job_rps / extract_rps:.2f} x (target {JOB_RATIO_TARGET})"
    )
    print("BENCH_JSON " + json.dumps({"reasoning": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
