"""The vLLM extraction stage: a Ray Dataset of rendered prompts -> the same rows plus model outputs.

Built on ``ray.data.llm.build_processor`` with a ``vLLMEngineProcessorConfig``: Ray Data runs a pool
of vLLM replicas (an actor pool, fixed or autoscaling), batches rows into them, and reports per-row
engine errors instead of failing the batch. Three parts, one file each:

    engine.py     the stage config, the device, the processor and sampling settings (pure functions)
    transport.py  how rows travel through the processor untouched (pack / unpack), per-row errors
    identity.py   the model's identity string (no Ray, no engine)

The job builds this stage through xfinder_ray/extractors/model.py (prompt, cache, stage, identity);
benchmarks and tests may call ``build_vllm_stage`` directly. See docs/vllm.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xfinder_ray.extractors.vllm.engine import (
    CPU_BLOCK_SIZE,
    CPU_MAX_BATCHED_TOKENS,
    XFINDER_STOP,
    VLLMStageConfig,
    cpu_has_fast_bf16,
    engine_dtype,
    processor_config_kwargs,
    resolve_device,
    sampling_params,
    stage_config_from,
)
from xfinder_ray.extractors.vllm.identity import model_identity
from xfinder_ray.extractors.vllm.transport import (
    LOGPROB_COLUMN,
    OUTPUT_COLUMNS,
    PROMPT_COLUMN,
    generated_logprob,
    make_pack,
    slim,
    slim_logprob,
    unpack,
)

if TYPE_CHECKING:
    import ray.data

__all__ = [
    "CPU_BLOCK_SIZE",
    "CPU_MAX_BATCHED_TOKENS",
    "LOGPROB_COLUMN",
    "OUTPUT_COLUMNS",
    "PROMPT_COLUMN",
    "XFINDER_STOP",
    "VLLMStageConfig",
    "build_vllm_stage",
    "cpu_has_fast_bf16",
    "engine_dtype",
    "generated_logprob",
    "make_pack",
    "model_identity",
    "processor_config_kwargs",
    "resolve_device",
    "sampling_params",
    "slim",
    "slim_logprob",
    "stage_config_from",
    "unpack",
]


def build_vllm_stage(
    cfg: VLLMStageConfig, device: str | None = None
) -> Callable[[ray.data.Dataset], ray.data.Dataset]:
    """Return ``ds -> ds'`` adding ``raw_output``, ``prompt_tokens`` and ``extract_error`` (lazy), and
    ``logprob`` when ``cfg.logprobs``. ``device`` is the one the driver resolved (cpu | gpu); None
    resolves ``cfg.device`` here (benchmarks and tests that build the stage alone)."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    device = device or resolve_device(cfg.device)
    processor = build_processor(
        vLLMEngineProcessorConfig(**processor_config_kwargs(cfg, device)),
        postprocess=slim_logprob if cfg.logprobs else slim,
    )
    pack = make_pack(sampling_params(cfg))

    def stage(ds: ray.data.Dataset) -> ray.data.Dataset:
        # zero_copy_batch: pack/unpack only read their input. Both are cheap CPU maps that Ray fuses with
        # the processor's own pre/post maps.
        ds = ds.map_batches(pack, batch_format="pyarrow", zero_copy_batch=True)
        ds = processor(ds)
        kwargs = dict(fn_kwargs={"logprobs": True}) if cfg.logprobs else {}
        return ds.map_batches(unpack, batch_format="pyarrow", zero_copy_batch=True, **kwargs)

    return stage
