"""Prefix-cache-aware ordering, measured: arrival order vs question-grouped order into vLLM.

Data: N questions x the sample's 8 models (xfinder_ray.sample_data.MODELS); each model answers every
question (same question text and answer range, its own response). Questions: a `1 - long_share` share of
short ones from the sample's question banks (MMLU, ARC, CommonsenseQA, BoolQ, AgNews, SST-2, GSM8K, MATH:
23-70 tokens) and a `long_share` of reading-comprehension items: a passage of `--passage-tokens` (uniform,
tokens) built from the banks' passages, then one of those questions. Prompts: xfinder_ray.prompts.
render_prompt, training format (what the job sends).

Orders (prefix caching on in both):
  arrival  model-major, as per-model result files give it: model 1's N answers, then model 2's, ...
  grouped  sorted by (question, record_id), as xfinder_ray/stages/prompt.py sorts each batch: the 8
           answers to a question follow each other.

(b) bare `vllm.LLM.generate` on the rendered prompts, one engine per setting, the prefix cache reset
    before each timed pass; prefix caching off is measured for reference.
(c) through our stage: ray.data read of 8 per-model Parquet files -> validate_batch -> prompt_batch ->
    build_vllm_stage (what the job runs), with the prompt stage's sort window (its batch size) set to
    `window` rows; the engine-side rate is taken between the first and the last output batch.

Engine settings are the stage's on CPU (extractors.vllm.processor_config_kwargs): float32 on CPUs without
AVX512-BF16/AMX, enforce_eager, prefix caching, max_model_len 2048, vLLM's CPU block size (128),
VLLM_CPU_KVCACHE_SPACE=2; greedy, xFinder's stop strings, `--max-tokens` new tokens at most.

    python benchmarks/bench_prefix_order.py                       # bare + stage, ~25 min on 2 idle cores
    python benchmarks/bench_prefix_order.py --modes bare --questions 32   # quick look
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NON_MATH = ("MMLU", "ARC-Challenge", "CommonsenseQA_text", "BoolQ", "AgNews", "SST-2")
PASSAGE_INTRO = "Read the passage below, then answer the question that follows.\n\nPassage:\n"


# ------------------------------------------------------------------------------------------------ data


def _sentences() -> list[str]:
    """Prose to build passages from: the sample banks' passages, news descriptions and reviews."""
    from xfinder_ray import sample_data as sd

    out: list[str] = []
    for passage, _, _ in sd.BOOLQ_BANK:
        out.extend(s.strip().rstrip(".") + "." for s in passage.split(". ") if s.strip())
    out.extend(desc for _, desc, _ in sd.AGNEWS_BANK)
    return out


def build_records(n_questions: int, long_share: float, passage_tokens: tuple[int, int], seed: int, tok):
    """Rows of N questions x 8 models in arrival (model-major) order, and each question's class."""
    from xfinder_ray import sample_data as sd

    r = random.Random(seed)
    n_long = round(n_questions * long_share)
    n_short = n_questions - n_long
    # 32 per task (256 in all); beyond that, more GSM8K/MATH questions (fresh numbers per rep)
    short_pool = [q for t in sd.TASKS for q in sd.build_questions(t, 32, seed, 0)]
    texts = {q.text for q in short_pool}
    rep = 1
    while len(short_pool) < n_short:
        for t in sd.TASKS:
            if t.key_answer_type == "math":
                fresh = [q for q in sd.build_questions(t, 32, seed, rep) if q.text not in texts]
                texts.update(q.text for q in fresh)
                short_pool.extend(fresh)
        rep += 1
    r.shuffle(short_pool)
    base_pool = [q for q in short_pool if q.task.name in NON_MATH]
    prose = _sentences()
    questions, kind = list(short_pool[:n_short]), {}
    for q in questions:
        kind[q.qid] = "short"
    for i in range(n_long):
        target = r.randint(*passage_tokens)
        paras, para, n_tok = [], [], 0
        while n_tok < target:
            s = r.choice(prose)
            para.append(s)
            n_tok += len(tok.encode(s + " "))
            if len(para) >= r.randint(3, 6):
                paras.append(" ".join(para))
                para = []
        paras.append(" ".join(para)) if para else None
        base = r.choice(base_pool)
        q = dataclasses.replace(
            base, qid=f"rc-{i:04d}", text=PASSAGE_INTRO + "\n\n".join(paras) + "\n\nQuestion: " + base.text
        )
        questions.append(q)
        kind[q.qid] = "long"
    r.shuffle(questions)  # the benchmark's question order, the same in every model's file
    rows = [sd.respond(m, q, seed) for m in sd.MODELS for q in questions]
    return rows, kind


