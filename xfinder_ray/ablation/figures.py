"""The report's figures (matplotlib, Agg backend: no display, no server), as PNG bytes.

- bump chart: each model's overall rank (macro accuracy over its tasks) under each extractor;
- accuracy heatmap per extractor: models x tasks;
- agreement heatmap: the share of records two extractors judge alike;
- log-probability histogram per xFinder extractor: the generated key answers' log-probabilities,
  judged correct vs wrong.
All use the primary comparator.
"""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")  # before pyplot: a batch job has no display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from xfinder_ray.ablation.compare import ALL_TASKS  # noqa: E402
from xfinder_ray.ablation.fanout import judgment_col  # noqa: E402
from xfinder_ray.ablation.model import logprob_col  # noqa: E402


def slug(name: str) -> str:
    """A file/folder-safe form of an extractor or comparator name (`lm-eval:math` -> `lm-eval.math`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", ".", name).strip(".") or "_"


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def bump_chart(ranks: pd.DataFrame, extractors: list[str], comparator: str) -> bytes:
    sub = ranks[(ranks["comparator"] == comparator) & (ranks["task"] == ALL_TASKS)]
    table = sub.pivot(index="model", columns="extractor", values="rank").reindex(columns=extractors)
    n_models = len(table)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(extractors) + 3), max(3.5, 0.45 * n_models + 1.5)))
    xs = np.arange(len(extractors))
    cmap = plt.get_cmap("tab20")
    first = table.iloc[:, 0].sort_values()
    for i, model in enumerate(first.index):
        ys = table.loc[model].to_numpy(dtype=float)
        ax.plot(xs, ys, "-o", color=cmap(i % 20), linewidth=2, markersize=7)
        if not np.isnan(ys[0]):
            ax.annotate(
                model,
                (xs[0], ys[0]),
                xytext=(-8, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=8,
            )
        if not np.isnan(ys[-1]):
            ax.annotate(
                model,
                (xs[-1], ys[-1]),
                xytext=(8, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=8,
            )
    ax.set_xticks(xs, extractors, rotation=20, ha="right")
    ax.set_xlim(-1.6, len(extractors) - 1 + 1.6)
    ax.set_ylim(n_models + 0.5, 0.5)  # rank 1 at the top
    ax.set_yticks(range(1, n_models + 1))
    ax.set_ylabel("rank (1 = best macro accuracy)")
    ax.set_title(f"Model ranks per extractor ({comparator})")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _heatmap(values: pd.DataFrame, title: str, xlabel: str, ylabel: str) -> bytes:
    data = values.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * data.shape[1] + 3), max(3.0, 0.45 * data.shape[0] + 1.5)))
    im = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(data.shape[1]), [str(c) for c in values.columns], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(data.shape[0]), [str(i) for i in values.index], fontsize=8)
    for (r, c), v in np.ndenumerate(data):
        if not np.isnan(v):
            ax.text(
                c, r, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black"
            )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, fraction=0.04)
    return _png(fig)


def accuracy_heatmap(accuracy: pd.DataFrame, extractor: str, comparator: str) -> bytes:
    sub = accuracy[(accuracy["extractor"] == extractor) & (accuracy["comparator"] == comparator)]
    table = sub.pivot(index="model", columns="task", values="accuracy").sort_index()
    return _heatmap(table, f"Accuracy: {extractor} ({comparator})", "task", "model")


def agreement_heatmap(matrix: pd.DataFrame, comparator: str) -> bytes:
    return _heatmap(matrix, f"Judgment agreement between extractors ({comparator})", "extractor", "extractor")


def logprob_histogram(wide: pd.DataFrame, extractor: str, comparator: str) -> bytes:
    lp = wide[logprob_col(extractor)]
    j = wide[judgment_col(extractor, comparator)]
    judged = lp.notna() & j.notna()
    values = lp[judged].astype(float)
    correct = j[judged].astype(bool)
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    if len(values):
        lo, hi = float(values.min()), float(values.max())
        bins = np.linspace(lo, hi if hi > lo else lo + 1e-6, 21)
        ax.hist(
            [values[correct], values[~correct]],
            bins=bins,
            stacked=True,
            color=["tab:green", "tab:red"],
            label=[f"judged correct ({int(correct.sum())})", f"judged wrong ({int((~correct).sum())})"],
        )
        ax.legend(fontsize=8)
    ax.set_xlabel("log P(raw output | prompt): sum over its tokens (0 = certain)")
    ax.set_ylabel("records")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"Confidence of {extractor} ({comparator})")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)
