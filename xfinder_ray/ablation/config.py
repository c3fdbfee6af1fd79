"""The ablation job's configuration: the scoring job's input/output/storage/ray sections (reused
from xfinder_ray.config) plus an `ablation` section naming the extractors and comparators.

`ablation.extractors` lists registered record extractors and xFinder extractors (`xfinder:<label>`);
each xFinder extractor's settings are `ablation.xfinder.<label>`, the scoring job's `xfinder` section
(config.XFinderConfig: same keys, same defaults). See ablation/model.py.

Loaded the same way as the scoring job's config (omegaconf structured schema, YAML, dotlist
overrides with the `input=` / `output=` shorthands); an unknown key fails with its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xfinder_ray.config import (
    ConfigError,
    InputConfig,
    OutputConfig,
    RayConfig,
    StorageConfig,
    VerifierConfig,
    XFinderConfig,
    load_structured,
)


@dataclass
class AblationConfig:
    # Registered record extractors (xfinder_ray.extractors.record_extractor_names()) and xFinder
    # extractors `xfinder:<label>` (a real model through vLLM; settings in `xfinder` below).
    extractors: list[str] = field(default_factory=lambda: ["rules", "opencompass", "lm-eval", "ultraeval"])
    # <label> -> the scoring job's xfinder section for `xfinder:<label>` (model_source, prompt_format,
    # max_tokens, device, ...). The checkpoint (prompt template) is the label when the label is a
    # checkpoint name (xFinder-qwen1505, xFinder-llama38it), else `checkpoint`. A model_source that is not
    # a local (or s3://) folder is skipped with a note: an ablation never downloads a model.
    xfinder: dict[str, XFinderConfig] = field(default_factory=dict)
    # <checkpoint> -> the scoring job's verifier section for `verifier:<checkpoint>` (xVerify-0.5B-I,
    # CompassVerifier-3B, ...; docs/judges.md); its verdict is its judgment under every comparator.
    verifier: dict[str, VerifierConfig] = field(default_factory=dict)
    # math-verify | xfinder-compat (our judge) | opencompass | lm-eval | ultraeval (a framework's own
    # math check, GSM8K or MATH route by task) | a name in extractors.baselines.COMPARATORS.
    comparators: list[str] = field(default_factory=lambda: ["math-verify", "xfinder-compat"])
    # The comparator the figures, ranks' headline and review use (default: the first one).
    primary_comparator: str | None = None
    # auto: use gold_key_answer / gold_judgment / tags when the input has them | none: ignore them
    labels: str = "auto"
    review_limit: int = 500  # most rows in review/ (the most contested first)
    flips_limit: int = 50  # rows in comparison/rank_flips
    low_confidence_limit: int = 50  # rows per xFinder extractor in review/low_confidence (lowest logprob)


# Same shape as config.py:JobConfig: a schema declaration listing the sections this job reads (the
# shared ones are the same classes), not logic to share.
@dataclass
class AblationJobConfig:
    input: InputConfig = field(default_factory=InputConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    ablation: AblationConfig = field(default_factory=AblationConfig)

    @property
    def primary(self) -> str:
        return self.ablation.primary_comparator or self.ablation.comparators[0]


def load_ablation_config(
    path: str | Path | None = None, overrides: list[str] | None = None
) -> AblationJobConfig:
    """Load a YAML config over the schema defaults, then apply dotlist overrides; check the names."""
    cfg = load_structured(AblationJobConfig, path, overrides)
    check(cfg)
    return cfg


def check(cfg: AblationJobConfig) -> None:
    from xfinder_ray.ablation.comparators import comparator_names
    from xfinder_ray.ablation.model import check_settings, is_model_extractor
    from xfinder_ray.extractors import record_extractor_names

    a = cfg.ablation
    known = record_extractor_names()
    for name in a.extractors:
        if is_model_extractor(name):
            check_settings(a, name)
        elif name not in known:
            raise ConfigError(
                f"invalid config: ablation.extractors: unknown {name!r}; registered: {', '.join(known)}, "
                "xfinder:<label> or verifier:<checkpoint>"
            )
    for name in a.comparators:
        if name not in comparator_names():
            raise ConfigError(
                f"invalid config: ablation.comparators: unknown {name!r}; known: {', '.join(comparator_names())}"
            )
    for key in ("extractors", "comparators"):
        values = getattr(a, key)
        if not values:
            raise ConfigError(f"invalid config: ablation.{key} is empty")
        if len(set(values)) != len(values):
            raise ConfigError(f"invalid config: ablation.{key} lists a name twice")
    if a.primary_comparator is not None and a.primary_comparator not in a.comparators:
        raise ConfigError("invalid config: ablation.primary_comparator must be one of ablation.comparators")
    if a.labels not in ("auto", "none"):
        raise ConfigError(f"invalid config: ablation.labels={a.labels!r}; expected auto or none")
    from xfinder_ray.importers.formats import FORMATS as IMPORT_FORMATS

    allowed = ("auto", "parquet", "jsonl", *IMPORT_FORMATS)
    if cfg.input.format not in allowed:
        raise ConfigError(
            f"invalid config: input.format={cfg.input.format!r}; expected one of {', '.join(allowed)}"
        )
    if not cfg.input.paths:
        raise ConfigError("invalid config: input.paths is empty")
    if min(a.review_limit, a.flips_limit, a.low_confidence_limit) < 0:
        raise ConfigError(
            "invalid config: ablation.review_limit, flips_limit and low_confidence_limit must be >= 0"
        )


def as_dict(cfg: AblationJobConfig) -> dict[str, Any]:
    """The config as a plain dict for the manifest, secrets redacted like the scoring job's."""
    from xfinder_ray.config import redacted

    return redacted(cfg)  # type: ignore[arg-type]  # redacted() walks any structured config
