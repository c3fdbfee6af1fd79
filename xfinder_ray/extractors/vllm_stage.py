"""The model extraction stage: a Ray Dataset of rendered prompts → the same rows plus model outputs.

Built on ``ray.data.llm.build_processor`` with a ``vLLMEngineProcessorConfig`` (ray 2.60): Ray Data runs
a pool of vLLM replicas (an actor pool, fixed or autoscaling), batches rows into them, and reports
per-row engine errors instead of failing the batch. See docs/vllm.md for the findings behind it.

Columns in:  ``prompt`` (str, already in the checkpoint's exact training format; no chat template is
             applied) plus any other columns, which come back untouched (same values, same Arrow types).
Columns out: the input columns, plus
             ``raw_output`` (str; "" when the row failed), ``prompt_tokens`` (int; 0 when it failed),
             ``extract_error`` (str | None; the engine's message for that row, e.g. prompt too long),
             and with ``logprobs=True`` only, ``logprob`` (float | None: the sum of the generated tokens'
             log-probabilities, i.e. log P(output | prompt) under greedy decoding; null when the row failed).

Why the other columns are packed: the processor nests every row in one struct column and its vLLM stage
reads and rewrites well-known keys in it — a row key ``model`` (our canonical column!) is taken as a
LoRA adapter name, and ``prompt``, ``params``, ``metrics``, ``request_id``... are overwritten. So before
the processor each row is serialized whole (a one-row Arrow IPC stream: exact types, no Python round
trip) into one binary column, and restored after it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    import ray.data

# xFinder's stop strings (xfinder package 0.2.6, same as OpenCompass's xFinder post-processor).
XFINDER_STOP = ["<|endoftext|>", "<|im_end|>", "<eoa>", "<||>", "<end_of_turn>", "<|eot_id|>"]

CPU_BLOCK_SIZE = 32  # KV cache block (tokens) on CPU; see processor_config_kwargs
CPU_MAX_BATCHED_TOKENS = 8192  # prompt tokens per engine step on CPU; see processor_config_kwargs
SMALL_CPU_NODE = 4  # cores; on nodes this small the engine computes on every core (processor_config_kwargs)
PROMPT_COLUMN = "prompt"
OUTPUT_COLUMNS = ("raw_output", "prompt_tokens", "extract_error")
LOGPROB_COLUMN = "logprob"  # with VLLMStageConfig.logprobs only
_ROW_COLUMN = "__xr_row"  # the packed input row
_ERROR_KEY = "__inference_error__"  # ray.data.llm's per-row error field (should_continue_on_error=True)
# Weight and tokenizer files whose names and sizes enter model_identity (content hashes would mean reading GBs).
_IDENTITY_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".model")
_IDENTITY_NAMES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json")


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
    return VLLMStageConfig(
        model_source=x.model_source,
        revision=x.revision,
        max_model_len=x.max_model_len,
        max_tokens=x.max_tokens,
        batch_size=x.batch_size,
        concurrency=concurrency,
        num_gpus_per_replica=x.gpus_per_replica,
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


# --- packing the passthrough columns ---------------------------------------------------------------


def _pack_rows(table: pa.Table, indices: list[int]) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.take(pa.array(indices, pa.int64())))
    return sink.getvalue().to_pybytes()


def _unpack_rows(blobs: list[bytes]) -> tuple[pa.Table, list[int]]:
    """The packed rows, and how many rows each blob held."""
    tables = [pa.ipc.open_stream(pa.py_buffer(b)).read_all() for b in blobs]
    counts = [t.num_rows for t in tables]
    try:
        return pa.concat_tables(tables), counts
    except pa.ArrowInvalid:
        # Blocks of one dataset can differ slightly (e.g. an all-null column typed null in one file).
        return pa.concat_tables(tables, promote_options="permissive"), counts


def _make_pack(sp: dict[str, Any]) -> Callable[[pa.Table], pa.Table]:
    def pack(batch: pa.Table) -> pa.Table:
        """One engine request per distinct prompt in the batch; the rows sharing it travel packed
        together and are fanned out again by _unpack (greedy decoding: same prompt, same output)."""
        if PROMPT_COLUMN not in batch.column_names:
            raise KeyError(f"the extraction stage needs a {PROMPT_COLUMN!r} column; got {batch.column_names}")
        groups: dict[str, list[int]] = {}
        for i, prompt in enumerate(batch[PROMPT_COLUMN].to_pylist()):
            groups.setdefault(prompt, []).append(i)
        return pa.table(
            {
                PROMPT_COLUMN: pa.array(list(groups), pa.string()),
                "sampling_params": pa.array([sp] * len(groups)),
                _ROW_COLUMN: pa.array([_pack_rows(batch, ix) for ix in groups.values()], pa.binary()),
            }
        )

    return pack


def _slim(row: dict[str, Any]) -> dict[str, Any]:
    """Processor postprocess (success rows only): keep what the unpack step reads.

    Error rows bypass it and arrive with the whole internal row, so both kinds share these names.
    """
    return {
        _ROW_COLUMN: row[_ROW_COLUMN],
        "generated_text": row["generated_text"],
        "num_input_tokens": row["num_input_tokens"],
    }


def _step_logprob(step: Any, token: Any) -> float | None:
    """One generated position's log-probability: ray.data.llm gives {token_id: {logprob, rank, ...}}."""
    if not step:
        return None
    if hasattr(step, "items"):
        entries = dict(step.items())
    else:  # a list of (key, value) pairs, as Arrow may hand back a map
        entries = dict(step)
    entry = None
    if token is not None:
        entry = entries.get(int(token), entries.get(str(int(token))))
    if entry is None and len(entries) == 1:
        entry = next(iter(entries.values()))
    if entry is None:
        return None
    value = entry.get("logprob") if hasattr(entry, "get") else getattr(entry, "logprob", None)
    return None if value is None else float(value)


