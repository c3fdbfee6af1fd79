"""extract: rows -> + `raw_output` (and `prompt_tokens`, `extract_error` for model extractors).

`rules` and the other registered record-level extractors run in plain map_batches tasks; `xfinder` runs in a pool of vLLM replicas
(xfinder_ray/extractors/vllm_stage.py). Both return the extractor's identity, written on every row.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import ray

from xfinder_ray.config import JobConfig
from xfinder_ray.extractors import extractor_identity, get_scored_extractor
from xfinder_ray.records import FIELDS, validate


@dataclass(frozen=True)
class ExtractStage:
    name: str  # rules | xfinder
    identity: str  # written on every judgment row and in the manifest
    apply: Callable[[ray.data.Dataset], ray.data.Dataset]
    needs_prompt: bool
    needs_parse: bool


def record_batch(batch: pd.DataFrame, *, name: str) -> pd.DataFrame:
    """A registered record-level extractor (`rules`, or a RegEx baseline such as `lm-eval`) over the
    valid rows, with each extraction's confidence tier where it has one; rejected rows pass through."""
    extract = get_scored_extractor(name)
    outputs: list[str | None] = []
    tiers: list[str | None] = []
    for row, reason in zip(batch[list(FIELDS)].to_dict("records"), batch["reject_reason"], strict=True):
        answer, tier = (None, None) if isinstance(reason, str) else extract(validate(row))
        outputs.append(answer)
        tiers.append(tier)
    return batch.assign(raw_output=outputs, confidence=tiers, prompt_tokens=None, truncated=False)


def model_is_local(source: str) -> bool:
    return source.startswith("s3://") or os.path.isdir(source)


def build_extract_stage(cfg: JobConfig) -> ExtractStage:
    name = cfg.extractor.name
    if name != "xfinder":  # a registered record-level extractor: rules (the default) or a baseline
        return ExtractStage(
            name,
            f"{name}:{extractor_identity(name)}",
            lambda ds: ds.map_batches(record_batch, batch_format="pandas", fn_kwargs={"name": name}),
            False,
            False,
        )
    from xfinder_ray.extractors.vllm_stage import (
        build_vllm_stage,
        model_identity,
        processor_config_kwargs,
        resolve_device,
        stage_config_from,
    )

    x = cfg.xfinder
    stage_cfg = stage_config_from(x)
    # The dtype is part of the identity: float32 and bf16 can change a greedy output now and then.
    engine = processor_config_kwargs(stage_cfg, resolve_device(stage_cfg.device))["engine_kwargs"]
    dtype = engine.get("dtype", "auto")
    ident = f"xfinder:{x.checkpoint}@{model_identity(x.model_source, x.revision)}:{x.prompt_format}:{dtype}"
    return ExtractStage("xfinder", ident, build_vllm_stage(stage_cfg), True, True)
