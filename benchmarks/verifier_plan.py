"""PLANNED GPU memory and throughput of the verifier judges (issue #23); no GPU, no network.

Per checkpoint (xFinder-qwen1505 for reference): parameters and bf16 weights from the base architecture,
KV-cache bytes per token, prompt tokens per record on the real corpus, and on one H200 the replicas that
fit and a prefill-bound upper bound on records/s. Prompts: render_verifier_prompt (xFinder: render_prompt)
for every 5th record of benchmarks/data/zeroeval ("chat", 5,465 of 27,321) and every record of
benchmarks/data/reasoning_dev (306), its thought stripped (the default) and kept. docs/performance.md,
"Verifier judges on a GPU (planned, issue #23)", says how to measure it.

Tokens: no verifier tokenizer is available offline. Proxy: SmolLM2-135M-Instruct's tokenizer (49,152 tokens,
xfinder_ray.devmodels.ensure_smollm2); the verifiers' have 100k-256k, so counts likely err high. Without
it: characters / 3.48 (its ratio on the chat records' xVerify prompts).

    .venv/bin/python benchmarks/verifier_plan.py [--lengths-out out/verifier_plan/lengths.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import namedtuple
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# One H200 (SXM): 141 GB HBM3e, 4.8 TB/s, 989 TFLOP/s dense bf16 (NVIDIA's data sheet; PEAK_TFLOPS in
# gpu_bench.py). ASSUMED: 40% model-FLOPs utilization in prefill; 20% memory headroom over weights + KV;
# 128 records in flight per replica (configs/default.yaml xfinder.batch_size); bf16 weights and KV.
HBM_BYTES, HBM_BW, PEAK_FLOPS = 141e9, 4.8e12, 989e12
MFU, HEADROOM, BATCH = 0.40, 1.2, 128
CHAT_STRIDE, CHARS_PER_TOKEN = 5, 3.48
XFINDER_MAX_PROMPT = 2016  # the job cuts xFinder prompts to 2,048 - 32 tokens with the model's tokenizer
GEN_TOKENS = {"xfinder": 8, "xverify": 2, "compassverifier": 1}  # "Correct" / "A"; xFinder: gpu_bench's 8

# norms: RMSNorms per layer (Gemma-2: 4); max_ctx: max_position_embeddings
Arch = namedtuple("Arch", "hidden layers heads kv_heads head_dim inter vocab tied qkv_bias norms max_ctx")

# Each base model's config.json as published on the Hugging Face hub, read through copies of those files
# found with the search tool (code corpus) on 2026-12-02: hidden_size, num_hidden_layers (GLM: num_layers),
# num_attention_heads, num_key_value_heads (GLM: multi_query_group_num), head_dim (else hidden/heads; GLM:
# kv_channels), intermediate_size (GLM: ffn_hidden_size), vocab_size (GLM: padded_vocab_size),
# tie_word_embeddings, max_position_embeddings (GLM: seq_length). Qwen2.5 rows: the base models' configs
# (same architecture as -Instruct); their max context, 32,768 (the -Instruct configs; 131,072 with YaRN),
# is from memory and one secondary page, not a config file. Qwen1.5-0.5B: as gpu_bench.py (checked there);
# its max context is xFinder's training length, 2,048. Biases: Qwen attention q/k/v, GLM add_qkv_bias.
ARCHS: dict[str, Arch] = {
    "Qwen1.5-0.5B": Arch(1024, 24, 16, 16, 64, 2816, 151936, True, True, 2, 2048),
    "Qwen2.5-0.5B-Instruct": Arch(896, 24, 14, 2, 64, 4864, 151936, True, True, 2, 32768),
    "Qwen2.5-1.5B-Instruct": Arch(1536, 28, 12, 2, 128, 8960, 151936, True, True, 2, 32768),
    "Qwen2.5-3B-Instruct": Arch(2048, 36, 16, 2, 128, 11008, 151936, True, True, 2, 32768),
    "Qwen2.5-7B-Instruct": Arch(3584, 28, 28, 4, 128, 18944, 152064, False, True, 2, 32768),
    "Qwen2.5-14B-Instruct": Arch(5120, 48, 40, 8, 128, 13824, 152064, False, True, 2, 32768),
    "Qwen2.5-32B-Instruct": Arch(5120, 64, 40, 8, 128, 27648, 152064, False, True, 2, 32768),
    "Llama-3.2-1B-Instruct": Arch(2048, 16, 32, 8, 64, 8192, 128256, True, False, 2, 131072),
    "Llama-3.2-3B-Instruct": Arch(3072, 28, 24, 8, 128, 8192, 128256, True, False, 2, 131072),
    "Llama-3.1-8B-Instruct": Arch(4096, 32, 32, 8, 128, 14336, 128256, False, False, 2, 131072),
    "gemma-2-2b-it": Arch(2304, 26, 8, 4, 256, 9216, 256000, True, False, 4, 8192),
    "gemma-2-9b-it": Arch(3584, 42, 16, 8, 256, 14336, 256000, True, False, 4, 8192),
    "gemma-2-27b-it": Arch(4608, 46, 32, 16, 128, 36864, 256000, True, False, 4, 8192),
    "glm-4-9b-chat": Arch(4096, 40, 32, 2, 128, 13696, 151552, False, True, 2, 131072),
    "phi-4": Arch(5120, 40, 40, 10, 128, 17920, 100352, False, False, 2, 16384),
}
BASE_OF = {  # checkpoint -> base (xverify.py / compassverifier.py CHECKPOINTS; sizes pick the base)
    "xFinder-qwen1505": "Qwen1.5-0.5B", "xVerify-0.5B-I": "Qwen2.5-0.5B-Instruct",
    "xVerify-1B-I": "Llama-3.2-1B-Instruct", "xVerify-1.5B-I": "Qwen2.5-1.5B-Instruct",
    "xVerify-2B-I": "gemma-2-2b-it", "xVerify-3B-Ia": "Llama-3.2-3B-Instruct",
    "xVerify-3B-Ib": "Qwen2.5-3B-Instruct", "xVerify-7B-I": "Qwen2.5-7B-Instruct",
    "xVerify-8B-I": "Llama-3.1-8B-Instruct", "xVerify-9B-C": "glm-4-9b-chat", "xVerify-9B-I": "gemma-2-9b-it",
    "xVerify-14B-Ia": "Qwen2.5-14B-Instruct", "xVerify-14B-Ib": "phi-4", "xVerify-27B-I": "gemma-2-27b-it",
    "xVerify-32B-I": "Qwen2.5-32B-Instruct", "CompassVerifier-3B": "Qwen2.5-3B-Instruct",
    "CompassVerifier-7B": "Qwen2.5-7B-Instruct", "CompassVerifier-32B": "Qwen2.5-32B-Instruct",
}  # fmt: skip
VIEWS = ("chat", "reasoning, thought stripped", "reasoning, thought kept")


def param_counts(a: Arch) -> tuple[int, int, int]:
    """(all parameters, the decoder's linear layers, the LM head)."""
    q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    attn = 2 * a.hidden * q + 2 * a.hidden * kv + (q + 2 * kv if a.qkv_bias else 0)
    linear = a.layers * (attn + 3 * a.hidden * a.inter)  # gated MLP: gate, up, down
    emb = a.vocab * a.hidden
    total = linear + a.layers * a.norms * a.hidden + a.hidden + emb + (0 if a.tied else emb)
    return total, linear, emb


def kv_bytes_per_token(a: Arch) -> int:
    return 2 * a.layers * a.kv_heads * a.head_dim * 2  # K and V, bf16 (Gemma-2's 4,096 window not used)


def load_records() -> tuple[list[dict], list[dict]]:
    from real_corpus import load_real_corpus

    cols = ["question", "llm_output", "correct_answer", "standard_answer_range", "key_answer_type"]
    chat = load_real_corpus().select(cols).to_pylist()[::CHAT_STRIDE]
    path = ROOT / "benchmarks" / "data" / "reasoning_dev" / "reasoning_dev.jsonl"
    return chat, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def token_counter():
    """(count(texts) -> token counts, what counted them)."""
    try:
        from tokenizers import Tokenizer

        from xfinder_ray.devmodels import ensure_smollm2

        tok = Tokenizer.from_file(str(ensure_smollm2() / "tokenizer.json"))
    except Exception as e:  # noqa: BLE001
        proxy = f"characters / {CHARS_PER_TOKEN} (proxy; no SmolLM2 tokenizer: {e})"
        return lambda texts: [math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts], proxy
    encode = tok.encode_batch_fast
    proxy = "SmolLM2-135M-Instruct tokenizer (proxy; 49,152 tokens)"
    return lambda texts: [len(e.ids) for e in encode(texts, add_special_tokens=False)], proxy


def render(name: str, rows: list[dict], strip: bool) -> list[str]:
    if name == "xFinder-qwen1505":  # what the job sends: training format; reasoning final (strip) or full
        from xfinder_ray.prompts import render_prompt
        from xfinder_ray.records import parse_answer_range

        rng = lambda r: parse_answer_range(r["standard_answer_range"], r["key_answer_type"])  # noqa: E731
        mode = "final" if strip else "full"
        return [render_prompt(r["question"], r["llm_output"], rng(r), reasoning=mode).prompt for r in rows]
    from xfinder_ray.verifiers import render_verifier_prompt

    fields = lambda r: (r["question"], r["llm_output"], r["correct_answer"])  # noqa: E731
    return [render_verifier_prompt(name, *fields(r), strip_thought=strip) for r in rows]


def shape_of(name: str) -> tuple[str, str]:
    """(family, chat template): what the prompt depends on."""
    from xfinder_ray.verifiers import verifier_spec

    if name == "xFinder-qwen1505":
        return "xfinder", "qwen1.5"
    spec = verifier_spec(name)
    return spec.family, spec.base


def prompt_lengths(count, chat: list[dict], reasoning: list[dict]) -> tuple[dict, dict]:
    """{(family, base): {view: token counts}}, {(family, base): offset check}.

    Each family is rendered for every record with its first checkpoint (Qwen-based). The other bases'
    chat templates wrap the same user message, so their counts are those plus a constant offset,
    measured on every 50th chat record and every 5th reasoning record (the spread is reported)."""
    sets = {VIEWS[0]: (chat, True), VIEWS[1]: (reasoning, True), VIEWS[2]: (reasoning, False)}
    lengths, checks, reps = {}, {}, {}
    for name in BASE_OF:
        shape = shape_of(name)
        rep = reps.setdefault(shape[0], name)
        if rep == name:  # xFinder's prompts are cut to fit by the job, with the model's tokenizer
            cap = XFINDER_MAX_PROMPT if name == "xFinder-qwen1505" else math.inf
            lengths[shape] = {v: [min(n, cap) for n in count(render(name, *rs))] for v, rs in sets.items()}
        elif shape not in lengths:
            sample = chat[::50] + reasoning[::5]
            pairs = zip(count(render(name, sample, True)), count(render(rep, sample, True)), strict=True)
            diff = [a - b for a, b in pairs]
            off = int(statistics.median(diff))
            dev = max(abs(d - off) for d in diff)
            checks[shape] = {"offset": off, "records": len(diff), "max_deviation": dev}
            lengths[shape] = {v: [n + off for n in ns] for v, ns in lengths[shape_of(rep)].items()}
    return lengths, checks


def stats(ns: list[int]) -> dict:
    s = sorted(ns)
    pick = lambda p: s[min(len(s) - 1, int(p * len(s)))]  # noqa: E731
    return {"mean": statistics.fmean(s), "p50": pick(0.5), "p95": pick(0.95), "max": s[-1], "n": len(s)}


def plan(name: str, lens: dict) -> dict:
    a = ARCHS[BASE_OF[name]]
    total, linear, head = param_counts(a)
    weights, kv_tok, gen = 2 * total, kv_bytes_per_token(a), GEN_TOKENS[shape_of(name)[0]]
    row = {"base": BASE_OF[name], "params": total, "linear_params": linear, "lm_head_params": head}
    row.update(weights_gb=weights / 1e9, kv_bytes_per_token=kv_tok, max_ctx=a.max_ctx)
    for view, ns in lens.items():
        fit = [n for n in ns if n + gen <= a.max_ctx]  # longer ones cannot be judged: no cut for verifiers
        p95 = stats(fit)["p95"]
        # prefill-bound FLOPs per record: linear layers over prompt + output tokens, the LM head over the
        # output tokens, attention scores (QK^T and AV over the causal half: 2 x layers x q_dim x L^2)
        attn = 2 * a.layers * a.heads * a.head_dim
        flops = [2 * linear * (n + gen) + 2 * head * gen + attn * n * n for n in fit]
        row[view] = {
            "p95_within_ctx": p95,
            "replicas_per_gpu": int(HBM_BYTES // (HEADROOM * (weights + BATCH * p95 * kv_tok))),
            "in_flight_one_replica": int((HBM_BYTES / HEADROOM - weights) // (p95 * kv_tok)),
            "planned_records_per_s": MFU * PEAK_FLOPS / statistics.fmean(flops),
            "over_max_ctx": 1 - len(fit) / len(ns),
        }
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths-out", help="write every prompt-token list here (JSON), for the GPU benchmark")
    args = ap.parse_args()
    from xfinder_ray.verifiers import CHECKPOINTS

    assert set(BASE_OF) == {"xFinder-qwen1505", *CHECKPOINTS}, "a checkpoint without an architecture"
    t0 = time.time()
    chat, reasoning = load_records()
    count, proxy = token_counter()
    lengths, checks = prompt_lengths(count, chat, reasoning)
    # fmt: off
    print(f"# tokens: {proxy}; {len(chat):,} chat records (every {CHAT_STRIDE}th), {len(reasoning)} reasoning")
    print("\n## Prompt tokens per record (mean / p50 / p95 / max)\n")
    print("| prompt (family, chat template) | " + " | ".join(VIEWS) + " |\n|---|" + "---|" * len(VIEWS))
    for shape, by_view in lengths.items():
        cells = [f"{t['mean']:,.0f} / {t['p50']:,} / {t['p95']:,} / {t['max']:,}" for t in map(stats, by_view.values())]
        note = f" (= qwen2.5 {checks[shape]['offset']:+d})" if shape in checks else ""
        print(f"| {shape[0]}, {shape[1]}{note} | " + " | ".join(cells) + " |")
    for (_, base), c in checks.items():
        print(f"offset {base}: {c['offset']:+d} tokens, max deviation {c['max_deviation']} over {c['records']} records")
    rows = {name: plan(name, lengths[shape_of(name)]) for name in BASE_OF}
    print(f"\n## PLANNED, not measured: one H200 ({HBM_BYTES / 1e9:.0f} GB, {PEAK_FLOPS / 1e12:.0f} TFLOP/s bf16, MFU {MFU:.0%})\n")
    print(f"| checkpoint | base | params | bf16 weights | KV/token | max ctx | replicas/GPU, chat ({BATCH} in flight) "
          "| in flight, 1 replica: chat / reasoning p95 | records/s/GPU: chat / stripped / kept "
          "| reasoning > ctx |\n|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        c, s, k = (r[v] for v in VIEWS)
        print(f"| {name} | {r['base']} | {r['params'] / 1e9:.2f}B | {r['weights_gb']:.1f} GB "
              f"| {r['kv_bytes_per_token'] / 1024:.0f} KiB | {r['max_ctx']:,} | {c['replicas_per_gpu']} "
              f"| {c['in_flight_one_replica']:,} / {s['in_flight_one_replica']:,} | {c['planned_records_per_s']:,.0f}"
              f" / {s['planned_records_per_s']:,.1f} / {k['planned_records_per_s']:,.1f} | {s['over_max_ctx']:.0%} |")
    print(f"\nreplicas = floor({HBM_BYTES / 1e9:.0f} GB / ({HEADROOM} x (weights + {BATCH} x p95 prompt x KV/token)));"
          f" in flight = ({HBM_BYTES / 1e9:.0f} GB / {HEADROOM} - weights) / (p95 x KV/token); records/s = {MFU:.0%}"
          " x peak / mean FLOPs per record, per GPU whatever the replicas, over the records within the context;"
          f" a prefill step is compute-bound above ~{PEAK_FLOPS / HBM_BW:.0f} tokens (peak / bandwidth).")
    # fmt: on
    if args.lengths_out:
        Path(args.lengths_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.lengths_out).write_text(json.dumps({f"{f}/{b}": v for (f, b), v in lengths.items()}))
    result = {"planned": True, "tokens": proxy, "checkpoints": rows, "seconds": time.time() - t0,
              "assumptions": {"hbm_bytes": HBM_BYTES, "peak_flops": PEAK_FLOPS, "mfu": MFU, "headroom": HEADROOM,
                              "in_flight": BATCH, "gen_tokens": GEN_TOKENS, "chat_stride": CHAT_STRIDE},
              "prompt_tokens": {f"{f}/{b}": {v: stats(ns) for v, ns in by.items()} for (f, b), by in lengths.items()},
              "offset_checks": {f"{f}/{b}": c for (f, b), c in checks.items()}}  # fmt: skip
    print("BENCH_JSON " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
