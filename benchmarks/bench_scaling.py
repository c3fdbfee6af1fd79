"""How the model path's cost grows with response length and with replicas (docs/performance.md, "Scaling").

Response length: one engine built with the job's own engine configuration (float32, prefix caching on,
32-token KV blocks, greedy, <= 8 new tokens; computed from configs/local.yaml as the stage computes it),
the same `--records` sample records (different questions) with their responses lengthened by
`--extra-tokens` of prose inserted before the response's last line (so the key answer stays at the end);
the prefix cache is reset between lengths. Prints records/s, prompt tokens/s and a least-squares fit
of seconds per record = fixed + per-token x prompt tokens.

Eager vs compiled (`xfinder.enforce_eager`): one bare engine each, the job's engine configuration,
start-up and two passes over `--compile-records` records.

Replicas: the whole job (`score_child.py`, training-format prompts) on `--job-records` sample records,
three engine layouts on this machine's cores: one replica with vLLM's default binding (compute on one core,
one reserved for its front end), one replica computing on every core (VLLM_CPU_NUM_OF_RESERVED_CPU=0: the
stage's default on nodes of <= 4 cores), and two replicas of one thread each (VLLM_CPU_OMP_THREADS_BIND=nobind,
OMP_NUM_THREADS=1, so the OS spreads them over the cores). Ray gets 4 logical CPUs in all three, so two
replicas (1 CPU each) leave room for the CPU stages. Steady = records / (job return - last engine ready).

    scripts/loopback.sh .venv/bin/python benchmarks/bench_scaling.py      # ~25 min on 2 idle cores
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prefix_order import _sentences  # noqa: E402
from bench_side_by_side import (  # noqa: E402
    CONFIG,
    ENGINE_READY,
    bare_engine_spec,
    job_overrides,
    pick_records,
    render_all,
    run_child,
    score_child_cmd,
)

LAYOUTS = {
    "1 replica, 1 compute core (vLLM's default: one core reserved)": [
        "xfinder.env_vars.VLLM_CPU_NUM_OF_RESERVED_CPU=1"
    ],
    "1 replica, every core (the stage's default on <= 4 cores)": [],
    "2 replicas, 1 thread each": [
        "xfinder.replicas=2",
        "xfinder.env_vars.VLLM_CPU_OMP_THREADS_BIND=nobind",
        "xfinder.env_vars.OMP_NUM_THREADS=1",
    ],
}


def lengthen(text: str, extra_tokens: int, tok, rng: random.Random, sentences: list[str]) -> str:
    """Prose of about `extra_tokens` tokens (from `sentences`) inserted before the response's last line."""
    if extra_tokens <= 0:
        return text
    prose, n = [], 0
    while n < extra_tokens:
        s = rng.choice(sentences)
        prose.append(s)
        n += len(tok.encode(" " + s, add_special_tokens=False))
    head, _, last = text.rpartition("\n")
    return (head + "\n" if head else "") + " ".join(prose) + "\n" + last


def child_lengths(spec: dict) -> dict:
    """One engine; generate each length's prompts in turn, prefix cache reset before each."""
    os.environ.update(spec["env_vars"])
    from vllm import LLM, SamplingParams

    t0 = time.time()
    llm = LLM(model=spec["model"], **spec["engine_kwargs"])
    params = SamplingParams(**spec["sampling"])
    out: dict = {"start_s": time.time() - t0}
    for extra, prompts in spec["prompts"].items():
        llm.reset_prefix_cache()
        t0 = time.time()
        res = llm.generate(prompts, params, use_tqdm=False)
        out[extra] = {
            "seconds": time.time() - t0,
            "prompt_tokens": sum(len(o.prompt_token_ids) for o in res),
            "gen_tokens": sum(len(o.outputs[0].token_ids) for o in res),
        }
    return out


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b x."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def bench_lengths(args, model: str, tok, env: dict, tmp: Path) -> list[dict]:
    from xfinder_ray.config import load_config

    cfg = load_config(CONFIG, job_overrides(model, args.max_tokens, "training"))
    records = pick_records(args.records, "spread")
    sentences = _sentences()
    prompts = {}
    for extra in args.extra_tokens:
        rng = random.Random(extra)
        longer = [{**r, "llm_output": lengthen(r["llm_output"], extra, tok, rng, sentences)} for r in records]
        prompts[str(extra)] = render_all(longer, cfg)
    spec = {**bare_engine_spec(cfg), "prompts": prompts}
    (tmp / "lengths.json").write_text(json.dumps(spec))
    cmd = [sys.executable, __file__, "--child", str(tmp / "lengths.json")]
    print("+ response lengths ...", flush=True)
    res, _, _ = run_child(cmd, env, ROOT / "out" / "scaling" / "lengths.log")
    # tokens every prompt shares (system text + Instruction): served by the prefix cache after the first
    ids = [tok.encode(p) for p in prompts[str(args.extra_tokens[0])]]
    head = len(os.path.commonprefix(ids))
    rows = []
    n = len(records)
    for extra in args.extra_tokens:
        r = res[str(extra)]
        rows.append(
            {
                "extra_tokens": extra,
                "records": n,
                "mean_prompt_tokens": r["prompt_tokens"] / n,
                "shared_head_tokens": head,
                "records_per_s": n / r["seconds"],
                "prompt_tokens_per_s": r["prompt_tokens"] / r["seconds"],
                "s_per_record": r["seconds"] / n,
            }
        )
    return rows


