"""Is one model really ahead of another? Paired tests and rank intervals over questions.

- `mcnemar_exact(a_only, b_only)`: the exact McNemar test, i.e. a two-sided binomial test (p = 1/2)
  on the discordant items (one model right, the other wrong): scipy.stats.binomtest's p-value, exact
  at any count, no resampling. `mcnemar_exact_many` gives the same p-values for arrays of counts in
  one vectorised call (binomtest costs ~1 ms a call: 2,000 model pairs took 2.6 s of the job).
- `holm(p)`: Holm's step-down adjustment across a family of tests (all pairs of models).
- `bootstrap_ranks(...)`: each model's rank by macro accuracy in seeded resamples of the questions
  (stratified by task, so every resample has each task's number of questions), and its 2.5 / 97.5
  percentiles.

The checks against statsmodels and reference values are in tests/cpu/stages/test_aggregate.py; docs/leaderboard.md
says why these two methods.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
# Cells of one bootstrap chunk (resamples x questions of a task): bounds the memory of the weights.
CHUNK_CELLS = 4_000_000


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts (1.0 when there are none): the
    binomial test of one side's count against n = both, p = 1/2."""
    return float(mcnemar_exact_many(np.array([a_only]), np.array([b_only]))[0])


def mcnemar_exact_many(a_only: np.ndarray, b_only: np.ndarray) -> np.ndarray:
    """mcnemar_exact over arrays of discordant counts. Binomial(n, 1/2) is symmetric, so the two-sided
    p-value scipy.stats.binomtest computes (the mass of outcomes no likelier than the observed one) is
    both tails, 2 * P(X <= min), capped at 1; equal counts give 1."""
    from scipy.stats import binom  # imported here: the driver needs it only for the paired tests

    a, b = np.asarray(a_only, dtype=np.int64), np.asarray(b_only, dtype=np.int64)
    n, k = a + b, np.minimum(a, b)
    with np.errstate(all="ignore"):
        p = np.minimum(1.0, 2.0 * binom.cdf(k, n, 0.5))
    return np.where((n == 0) | (a == b), 1.0, p)


def holm(p_values: list[float] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (same order as given): controls the family-wise error rate."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.minimum(1.0, np.maximum.accumulate(scaled))
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class Items:
    """Per model and question: records scored `n` and correct `c` (models x questions, int64), and
    each question's task index. Built from per (model, task, question_key) counts, never records."""

    models: list[str]
    tasks: list[str]
    task_of: np.ndarray  # (questions,) task index of each question
    n: np.ndarray  # (models, questions)
    c: np.ndarray  # (models, questions)


def item_outcomes(items: Items) -> tuple[np.ndarray, np.ndarray]:
    """(answered, right): per model and question, whether it has a scored record there, and whether
    more than half of its records there are correct (one record per question is the usual case)."""
    return items.n > 0, 2 * items.c > items.n


def paired_counts(answered: np.ndarray, right: np.ndarray, a: int, b: int) -> tuple[int, int, int, int, int]:
    """(shared questions, a right, b right, a right & b wrong, b right & a wrong) for models a and b,
    from item_outcomes."""
    both = answered[a] & answered[b]
    ra, rb = right[a] & both, right[b] & both
    return int(both.sum()), int(ra.sum()), int(rb.sum()), int((ra & ~rb).sum()), int((rb & ~ra).sum())


def _by_task(items: Items) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per task, its questions' (n, c) as float (models x questions of the task): BLAS products."""
    out = []
    for t in range(len(items.tasks)):
        cols = items.task_of == t
        out.append((items.n[:, cols].astype(np.float64), items.c[:, cols].astype(np.float64)))
    return out


def _macro(sums: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """(resamples, models) macro accuracy from per task (scored, correct) sums; a task where a model
    has nothing scored is left out of its mean."""
    per_task = [np.where(n > 0, c / np.maximum(n, 1), np.nan) for n, c in sums]
    with warnings.catch_warnings():  # a model with no scored task: NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(per_task), axis=0)


def macro_accuracy(items: Items, weights: list[np.ndarray] | None = None) -> np.ndarray:
    """Macro accuracy per model: the mean over tasks of correct / scored. With `weights` (one
    (resamples, questions of the task) array per task), one row per resample."""
    tasks = _by_task(items)
    if weights is None:
        return _macro([(n.sum(axis=1)[None, :], c.sum(axis=1)[None, :]) for n, c in tasks])[0]
    return _macro([(w @ n.T, w @ c.T) for w, (n, c) in zip(weights, tasks, strict=True)])


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """1 + the number of models strictly ahead (ties share the better rank); rows are resamples."""
    s = np.nan_to_num(np.atleast_2d(scores), nan=-np.inf)
    return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)


def bootstrap_ranks(items: Items, resamples: int, seed: int) -> np.ndarray:
    """(resamples, models) ranks by macro accuracy, questions resampled with replacement within each
    task; the same items, resamples and seed give the same array."""
    rng = np.random.default_rng(seed)
    tasks = _by_task(items)
    sizes = [n.shape[1] for n, _ in tasks]
    chunk = max(1, min(resamples, CHUNK_CELLS // max(1, max(sizes, default=1))))
    out = []
    done = 0
    while done < resamples:
        b = min(chunk, resamples - done)
        sums = []
        for size, (n, c) in zip(sizes, tasks, strict=True):
            # how often each question is drawn in each of b resamples of `size` draws
            picks = (
                rng.integers(0, size, size=(b, size), dtype=np.int32) if size else np.zeros((b, 0), np.int32)
            )
            picks += (np.arange(b, dtype=np.int32) * size)[:, None]
            w = np.bincount(picks.ravel(), minlength=b * size).reshape(b, size).astype(np.float64)
            sums.append((w @ n.T, w @ c.T))
        out.append(ranks_of(_macro(sums)))
        done += b
    return np.concatenate(out) if out else np.zeros((0, len(items.models)), dtype=np.int64)


def rank_interval(ranks: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per model, the (1 - level) / 2 and (1 + level) / 2 percentiles of its bootstrap ranks, as ranks
    that occurred (lower, higher)."""
    lo = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower")
    hi = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher")
    return lo.astype(np.int64), hi.astype(np.int64)
