"""Model columns in the ablation, on the valid rows only:

- `xfinder:<label>` runs a real xFinder checkpoint through the scoring job's model extractor
  (extractors/model.py);
- `verifier:<checkpoint>` runs a verifier judge (xVerify, CompassVerifier; extractors/verifier.py,
  docs/judges.md). Settings: `ablation.verifier.<checkpoint>` (config.VerifierConfig); the engine is
  the `xfinder` section's defaults (one replica, device auto). The fan-out takes its verdict as the
  judgment under every comparator (a verifier compares nothing) and leaves extraction accuracy empty.

    valid rows -> prompt (the checkpoint's training-format prompt, stages/prompt.py)
               -> vLLM stage (logprobs on) -> raw_output[<e>], logprob[<e>], extract_error[<e>]

The fan-out stage then parses each raw output into the key answer exactly as the scoring job does
(parsing.parse_output) and judges it with every comparator, like any other extractor. Settings:
`ablation.xfinder.<label>`, the scoring job's `xfinder` section (config.XFinderConfig). A checkpoint
whose model folder is not on disk is skipped with a note (never downloaded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from xfinder_ray.config import ConfigError, StorageConfig, VerifierConfig, XFinderConfig

if TYPE_CHECKING:
    import ray.data

    from xfinder_ray.ablation.config import AblationConfig

PREFIX = "xfinder:"
VERIFIER_PREFIX = "verifier:"


def is_model_extractor(name: str) -> bool:
    """A column a model fills (xFinder or a verifier): raw output, logprob, error."""
    return name.startswith((PREFIX, VERIFIER_PREFIX))


def is_verifier(name: str) -> bool:
    return name.startswith(VERIFIER_PREFIX)


@dataclass(frozen=True)
class ModelColumn:
    """One model column's settings: an xFinder checkpoint (`engine` is its whole `xfinder` section), or
    a verifier (`verifier`; `engine` holds its pool and engine settings, the `xfinder` defaults)."""

    engine: XFinderConfig
    verifier: VerifierConfig | None = None

    @property
    def model_source(self) -> str | None:
        return self.verifier.model_source if self.verifier is not None else self.engine.model_source

    @property
    def device(self) -> str:
        return self.engine.device

    def on(self, device: str) -> ModelColumn:
        """These settings on the device the driver resolved."""
        return replace(self, engine=replace(self.engine, device=device))


def column_settings(a: AblationConfig, name: str) -> ModelColumn:
    """The settings of the model column `xfinder:<label>` or `verifier:<checkpoint>`."""
    if is_verifier(name):
        return ModelColumn(XFinderConfig(), verifier_settings(a, name))
    return ModelColumn(settings(a, name))


def verifier_settings(a: AblationConfig, name: str) -> VerifierConfig:
    """The verifier section of `verifier:<checkpoint>`, defaults filled."""
    from xfinder_ray.config import complete_verifier

    label = name[len(VERIFIER_PREFIX) :]
    v = replace(a.verifier.get(label) or VerifierConfig(), checkpoint=label)
    complete_verifier(v, None, f"ablation.verifier.{label}")
    return v


def raw_col(extractor: str) -> str:
    return f"raw_output[{extractor}]"


def logprob_col(extractor: str) -> str:
    return f"logprob[{extractor}]"


def settings(a: AblationConfig, name: str) -> XFinderConfig:
    """The effective xfinder section of `xfinder:<label>`: ablation.xfinder.<label> (or the defaults),
    with the checkpoint set to the label when the label is a checkpoint name."""
    from xfinder_ray.prompts import CHECKPOINTS

    label = name[len(PREFIX) :]
    x = a.xfinder.get(label) or XFinderConfig()
    return replace(x, checkpoint=label) if label in CHECKPOINTS else x


def check_settings(a: AblationConfig, name: str) -> None:
    from xfinder_ray.prompts import CHECKPOINTS, FORMATS, REASONING

    if is_verifier(name):
        verifier_settings(a, name)  # a ConfigError names the key
        return
    label = name[len(PREFIX) :]
    if not label:
        raise ConfigError(
            "invalid config: ablation.extractors: `xfinder:` needs a label, e.g. xfinder:xFinder-qwen1505"
        )
    x = settings(a, name)
    key = f"ablation.xfinder.{label}"
    for field, value, allowed in (
        ("checkpoint", x.checkpoint, CHECKPOINTS),
        ("prompt_format", x.prompt_format, FORMATS),
        ("reasoning", x.reasoning, REASONING),
        ("device", x.device, ("auto", "gpu", "cpu")),
    ):
        if value not in allowed:
            raise ConfigError(
                f"invalid config: {key}.{field}={value!r}; expected one of {', '.join(map(str, allowed))}"
            )
    for field in ("replicas", "max_tokens", "max_model_len", "batch_size", "tensor_parallel_size"):
        if getattr(x, field) < 1:
            raise ConfigError(f"invalid config: {key}.{field} must be >= 1")


def missing_model(m: ModelColumn) -> str | None:
    """Why this checkpoint cannot run here (its model folder is not on disk), or None."""
    from xfinder_ray.stages.extract import model_is_local

    source = m.model_source
    if source and model_is_local(source):
        return None
    return (
        f"model folder {source!r} not found (an ablation never downloads a model; put the "
        "checkpoint there or point model_source at it)"
    )


def identity(m: ModelColumn, storage: StorageConfig | None = None) -> str:
    """The scoring job's extractor identity string for these settings (device already resolved)."""
    from xfinder_ray.extractors.model import model_extractor_identity
    from xfinder_ray.extractors.verifier import verifier_identity

    if m.verifier is not None:
        return verifier_identity(m.verifier, m.engine, m.device, storage)
    return model_extractor_identity(m.engine, m.device, storage)