def generated_logprob(logprobs: Any, tokens: Any) -> float | None:
    """The sum of the generated tokens' log-probabilities (0.0 for an empty generation); None when the
    engine returned none or a position is missing."""
    if logprobs is None:
        return None
    tokens = list(tokens) if tokens is not None else []
    total = 0.0
    for i, step in enumerate(logprobs):
        value = _step_logprob(step, tokens[i] if i < len(tokens) else None)
        if value is None:
            return None
        total += value
    return total


def _slim_logprob(row: dict[str, Any]) -> dict[str, Any]:
    """_slim plus the generation's log-probability, under the engine's own key `logprobs` (error rows
    carry that key too, as null), reduced to one float so the per-token dicts go no further."""
    return {**_slim(row), "logprobs": generated_logprob(row.get("logprobs"), row.get("generated_tokens"))}


def _unpack(batch: pa.Table, logprobs: bool = False) -> pa.Table:
    n = batch.num_rows
    cols = batch.column_names
    if n == 0:
        return pa.table({})
    out, counts = _unpack_rows(batch[_ROW_COLUMN].to_pylist())
    errors = batch[_ERROR_KEY].to_pylist() if _ERROR_KEY in cols else [None] * n
    errors = [e if e else None for e in errors]
    texts = batch["generated_text"].to_pylist()
    ntok = batch["num_input_tokens"].to_pylist()
    raw = [("" if e or t is None else t) for t, e in zip(texts, errors, strict=True)]
    toks = [(0 if e or k is None else int(k)) for k, e in zip(ntok, errors, strict=True)]
    fan_out = lambda values: [v for v, c in zip(values, counts, strict=True) for _ in range(c)]  # noqa: E731
    outputs = [
        ("raw_output", pa.array(fan_out(raw), pa.string())),
        ("prompt_tokens", pa.array(fan_out(toks), pa.int64())),
        ("extract_error", pa.array(fan_out(errors), pa.string())),
    ]
    if logprobs:
        lps = batch["logprobs"].to_pylist() if "logprobs" in cols else [None] * n
        lps = [None if e or v is None else float(v) for v, e in zip(lps, errors, strict=True)]
        outputs.append((LOGPROB_COLUMN, pa.array(fan_out(lps), pa.float64())))
    for name, arr in outputs:
        # A re-run on already-extracted rows replaces the old outputs.
        if name in out.column_names:
            out = out.set_column(out.column_names.index(name), name, arr)
        else:
            out = out.append_column(name, arr)
    return out


