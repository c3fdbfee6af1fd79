"""Prefix-cache-aware ordering through the whole job: per-model input files, `xfinder.group_by_question`
off (arrival: each model's file read on its own) vs on (aligned row groups of the model files read
together, rows sorted by question), same records, model, prompts and decoding.

Data: `--questions` questions x the sample's 8 models, one Parquet file per model in the same question
order (as per-model result files are), a `--long-share` of reading-comprehension items with a passage
(benchmarks/bench_prefix_order.build_records). The engine's KV cache is capped below one model file's
prompt tokens (`--kv-tokens`, as vLLM's num_gpu_blocks_override; default 2,080 = the least the engine
starts with) and below the questions' own tokens (16 questions: 326 shared + 2,270 question tokens): what
a run over millions of records looks like, where a question's blocks are long evicted when the next
model's answer to it arrives in arrival order. (At 4,096 tokens the cache held every question of this
small set and arrival order lost nothing: 1.16x.) The CPU stages' batch (`ray.batch_size`) is set to one model file's rows, as the default
1,024-row batch is to files of thousands of rows. Everything else is the job's default CPU engine
(float32, prefix caching on, 32-token KV blocks).

Rates: steady = records / (job return - engine ready), as in bench_side_by_side.py; whole = process
wall clock. The two runs alternate order when repeated (`--repeats`), medians reported.

    scripts/loopback.sh .venv/bin/python benchmarks/bench_job_order.py          # ~9 min on 2 idle cores
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prefix_order import build_records  # noqa: E402
from bench_side_by_side import ENGINE_READY, job_overrides, run_child, score_child_cmd  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=16, help="questions; x 8 models = records")
    ap.add_argument("--long-share", type=float, default=0.25)
    ap.add_argument("--passage-tokens", type=int, nargs=2, default=[150, 600])
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument(
        "--kv-tokens",
        type=int,
        help="KV cache size in tokens (default: the least the engine starts with, max_model_len + one block)",
    )
    ap.add_argument("--block-size", type=int, help="KV block size (default: the job's, 32 on CPU)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--model", help="model folder (default: SmolLM2-135M-Instruct, converted)")
    args = ap.parse_args()

    import pyarrow as pa
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from xfinder_ray.config import XFinderConfig
    from xfinder_ray.devmodels import ensure_smollm2
    from xfinder_ray.extractors.vllm import CPU_BLOCK_SIZE
    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import MODELS

    model = args.model or str(ensure_smollm2())
    block = args.block_size or CPU_BLOCK_SIZE
    # the engine refuses a cache of exactly one sequence of the job's max_model_len
    kv_tokens = args.kv_tokens or XFinderConfig().max_model_len + block
    tok = AutoTokenizer.from_pretrained(model)
    rows, _ = build_records(args.questions, args.long_share, tuple(args.passage_tokens), 0, tok)
    n, per_model = len(rows), len(rows) // len(MODELS)
    out_dir = ROOT / "out" / "job_order"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    results: dict[str, list[dict]] = {"arrival": [], "grouped": []}
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "in"
        inp.mkdir()
        for k, m in enumerate(MODELS):
            part = rows[k * per_model : (k + 1) * per_model]
            pq.write_table(
                pa.Table.from_pylist([{f: x[f] for f in FIELDS} for x in part]), inp / f"{m.name}.parquet"
            )
        for rep in range(args.repeats):
            for name in ["arrival", "grouped"] if rep % 2 == 0 else ["grouped", "arrival"]:
                overrides = [
                    *job_overrides(model, args.max_tokens, "training"),
                    f"xfinder.group_by_question={'true' if name == 'grouped' else 'false'}",
                    f"xfinder.engine_kwargs.num_gpu_blocks_override={kv_tokens // block}",
                    *([f"xfinder.engine_kwargs.block_size={args.block_size}"] if args.block_size else []),
                    # The CPU stages work in batches of ray.batch_size rows (1,024 by default) and the
                    # prompt stage sorts each batch: with model files of a few dozen rows one batch would
                    # hold every file and sort them all. One file's rows per batch is what the default
                    # batch does to model files of thousands of rows.
                    f"ray.batch_size={per_model}",
                ]
                cmd = score_child_cmd(inp, Path(tmp) / f"out-{name}-{rep}", overrides)
                print(f"+ {name} (rep {rep}) ...", flush=True)
                r, wall, lines = run_child(cmd, env, out_dir / f"{name}-{rep}.log")
                ready = [ts for ts, text in lines if any(mark in text for mark in ENGINE_READY)]
                done = [ts for ts, text in lines if text.startswith("BENCH_JSON ")][-1]
                if r["judged"] != n or not r["extractor"].startswith("xfinder:"):
                    raise RuntimeError(f"{name}: the job did not run xFinder on every record: {r}")
                steady = done - ready[0] if ready else None
                r.update(
                    process_wall_s=wall, steady_s=steady, steady_records_per_s=n / steady if steady else None
                )
                results[name].append(r)
                print(
                    f"  steady {r['steady_records_per_s']:.2f} rec/s, whole {n / wall:.3f} rec/s", flush=True
                )
    med = {k: statistics.median(x["steady_records_per_s"] for x in v) for k, v in results.items()}
    whole = {k: statistics.median(n / x["process_wall_s"] for x in v) for k, v in results.items()}
    ratio = med["grouped"] / med["arrival"]
    print(
        f"\n## Whole job, per-model files: arrival vs question-grouped reads ({n} records, SmolLM2, ≤ {args.max_tokens} new tokens)"
    )
    print("| order | steady records/s | whole-process records/s | × arrival (steady) |\n|---|---|---|---|")
    for k in ("arrival", "grouped"):
        print(f"| {k} | {med[k]:.2f} | {whole[k]:.3f} | {med[k] / med['arrival']:.2f} |")
    print(f"grouped / arrival (steady): {ratio:.2f} (target >= 2: {'met' if ratio >= 2 else 'NOT met'})")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    summary = {
        "records": n,
        "kv_tokens": kv_tokens,
        "block_size": block,
        "steady": med,
        "whole": whole,
        "ratio_grouped_arrival": ratio,
    }
    (ROOT / "out" / "bench_job_order.json").write_text(
        json.dumps({**summary, "runs": results}, indent=2, default=str)
    )
    print("BENCH_JSON " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