def _outputs(extractor: str, raw: pa.Array, logprob: pa.Array, error: pa.Array) -> list[tuple[str, pa.Array]]:
    from xfinder_ray.ablation.fanout import error_col

    return [(raw_col(extractor), raw), (logprob_col(extractor), logprob), (error_col(extractor), error)]


def _rename(batch: pa.Table, *, extractor: str) -> pa.Table:
    """The vLLM stage's output columns -> this extractor's columns; the prompt is dropped."""
    from xfinder_ray.extractors.vllm import LOGPROB_COLUMN

    outputs = _outputs(extractor, batch["raw_output"], batch[LOGPROB_COLUMN], batch["extract_error"])
    drop = {"prompt", "truncated", "raw_output", "prompt_tokens", "extract_error", "cache_key", "cache_hit"}
    drop.add(LOGPROB_COLUMN)
    batch = batch.drop_columns([c for c in batch.column_names if c in drop])
    for name, arr in outputs:
        batch = batch.append_column(
            name, arr.cast(pa.float64() if name.startswith("logprob[") else pa.string())
        )
    return batch


def null_outputs(batch: pa.Table, *, extractors: list[str]) -> pa.Table:
    """Rows that never reach a model (rejected by validation): the model columns, null, same types."""
    n = batch.num_rows
    for e in extractors:
        for name, arr in _outputs(
            e, pa.nulls(n, pa.string()), pa.nulls(n, pa.float64()), pa.nulls(n, pa.string())
        ):
            batch = batch.append_column(name, arr)
    return batch


def model_stage(
    name: str, m: ModelColumn, batch_size: int | None, storage: StorageConfig | None = None
) -> Callable[[ray.data.Dataset], ray.data.Dataset]:
    """valid rows -> + raw_output[name], logprob[name], extract_error[name] (lazy); the device in `m`
    is the one the driver resolved."""
    from xfinder_ray.extractors.model import build_model_extractor
    from xfinder_ray.extractors.verifier import build_verifier_judge

    if m.verifier is not None:  # a verifier: its stage asks for logprobs itself
        model = build_verifier_judge(
            m.verifier, m.engine, device=m.device, batch_size=batch_size, storage=storage
        )
    else:
        model = build_model_extractor(
            m.engine, device=m.device, batch_size=batch_size, logprobs=True, storage=storage
        )

    def stage(ds: ray.data.Dataset) -> ray.data.Dataset:
        return model.apply(ds).map_batches(_rename, batch_format="pyarrow", fn_kwargs=dict(extractor=name))

    return stage


def valid_rows(batch: pa.Table) -> pa.Table:
    """The rows the validate stage kept (only these may reach a model)."""
    return batch.filter(batch["reject_reason"].is_null())


def rejected_rows(batch: pa.Table, *, extractors: list[str]) -> pa.Table:
    """The rows the validate stage rejected, with the model columns null."""
    return null_outputs(batch.filter(batch["reject_reason"].is_valid()), extractors=extractors)
