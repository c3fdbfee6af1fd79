"""The Python entry points a notebook uses, re-exported lazily by `import xfinder_ray`.

    import xfinder_ray as xr
    result = xr.score("configs/local.yaml", ["input=responses/", "output=out/run1", "extractor.name=rules"])
    xr.read_accuracy("out/run1")["by_model"]
    xr.extract({"key_answer_type": "alphabet_option", ...})        # one record, model-free
    xr.judge("math", None, "0.5", "\\frac{1}{2}")                    # True

Every function imports what it needs when called, so `import xfinder_ray` never imports Ray.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def score(config: str | None = None, overrides: Sequence[str] = ()) -> Any:
    """Run the scoring job in this process (joining `ray.address` / RAY_ADDRESS, or starting a local
    Ray instance) and return its JobResult (manifest, leaderboard, output path). `config` is a YAML path
    (None: only the overrides and the schema defaults); `overrides` are dotlist items. A missing input
    path or checkpoint fails before Ray starts (xfinder_ray/preflight.py); a run that rejected more than
    `input.max_rejected_share` of its input warns (UserWarning) with the most common reasons."""
    import warnings

    from xfinder_ray import preflight
    from xfinder_ray.config import load_config
    from xfinder_ray.job import init_ray
    from xfinder_ray.pipeline import run

    cfg = load_config(config, list(overrides))
    preflight.check_before_ray(cfg)
    local = preflight.starts_local_ray(cfg)
    init_ray(cfg)
    preflight.check_after_ray(cfg, local)
    result = run(cfg)
    problem = preflight.rejection_problem(cfg, result)
    if problem:
        warnings.warn(problem, UserWarning, stacklevel=2)
    return result


def ablate(config: str | None = None, overrides: Sequence[str] = ()) -> Any:
    """Run the ablation job (N extractors x M comparators, docs/ablation.md); its AblationResult."""
    from xfinder_ray.ablation.config import load_ablation_config
    from xfinder_ray.ablation.run import run_ablation
    from xfinder_ray.job import init_ray

    cfg = load_ablation_config(config, list(overrides))
    init_ray(cfg)
    return run_ablation(cfg)


def load_config(config: str | None = None, overrides: Sequence[str] = ()) -> Any:
    """The validated job config (omegaconf structured JobConfig); ConfigError names a bad key."""
    from xfinder_ray.config import load_config as _load

    return _load(config, list(overrides))


def validate(row: Mapping[str, Any]) -> Any:
    """One input record checked and parsed into a Record; InvalidRecord says why it cannot be judged."""
    from xfinder_ray.records import validate as _validate

    return _validate(dict(row))


def extract(row: Mapping[str, Any], extractor: str = "rules") -> str:
    """The key answer of one record by a registered record-level extractor (`rules`, `lm-eval`, ...)."""
    from xfinder_ray.extractors import get_record_extractor

    return get_record_extractor(extractor)(validate(row))


def judge(
    key_answer_type: str, standard_answer_range: Any, extracted: str, correct_answer: str, **kw: Any
) -> bool:
    """Whether an extracted key answer is correct (bounded math equivalence; docs/judging.md)."""
    from xfinder_ray.judging import judge as _judge

    return _judge(key_answer_type, standard_answer_range, extracted, correct_answer, **kw)


def import_results(fmt: str, paths: Sequence[str], output: str, **kw: Any) -> Any:
    """Convert lm-eval / OpenCompass output files into job input (docs/importing.md); an ImportReport."""
    from xfinder_ray.importers import import_files

    return import_files(fmt, list(paths), output, **kw)


def read_accuracy(output: str, storage: Any = None) -> Any:
    """The committed accuracy tables of a finished job: {"by_model_task", "by_model", "pairwise",
    "ranks", "conflicts": DataFrame} (docs/leaderboard.md)."""
    from xfinder_ray.submit import read_accuracy as _read

    return _read(output, storage)
