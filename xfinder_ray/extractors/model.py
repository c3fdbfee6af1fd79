"""The model extractor (xFinder through vLLM), built once from an `xfinder` config section for both
jobs (score and ablate), in the style of Ray Data LLM's config -> builder -> processor:

    rows -> prompt (the checkpoint's training-exact prompt) -> [cache lookup] -> vLLM -> unpack
         -> + prompt, truncated, raw_output, prompt_tokens, extract_error [, logprob]

Only the rows in play (valid, not settled by the router) are prompted; only prompted rows the cache
cannot answer reach the engine. The device (cpu | gpu) is resolved once on the driver and passed in,
so the identity string, which names the dtype, is computed without starting Ray.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from xfinder_ray.config import StorageConfig, XFinderConfig
from xfinder_ray.prompts import TRAINING_MAX_LENGTH

if TYPE_CHECKING:
    import ray.data

    from xfinder_ray.storage import Location

__all__ = [
    "ModelExtractor",
    "build_model_extractor",
    "model_judge",
    "model_extractor_identity",
    "model_settings",
]


@dataclass(frozen=True)
class ModelExtractor:
    identity: str  # xfinder:<checkpoint>@<model identity>:<prompt format>:<reasoning>:<dtype>, on every row
    settings: dict[str, Any]  # everything besides the prompt that decides an output (names the cache)
    cache: Location | None  # the extraction cache folder for these settings, or None
    apply: Callable[[ray.data.Dataset], ray.data.Dataset]


def _stage_config(x: XFinderConfig, logprobs: bool) -> Any:
    from xfinder_ray.extractors.vllm import stage_config_from

    return replace(stage_config_from(x), logprobs=logprobs)


def model_extractor_identity(x: XFinderConfig, device: str, storage: StorageConfig | None = None) -> str:
    """The identity string of this checkpoint on `device` (cpu | gpu, resolved); never starts Ray.
    `storage` reaches a remote model folder (s3:// endpoint, credentials, profile). It names the
    prompt format and the `reasoning` setting, which decide the prompt, so the extraction cache
    folder (model_settings) changes with either."""
    from xfinder_ray.extractors.vllm import engine_dtype, model_identity

    dtype = engine_dtype(_stage_config(x, False), device)
    model = model_identity(x.model_source, x.revision, storage)
    return f"xfinder:{x.checkpoint}@{model}:{x.prompt_format}:{x.reasoning}:{dtype}"


def model_settings(x: XFinderConfig, device: str, storage: StorageConfig | None = None) -> dict[str, Any]:
    """What decides an extraction besides the prompt: the cache folder's name."""
    from xfinder_ray.extractors.vllm import XFINDER_STOP

    return {
        "extractor": model_extractor_identity(x, device, storage),
        "max_tokens": x.max_tokens,
        "max_model_len": x.max_model_len,
        "stop": list(XFINDER_STOP),
    }


def max_prompt_tokens(x: XFinderConfig) -> int:
    """Room for the prompt: the shorter of the engine's and the training context, less the answer."""
    return min(x.max_model_len, TRAINING_MAX_LENGTH) - x.max_tokens


def build_model_extractor(
    x: XFinderConfig,
    *,
    device: str,
    batch_size: int | None,  # rows per CPU-stage batch (ray.batch_size; None: a block whole)
    cache_root: Location | None = None,
    logprobs: bool = False,
    storage: StorageConfig | None = None,
) -> ModelExtractor:
    """The model extractor for this `xfinder` section on `device`; with `cache_root`, extractions are
    looked up in (and the job's sink adds to) the cache folder of these settings."""
    from xfinder_ray.extractors.vllm import build_vllm_stage
    from xfinder_ray.stages.prompt import prompt_batch

    settings = model_settings(x, device, storage)
    vllm = build_vllm_stage(_stage_config(x, logprobs), device)
    prompt_kwargs = dict(
        checkpoint=x.checkpoint,
        fmt=x.prompt_format,
        max_prompt_tokens=max_prompt_tokens(x),
        reasoning=x.reasoning,
    )
    return model_judge(prompt_batch, prompt_kwargs, vllm, settings, cache_root, batch_size)


def model_judge(
    prompt_stage: Callable[..., Any],
    prompt_kwargs: dict[str, Any],
    vllm: Callable[[ray.data.Dataset], ray.data.Dataset],
    settings: dict[str, Any],
    cache_root: Location | None,
    batch_size: int | None,  # rows per CPU-stage batch (ray.batch_size; None: a block whole)
) -> ModelExtractor:
    """rows -> prompt -> [cache lookup] -> the engine for the rows the cache cannot answer; the same
    chain for every model judge (xFinder, a verifier), which differ in the prompt stage and settings."""
    import ray

    from xfinder_ray.stages.cache import (
        cache_folder,
        cache_location,
        load_index,
        lookup_batch,
        needs_model,
        no_model,
    )

    cache = cache_location(cache_root, settings) if cache_root is not None else None

    def apply(ds: ray.data.Dataset) -> ray.data.Dataset:
        if cache_root is not None:  # now, not at build: the job may clear its output folder in between
            cache_folder(cache_root, settings)
        prompted = ds.map_batches(
            prompt_stage, batch_format="pandas", batch_size=batch_size, fn_kwargs=prompt_kwargs
        )
        index = ray.put(load_index(cache) if cache is not None else None)
        prompted = prompted.map_batches(
            lookup_batch, batch_format="pandas", batch_size=batch_size, fn_kwargs=dict(index=index)
        )
        # Ray Data has no fan-out: each branch re-runs the CPU stages above (cheap next to the model).
        to_model = prompted.map_batches(needs_model, batch_format="pandas", batch_size=batch_size)
        others = prompted.map_batches(no_model, batch_format="pandas", batch_size=batch_size)
        return vllm(to_model).union(others)

    return ModelExtractor(settings["extractor"], settings, cache, apply)
