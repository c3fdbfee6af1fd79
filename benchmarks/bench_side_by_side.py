"""Side by side, one run: the `xfinder` package's own path, bare `vllm.LLM.generate`, and our whole job.

Same records, same model, same prompts, same decoding (greedy, the same max_tokens), each path in a
fresh process, one after the other (never concurrently):

(a) the `xfinder` PyPI package 0.2.6, its own batch path: ``xfinder.eval.Evaluator(model_name=
    "xFinder-qwen1505", inference_mode="local", model_path_or_url=<model folder>, temperature=0,
    max_tokens=N).evaluate(<records.json>)`` — its DataProcessor reads the JSON, then per record
    Extractor.generate_output (HF transformers ``model.generate``, one record at a time, batch 1) and
    Comparator.compare. Installed with ``pip install --no-deps --target .cache/bench-xfinder
    xfinder==0.2.6 tenacity`` (tenacity: the one runtime dependency of the package that .venv lacks) and
    put on PYTHONPATH of this child only; nothing of it is vendored. The package loads the model with
    ``torch_dtype="auto"`` (bf16 for SmolLM2 and for the real xFinder checkpoints); by default the
    child casts the loaded model to float32 (``--xfinder-dtype float32``), the dtype (b) and (c) use on
    this CPU (no AVX512-BF16/AMX: bf16 runs ~5x slower here); ``--xfinder-dtype auto`` keeps the
    package's choice. Its local path has no stop strings (it stops at EOS or max_new_tokens).
(b) bare vLLM: ``vllm.LLM(model, **engine_kwargs)`` + one ``generate`` call on every prompt rendered by
    ``xfinder_ray.prompts.render_prompt``, where engine_kwargs, the engine's environment variables and
    the sampling parameters are taken from the job's own config through
    ``processor_config_kwargs(stage_config_from(cfg.xfinder), "cpu")`` and ``sampling_params(...)`` —
    exactly what the job's vLLM stage hands to ray.data.llm (float32 here, eager, prefix caching,
    max_model_len, VLLM_CPU_KVCACHE_SPACE, VLLM_CPU_NUM_OF_RESERVED_CPU=0 on a node of <= 4 cores).
    Greedy, max_tokens N, XFINDER_STOP. ``--set KEY=VALUE`` (repeatable) adds a job config override to
    both b and c, e.g. ``--set xfinder.enforce_eager=false`` (the compiled engine: slower start, faster
    steady state, as a long CPU run would use; `make bench` keeps the eager default to stay within 20 min).
(c) our whole job: ``benchmarks/score_child.py configs/local.yaml`` (xfinder_ray.pipeline.run: read ->
    validate -> prompt -> vLLM stage -> parse + judge -> write -> verify + tables -> manifest) on the same
    records written as one Parquet file, extractor xfinder, cache.enabled=false.

Prompts: by default all three use the package's prompt (``xfinder.prompt_format=xfinder-package`` for
b and c), which our renderer reproduces byte for byte (checked on every run); ``--prompt-format
training`` gives b and c the training-format prompt instead (longer; compare prompt tokens/s then).

Records: the shipped sample (xfinder_ray.sample_data.read_sample, valid rows). ``--selection grouped``
(default): questions taken one per task in turn, with the 8 models' answers to each, in the file's
(arrival) order, as when a leaderboard is re-scored; ``--selection spread``: a seeded random draw.

Rates: "steady" excludes one-time start-up (imports, model load, engine start, Ray start):
(a) the evaluate loop after the Evaluator is built; (b) the generate call; (c) from the moment the
engine reports ready (the first of vLLM's "init engine ... took" and ray.data.llm's "Max pending
requests" log lines, time-stamped by this process as they arrive, ~1 s resolution) to the job's
return (so it includes the job's tail: judging, writing, the verify + aggregate pass, the manifest).
"whole" is the child process's wall clock, start-up included.

    python benchmarks/bench_side_by_side.py --records 64 --max-tokens 8
    python benchmarks/bench_side_by_side.py --records 8 --model tiny     # plumbing only (random weights)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

XFINDER_VERSION = "0.2.6"
XFINDER_ENV = ROOT / ".cache" / "bench-xfinder"
# The UDF's engine is built and takes requests (ray.data.llm logs this right after constructing it);
# vLLM's own EngineCore line comes a few seconds earlier (before the front-end is up): the fallback.
ENGINE_READY = ("Max pending requests is set to", "init engine (profile, create kv cache, warmup model) took")
CONFIG = ROOT / "configs" / "local.yaml"


# --- records and prompts -------------------------------------------------------------------------------


def pick_records(n: int, selection: str) -> list[dict]:
    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import read_sample

    rows = [r for r in read_sample() if r["defect"] is None]
    if selection == "spread":
        idx = sorted(random.Random(0).sample(range(len(rows)), min(n, len(rows))))
        chosen = [rows[i] for i in idx]
    else:
        # questions in turn across tasks (mmlu-000, arc-000, ..., math-000, mmlu-001, ...), every model's
        # answer to each, kept in file order (one block per model: arrival order).
        by_task: dict[str, list[str]] = {}
        for r in rows:
            qs = by_task.setdefault(r["task"], [])
            if r["question_id"] not in qs:
                qs.append(r["question_id"])
        order = [q for level in zip(*by_task.values(), strict=False) for q in level]
        per_q = len({r["model"] for r in rows})
        wanted = set(order[: math.ceil(n / per_q)])
        chosen = [r for r in rows if r["question_id"] in wanted][:n]
    return [{k: r[k] for k in FIELDS} for r in chosen]


def job_overrides(model: str, max_tokens: int, prompt_format: str) -> list[str]:
    return [
        "extractor.name=xfinder",
        "xfinder.checkpoint=xFinder-qwen1505",
        f"xfinder.model_source={model}",
        f"xfinder.max_tokens={max_tokens}",
        f"xfinder.prompt_format={prompt_format}",
        "cache.enabled=false",
        "output.overwrite=true",
    ]


def score_child_cmd(inp: Path, out: Path, overrides: list[str]) -> list[str]:
    """(c): one scoring job in a fresh process (benchmarks/score_child.py) on configs/local.yaml."""
    return [
        sys.executable,
        str(ROOT / "benchmarks" / "score_child.py"),
        str(CONFIG),
        f"input={inp}",
        f"output={out}",
        *overrides,
    ]


def bare_engine_spec(cfg) -> dict:
    """What (b) and the other bare-engine benchmarks build vllm.LLM from: the job's own engine kwargs,
    engine environment and sampling parameters for this config (see the module docstring)."""
    from xfinder_ray.extractors.vllm import processor_config_kwargs, sampling_params, stage_config_from

    stage_cfg = stage_config_from(cfg.xfinder)
    pkw = processor_config_kwargs(stage_cfg, "cpu")
    return {
        "model": pkw["model_source"],
        "engine_kwargs": pkw["engine_kwargs"],
        "env_vars": pkw["runtime_env"]["env_vars"],
        "sampling": sampling_params(stage_cfg),
    }


def render_all(records: list[dict], cfg) -> list[str]:
    from xfinder_ray.prompts import TRAINING_MAX_LENGTH, render_prompt
    from xfinder_ray.records import parse_answer_range

    x = cfg.xfinder
    return [
        render_prompt(
            r["question"],
            r["llm_output"],
            parse_answer_range(r["standard_answer_range"], r["key_answer_type"]),
            checkpoint=x.checkpoint,
            fmt=x.prompt_format,
            max_prompt_tokens=min(x.max_model_len, TRAINING_MAX_LENGTH) - x.max_tokens,
        ).prompt
        for r in records
    ]


# --- the bench-only environment for the xfinder package ------------------------------------------------


def ensure_xfinder_env() -> Path:
    """`pip install --no-deps --target .cache/bench-xfinder xfinder==0.2.6 tenacity` once (never vendored)."""
    marker = XFINDER_ENV / f"xfinder-{XFINDER_VERSION}.dist-info"
    if marker.is_dir() and (XFINDER_ENV / "tenacity").is_dir():
        return XFINDER_ENV
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(XFINDER_ENV)]
    subprocess.run([*cmd, f"xfinder=={XFINDER_VERSION}", "tenacity"], check=True)
    return XFINDER_ENV


# --- children --------------------------------------------------------------------------------------------


def child_xfinder(spec: dict) -> dict:
    """(a): the package's Evaluator.evaluate on a JSON file of the records (its own read + loop)."""
    t0 = time.time()
    import torch
    import xfinder
    from xfinder.eval import Evaluator

    t1 = time.time()
    ev = Evaluator(
        model_name="xFinder-qwen1505",
        inference_mode="local",
        model_path_or_url=spec["model"],
        temperature=0,
        max_tokens=spec["max_tokens"],
    )
    model = ev.extractor.model
    loaded_dtype = str(model.dtype)
    if spec["xfinder_dtype"] == "float32":
        model.to(torch.float32)
    # Pass-through recorders (behaviour unchanged): token counts per generate call, the returned texts.
    counts: list[tuple[int, int]] = []
    outputs: list[str] = []
    generate = model.generate
    extract = ev.extractor.generate_output

    def counting_generate(input_ids, *a, **kw):
        out = generate(input_ids, *a, **kw)
        counts.append((int(input_ids.shape[1]), int(out.shape[1] - input_ids.shape[1])))
        return out

    def recording_extract(*a, **kw):
        text = extract(*a, **kw)
        outputs.append(text)
        return text

    model.generate = counting_generate
    ev.extractor.generate_output = recording_extract
    t2 = time.time()
    accuracy = ev.evaluate(spec["data_json"])
    t3 = time.time()
    return {
        "package": f"xfinder {getattr(xfinder, '__version__', XFINDER_VERSION)} from {Path(xfinder.__file__).parent}",
        "loaded_dtype": loaded_dtype,
        "run_dtype": str(model.dtype),
        "torch_threads": torch.get_num_threads(),
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "steady_s": t3 - t2,
        "prompt_tokens": [c[0] for c in counts],
        "gen_tokens": [c[1] for c in counts],
        "outputs": outputs,
        "package_accuracy": accuracy,
    }


