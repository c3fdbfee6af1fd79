"""Ablation: several record extractors x several comparators over the same input, in one job.

    inventory -> read (+ labels) -> validate -> [xFinder extractors: valid rows -> prompt -> vLLM]
              -> fan out (every extractor, every comparator) -> records/
              -> judgments/<extractor>__<comparator>/, rejects/ -> comparison/ -> figures, report.html
              -> manifest.json (written last)

Modules: config (the YAML schema), comparators (our judge and the frameworks' own checks),
source (the read stage plus the label columns), model (xFinder extractors: `xfinder:<label>` through
the scoring job's vLLM stage, with log-probabilities), fanout (the one map_batches stage), compare
(the tables: accuracy, agreement, ranks, Kendall tau, flips, labelled accuracy, review, low
confidence), figures (matplotlib, Agg), report (static HTML), run (the job). docs/ablation.md
describes the outputs.
"""

from __future__ import annotations

__all__ = ["AblationJobConfig", "load_ablation_config", "run_ablation"]


def __getattr__(name: str):  # lazy: importing the package must not import Ray or matplotlib
    if name in ("AblationJobConfig", "load_ablation_config"):
        from xfinder_ray.ablation import config

        return getattr(config, name)
    if name == "run_ablation":
        from xfinder_ray.ablation.run import run_ablation

        return run_ablation
    raise AttributeError(name)
