"""extract: rows -> + `raw_output` (and `prompt_tokens`, `extract_error` for model extractors; `confidence`
and `no_answer_reason` for record-level ones).

`rules` and the other registered record-level extractors run in plain map_batches tasks; `xfinder`
(prompt, cache, a pool of vLLM replicas) is built by xfinder_ray/extractors/model.py. Both carry the
extractor's identity, written on every row.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import ray

from xfinder_ray.config import VERIFIER_DEFAULTS, JobConfig
from xfinder_ray.extractors import extractor_identity, get_scored_extractor
from xfinder_ray.records import FIELDS, validate
from xfinder_ray.stages.rows import row_stage
from xfinder_ray.storage import Location


@dataclass(frozen=True)
class ExtractStage:
    name: str  # rules | xfinder
    identity: str  # written on every judgment row and in the manifest
    apply: Callable[[ray.data.Dataset], ray.data.Dataset]
    needs_prompt: bool
    needs_parse: bool
    cache: Location | None = None  # model extractors: the extraction cache folder the sink adds to
    settings: dict[str, Any] | None = None  # model extractors: what decides an output besides the prompt
    verifier: str | None = None  # a verifier judge's checkpoint: the judge stage reads its verdicts


def _record_extract(rows: pd.DataFrame, *, name: str) -> pd.DataFrame:
    extract = get_scored_extractor(name)
    scored = [extract(validate(row)) for row in rows[list(FIELDS)].to_dict("records")]
    return rows.assign(
        raw_output=[answer for answer, _, _ in scored],
        confidence=[tier for _, tier, _ in scored],
        no_answer_reason=[reason for _, _, reason in scored],
        prompt_tokens=None,
        truncated=False,
    )


# A registered record-level extractor (`rules`, or a RegEx baseline such as `lm-eval`) over the valid
# rows, with each extraction's confidence tier where it has one and, for [No valid answer], the reason
# (extractors.get_scored_extractor).
record_batch = row_stage(
    "extract",
    reads=FIELDS,
    writes=("raw_output", "confidence", "no_answer_reason", "prompt_tokens", "truncated"),
    fn=_record_extract,
)


def extract_stats(df: pd.DataFrame) -> dict[str, int]:
    """Extractions made (by the router, the cache or the extractor) and the model's failed rows."""
    errors = df["extract_error"].notna() if "extract_error" in df else pd.Series(False, index=df.index)
    made = df["raw_output"].notna() & ~errors if "raw_output" in df else pd.Series(False, index=df.index)
    return {"extracted": int(made.sum()), "errors": int(errors.sum())}


def model_is_local(source: str) -> bool:
    return source.startswith("s3://") or os.path.isdir(source)


def falls_back_to_rules(cfg: JobConfig) -> bool:
    """The embedded default's fallback applies: xfinder asked for, `fallback: rules`, no checkpoint on disk."""
    return (
        cfg.extractor.name == "xfinder"
        and cfg.extractor.fallback == "rules"
        and not model_is_local(cfg.xfinder.model_source)
    )


def build_extract_stage(cfg: JobConfig, device: str | None, cache_root: Location | None) -> ExtractStage:
    """The job's extractor: a registered record-level one, or xFinder on `device` (resolved on the
    driver) with the extraction cache under `cache_root`."""
    name = cfg.extractor.name
    if name in VERIFIER_DEFAULTS:  # xverify | compassverifier: a verifier judge (docs/judges.md)
        from xfinder_ray.extractors.verifier import build_verifier_judge

        assert device is not None, "the driver resolves the device before building a model judge"
        judge = build_verifier_judge(
            cfg.verifier,
            cfg.xfinder,
            device=device,
            batch_size=cfg.ray.batch_size,
            cache_root=cache_root,
            storage=cfg.storage,
        )
        return ExtractStage(
            name,
            judge.identity,
            judge.apply,
            True,
            False,
            judge.cache,
            judge.settings,
            cfg.verifier.checkpoint,
        )
    if name != "xfinder":  # a registered record-level extractor: rules (the default) or a baseline
        return ExtractStage(
            name,
            f"{name}:{extractor_identity(name)}",
            lambda ds: ds.map_batches(record_batch, batch_format="pandas", fn_kwargs={"name": name}),
            False,
            False,
        )
    from xfinder_ray.extractors.model import build_model_extractor

    assert device is not None, "the driver resolves the device before building a model extractor"
    model = build_model_extractor(
        cfg.xfinder, device=device, batch_size=cfg.ray.batch_size, cache_root=cache_root, storage=cfg.storage
    )
    return ExtractStage("xfinder", model.identity, model.apply, True, True, model.cache, model.settings)