def build_vllm_stage(cfg: VLLMStageConfig) -> Callable[[ray.data.Dataset], ray.data.Dataset]:
    """Return ``ds -> ds'`` adding ``raw_output``, ``prompt_tokens`` and ``extract_error`` (lazy), and
    ``logprob`` when ``cfg.logprobs``."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    device = resolve_device(cfg.device)
    processor = build_processor(
        vLLMEngineProcessorConfig(**processor_config_kwargs(cfg, device)),
        postprocess=_slim_logprob if cfg.logprobs else _slim,
    )
    pack = _make_pack(sampling_params(cfg))

    def stage(ds: ray.data.Dataset) -> ray.data.Dataset:
        # zero_copy_batch: pack/unpack only read their input. Both are cheap CPU maps that Ray fuses with
        # the processor's own pre/post maps.
        ds = ds.map_batches(pack, batch_format="pyarrow", zero_copy_batch=True)
        ds = processor(ds)
        kwargs = dict(fn_kwargs={"logprobs": True}) if cfg.logprobs else {}
        return ds.map_batches(_unpack, batch_format="pyarrow", zero_copy_batch=True, **kwargs)

    return stage


# --- identity ---------------------------------------------------------------------------------------


def _hf_revision(repo_id: str) -> str:
    """The commit of the cached snapshot (offline), else the hub's current one, else 'unresolved'."""
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(repo_id, "config.json")
        if isinstance(cached, str):
            parts = Path(cached).parts
            if "snapshots" in parts:
                return parts[parts.index("snapshots") + 1]
    except Exception:  # noqa: BLE001 - identity must not fail the job
        pass
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("1", "true", "True", "YES", "yes"):
        try:
            from huggingface_hub import HfApi

            sha = HfApi().model_info(repo_id).sha
            if sha:
                return sha
        except Exception:  # noqa: BLE001
            pass
    return "unresolved"


def model_identity(model_source: str, revision: str | None = None) -> str:
    """A short, stable name for the weights: two runs are comparable only if this matches.

    Folder (local or s3://): ``<folder name>@<12 hex>``, hashing config.json's bytes plus the names and
    sizes of the weight and tokenizer files (not their contents: that would read gigabytes).
    HF id: ``<id>@<revision>`` when one is pinned, else ``<id>@<commit>`` (the cached snapshot's commit
    when offline, the hub's current one otherwise).
    """
    is_remote = model_source.startswith(("s3://", "gs://"))
    if not is_remote and not Path(model_source).expanduser().is_dir():
        return f"{model_source}@{revision or _hf_revision(model_source)}"
    import fsspec

    fs, root = fsspec.core.url_to_fs(model_source if is_remote else str(Path(model_source).expanduser()))
    root = root.rstrip("/")
    h = hashlib.sha256()
    with fs.open(f"{root}/config.json", "rb") as f:
        h.update(f.read())
    entries = []
    for info in fs.ls(root, detail=True):
        name = info["name"].rstrip("/").rsplit("/", 1)[-1]
        if info.get("type") == "file" and (name.endswith(_IDENTITY_SUFFIXES) or name in _IDENTITY_NAMES):
            entries.append([name, int(info.get("size") or 0)])
    h.update(json.dumps(sorted(entries)).encode())
    return f"{root.rsplit('/', 1)[-1]}@{h.hexdigest()[:12]}"
