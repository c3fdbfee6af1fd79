"""`make bench`: every benchmark, printing figures and ratios against baselines measured in the same run.

Defaults are sized to finish in under 20 minutes on 2 cores (quiet machine); BENCH_FULL=1 runs the
issue's sizes (1M and 2M records locally, 1M on S3, 64 side-by-side records, 256 records for the ordering)
and the training-format vLLM stage and scaling benchmarks too, which takes over an hour here.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def main() -> int:
    full = os.environ.get("BENCH_FULL") == "1"
    rows = ["1000000", "2000000"] if full else ["100000", "200000"]
    s3 = "1000000" if full else "100000"
    steps = [
        [sys.executable, str(ROOT / "bench_pipeline.py"), "--rows", *rows, "--s3-rows", s3],
        # one big JSONL file (line-range shards, and as one shard) next to the same rows as Parquet
        # (docs/performance.md, "Big JSONL files"). About 3 minutes.
        [sys.executable, str(ROOT / "bench_jsonl_shards.py"), "--rows", "1000000" if full else "100000"],
        # `rules` on real responses (benchmarks/data/zeroeval): single process vs lm-eval's regexes, then
        # the whole job on 100k of them (docs/performance.md, "Real-response corpus").
        [sys.executable, str(ROOT / "bench_rules_real.py")],
        # reasoning-model output (#21): per-record cost by response length, then the whole job against
        # one `xfinder-ray extract` process on 100k rows with 10% long reasoning responses.
        [sys.executable, str(ROOT / "bench_reasoning.py")],
        # (a) the xfinder package, (b) bare vllm.LLM.generate, (c) the whole job: same records, model,
        # prompts and decoding (docs/performance.md, "Side by side"). About 5 minutes on a quiet machine.
        [
            sys.executable,
            str(ROOT / "bench_side_by_side.py"),
            "--records",
            "64" if full else "32",
            "--max-tokens",
            "8",
            # The job's default (eager) engine. The compiled one (--set xfinder.enforce_eager=false) runs
            # faster but starts ~2 min later, which would take make bench past 20 minutes (docs/performance.md).
        ],
        # the whole job on per-model files, arrival vs question-grouped reads ("Prefix-cache-aware
        # ordering"). About 8 minutes.
        [sys.executable, str(ROOT / "bench_job_order.py"), "--questions", "32" if full else "16"],
    ]
    if full:
        # bare vLLM vs the job on training-format prompts (16 new tokens): covered at default sizes by
        # the side-by-side run above (b and c), so only in the full run.
        steps.append(
            [sys.executable, str(ROOT / "bench_vllm_stage.py"), "--records", "64", "--max-tokens", "16"]
        )
        # cost vs response length, replicas, eager vs compiled engine (docs/performance.md, "Scaling")
        steps.append([sys.executable, str(ROOT / "bench_scaling.py")])
    for cmd in steps:
        print("+", " ".join(cmd[1:]), flush=True)
        if subprocess.run(cmd).returncode:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
