"""xfinder-ray: re-score LLM evaluation results with xFinder on Ray Data.

`xfinder_ray.submit(...)` and `xfinder_ray.ScoringJob` (the notebook API, docs/submit.md) are loaded on
first use, so `import xfinder_ray` stays cheap and never imports Ray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xfinder_ray.submit import ScoringJob, submit

__all__ = ["ScoringJob", "submit"]


def __getattr__(name: str) -> Any:
    if name in ("submit", "ScoringJob"):
        import importlib

        # `xfinder_ray.submit` is the module itself, made callable (it forwards to `submit.submit`): the
        # import system binds the package attribute `submit` to the module whenever anyone imports
        # `xfinder_ray.submit`, so exporting the function under the same name would flip-flop.
        module = importlib.import_module("xfinder_ray.submit")
        return module if name == "submit" else module.ScoringJob
    raise AttributeError(f"module 'xfinder_ray' has no attribute {name!r}")
