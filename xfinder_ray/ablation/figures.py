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
    # names at both ends; models tied there share one label ("a, b"), not two drawn over each other
    for column, x, dx, ha in ((table.columns[0], xs[0], -8, "right"), (table.columns[-1], xs[-1], 8, "left")):
        for y, models in table[column].dropna().groupby(table[column].dropna()):
            label = ", ".join(str(m) for m in sorted(models.index, key=str))
            ax.annotate(
                label, (x, y), xytext=(dx, 0), textcoords="offset points", ha=ha, va="center", fontsize=8
            )
    ax.set_xticks(xs, extractors, rotation=20, ha="right")
    ax.set_xlim(-1.6, len(extractors) - 1 + 1.6)
    ax.set_ylim(n_models + 0.5, 0.5)  # rank 1 at the top
    ax.set_yticks(range(1, n_models + 1))
    ax.set_ylabel("rank (1 = best macro accuracy)")
    ax.set_title(f"Model ranks per extractor ({comparator})")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _heatmap(
    values: pd.DataFrame,
    title: str,
    xlabel: str,
    ylabel: str,
    labels: list[str] | None = None,
    compact: bool = False,
) -> bytes:
    """Values in [0, 1] as colours with the number in each cell. compact: a small panel (two to a row in
    the report), percentages, no colour bar (the numbers say it)."""
    data = values.to_numpy(dtype=float)
    if compact:
        size = (max(3.6, 0.55 * data.shape[1] + 2.0), max(2.2, 0.27 * data.shape[0] + 1.1))
    else:
        size = (max(5.0, 0.9 * data.shape[1] + 3), max(3.0, 0.45 * data.shape[0] + 1.5))
    fig, ax = plt.subplots(figsize=size)
    im = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(data.shape[1]), [str(c) for c in values.columns], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(data.shape[0]), labels or [str(i) for i in values.index], fontsize=8)
    for (r, c), v in np.ndenumerate(data):
        if not np.isnan(v):
            text = f"{100 * v:.0f}" if compact else f"{v:.2f}"
            ax.text(c, r, text, ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9 if compact else None)
    if not compact:
        fig.colorbar(im, ax=ax, fraction=0.04)
    return _png(fig)


def rank_labels(macro: pd.Series) -> list[str]:
    """`1. model`, `2= model` for models tied on macro accuracy (the rank they share is the best one);
    `macro` is sorted best first."""
    ranks = macro.rank(ascending=False, method="min").astype(int)
    tied = ranks.duplicated(keep=False)
    return [f"{r}{'=' if t else '.'} {m}" for m, r, t in zip(macro.index, ranks, tied, strict=True)]


def heatmap_table(accuracy: pd.DataFrame, extractor: str, comparator: str) -> tuple[pd.DataFrame, list[str]]:
    """Models x tasks under one extractor, rows in that extractor's rank order (macro accuracy over the
    model's tasks, as comparison/ranks; ties in name order), tasks alphabetical as in the scoring
    report; and the row labels (`1. model`, `2= model`)."""
    sub = accuracy[(accuracy["extractor"] == extractor) & (accuracy["comparator"] == comparator)]
    table = sub.pivot(index="model", columns="task", values="accuracy")
    table = table.reindex(columns=sorted(table.columns, key=lambda t: (str(t).lower(), str(t))))
    # the mean as compare.rank_table takes it (rounded off its float noise): the same ranks and ties
    macro = sub.groupby("model", sort=True)["accuracy"].mean().round(12)
    macro = macro.sort_values(ascending=False, kind="stable")
    return table.reindex(index=macro.index), rank_labels(macro)


def accuracy_heatmap(accuracy: pd.DataFrame, extractor: str, comparator: str) -> bytes:
    """One small panel (the report shows two to a row): heatmap_table's rows and columns."""
    table, labels = heatmap_table(accuracy, extractor, comparator)
    return _heatmap(table, f"{extractor} ({comparator})", "", "", labels, compact=True)


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
