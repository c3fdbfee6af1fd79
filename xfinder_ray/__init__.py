"""xfinder-ray: re-score LLM evaluation results with xFinder on Ray Data.

The public API, loaded on first use so that `import xfinder_ray` stays cheap and never imports Ray:

    score(config, overrides)        run the scoring job here; its JobResult
    ablate(config, overrides)       run the ablation job (extractors x comparators)
    submit(...), ScoringJob         submit the job to a Ray cluster from a notebook (docs/submit.md)
    load_config(config, overrides)  the validated job config
    read_accuracy(output)           a finished job's accuracy tables as DataFrames
    validate(row)                   one record checked and parsed
    extract(row, extractor)         one record's key answer, model-free (rules, lm-eval, ...)
    judge(kat, range, extracted, correct)   one verdict
    import_results(fmt, paths, output)      lm-eval / OpenCompass outputs -> job input
    __version__
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xfinder_ray.api import (
        ablate,
        extract,
        import_results,
        judge,
        load_config,
        read_accuracy,
        score,
        validate,
    )
    from xfinder_ray.submit import ScoringJob, submit

__all__ = [
    "ScoringJob",
    "__version__",
    "ablate",
    "extract",
    "import_results",
    "judge",
    "load_config",
    "read_accuracy",
    "score",
    "submit",
    "validate",
]
_API = frozenset(__all__) - {"ScoringJob", "__version__", "submit"}


def __getattr__(name: str) -> Any:
    import importlib

    if name in ("submit", "ScoringJob"):
        # `xfinder_ray.submit` is the module itself, made callable (it forwards to `submit.submit`): the
        # import system binds the package attribute `submit` to the module whenever anyone imports
        # `xfinder_ray.submit`, so exporting the function under the same name would flip-flop.
        module = importlib.import_module("xfinder_ray.submit")
        return module if name == "submit" else module.ScoringJob
    if name in _API:
        return getattr(importlib.import_module("xfinder_ray.api"), name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("xfinder-ray")
        except PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(f"module 'xfinder_ray' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