def child_bare(spec: dict) -> dict:
    """(b): vllm.LLM with the stage's engine kwargs, one generate call on every prompt."""
    t0 = time.time()
    os.environ.update(spec["env_vars"])
    from vllm import LLM, SamplingParams

    t1 = time.time()
    llm = LLM(model=spec["model"], **spec["engine_kwargs"])
    t2 = time.time()
    outs = llm.generate(spec["prompts"], SamplingParams(**spec["sampling"]))
    t3 = time.time()
    return {
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "steady_s": t3 - t2,
        "prompt_tokens": [len(o.prompt_token_ids) for o in outs],
        "gen_tokens": [len(o.outputs[0].token_ids) for o in outs],
        "outputs": [o.outputs[0].text for o in outs],
    }


def run_child(cmd: list[str], env: dict[str, str], log: Path) -> tuple[dict, float, list[tuple[float, str]]]:
    """Run a child; return its BENCH_JSON, its process wall, and its output lines with arrival times."""
    lines: list[tuple[float, str]] = []
    lock = threading.Lock()
    t0 = time.time()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
    )

    def pump(stream) -> None:
        for line in stream:
            with lock:
                lines.append((time.time(), line.rstrip("\n")))

    threads = [threading.Thread(target=pump, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
    for t in threads:
        t.start()
    rc = proc.wait()
    wall = time.time() - t0
    for t in threads:
        t.join()
    log.write_text("\n".join(f"{ts - t0:9.3f} {text}" for ts, text in lines) + "\n")
    results = [text for _, text in lines if text.startswith("BENCH_JSON ")]
    if rc or not results:
        tail = "\n".join(text for _, text in lines[-40:])
        raise RuntimeError(f"{' '.join(cmd[:3])} failed (rc={rc}); log {log}:\n{tail}")
    return json.loads(results[-1][len("BENCH_JSON ") :]), wall, [(ts - t0, text) for ts, text in lines]


def text_tokens(tokenizer, texts: list[str]) -> float:
    return sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts) / max(1, len(texts))


# --- main ------------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--model", default="smollm2", help="smollm2 | tiny (random weights) | a model folder")
    ap.add_argument("--selection", choices=("grouped", "spread"), default="grouped")
    ap.add_argument("--prompt-format", choices=("xfinder-package", "training"), default="xfinder-package")
    ap.add_argument("--xfinder-dtype", choices=("float32", "auto"), default="float32")
    ap.add_argument("--paths", default="abc", help="which of a, b, c to run (default all)")
    ap.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="job config override (b and c)"
    )
    ap.add_argument(
        "--prepare",
        action="store_true",
        help="only install the bench-only xfinder folder and convert SmolLM2 (needs the registry; make bench runs "
        "it outside the loopback namespace)",
    )
    ap.add_argument("--child", choices=("a", "b"), help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        spec = json.loads(Path(args.spec).read_text())
        res = child_xfinder(spec) if args.child == "a" else child_bare(spec)
        print("BENCH_JSON " + json.dumps(res), flush=True)
        return 0

    if args.prepare:
        from xfinder_ray.devmodels import ensure_smollm2

        print(f"xfinder package: {ensure_xfinder_env()}; model: {ensure_smollm2()}")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    from transformers import AutoTokenizer

    from xfinder_ray.config import load_config
    from xfinder_ray.devmodels import ensure_smollm2, make_tiny_random_model

    if args.model == "smollm2":
        model = str(ensure_smollm2())
    elif args.model == "tiny":
        model = str(make_tiny_random_model())
    else:
        model = str(Path(args.model).resolve())
    records = pick_records(args.records, args.selection)
    n = len(records)
    overrides = job_overrides(model, args.max_tokens, args.prompt_format) + args.set
    cfg = load_config(CONFIG, overrides)
    engine = bare_engine_spec(cfg)
    prompts = render_all(records, cfg)
    tok = AutoTokenizer.from_pretrained(model)
    load = os.getloadavg()
    out_dir = ROOT / "out" / "side_by_side"
    out_dir.mkdir(parents=True, exist_ok=True)
    res: dict[str, dict] = {}
    notes: list[str] = []
    env = {**os.environ}

    with tempfile.TemporaryDirectory() as tmp:
        tmp_p = Path(tmp)
        if "a" in args.paths:
            try:
                xenv = ensure_xfinder_env()
            except (subprocess.CalledProcessError, OSError) as e:
                xenv = None
                notes.append(f"(a) skipped: could not install xfinder=={XFINDER_VERSION} ({e})")
        if "a" in args.paths and xenv is not None:
            data = tmp_p / "records.json"
            data.write_text(json.dumps(records))
            spec = tmp_p / "a.json"
            spec.write_text(
                json.dumps(
                    {
                        "model": model,
                        "max_tokens": args.max_tokens,
                        "data_json": str(data),
                        "xfinder_dtype": args.xfinder_dtype,
                    }
                )
            )
            a_env = {
                **env,
                "PYTHONPATH": os.pathsep.join([str(xenv), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            }
            cmd = [sys.executable, __file__, "--child", "a", "--spec", str(spec)]
            print("+ (a) xfinder package", flush=True)
            r, wall, _ = run_child(cmd, a_env, out_dir / "a.log")
            r["process_wall_s"] = wall
            r["startup_s"] = wall - r["steady_s"]
            res["a"] = r
            if args.prompt_format == "xfinder-package":
                same = sum(p == q for p, q in zip(package_prompts(records, xenv), prompts, strict=True))
                r["prompts_byte_identical"] = same
        if "b" in args.paths:
            spec = tmp_p / "b.json"
            spec.write_text(json.dumps({**engine, "prompts": prompts}))
            print(f"+ (b) bare vllm.LLM.generate, engine_kwargs={engine['engine_kwargs']}", flush=True)
            r, wall, _ = run_child(
                [sys.executable, __file__, "--child", "b", "--spec", str(spec)], env, out_dir / "b.log"
            )
            r["process_wall_s"] = wall
            r["startup_s"] = wall - r["steady_s"]
            r["engine_kwargs"] = engine["engine_kwargs"]
            r["env_vars"] = {k: v for k, v in engine["env_vars"].items() if k.startswith("VLLM")}
            res["b"] = r
        if "c" in args.paths:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(records), tmp_p / "in.parquet")
            cmd = score_child_cmd(tmp_p / "in.parquet", tmp_p / "out", overrides)
            print("+ (c) whole job: score_child.py " + " ".join(cmd[3:]), flush=True)
            r, wall, lines = run_child(cmd, env, out_dir / "c.log")
            ready = next(
                (
                    [ts for ts, text in lines if marker in text]
                    for marker in ENGINE_READY
                    if any(marker in t for _, t in lines)
                ),
                [],
            )
            done = [ts for ts, text in lines if text.startswith("BENCH_JSON ")][-1]
            if not r["extractor"].startswith("xfinder:") or r["judged"] != n:
                raise RuntimeError(f"(c) did not run xFinder on every record: {r}")
            import pandas as pd

            judged = pd.read_parquet(tmp_p / "out" / "judgments").set_index("record_id")
            ids = [rec["record_id"] for rec in records]
            r["outputs"] = [judged.loc[i, "raw_output"] for i in ids]
            r["prompt_tokens"] = [int(judged.loc[i, "prompt_tokens"]) for i in ids]
            manifest = json.loads((tmp_p / "out" / "manifest.json").read_text())
            r["router"] = manifest.get("router")
            r["process_wall_s"] = wall
            r["engine_ready_at_s"] = ready[0] if ready else None
            r["steady_s"] = (done - ready[0]) if ready else None
            r["startup_s"] = (wall - r["steady_s"]) if ready else None
            if not ready:
                notes.append("(c): no engine-ready log line seen; steady rate not available")
            res["c"] = r

    summary = summarize(res, n, tok)
    print_report(args, model, records, load, res, summary, notes)
    payload = {
        "n": n,
        "max_tokens": args.max_tokens,
        "model": model,
        "selection": args.selection,
        "prompt_format": args.prompt_format,
        "job_overrides": args.set,
        "xfinder_dtype": args.xfinder_dtype,
        "loadavg_before": load,
        "loadavg_after": os.getloadavg(),
        "summary": summary,
        "notes": notes,
    }
    print("BENCH_JSON " + json.dumps(payload), flush=True)
    payload["paths"] = res
    (ROOT / "out" / "bench_side_by_side.json").write_text(json.dumps(payload, indent=2))
    return 0


def package_prompts(records: list[dict], xenv: Path) -> list[str]:
    """What the package itself feeds the model for these records (its DataProcessor + Evaluator + Extractor
    string building, called without loading a model)."""
    sys.path.insert(0, str(xenv))
    from xfinder.eval import Evaluator
    from xfinder.helpers import DataProcessor
    from xfinder.modules import Extractor
    from xfinder.modules.answer_extractor import SYSTEM_PROMPT

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(records, f)
    try:
        data = DataProcessor().read_data(f.name)
    finally:
        os.unlink(f.name)
    ex = Extractor.__new__(Extractor)  # no model load: only the prompt-building methods are used
    ex.model_name, ex.system_prompt = "xFinder-qwen1505", SYSTEM_PROMPT
    out = []
    for item in data:
        rng = (
            Evaluator.MATH_STANDARD_ANSWER_RANGE
            if item["key_answer_type"] == "math"
            else item["standard_answer_range"]
        )
        query = (
            f'Question: """{item["question"]}"""\n\nOutput sentences: """{item["llm_output"]}"""\n\n'
            f"Answer range: {rng}\n\nKey extracted answer: "
        )
        out.append(ex.create_formatted_prompt(query))
    return out


def summarize(res: dict[str, dict], n: int, tok) -> dict:
    s: dict[str, dict] = {}
    for k, r in res.items():
        ptok = sum(r["prompt_tokens"])
        row = {
            "records": n,
            "mean_prompt_tokens": ptok / n,
            "mean_gen_tokens": (sum(r["gen_tokens"]) / n) if "gen_tokens" in r else None,
            "mean_text_tokens": text_tokens(tok, [o.strip() for o in r["outputs"]]),
            "startup_s": r.get("startup_s"),
            "steady_s": r.get("steady_s"),
            "process_wall_s": r["process_wall_s"],
            "steady_records_per_s": (n / r["steady_s"]) if r.get("steady_s") else None,
            "steady_prompt_tokens_per_s": (ptok / r["steady_s"]) if r.get("steady_s") else None,
            "whole_records_per_s": n / r["process_wall_s"],
            "whole_prompt_tokens_per_s": ptok / r["process_wall_s"],
        }
        s[k] = row
    if "b" in res and "c" in res and s["c"]["mean_gen_tokens"] is None:
        same = [x.strip() == y.strip() for x, y in zip(res["c"]["outputs"], res["b"]["outputs"], strict=True)]
        if all(same):  # the job keeps text, not token ids: identical text, identical decode
            s["c"]["mean_gen_tokens"] = s["b"]["mean_gen_tokens"]
            s["c"]["gen_tokens_from"] = "b (identical outputs)"
    if "b" in res:
        for k in ("a", "c"):
            if k in res:
                s[k]["outputs_identical_to_b"] = sum(
                    x.strip() == y.strip()
                    for x, y in zip(res[k]["outputs"], res["b"]["outputs"], strict=True)
                )
                s[k]["prompt_tokens_equal_to_b"] = sum(
                    x == y for x, y in zip(res[k]["prompt_tokens"], res["b"]["prompt_tokens"], strict=True)
                )
    for num, den in (("c", "a"), ("c", "b"), ("b", "a")):
        if num in s and den in s:
            for kind in ("steady", "whole"):
                x, y = s[num][f"{kind}_records_per_s"], s[den][f"{kind}_records_per_s"]
                s.setdefault("ratios", {})[f"{num}/{den} {kind}"] = (x / y) if x and y else None
    return s


def _f(x, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def print_report(args, model: str, records: list[dict], load, res, s, notes) -> None:
    n = len(records)
    names = {
        "a": f"(a) xfinder {XFINDER_VERSION} package (HF transformers, 1 record at a time)",
        "b": "(b) bare vllm.LLM.generate (the stage's engine settings)",
        "c": "(c) whole job (read → … → tables), xfinder-ray",
    }
    print(
        f"\n## Side by side: {n} records, {Path(model).name}, greedy, max_tokens {args.max_tokens}, "
        f"prompts {args.prompt_format}, selection {args.selection} (load average before: {load[0]:.2f})"
        + (f"; b and c with {' '.join(args.set)}" if args.set else "")
    )
    print(
        "| path | mean prompt tok | mean gen tok | start-up (s) | steady (s) | steady rec/s | steady prompt tok/s "
        "| process wall (s) | whole rec/s | whole prompt tok/s |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    for k in ("a", "b", "c"):
        if k not in s:
            continue
        r = s[k]
        gen = (
            _f(r["mean_gen_tokens"], ".1f")
            if r["mean_gen_tokens"] is not None
            else f"~{r['mean_text_tokens']:.1f}*"
        )
        if r.get("gen_tokens_from"):
            gen += "*"
        print(
            f"| {names[k]} | {r['mean_prompt_tokens']:.0f} | {gen} | {_f(r['startup_s'], '.1f')} | "
            f"{_f(r['steady_s'], '.1f')} | {_f(r['steady_records_per_s'])} | {_f(r['steady_prompt_tokens_per_s'], '.0f')} | "
            f"{r['process_wall_s']:.1f} | {r['whole_records_per_s']:.2f} | {r['whole_prompt_tokens_per_s']:.0f} |"
        )
    if "c" in s:
        print(
            "\n\\* (c) keeps text, not token ids: its decode count is (b)'s where every output is identical to (b)'s, "
            "else (~) the returned text re-tokenized."
        )
    ratios = s.get("ratios", {})
    if ratios:
        targets = {"c/a": 5.0, "c/b": 0.9}
        print("\n| ratio | steady | whole process | target |\n|---|---|---|---|")
        for pair in ("c/a", "c/b", "b/a"):
            if f"{pair} steady" in ratios:
                t = targets.get(pair)
                print(
                    f"| {pair} | {_f(ratios[f'{pair} steady'])} | {_f(ratios[f'{pair} whole'])} | "
                    f"{'≥ ' + format(t, '.1f') if t else '–'} |"
                )
    for k in ("a", "c"):
        if k in s and "outputs_identical_to_b" in s[k]:
            print(
                f"({k}) vs (b): identical outputs {s[k]['outputs_identical_to_b']}/{n}, "
                f"equal prompt token counts {s[k]['prompt_tokens_equal_to_b']}/{n}"
            )
    if "a" in res:
        a = res["a"]
        print(
            f"(a) dtype loaded {a['loaded_dtype']} -> run {a['run_dtype']}, torch threads {a['torch_threads']}"
            + (
                f"; prompts byte-identical to ours {a['prompts_byte_identical']}/{n}"
                if "prompts_byte_identical" in a
                else ""
            )
        )
    distinct = len({(r["question"], r["llm_output"], r["standard_answer_range"]) for r in records})
    print(
        f"distinct (question, response, range) among the {n} records: {distinct} (the job extracts each once per batch)"
    )
    c_b = s.get("ratios", {}).get("c/b steady")
    if c_b:
        print(f"c/b steady per engine request (deduplication factored out): {c_b * distinct / n:.2f}")
    if "c" in res and res["c"].get("router"):
        print(f"(c) router: {res['c']['router']}")
    if "b" in res:
        print(f"(b) engine kwargs {res['b']['engine_kwargs']}, env {res['b']['env_vars']}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    sys.exit(main())
