"""A verifier judge (xVerify, CompassVerifier) through vLLM, built like the xFinder extractor
(extractors/model.py) from the job's `verifier` section plus the `xfinder` section's pool and engine
settings:

    rows -> verifier prompt (question, response, correct answer) -> [cache lookup] -> vLLM
         -> + prompt, truncated, raw_output (the verifier's text), prompt_tokens, extract_error

The judge stage then reads the verdict from `raw_output` (stages/judge.py) instead of comparing an
extracted answer with the correct one. docs/judges.md.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from xfinder_ray.config import StorageConfig, VerifierConfig, XFinderConfig
from xfinder_ray.extractors.model import ModelExtractor, model_judge

if TYPE_CHECKING:
    from xfinder_ray.storage import Location

__all__ = [
    "build_verifier_judge",
    "verifier_identity",
    "verifier_prompt_kwargs",
    "verifier_prompt_tokens",
    "verifier_settings",
]


def engine_section(v: VerifierConfig, x: XFinderConfig) -> XFinderConfig:
    """The `xfinder` section's pool and engine settings with the verifier's model and lengths."""
    assert v.model_source and v.max_tokens, "config._check_verifier fills the verifier section's defaults"
    return replace(
        x,
        model_source=v.model_source,
        revision=v.revision,
        max_model_len=v.max_model_len,
        max_tokens=v.max_tokens,
    )


def verifier_prompt_tokens(v: VerifierConfig) -> int:
    """Room for the prompt in the verifier's window, less its answer (the CLI renders the same)."""
    assert v.max_tokens, "config.complete_verifier fills the verifier section's defaults"
    return v.max_model_len - v.max_tokens


def verifier_prompt_kwargs(v: VerifierConfig) -> dict[str, Any]:
    """How this section's prompt is rendered (verifiers.fit_verifier_prompt's settings)."""
    return dict(
        checkpoint=v.checkpoint,
        max_prompt_tokens=verifier_prompt_tokens(v),
        variant=v.variant,
        cot=v.cot,
        strip_thought=v.strip_thought,
    )


def verifier_identity(
    v: VerifierConfig, x: XFinderConfig, device: str, storage: StorageConfig | None = None
) -> str:
    """verifier:<checkpoint>@<model identity>:<variant>:<plain|cot>:<strip|keep>:<dtype>; never starts Ray.
    Everything in it decides the prompt or the output, so the cache folder changes with any of it."""
    from xfinder_ray.extractors.vllm import engine_dtype, model_identity, stage_config_from

    e = engine_section(v, x)
    dtype = engine_dtype(stage_config_from(e), device)
    model = model_identity(e.model_source, e.revision, storage)
    mode = "cot" if v.cot else "plain"
    thought = "strip" if v.strip_thought else "keep"
    return f"verifier:{v.checkpoint}@{model}:{v.variant}:{mode}:{thought}:{dtype}"


def verifier_settings(
    v: VerifierConfig, x: XFinderConfig, device: str, storage: StorageConfig | None = None
) -> dict[str, Any]:
    """What decides a verdict besides the prompt: the cache folder's name."""
    from xfinder_ray.extractors.vllm import XFINDER_STOP

    return {
        "extractor": verifier_identity(v, x, device, storage),
        "max_tokens": v.max_tokens,
        "max_model_len": v.max_model_len,
        "stop": list(XFINDER_STOP),
    }


def build_verifier_judge(
    v: VerifierConfig,
    x: XFinderConfig,
    *,
    device: str,
    batch_size: int | None,  # rows per CPU-stage batch (ray.batch_size; None: a block whole)
    cache_root: Location | None = None,
    storage: StorageConfig | None = None,
) -> ModelExtractor:
    """The verifier judge for this `verifier` section on `device`, cached like xFinder's extractions."""
    from xfinder_ray.extractors.vllm import build_vllm_stage, stage_config_from
    from xfinder_ray.stages.prompt import verifier_prompt_batch

    settings = verifier_settings(v, x, device, storage)
    # Greedy and short: the chat templates end a turn with the base model's EOS; XFINDER_STOP holds
    # the same end-of-turn strings (Qwen2.5, Llama-3, Gemma-2) in case the text shows them.
    # logprobs: the verdict's log-probability is its confidence (judgments/verdict_logprob).
    vllm = build_vllm_stage(replace(stage_config_from(engine_section(v, x)), logprobs=True), device)
    return model_judge(
        verifier_prompt_batch, verifier_prompt_kwargs(v), vllm, settings, cache_root, batch_size
    )