def render_all(rows: list[dict], max_tokens: int) -> list[str]:
    from xfinder_ray.prompts import render_prompt
    from xfinder_ray.records import parse_answer_range

    return [
        render_prompt(
            x["question"],
            x["llm_output"],
            parse_answer_range(x["standard_answer_range"], x["key_answer_type"]),
            max_prompt_tokens=2048 - max_tokens,
        ).prompt
        for x in rows
    ]


def grouped_order(rows: list[dict]) -> list[int]:
    """The prompt stage's order: stable sort by (question, record_id)."""
    return sorted(range(len(rows)), key=lambda i: (rows[i]["question"], rows[i]["record_id"]))


def cacheable(
    ids: list[list[int]], order: list[int], block: int, question_of: list[str], reuse_question: bool = True
) -> list[int]:
    """Prompt tokens the prefix cache can serve in this order: for each prompt, whole blocks of its
    longest common prefix with an earlier prompt (at most len - 1 tokens). Earlier prompts: the one just
    before, plus (reuse_question) every earlier one of the same question, i.e. nothing evicted."""
    out = [0] * len(ids)
    seen_q: dict[str, list[int]] = {}
    any_prev: list[int] | None = None
    for i in order:
        best = 0
        cands = list(seen_q.get(question_of[i], ())) if reuse_question else []
        if any_prev is not None:
            cands.append(any_prev)
        for j in cands:
            a, b = ids[i], ids[j]
            n = 0
            for x, y in zip(a, b, strict=False):
                if x != y:
                    break
                n += 1
            best = max(best, n)
        out[i] = (min(best, len(ids[i]) - 1) // block) * block
        seen_q.setdefault(question_of[i], []).append(i)
        any_prev = i
    return out


# ------------------------------------------------------------------------------------------------ children

BARE = r"""
import json, os, sys, time
import psutil
spec = json.load(open(sys.argv[1]))
from vllm import LLM, SamplingParams
kw = dict(model=spec["model"], dtype=spec["dtype"], enforce_eager=True, max_model_len=2048,
          enable_prefix_caching=spec["caching"])
if spec.get("block_size"):
    kw["block_size"] = spec["block_size"]
t0 = time.time()
llm = LLM(**kw)
init_s = time.time() - t0
cc = llm.llm_engine.vllm_config.cache_config
me = psutil.Process()
def cpu_s():  # this process (front end) + the EngineCore process(es)
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total
sp = SamplingParams(temperature=0, max_tokens=spec["max_tokens"], stop=spec["stop"])
llm.generate(["Hello, how are you?", "Warm-up prompt."], sp, use_tqdm=False)
prompts = spec["prompts"]
one = SamplingParams(temperature=0, max_tokens=1)
runs = []
for rep in range(spec["repeats"]):
    names = list(spec["orders"]) if rep % 2 == 0 else list(reversed(spec["orders"]))
    for name in names:
        o = spec["orders"][name]
        llm.reset_prefix_cache()
        load = os.getloadavg()[0]
        dt = cpu = 0.0
        cached, ptok, texts, gen = {}, {}, {}, 0
        for chunk in o["chunks"]:
            if o["reset"]:
                # what a model file larger than the KV cache leaves behind: the shared head only
                llm.reset_prefix_cache()
                llm.generate([spec["head"]], one, use_tqdm=False)
            c, t = cpu_s(), time.perf_counter()
            outs = llm.generate([prompts[i] for i in chunk], sp, use_tqdm=False)
            dt += time.perf_counter() - t
            cpu += cpu_s() - c
            for i, out in zip(chunk, outs):
                cached[i] = out.num_cached_tokens or 0
                ptok[i] = len(out.prompt_token_ids)
                texts[i] = out.outputs[0].text
                gen += len(out.outputs[0].token_ids)
        n = len(prompts)
        runs.append({"order": name, "rep": rep, "generate_s": dt, "cpu_s": cpu, "load1": load,
                     "load1_end": os.getloadavg()[0], "generated_tokens": gen,
                     "cached": [cached[i] for i in range(n)], "prompt_tokens": [ptok[i] for i in range(n)],
                     "texts": [texts[i] for i in range(n)]})
        print(f"{name} rep {rep}: {dt:.1f} s, cpu {cpu:.1f} s, load {load:.1f}", file=sys.stderr, flush=True)
print("BENCH_JSON " + json.dumps({"init_s": init_s, "block_size": cc.block_size,
      "num_blocks": cc.num_gpu_blocks, "caching": cc.enable_prefix_caching, "runs": runs}), flush=True)
"""


def layout_child(spec_path: str) -> None:
    """The order the job's own read -> validate -> prompt stages hand to the extraction stage, for input
    layouts a user would have (no engine). Reports how often a record follows one of the same question."""
    import ray

    from xfinder_ray.config import load_config
    from xfinder_ray.stages.inventory import take_inventory
    from xfinder_ray.stages.prompt import prompt_batch
    from xfinder_ray.stages.read import InputSource, read_input
    from xfinder_ray.stages.validate import validate_batch

    spec = json.loads(Path(spec_path).read_text())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.data.range(10_000).map_batches(lambda b: b).materialize()  # start the workers before timing
    results = []
    for v in spec["variants"]:
        cfg = load_config(str(ROOT / "configs" / "local.yaml"), [f"input={v['paths']}"])
        batch = cfg.ray.batch_size
        t0 = time.time()
        inventory = take_inventory(cfg.input, cfg.storage)
        ds = read_input(InputSource(inventory, dict(cfg.input.columns), {}, cfg.input.on_bad_file))
        ds = ds.map_batches(validate_batch, batch_format="pandas", batch_size=batch)
        if v.get("repartition"):
            ds = ds.repartition(v["repartition"], keys=["question"], sort=True)
        ds = ds.map_batches(
            prompt_batch,
            batch_format="pandas",
            batch_size=batch,
            fn_kwargs=dict(checkpoint="xFinder-qwen1505", fmt="training", max_prompt_tokens=2016),
        )
        seq: list[str] = []
        for b in ds.iter_batches(batch_format="pandas", batch_size=None):
            seq.extend(b["question"].tolist())
        wall = time.time() - t0
        last: dict[str, int] = {}
        adjacent = within = 0
        for i, q in enumerate(seq):
            adjacent += i > 0 and seq[i - 1] == q
            within += q in last and i - last[q] <= spec["window"]
            last[q] = i
        results.append(
            {
                "name": v["name"],
                "rows": len(seq),
                "read_blocks": len(inventory.shards()),
                "wall_s": wall,
                "follows_same_question": adjacent / len(seq),
                "same_question_within_window": within / len(seq),
            }
        )
    print("BENCH_JSON " + json.dumps({"batch_size": batch, "variants": results}), flush=True)


def stage_child(spec_path: str) -> None:
    """(c): the job's prompt stage + our vLLM stage on a ray.data dataset, one window per engine start."""
    import pandas as pd
    import ray

    from xfinder_ray.extractors.vllm import VLLMStageConfig, build_vllm_stage
    from xfinder_ray.stages.prompt import prompt_batch
    from xfinder_ray.stages.validate import validate_batch

    spec = json.loads(Path(spec_path).read_text())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    kw = dict(checkpoint="xFinder-qwen1505", fmt="training", max_prompt_tokens=2048 - spec["max_tokens"])

    def arrival(batch: pd.DataFrame) -> pd.DataFrame:  # the same prompts, in the order they came
        pos = batch["pos"].to_numpy()
        out = prompt_batch(batch, **kw)
        return out.set_index("pos").loc[pos].reset_index()

    def stamp(batch: pd.DataFrame) -> pd.DataFrame:
        return batch[["pos", "raw_output", "prompt_tokens"]].assign(t_done=time.time())

    results = []
    for run in spec["runs"]:
        t0 = time.time()
        ds = ray.data.read_parquet(spec["files"]).map_batches(validate_batch, batch_format="pandas")
        if run.get("repartition"):
            # a keyed exchange: every answer to a question in the same block, sorted by question
            ds = ds.repartition(run["repartition"], keys=["question"], sort=True)
        if run["window"] == 0:
            ds = ds.map_batches(arrival, batch_format="pandas", batch_size=spec["rows_per_file"])
        else:
            ds = ds.map_batches(prompt_batch, batch_format="pandas", batch_size=run["window"], fn_kwargs=kw)
        cfg = VLLMStageConfig(model_source=spec["model"], max_tokens=spec["max_tokens"], device="cpu")
        out = build_vllm_stage(cfg)(ds).map_batches(stamp, batch_format="pandas").to_pandas()
        wall = time.time() - t0
        t = sorted(out["t_done"].unique())
        first_rows = int((out["t_done"] == t[0]).sum())
        steady = (len(out) - first_rows) / (t[-1] - t[0]) if len(t) > 1 else None
        results.append(
            {
                **run,
                "wall_s": wall,
                "rows": len(out),
                "output_batches": len(t),
                "first_output_s": t[0] - t0,
                "steady_records_per_s": steady,
                "steady_prompt_tokens_per_s": (
                    float(out.loc[out["t_done"] > t[0], "prompt_tokens"].sum()) / (t[-1] - t[0])
                    if len(t) > 1
                    else None
                ),
                "load1": os.getloadavg()[0],
                "texts": dict(zip(out["pos"].astype(int).tolist(), out["raw_output"].tolist(), strict=True)),
            }
        )
        print(f"stage run {run}: wall {wall:.1f} s, steady {steady} records/s", file=sys.stderr, flush=True)
    print("BENCH_JSON " + json.dumps({"runs": results}), flush=True)


def _child(args: list[str], label: str) -> dict:
    t0 = time.time()
    log = ROOT / "out" / f"bench_prefix_order.{label}.log"  # the child's progress and engine logs
    log.parent.mkdir(exist_ok=True)
    with open(log, "w") as err:
        proc = subprocess.run(
            [sys.executable, *args], stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT
        )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("BENCH_JSON ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{label} failed:\n{log.read_text()[-4000:]}")
    res = json.loads(lines[-1][len("BENCH_JSON ") :])
    res["process_wall_s"] = time.time() - t0
    return res


# ------------------------------------------------------------------------------------------------ main


def _save(results: dict) -> None:
    (ROOT / "out").mkdir(exist_ok=True)
    (ROOT / "out" / "bench_prefix_order.json").write_text(json.dumps(results, indent=2))


def _fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=128, help="questions; x 8 models = records")
    ap.add_argument("--long-share", type=float, default=0.25, help="share of reading-comprehension items")
    ap.add_argument("--passage-tokens", type=int, nargs=2, default=[150, 600])
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2, help="timed passes per order (bare)")
    ap.add_argument(
        "--modes", default="layout,bare,off,block32,stage", help="bare, off, block32, layout, stage"
    )
    ap.add_argument("--orders", default="arrival,grouped", help="arrival, grouped, arrival_kept")
    ap.add_argument("--stage-runs", default="arrival,file,all", help="arrival, file, all, repartition")
    ap.add_argument("--layout-rows", type=int, default=1024, help="rows per model file (layout check)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="model folder (default: SmolLM2-135M-Instruct, converted)")
    ap.add_argument("--child", choices=["stage", "layout"], help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "stage":
        stage_child(args.spec)
        return
    if args.child == "layout":
        layout_child(args.spec)
        return

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")  # the stage's default kv_cache_gib
    import pyarrow as pa
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from xfinder_ray.devmodels import ensure_smollm2
    from xfinder_ray.extractors.vllm import XFINDER_STOP, cpu_has_fast_bf16
    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import MODELS

    modes = set(args.modes.split(","))
    model = args.model or str(ensure_smollm2())
    dtype = "bfloat16" if cpu_has_fast_bf16() else "float32"  # the stage's choice on this CPU
    tok = AutoTokenizer.from_pretrained(model)
    rows, kind = build_records(args.questions, args.long_share, tuple(args.passage_tokens), args.seed, tok)
    prompts = render_all(rows, args.max_tokens)
    ids = [tok.encode(p) for p in prompts]  # SmolLM2 adds no special tokens: what vLLM counts
    arrival, grouped = list(range(len(rows))), grouped_order(rows)
    qof = [x["question"] for x in rows]
    cls = [kind[x["question_id"]] for x in rows]
    n = len(rows)
    qtok = {q: len(tok.encode(x["question"])) for x in rows for q in [x["question_id"]]}
    ptok = [len(x) for x in ids]

    def dist(xs: list[int]) -> str:
        xs = sorted(xs)
        return f"median {xs[len(xs) // 2]}, p90 {xs[int(len(xs) * 0.9)]}, max {xs[-1]}"

    data = {
        "questions": args.questions,
        "models": len(MODELS),
        "records": n,
        "long_questions": sum(1 for v in kind.values() if v == "long"),
        "question_tokens": dist(list(qtok.values())),
        "question_tokens_short": dist([v for q, v in qtok.items() if kind[q] == "short"]),
        "question_tokens_long": dist([v for q, v in qtok.items() if kind[q] == "long"])
        if args.long_share
        else "-",
        "prompt_tokens": dist(ptok),
        "prompt_tokens_total": sum(ptok),
    }
    print(f"data: {json.dumps(data)}", flush=True)
    predicted = {}
    for b in (128, 32, 16):
        a, g = cacheable(ids, arrival, b, qof, False), cacheable(ids, grouped, b, qof)
        a_kept = cacheable(ids, arrival, b, qof)
        predicted[b] = {
            "arrival_prefill_tokens": sum(ptok) - sum(a),
            "arrival_prefill_tokens_nothing_evicted": sum(ptok) - sum(a_kept),
            "grouped_prefill_tokens": sum(ptok) - sum(g),
            "no_cache_prefill_tokens": sum(ptok),
        }
        print(f"prompt tokens left to compute, block {b}: {predicted[b]}", flush=True)

    results: dict[str, Any] = {"data": data, "predicted_prefill": predicted, "dtype": dtype}
    loads: list[float] = [os.getloadavg()[0]]
    ra: list[str] | None = None  # outputs of the first bare setting, arrival order
    with tempfile.TemporaryDirectory() as tmp:
        if "layout" in modes:
            lrows, _ = build_records(
                args.layout_rows, args.long_share, tuple(args.passage_tokens), args.seed, tok
            )
            table = pa.Table.from_pylist([{f: x[f] for f in FIELDS} for x in lrows])
            per = Path(tmp) / "layout-per-model"
            per.mkdir()
            for k in range(len(MODELS)):
                pq.write_table(
                    table.slice(k * args.layout_rows, args.layout_rows), per / f"model-{k}.parquet"
                )
            pq.write_table(table, Path(tmp) / "layout-one-file.parquet")
            variants = [
                {"name": "per-model files, the job as is", "paths": str(per)},
                {
                    "name": "one file, model-major, the job as is",
                    "paths": str(Path(tmp) / "layout-one-file.parquet"),
                },
                {
                    "name": "per-model files + repartition(keys=[question], sort=True)",
                    "paths": str(per),
                    "repartition": max(1, len(lrows) // 1024),
                },
            ]
            spec = Path(tmp) / "layout.json"
            spec.write_text(json.dumps({"variants": variants, "window": 64}))
            print(f"+ order the job hands to the model, {len(lrows)} records ...", flush=True)
            res = _child([str(Path(__file__).resolve()), "--child", "layout", "--spec", str(spec)], "layout")
            results["layout"] = res
            for v in res["variants"]:
                print(
                    f"  {v['name']}: {v['follows_same_question']:.1%} of records follow one of the same "
                    f"question, {v['same_question_within_window']:.1%} have one within the previous 64 "
                    f"(read blocks {v['read_blocks']}, read->prompt {v['wall_s']:.1f} s)",
                    flush=True,
                )
        per_model = len(rows) // len(MODELS)
        by_model = [arrival[k * per_model : (k + 1) * per_model] for k in range(len(MODELS))]
        order_defs = {
            # per-model files larger than the KV cache: nothing of a question survives to the next model
            "arrival": {"chunks": by_model, "reset": True},
            "grouped": {"chunks": [grouped[k * per_model : (k + 1) * per_model] for k in range(len(MODELS))]},
            # per-model files small enough for the KV cache to keep every question until the next model
            "arrival_kept": {"chunks": by_model},
        }
        orders = args.orders.split(",")
        base = {
            "model": model,
            "dtype": dtype,
            "max_tokens": args.max_tokens,
            "stop": list(XFINDER_STOP),
            "prompts": prompts,
            "head": os.path.commonprefix(prompts),
            "repeats": args.repeats,
            "orders": {k: {"reset": False, **order_defs[k]} for k in orders},
        }
        bare_settings = [
            ("bare", {"caching": True}),
            # without the cache the order changes nothing: one pass
            ("off", {"caching": False, "repeats": 1, "orders": {"arrival": base["orders"]["arrival"]}}),
            ("block32", {"caching": True, "block_size": 32, "repeats": 1}),
        ]
        for name, extra in bare_settings:
            if name not in modes:
                continue
            spec = Path(tmp) / f"{name}.json"
            spec.write_text(json.dumps({**base, **extra}))
            print(f"+ bare LLM.generate, {name} ...", flush=True)
            res = _child(["-c", BARE, str(spec)], name)
            ran = [o for o in orders if any(r["order"] == o for r in res["runs"])]
            summary: dict[str, Any] = {
                "block_size": res["block_size"],
                "num_blocks": res["num_blocks"],
                "init_s": res["init_s"],
            }
            for order in ran:
                rs = [r for r in res["runs"] if r["order"] == order]
                secs, cpu = [r["generate_s"] for r in rs], [r["cpu_s"] for r in rs]
                summary[order] = {
                    "generate_s": secs,
                    "cpu_s": cpu,
                    "records_per_s": n / _median(secs),
                    "records_per_cpu_s": n / _median(cpu),
                    "prompt_tokens_per_s": sum(rs[0]["prompt_tokens"]) / _median(secs),
                    "cached_tokens": sum(rs[0]["cached"]),
                    "cached_short": sum(c for c, k in zip(rs[0]["cached"], cls, strict=True) if k == "short"),
                    "cached_long": sum(c for c, k in zip(rs[0]["cached"], cls, strict=True) if k == "long"),
                    "generated_tokens": rs[0]["generated_tokens"],
                    "load1": [r["load1"] for r in rs] + [r["load1_end"] for r in rs],
                }
                loads += summary[order]["load1"]
            first = [r for r in res["runs"] if r["order"] == ran[0]][0]["texts"]
            ra = ra or first
            for order in ran[1:]:
                other = [r for r in res["runs"] if r["order"] == order][0]["texts"]
                summary[order]["identical_outputs"] = sum(x == y for x, y in zip(first, other, strict=True))
            if {"arrival", "grouped"} <= set(ran):
                a, g = summary["arrival"], summary["grouped"]
                summary["ratio_grouped_arrival"] = g["records_per_s"] / a["records_per_s"]
                summary["ratio_grouped_arrival_cpu"] = g["records_per_cpu_s"] / a["records_per_cpu_s"]
            results[name] = summary
            _save(results)  # partial results survive a later failure
            print(
                f"  {name}: block {res['block_size']}, {res['num_blocks']} KV blocks; "
                + "; ".join(
                    f"{o} {summary[o]['records_per_s']:.2f} rec/s ({summary[o]['prompt_tokens_per_s']:.0f} "
                    f"prompt tok/s, {summary[o]['records_per_cpu_s']:.2f} rec/CPU-s, "
                    f"{summary[o]['cached_tokens']} cached)"
                    for o in ran
                ),
                flush=True,
            )

        if "stage" in modes:
            files = []
            for k in range(len(MODELS)):
                part = rows[k * per_model : (k + 1) * per_model]
                t = pa.Table.from_pylist(
                    [{**{f: x[f] for f in FIELDS}, "pos": k * per_model + j} for j, x in enumerate(part)]
                ).append_column("reject_reason", pa.nulls(len(part), pa.string()))  # as the read stage does
                f = Path(tmp) / f"model-{k}.parquet"
                pq.write_table(t, f)
                files.append(str(f))
            runs_def = {
                "arrival": {"name": "arrival", "window": 0},
                # the job as it is on real files: each prompt batch holds one model's rows
                "file": {"name": "window = one model file", "window": per_model},
                # a window holding every model's answers to a question (8 x questions rows)
                "all": {"name": "window = all models", "window": len(rows)},
                "repartition": {
                    "name": "keyed repartition + window = file",
                    "window": per_model,
                    "repartition": 8,
                },
            }
            spec = Path(tmp) / "stage.json"
            spec.write_text(
                json.dumps(
                    {
                        "model": model,
                        "max_tokens": args.max_tokens,
                        "files": files,
                        "rows_per_file": per_model,
                        "runs": [runs_def[k] for k in args.stage_runs.split(",")],
                    }
                )
            )
            print("+ through the stage (ray.data + build_vllm_stage) ...", flush=True)
            res = _child([str(Path(__file__).resolve()), "--child", "stage", "--spec", str(spec)], "stage")
            for r in res["runs"]:
                r["identical_to_bare"] = (
                    sum(r["texts"][str(i)] == t for i, t in enumerate(ra)) if ra else None
                )
                r.pop("texts")
                loads.append(r["load1"])
                print(
                    f"  stage, {r['name']}: {_fmt(r['steady_records_per_s'])} rec/s steady "
                    f"({_fmt(r['steady_prompt_tokens_per_s'], 0)} prompt tok/s), wall {r['wall_s']:.0f} s, "
                    f"first output after {r['first_output_s']:.0f} s, {r['output_batches']} output batches",
                    flush=True,
                )
            results["stage"] = res["runs"]

    print(
        f"\n## Prefix-cache-aware ordering ({n} records = {args.questions} questions x {len(MODELS)} models)"
    )
    print(
        "| path | order | records/s | prompt tokens/s | records per CPU-s | cached prompt tokens "
        "| × arrival (wall) | × arrival (CPU) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    label = {"bare": "bare, prefix cache on", "off": "bare, prefix cache off", "block32": "bare, block 32"}
    ref = results.get("bare", {}).get("arrival")
    for name in ("bare", "off", "block32"):
        for order in [o for o in orders if o in results.get(name, {})]:
            o = results[name][order]
            wall_x = f"{o['records_per_s'] / ref['records_per_s']:.2f}" if ref else "–"
            cpu_x = f"{o['records_per_cpu_s'] / ref['records_per_cpu_s']:.2f}" if ref else "–"
            print(
                f"| {label[name]} | {order} | {o['records_per_s']:.2f} | {o['prompt_tokens_per_s']:.0f} | "
                f"{o['records_per_cpu_s']:.2f} | {o['cached_tokens']} / {data['prompt_tokens_total']} | "
                f"{wall_x} | {cpu_x} |"
            )
    for r in results.get("stage", []):
        base_rate = results["stage"][0]["steady_records_per_s"]
        rel = r["steady_records_per_s"] / base_rate if base_rate and r["steady_records_per_s"] else None
        print(
            f"| stage (ray.data), steady | {r['name']} | {_fmt(r['steady_records_per_s'])} | "
            f"{_fmt(r['steady_prompt_tokens_per_s'], 0)} | – | – | {_fmt(rel)} (vs first row) | – |"
        )
    results["load1_min_max"] = [min(loads), max(loads)]
    print(
        f"load average (1 min) during the runs: {min(loads):.2f} – {max(loads):.2f} on {os.cpu_count()} cores"
    )
    bench = {
        "records": n,
        "bare_arrival_rps": results.get("bare", {}).get("arrival", {}).get("records_per_s"),
        "bare_grouped_rps": results.get("bare", {}).get("grouped", {}).get("records_per_s"),
        "ratio_grouped_arrival": results.get("bare", {}).get("ratio_grouped_arrival"),
        "ratio_grouped_arrival_cpu": results.get("bare", {}).get("ratio_grouped_arrival_cpu"),
        "stage": {r["name"]: r["steady_records_per_s"] for r in results.get("stage", [])},
        "load1_min_max": results["load1_min_max"],
    }
    print("BENCH_JSON " + json.dumps(bench), flush=True)
    _save(results)


if __name__ == "__main__":
    main()
