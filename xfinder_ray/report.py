"""report.html: the scoring job's one short page, sorted by rank, with its figures (figures/*.png).

- accuracy per model with its Wilson 95% interval (micro; macro marked), rank 1 at the top;
- the model x task heatmap, rows in rank order;
- the no-valid-answer and reject rates per model, and the no valid answers by reason (a table);
- with output.compare_to, a link to diff.md and the diff's bump chart (diff/rank_moves.png).
Static (no script, no server), figures referenced by relative path; every value from the data is
HTML-escaped (model and task names come from untrusted input). matplotlib with the Agg backend.
"""

from __future__ import annotations

import html
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot: a batch job has no display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from xfinder_ray.storage import Location, exists, write_bytes_atomic  # noqa: E402

FIGURES = {
    "accuracy.png": "Accuracy per model (micro, Wilson 95% interval; ◆ macro)",
    "rates.png": "No valid answer and rejected, per model",
    "heatmap.png": "Accuracy per model and task (rows by rank)",
}
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; max-width: 1100px; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 7px; text-align: right; }
th { background: #f0f0f0; } td.m, th.m { text-align: left; }
.row { display: flex; flex-wrap: wrap; gap: 1em; } figure { margin: 0; }
img { max-width: 100%; border: 1px solid #ddd; } figcaption { font-size: 0.8em; color: #555; }
"""


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _labels(models: pd.Series) -> list[str]:
    return [f"{i}. {m}" for i, m in enumerate(models, 1)]


def accuracy_figure(by_model: pd.DataFrame) -> bytes:
    n = len(by_model)
    fig, ax = plt.subplots(figsize=(5.2, 0.3 * n + 1.2))
    ys = np.arange(n)
    acc = by_model["accuracy_micro"].to_numpy(float)
    err = np.vstack([acc - by_model["ci95_low"].to_numpy(float), by_model["ci95_high"].to_numpy(float) - acc])
    ax.errorbar(acc, ys, xerr=err, fmt="o", color="tab:blue", capsize=3, label="micro (95% CI)")
    ax.plot(
        by_model["accuracy_macro"].to_numpy(float), ys, "D", color="tab:orange", mfc="none", label="macro"
    )
    ax.set_yticks(ys, _labels(by_model["model"]), fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)  # rank 1 at the top
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _png(fig)


def rates_figure(by_model: pd.DataFrame, reject_rate: pd.Series) -> bytes:
    n = len(by_model)
    fig, ax = plt.subplots(figsize=(4.0, 0.3 * n + 1.2))
    ys = np.arange(n)
    nva = by_model["no_valid_answer_rate"].to_numpy(float)
    rej = reject_rate.reindex(by_model["model"]).fillna(0.0).to_numpy(float)
    ax.barh(ys - 0.2, nva, height=0.4, color="tab:gray", label="no valid answer (of judged)")
    ax.barh(ys + 0.2, rej, height=0.4, color="tab:red", label="rejected (of input)")
    ax.set_yticks(ys, _labels(by_model["model"]), fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, max(0.05, float(np.nanmax(np.concatenate([nva, rej, [0.0]]))) * 1.15))
    ax.set_xlabel("share")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _png(fig)


def heatmap_figure(by_task: pd.DataFrame, order: list[str]) -> bytes:
    table = by_task.pivot(index="model", columns="task", values="accuracy").reindex(index=order)
    table = table.reindex(columns=sorted(table.columns))
    data = table.to_numpy(float)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.75 * data.shape[1] + 2.5), 0.3 * data.shape[0] + 1.6))
    im = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(data.shape[1]), [str(c) for c in table.columns], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(data.shape[0]), _labels(table.index), fontsize=8)
    for (r, c), v in np.ndenumerate(data):
        if not np.isnan(v):
            ax.text(
                c,
                r,
                f"{100 * v:.0f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v < 0.6 else "black",
            )
    fig.colorbar(im, ax=ax, fraction=0.04)
    return _png(fig)


def bump_chart(models: pd.DataFrame, old_label: str, new_label: str) -> bytes | None:
    """Rank in the old run -> rank in the new one, one line per model (rank 1 at the top); None when
    neither run has a ranked model."""
    ranks = models[["model", "rank_old", "rank_new"]]
    if ranks[["rank_old", "rank_new"]].isna().all().all():
        return None
    n = int(np.nanmax(ranks[["rank_old", "rank_new"]].to_numpy(float)))
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * n + 1.4))
    cmap = plt.get_cmap("tab20")
    for i, r in enumerate(ranks.itertuples()):
        ys = [r.rank_old, r.rank_new]
        ax.plot([0, 1], ys, "-o", color=cmap(i % 20), linewidth=2)
        for x, y, ha, dx in ((0, r.rank_old, "right", -8), (1, r.rank_new, "left", 8)):
            if y == y:
                ax.annotate(
                    str(r.model),
                    (x, y),
                    xytext=(dx, 0),
                    textcoords="offset points",
                    ha=ha,
                    va="center",
                    fontsize=8,
                )
    ax.set_xticks([0, 1], [old_label, new_label])
    ax.set_xlim(-1.2, 2.2)
    ax.set_ylim(n + 0.5, 0.5)
    ax.set_yticks(range(1, n + 1))
    ax.set_ylabel("rank (1 = best macro accuracy)")
    ax.set_title("Rank moves")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def rejects_per_model(by_model: pd.DataFrame) -> pd.Series:
    """Rejected / input per model, from the tables' own input and rejected columns."""
    return (by_model["rejected"] / by_model["input"].where(by_model["input"] > 0)).set_axis(by_model["model"])


def _cell(v: Any, pct: bool = False) -> str:
    if isinstance(v, float):
        return "" if v != v else (f"{100 * v:.1f}" if pct else f"{v:.3f}")
    return html.escape(str(v))


def rank_ranges(out: Location) -> dict[str, str]:
    """model -> its rank interval ("1–2") from accuracy/ranks.parquet, where the tables have one."""
    path = out.join("accuracy", "ranks.parquet")
    if not exists(path):
        return {}
    with out.fs.open_input_file(path.path) as f:
        ranks = pq.read_table(f).to_pandas()
    if not {"model", "rank_low", "rank_high"} <= set(ranks.columns):
        return {}
    ranks = ranks.dropna(subset=["rank_low", "rank_high"])
    return {r.model: f"{int(r.rank_low)}–{int(r.rank_high)}" for r in ranks.itertuples()}


def leaderboard_html(by_model: pd.DataFrame, reject_rate: pd.Series, ranges: dict[str, str]) -> str:
    head = ["rank", "model", "macro %", "micro % (95% CI)", "judged", "no valid answer %", "rejected %"]
    if ranges:
        head.insert(1, "rank 95%")
    rows = []
    for i, r in enumerate(by_model.itertuples(), 1):
        micro = f"{_cell(r.accuracy_micro, True)} ({_cell(r.ci95_low, True)}–{_cell(r.ci95_high, True)})"
        cells = [
            str(i),
            _cell(r.model),
            _cell(r.accuracy_macro, True),
            micro,
            _cell(r.judged),
        ]
        if ranges:
            cells.insert(1, html.escape(ranges.get(r.model, "")))
        cells += [
            _cell(r.no_valid_answer_rate, True),
            _cell(float(reject_rate.get(r.model, float("nan"))), True),
        ]
        rows.append(
            "<tr>" + "".join(_td(c, h == "model") for c, h in zip(cells, head, strict=True)) + "</tr>"
        )
    heads = "".join(f"<th class='m'>{h}</th>" if h == "model" else f"<th>{h}</th>" for h in head)
    return f"<table><tr>{heads}</tr>" + "".join(rows) + "</table>"


def no_answer_html(by_model: pd.DataFrame) -> str:
    """The no valid answers per model by reason (% of its judged records; only the reasons that
    occur), rank order; "" when no model has one."""
    from xfinder_ray.stages.aggregate import NO_ANSWER_PREFIX, no_answer_by_model

    rows = no_answer_by_model(by_model)
    seen = {why for *_, shares in rows for why, _ in shares}
    columns = [c.removeprefix(NO_ANSWER_PREFIX) for c in by_model.columns if c.startswith(NO_ANSWER_PREFIX)]
    reasons = [r for r in columns if r in seen]  # the tables' order (rules.NO_ANSWER_REASONS)
    if not reasons:
        return ""
    head = ["model", "judged", "no valid answer %", *(f"{html.escape(r)} %" for r in reasons)]
    body = []
    for model, judged, nva, shares in rows:
        got = dict(shares)
        cells = [
            _cell(model),
            str(judged),
            _cell(nva, True),
            *(_cell(got.get(r, 0.0), True) for r in reasons),
        ]
        body.append(
            "<tr>" + "".join(_td(c, h == "model") for c, h in zip(cells, head, strict=True)) + "</tr>"
        )
    heads = "".join(f"<th class='m'>{h}</th>" if h == "model" else f"<th>{h}</th>" for h in head)
    return (
        "<h2>No answer, by reason</h2><p>Share of each model's judged records extracted as "
        "[No valid answer], by <code>no_answer_reason</code> (docs/rules.md).</p>"
        f"<table><tr>{heads}</tr>" + "".join(body) + "</table>"
    )


def _td(text: str, left: bool) -> str:
    return f"<td class='m'>{text}</td>" if left else f"<td>{text}</td>"


def render(title: str, facts: list[str], board: str, figures: bool, compare_to: str | None) -> str:
    fig = "<figure><img src='figures/{0}' alt='{1}'><figcaption>{1}</figcaption></figure>"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>{' · '.join(html.escape(f) for f in facts)}</p>",
        board,
    ]
    if figures:
        side = list(FIGURES.items())[:2]
        parts.append("<div class='row'>" + "".join(fig.format(n, html.escape(c)) for n, c in side) + "</div>")
        parts.append(fig.format("heatmap.png", html.escape(FIGURES["heatmap.png"])))
    if compare_to:
        parts.append(
            f"<h2>Since {html.escape(compare_to)}</h2><p>Flips, accuracy deltas with paired tests, rank "
            "moves: <a href='diff.md'>diff.md</a>, diff/*.parquet.</p>"
            "<figure><img src='diff/rank_moves.png' alt='Rank moves'><figcaption>Rank moves</figcaption></figure>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    out: Location,
    by_task: pd.DataFrame,
    by_model: pd.DataFrame,
    extractor: str,
    comparator: str,
    compare_to: str | None = None,
) -> None:
    """<out>/report.html and <out>/figures/*.png; by_model is in rank order (accuracy/by_model)."""
    # Rejects without a readable model are counted in the tables' totals, not drawn as a model.
    by_model = by_model[by_model["accuracy_micro"].notna()].reset_index(drop=True)
    reject_rate = rejects_per_model(by_model)
    n_judged = int(by_model["judged"].sum()) if len(by_model) else 0
    figures = {}
    if len(by_model):
        figures = {
            "accuracy.png": accuracy_figure(by_model),
            "rates.png": rates_figure(by_model, reject_rate),
            "heatmap.png": heatmap_figure(by_task, list(by_model["model"])),
        }
    for name, data in figures.items():
        write_bytes_atomic(out.join("figures", name), data)
    name = out.uri.rstrip("/").rpartition("/")[2] or out.uri
    facts = [
        f"judge {extractor}" if extractor.startswith("verifier:") else f"extractor {extractor}",
        f"comparator {comparator}",
        f"{len(by_model)} models",
        f"{n_judged} judged",
    ]
    page = render(
        f"xfinder-ray: {name}",
        facts,
        leaderboard_html(by_model, reject_rate, rank_ranges(out)) + no_answer_html(by_model),
        bool(figures),
        compare_to,
    )
    write_bytes_atomic(out.join("report.html"), page.encode())
