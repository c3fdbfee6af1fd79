"""vLLM engine settings: the stage config, the device, and the `vLLMEngineProcessorConfig` arguments
(a pure function of the config and the device, unit-tested; docs/vllm.md has the findings behind them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# xFinder's stop strings (xfinder package 0.2.6, same as OpenCompass's xFinder post-processor).
XFINDER_STOP = ["<|endoftext|>", "<|im_end|>", "<eoa>", "<||>", "<end_of_turn>", "<|eot_id|>"]

CPU_BLOCK_SIZE = 32  # KV cache block (tokens) on CPU; see processor_config_kwargs
CPU_MAX_BATCHED_TOKENS = 8192  # prompt tokens per engine step on CPU; see processor_config_kwargs
SMALL_CPU_NODE = 4  # cores; on nodes this small the engine computes on every core (processor_config_kwargs)


@dataclass
class VLLMStageConfig:
    model_source: str  # HF id, local folder, or s3:// folder
    revision: str | None = None  # HF ids only: a branch, tag or commit (passed to vLLM)
    max_model_len: int = 2048
    max_tokens: int = 32  # xFinder answers are a few tokens
    stop: list[str] = field(default_factory=lambda: list(XFINDER_STOP))
    batch_size: int = 64
    # int n: a fixed pool of n replicas; (min, max): an autoscaling pool.
    concurrency: int | tuple[int, int] = 1
    num_gpus_per_replica: float = 1.0  # per tensor-parallel worker; fractions share a GPU; ignored on CPU
    num_cpus_per_replica: float = 1.0  # Ray CPUs reserved per engine worker
    tensor_parallel_size: int = 1
    device: str = "auto"  # auto | cpu | gpu; auto = gpu when the Ray cluster has GPUs
    kv_cache_gib: int = 2  # VLLM_CPU_KVCACHE_SPACE on CPU (else vLLM asks for 92% of RAM)
    # None: True on CPU (torch.compile adds ~2 min to start-up there), vLLM's default on GPU.
    enforce_eager: bool | None = None
    # Batches in flight per replica (ray's default 8). Overlapping batches hides each batch's tail.
    max_concurrent_batches: int = 8
    engine_kwargs: dict[str, Any] = field(default_factory=dict)  # passed to vLLM verbatim, override anything
    env_vars: dict[str, str] = field(default_factory=dict)  # added to the replicas' runtime_env
    # Ask vLLM for the sampled tokens' log-probabilities (SamplingParams.logprobs=0) and add a `logprob`
    # column (their sum). Off by default: the scoring job does not use it.
    logprobs: bool = False


def resolve_model_source(model_source: str) -> str:
    """Map a configured model source to what the engine loads.

    Local folders become absolute paths (Ray workers may run in another working directory); HF ids pass
    through (with HF_HUB_OFFLINE=1 they must be in the local HF cache).
    TODO(s3): s3:// folders pass through for now: ray.data.llm downloads remote model folders itself
    (download_model_files with a CloudMirrorConfig, on each node). Hook here if we need our own
    credentials/endpoint handling or a node-local cache keyed by model_identity().
    """
    if model_source.startswith(("s3://", "gs://")):
        return model_source
    p = Path(model_source).expanduser()
    if p.exists():
        return str(p.resolve())
    return model_source


def _is_folder(model_source: str) -> bool:
    return model_source.startswith(("s3://", "gs://")) or Path(model_source).expanduser().is_dir()


def stage_config_from(x: Any) -> VLLMStageConfig:
    """Build the stage config from the job config's ``xfinder`` section (config.XFinderConfig).

    ``replicas`` is a fixed pool; ``min_replicas``/``max_replicas`` (either set) an autoscaling one.
    """
    if x.min_replicas is None and x.max_replicas is None:
        concurrency: int | tuple[int, int] = int(x.replicas)
    else:
        lo = int(x.min_replicas if x.min_replicas is not None else 1)
        hi = int(x.max_replicas if x.max_replicas is not None else max(lo, x.replicas))
        concurrency = (lo, hi)
    # (Alike in shape only with importers/core.py:_reject_row's keyword lists: field-by-field mapping.)
    return VLLMStageConfig(
        model_source=x.model_source,
        revision=x.revision,
        max_model_len=x.max_model_len,
        max_tokens=x.max_tokens,
        batch_size=x.batch_size,
        concurrency=concurrency,
        num_gpus_per_replica=x.gpus_per_replica,
        num_cpus_per_replica=float(x.cpus_per_replica),
        tensor_parallel_size=x.tensor_parallel_size,
        device=x.device,
        kv_cache_gib=x.kv_cache_gib,
        enforce_eager=x.enforce_eager,
        engine_kwargs=dict(x.engine_kwargs or {}),
        env_vars=dict(x.env_vars or {}),
    )


def resolve_device(device: str) -> str:
    """'cpu' or 'gpu'. 'auto' asks the Ray cluster (starting a local one if none is connected)."""
    if device in ("cpu", "gpu"):
        return device
    if device != "auto":
        raise ValueError(f"device must be auto, cpu or gpu, not {device!r}")
    import ray

    if not ray.is_initialized():
        ray.init()  # build_processor would start it anyway
    return "gpu" if ray.cluster_resources().get("GPU", 0) > 0 else "cpu"


def cpu_has_fast_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU has native bf16 matmul (AVX512-BF16 or AMX). Linux only; False when unknown."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def _pool_size(concurrency: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(concurrency, int):
        # ray.data.llm reads an int n as an autoscaling pool 1..n; our config means a fixed pool.
        return (concurrency, concurrency)
    lo, hi = concurrency
    return (int(lo), int(hi))


def cpu_cores() -> int:
    """Cores this process may run on (its affinity, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def processor_config_kwargs(cfg: VLLMStageConfig, device: str) -> dict[str, Any]:
    """The vLLMEngineProcessorConfig arguments for this stage config (a pure function, unit-testable)."""
    on_cpu = device == "cpu"
    tp = cfg.tensor_parallel_size
    enforce_eager = cfg.enforce_eager if cfg.enforce_eager is not None else (True if on_cpu else None)
    engine_kwargs: dict[str, Any] = {
        "max_model_len": cfg.max_model_len,
        "enable_prefix_caching": True,  # rows of one question share the long instruction prefix
        "tensor_parallel_size": tp,
    }
    if enforce_eager is not None:
        engine_kwargs["enforce_eager"] = enforce_eager
    if on_cpu:
        # The prefix cache reuses whole blocks; vLLM's CPU default (128 tokens) leaves most of a question
        # uncached. 32-token blocks: 1.82 vs ~1.1 records/s in question order, 2.25x over arrival order
        # (SmolLM2, 128 records; docs/performance.md). The GPU default (16) is kept.
        engine_kwargs["block_size"] = CPU_BLOCK_SIZE
        # Larger prefill steps amortize each step's fixed cost: 5.3-5.7 vs 4.4-4.7 records/s on 64
        # records at vLLM's CPU default of 4,096 (16,384 gained nothing: rows of one question prefilled
        # in the same step cannot reuse each other's blocks).
        engine_kwargs["max_num_batched_tokens"] = CPU_MAX_BATCHED_TOKENS
    if on_cpu and not cpu_has_fast_bf16():
        # Without AVX512-BF16/AMX, bf16 linears fall back to a slow path (oneDNN cannot build the matmul):
        # SmolLM2 on an AVX2 EPYC ran 5x faster in float32 (1.2 vs 0.24 rows/s). Weights upcast exactly.
        # Decided on the driver: CPU clusters are assumed homogeneous; engine_kwargs["dtype"] overrides.
        engine_kwargs["dtype"] = "float32"
    if not on_cpu and cfg.num_gpus_per_replica < 1:
        # Several replicas on one GPU: each may only take its share of the memory.
        engine_kwargs["gpu_memory_utilization"] = round(0.9 * cfg.num_gpus_per_replica, 3)
    if cfg.revision and not _is_folder(cfg.model_source):
        # ray.data.llm hands HF ids to vLLM unchanged, so vLLM's own revision handling applies.
        engine_kwargs["revision"] = cfg.revision
        engine_kwargs["tokenizer_revision"] = cfg.revision
    engine_kwargs.update(cfg.engine_kwargs)

    if on_cpu:
        # Without an explicit placement group the vLLM stage asks for a GPU and waits forever.
        bundle: dict[str, float] = {"CPU": cfg.num_cpus_per_replica}
    else:
        bundle = {"CPU": cfg.num_cpus_per_replica, "GPU": cfg.num_gpus_per_replica}
    env_vars: dict[str, str] = {}
    if on_cpu:
        env_vars["VLLM_CPU_KVCACHE_SPACE"] = str(cfg.kv_cache_gib)
        if cpu_cores() <= SMALL_CPU_NODE:
            # vLLM keeps one core out of its compute threads for its front end; on 2 cores that halves
            # the compute. None reserved: 1.75x bare, 1.34x through the whole job on 2 cores
            # (docs/performance.md, "Scaling"). Decided on the driver, like dtype; env_vars override.
            env_vars["VLLM_CPU_NUM_OF_RESERVED_CPU"] = "0"
    for name in ("HF_HUB_OFFLINE", "HF_HOME", "HF_HUB_CACHE"):
        # Replicas on other nodes do not inherit the driver's environment.
        if name in os.environ:
            env_vars[name] = os.environ[name]
    env_vars.update({k: str(v) for k, v in cfg.env_vars.items()})

    return dict(
        model_source=resolve_model_source(cfg.model_source),
        engine_kwargs=engine_kwargs,
        batch_size=cfg.batch_size,
        concurrency=_pool_size(cfg.concurrency),
        max_concurrent_batches=cfg.max_concurrent_batches,
        # The prompt is pre-rendered in the checkpoint's training format: no chat template.
        chat_template_stage=False,
        # vLLM tokenizes in its own front-end process and detokenizes incrementally (needed anyway for
        # stop strings); the separate Ray stages would only add two actor pools (a CPU each).
        tokenize_stage=False,
        detokenize_stage=False,
        should_continue_on_error=True,  # one bad row must not fail its batch
        log_engine_metrics=False,  # True needs ray[serve] (RayPrometheusStatLogger)
        placement_group_config={"bundle_per_worker": bundle, "strategy": "PACK"},
        runtime_env={"env_vars": env_vars},
    )


def sampling_params(cfg: VLLMStageConfig) -> dict[str, Any]:
    """Per-row vLLM SamplingParams kwargs: greedy, short, xFinder's stop strings (not kept in the text)."""
    sp: dict[str, Any] = {"temperature": 0.0, "max_tokens": cfg.max_tokens, "stop": list(cfg.stop)}
    if cfg.logprobs:
        sp["logprobs"] = 0  # 0: the sampled token's log-probability only, no alternatives
    return sp


def engine_dtype(cfg: VLLMStageConfig, device: str) -> str:
    """The dtype the engine runs in on `device` (cpu | gpu, already resolved): part of the extractor's
    identity, since float32 and bf16 can change a greedy output now and then."""
    if device not in ("cpu", "gpu"):
        raise ValueError(f"resolve the device (cpu | gpu) before asking for the dtype, not {device!r}")
    return str(processor_config_kwargs(cfg, device)["engine_kwargs"].get("dtype", "auto"))