def bench_compiled(args, model: str, env: dict, tmp: Path) -> list[dict]:
    """Eager vs compiled engine (enforce_eager): start-up and two passes over the same prompts."""
    from xfinder_ray.config import load_config

    records = pick_records(args.compile_records, "grouped")
    rows = []
    for eager in (True, False):
        cfg = load_config(
            CONFIG,
            [
                *job_overrides(model, args.max_tokens, "xfinder-package"),
                f"xfinder.enforce_eager={str(eager).lower()}",
            ],
        )
        prompts = render_all(records, cfg)
        spec = {**bare_engine_spec(cfg), "prompts": {"pass 1": prompts, "pass 2": prompts}}
        name = "eager" if eager else "compiled"
        (tmp / f"{name}.json").write_text(json.dumps(spec))
        print(f"+ {name} engine ...", flush=True)
        res, _, _ = run_child(
            [sys.executable, __file__, "--child", str(tmp / f"{name}.json")],
            env,
            ROOT / "out" / "scaling" / f"{name}.log",
        )
        n = len(records)
        rates = [n / res[k]["seconds"] for k in ("pass 1", "pass 2")]
        rows.append({"engine": name, "records": n, "start_s": res["start_s"], "records_per_s": rates})
    return rows


def bench_replicas(args, model: str, env: dict, tmp: Path) -> list[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = pick_records(args.job_records, "spread")
    n = len(records)
    inp = tmp / "job.parquet"
    pq.write_table(pa.Table.from_pylist(records), inp)
    rows = []
    for k, (name, extra) in enumerate(LAYOUTS.items()):
        overrides = [
            *job_overrides(model, args.max_tokens, "training"),
            "ray.num_cpus=4",
            # a replica takes up to 8 batches in flight: with fewer than ~16 batches the first engine
            # ready takes them all and a second one idles (batches_per_replica shows it)
            f"xfinder.batch_size={args.job_batch}",
            *extra,
        ]
        cmd = score_child_cmd(inp, tmp / f"out-{k}", overrides)
        print(f"+ {name} ...", flush=True)
        r, wall, lines = run_child(cmd, env, ROOT / "out" / "scaling" / f"replicas-{k}.log")
        ready = [ts for ts, text in lines if any(mark in text for mark in ENGINE_READY)]
        done = [ts for ts, text in lines if text.startswith("BENCH_JSON ")][-1]
        if r["judged"] != n or not r["extractor"].startswith("xfinder:"):
            raise RuntimeError(f"{name}: the job did not run xFinder on every record: {r}")
        steady = done - ready[-1] if ready else None
        # which replica (actor pid) ran each batch: ray.data.llm logs "Elapsed time for batch ... with size"
        per_replica: dict[str, int] = {}
        for _, text in lines:
            m = re.search(r"pid=(\d+)\).*Elapsed time for batch", text)
            if m:
                per_replica[m.group(1)] = per_replica.get(m.group(1), 0) + 1
        rows.append(
            {
                "layout": name,
                "records": n,
                "engines_ready": sum(ENGINE_READY[1] in text for _, text in lines),
                "batches_per_replica": sorted(per_replica.values(), reverse=True),
                "steady_records_per_s": n / steady if steady else None,
                "whole_records_per_s": n / wall,
                "process_wall_s": wall,
            }
        )
        print(
            f"  steady {rows[-1]['steady_records_per_s']:.2f} rec/s, whole {n / wall:.3f} rec/s", flush=True
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=24, help="records per response length")
    ap.add_argument("--extra-tokens", type=int, nargs="+", default=[0, 250, 1000])
    ap.add_argument("--job-records", type=int, default=384, help="records per replica layout")
    ap.add_argument("--job-batch", type=int, default=16, help="xfinder.batch_size in the replica layouts")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--compile-records", type=int, default=32, help="records for eager vs compiled")
    ap.add_argument("--parts", default="lengths,replicas,compiled")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("BENCH_JSON " + json.dumps(child_lengths(json.loads(Path(args.child).read_text()))), flush=True)
        return 0

    from transformers import AutoTokenizer

    from xfinder_ray.devmodels import ensure_smollm2

    model = str(ensure_smollm2())
    tok = AutoTokenizer.from_pretrained(model)
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    (ROOT / "out" / "scaling").mkdir(parents=True, exist_ok=True)
    summary: dict = {"load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        if "lengths" in args.parts:
            summary["lengths"] = rows = bench_lengths(args, model, tok, env, Path(tmp))
            # cost follows the tokens the prefix cache cannot serve: prompt - the shared head
            a, b = fit(
                [r["mean_prompt_tokens"] - r["shared_head_tokens"] for r in rows],
                [r["s_per_record"] for r in rows],
            )
            summary["fit"] = {"fixed_s": a, "per_uncached_token_ms": b * 1000}
            print("\n## Response length (bare engine, the job's engine configuration)")
            print(
                "| extra response tokens | mean prompt tokens | records/s | prompt tokens/s | × shortest (records/s) |"
            )
            print("|---|---|---|---|---|")
            for r in rows:
                print(
                    f"| {r['extra_tokens']} | {r['mean_prompt_tokens']:.0f} | {r['records_per_s']:.2f} "
                    f"| {r['prompt_tokens_per_s']:.0f} | {r['records_per_s'] / rows[0]['records_per_s']:.2f} |"
                )
            print(
                f"fit: seconds per record = {a:.3f} + {b * 1000:.3f} ms x (prompt tokens - the "
                f"{rows[0]['shared_head_tokens']}-token shared head)"
            )
        if "replicas" in args.parts:
            summary["replicas"] = rows = bench_replicas(args, model, env, Path(tmp))
            print(f"\n## Replicas (whole job, {rows[0]['records']} records, {os.cpu_count()} cores)")
            print(
                "| layout | engines | batches per replica | steady records/s | whole-process records/s "
                "| × one compute core (steady) |"
            )
            print("|---|---|---|---|---|---|")
            for r in rows:
                print(
                    f"| {r['layout']} | {r['engines_ready']} | {r['batches_per_replica']} "
                    f"| {r['steady_records_per_s']:.2f} "
                    f"| {r['whole_records_per_s']:.3f} "
                    f"| {r['steady_records_per_s'] / rows[0]['steady_records_per_s']:.2f} |"
                )
        if "compiled" in args.parts:
            summary["compiled"] = rows = bench_compiled(args, model, env, Path(tmp))
            eager = rows[0]
            print(f"\n## Eager vs compiled engine (bare, {eager['records']} records, package prompts)")
            print("| engine | start-up (s) | records/s, pass 1 | pass 2 |\n|---|---|---|---|")
            for r in rows:
                print(
                    f"| {r['engine']} | {r['start_s']:.0f} | {r['records_per_s'][0]:.2f} | {r['records_per_s'][1]:.2f} |"
                )
            comp = rows[1]
            gain = 1 / statistics.median(eager["records_per_s"]) - 1 / statistics.median(
                comp["records_per_s"]
            )
            if gain > 0:
                print(
                    f"compiled pays off after ~{(comp['start_s'] - eager['start_s']) / gain:.0f} records per replica"
                )
    summary["load_after"] = os.getloadavg()[0]
    print(f"load average (1 min): {summary['load_before']:.1f} before, {summary['load_after']:.1f} after")
    (ROOT / "out" / "bench_scaling.json").write_text(json.dumps(summary, indent=2))
    print("BENCH_JSON " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
