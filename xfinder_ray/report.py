"""report.html: the scoring job's one short page, sorted by rank, with its figures (figures/*.png).

- the ranked models with rank (ties as `1=`), rank interval and ≈, as accuracy/ranks.parquet and
  leaderboard.md have them, then the models scored on fewer tasks, apart and unranked; rejects without
  a model are counted in the facts line, never drawn or ranked;
- accuracy per model with its Wilson 95% interval (micro; macro marked), rank 1 at the top;
- the model x task heatmap, rows in rank order;
- the no-valid-answer and reject rates per model (record- and response-caused apart), the share of
  verdicts at each of `rules`' confidence tiers, and the no valid answers by reason (tables);
- the job's notes (a fallback to `rules`, conflicting gold answers, folders left out);
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

from xfinder_ray.diff import accuracy_table, with_ranking  # noqa: E402
from xfinder_ray.stages.aggregate import (  # noqa: E402
    NO_ANSWER_PREFIX,
    TIER_PREFIX,
    TIERS,
    UNKNOWN,
    Comparison,
    close_to_above,
    no_answer_by_model,
    rank_label,
    tied,
    tiers_by_model,
)
from xfinder_ray.storage import Location, write_bytes_atomic  # noqa: E402

FIGURES = {
    "accuracy.png": "Accuracy per model (micro, Wilson 95% interval; ◇ macro)",
    "rates.png": "No valid answer and rejected, per model",
    "heatmap.png": "Accuracy per model and task (rows by rank)",
}
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; max-width: 1100px; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 7px; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; } td.m, th.m { text-align: left; }
.row { display: flex; flex-wrap: wrap; gap: 1em; } figure { margin: 0; }
img { max-width: 100%; border: 1px solid #ddd; } figcaption { font-size: 0.8em; color: #555; }
p.note { background: #fff6e0; border-left: 4px solid #e0a000; padding: 4px 8px; font-size: 0.9em; }
"""


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _labels(models: pd.DataFrame) -> list[str]:
    """Figure row labels: `1. m`, `1= m` for a shared rank, `– m` for a model not ranked."""
    if "rank_shown" not in models:  # a bare table: its row order is its rank order
        return [f"{i}. {m}" for i, m in enumerate(models["model"], 1)]
    return [
        f"– {m}" if shown == "–" else (f"{shown} {m}" if shown.endswith("=") else f"{shown}. {m}")
        for m, shown in zip(models["model"], models["rank_shown"], strict=True)
    ]


def accuracy_figure(by_model: pd.DataFrame) -> bytes:
    n = len(by_model)
    fig, ax = plt.subplots(figsize=(5.2, 0.3 * n + 1.2))
    ys = np.arange(n)
    acc = by_model["accuracy_micro"].to_numpy(float)
    err = np.vstack([acc - by_model["ci95_low"].to_numpy(float), by_model["ci95_high"].to_numpy(float) - acc])
    ax.errorbar(acc, ys, xerr=err, fmt="o", color="tab:blue", capsize=3, label="micro (95% CI)")
    # on top of the micro dot and larger, so it shows where macro = micro
    macro = by_model["accuracy_macro"].to_numpy(float)
    ax.plot(macro, ys, "D", color="tab:orange", mfc="none", ms=9, mew=1.5, zorder=3, label="macro")
    ax.set_yticks(ys, _labels(by_model), fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)  # rank 1 at the top
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _png(fig)


def rates_figure(by_model: pd.DataFrame, rates: pd.DataFrame) -> bytes:
    """No valid answer (of judged) beside the rejects (of input), response-caused (the model's output)
    apart from record-caused (the data's fault) where the tables split them."""
    n = len(by_model)
    fig, ax = plt.subplots(figsize=(4.0, 0.3 * n + 1.2))
    ys = np.arange(n)
    nva = by_model["no_valid_answer_rate"].to_numpy(float)
    rates = rates.reindex(by_model["model"]).fillna(0.0)
    bars = [(nva, "tab:gray", "no valid answer (of judged)")]
    colours = {"response": "tab:red", "record": "tab:olive", "rejected": "tab:red"}
    for c in rates.columns:
        bars.append((rates[c].to_numpy(float), colours[c], REJECT_LABELS[c] + " (of input)"))
    height = 0.8 / len(bars)
    for i, (values, colour, label) in enumerate(bars):
        ax.barh(ys - 0.4 + height * (i + 0.5), values, height=height, color=colour, label=label)
    ax.set_yticks(ys, _labels(by_model), fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)
    top = np.nanmax(np.concatenate([b[0] for b in bars] + [[0.0]]))
    ax.set_xlim(0, max(0.05, float(top) * 1.15))
    ax.set_xlabel("share")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _png(fig)


def heatmap_table(by_task: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """What the heatmap draws: accuracy, rows `models` in their order, tasks sorted; no (unknown)
    column (rejects without a task are counted in the tables, never scored)."""
    scored = by_task[(by_task["task"] != UNKNOWN) & by_task["model"].isin(models["model"])]
    table = scored.pivot(index="model", columns="task", values="accuracy").reindex(index=models["model"])
    return table.reindex(columns=sorted(table.columns))


def heatmap_figure(by_task: pd.DataFrame, models: pd.DataFrame) -> bytes:
    """Models (rows, in the order and with the labels of `models`) x tasks."""
    table = heatmap_table(by_task, models)
    data = table.to_numpy(float)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.75 * data.shape[1] + 2.5), 0.3 * data.shape[0] + 1.6))
    im = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(data.shape[1]), [str(c) for c in table.columns], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(data.shape[0]), _labels(models), fontsize=8)
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


def bump_points(models: pd.DataFrame) -> pd.DataFrame:
    """What the bump chart draws: model, rank_old, rank_new for the models ranked in either run (a
    rank is null where the model was not ranked in that run: a point, no line); (unknown) never."""
    ranks = models.loc[models["model"] != UNKNOWN, ["model", "rank_old", "rank_new"]]
    ranks = ranks.astype({"rank_old": float, "rank_new": float})  # a missing rank: NaN
    return ranks[ranks[["rank_old", "rank_new"]].notna().any(axis=1)].reset_index(drop=True)


def bump_chart(models: pd.DataFrame, old_label: str, new_label: str) -> bytes | None:
    """Rank in the old run -> rank in the new one (bump_points), rank 1 at the top; a line only for a
    model ranked in both; models sharing a rank are labelled one under the other. None when neither
    run has a ranked model."""
    ranks = bump_points(models)
    if not len(ranks):
        return None
    n = int(np.nanmax(ranks[["rank_old", "rank_new"]].to_numpy(float)))
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * max(n, len(ranks)) + 1.4))
    cmap = plt.get_cmap("tab20")
    stacked: dict[tuple[int, float], int] = {}  # labels already at (side, rank): tied models
    for i, r in enumerate(ranks.itertuples()):
        ax.plot([0, 1], [r.rank_old, r.rank_new], "-o", color=cmap(i % 20), linewidth=2)
        for x, y, ha, dx in ((0, r.rank_old, "right", -8), (1, r.rank_new, "left", 8)):
            if y == y:
                k = stacked.get((x, y), 0)
                stacked[(x, y)] = k + 1
                ax.annotate(
                    str(r.model),
                    (x, y),
                    xytext=(dx, -10 * k),
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


REJECT_LABELS = {"response": "rejected, response", "record": "rejected, record", "rejected": "rejected"}


def reject_rates(by_model: pd.DataFrame) -> pd.DataFrame:
    """Per model (index), rejected / input: response-caused (the model's output: counted as wrong) and
    record-caused (the input's own fields) apart where the tables split them, else one `rejected`."""
    inputs = by_model["input"].where(by_model["input"] > 0)
    if {"rejected_response", "rejected_record"} <= set(by_model.columns):
        rates = {
            "response": by_model["rejected_response"] / inputs,
            "record": by_model["rejected_record"] / inputs,
        }
    else:
        rates = {"rejected": by_model["rejected"] / inputs}
    return pd.DataFrame(rates).set_axis(by_model["model"])


def _cell(v: Any, pct: bool = False) -> str:
    if isinstance(v, float):
        return "" if v != v else (f"{100 * v:.1f}" if pct else f"{v:.3f}")
    return html.escape(str(v))


def ranked_rows(out: Location, by_model: pd.DataFrame, comparison: Comparison | None = None) -> pd.DataFrame:
    """by_model without (unknown), ranked as its leaderboard (diff.with_ranking), with rank_low and
    rank_high, rank_shown (`1`, `1=`, `–`) and close (≈: aggregate.close_to_above); ranked models first,
    by rank, then the rest by macro accuracy. The ranks and pairs are the job's `comparison`, or else
    what it wrote: accuracy/ranks.parquet and accuracy/pairwise.parquet."""
    if comparison is not None:
        ranks, pairwise = comparison.ranks, comparison.pairwise
    else:
        ranks, pairwise = accuracy_table(out, "ranks"), accuracy_table(out, "pairwise")
    df = with_ranking(by_model, ranks, interval=True)
    macro = df["accuracy_macro"].astype(float).fillna(-1.0)
    df = df.assign(_r=~df["ranked"], _m=-macro).sort_values(["_r", "rank", "_m", "model"], kind="stable")
    df = df.drop(columns=["_r", "_m"]).reset_index(drop=True)
    shared = df["model"].isin(tied(df))
    df["rank_shown"] = [
        rank_label(r if k else None, t) for r, k, t in zip(df["rank"], df["ranked"], shared, strict=True)
    ]
    close = np.zeros(len(df), bool)
    ranked = df["ranked"].to_numpy(bool)
    close[ranked] = close_to_above(list(df.loc[ranked, "model"]), pairwise)
    df["close"] = close
    return df


def _interval(r: Any) -> str:
    if r.rank_low is None or pd.isna(r.rank_low):
        return "–"
    return f"{int(r.rank_low)}–{int(r.rank_high)}"


def leaderboard_html(rows: pd.DataFrame, rates: pd.DataFrame) -> str:
    """The ranked models' table (rank, rank 95%, ≈), then "Scored on fewer tasks", unranked."""
    tail = ["model", "macro %", "micro % (95% CI)", "judged", "coverage", "no valid answer %"]
    tail += [REJECT_LABELS[c] + " %" for c in rates.columns]

    n_tasks = 0  # tasks scored for any model: tasks / coverage of a model that has some
    if {"tasks", "coverage"} <= set(rows.columns) and (rows["coverage"] > 0).any():
        some = rows[rows["coverage"] > 0].iloc[0]
        n_tasks = round(some["tasks"] / some["coverage"])

    def cells(r: Any) -> list[str]:
        micro = f"{_cell(r.accuracy_micro, True)} ({_cell(r.ci95_low, True)}–{_cell(r.ci95_high, True)})"
        cover = f"{r.tasks}/{n_tasks}" if n_tasks else ""
        out = [_cell(r.model), _cell(r.accuracy_macro, True), micro, _cell(r.judged), cover]
        out.append(_cell(r.no_valid_answer_rate, True))
        return out + [_cell(float(rates[c].get(r.model, float("nan"))), True) for c in rates.columns]

    ranked, fewer = rows[rows["ranked"]], rows[~rows["ranked"]]
    parts = []
    if len(ranked):
        head = ["rank", "rank 95%", "vs. above", *tail]
        body = [[r.rank_shown, _interval(r), "≈" if r.close else "", *cells(r)] for r in ranked.itertuples()]
        parts.append(_html_table(head, body))
    elif n_tasks:
        parts.append(f"<p>No model was scored on all {n_tasks} tasks, so none is ranked.</p>")
    else:
        parts.append("<p>No records were scored, so no model is ranked (see rejects/).</p>")
    if len(fewer):
        parts.append(
            "<h2>Scored on fewer tasks</h2><p>Not ranked: their macro accuracy is over fewer tasks than "
            "the ranked models', so it is not comparable.</p>"
        )
        parts.append(_html_table(tail, [cells(r) for r in fewer.itertuples()]))
    notes = (
        "Coverage: tasks scored of those any model has. ≈: not significantly apart from the model above "
        "(exact McNemar, Holm)."
    )
    if rows["rank_shown"].astype(str).str.endswith("=").any():
        notes += " A rank with = is shared (the same macro accuracy)."
    return "".join(parts) + f"<p style='font-size:0.8em;color:#555'>{html.escape(notes)}</p>"


def _html_table(head: list[str], body: list[list[str]]) -> str:
    heads = "".join(f"<th class='m'>{h}</th>" if h == "model" else f"<th>{h}</th>" for h in head)
    trs = [
        "<tr>" + "".join(_td(c, h == "model") for c, h in zip(cells, head, strict=True)) + "</tr>"
        for cells in body
    ]
    return f"<table><tr>{heads}</tr>" + "".join(trs) + "</table>"


def tiers_html(by_model: pd.DataFrame) -> str:
    """The share of each model's verdicts `rules` read at each confidence tier; "" without tiers."""
    rows = tiers_by_model(by_model)
    if not rows:
        return ""
    body = [[_cell(m), str(judged), *(_cell(shares[t], True) for t in TIERS)] for m, judged, shares in rows]
    return (
        "<h2>Rules' confidence</h2><p>Share of each model's judged records whose answer the model-free "
        "<code>rules</code> read at each tier (<code>confidence</code> in judgments/); an unsure answer "
        "is a guess: check those first.</p>"
        + _html_table(["model", "judged", *(f"{t} %" for t in TIERS)], body)
    )


def guess_note(by_model: pd.DataFrame, extractor: str) -> str:
    """With `rules` as the extractor: one line with the share of all judged verdicts it was unsure of."""
    col = TIER_PREFIX + "unsure"
    if not extractor.startswith("rules:") or col not in by_model or not by_model["judged"].sum():
        return ""
    judged = int(by_model["judged"].sum())
    unsure = int(round(float((by_model[col].fillna(0) * by_model["judged"]).sum())))
    return (
        f"Answers read by the model-free rules extractor ({extractor}), not by xFinder: {unsure} of "
        f"{judged} verdicts ({100 * unsure / judged:.1f}%) are unsure, a guess (per model below)."
    )


def no_answer_html(by_model: pd.DataFrame) -> str:
    """The no valid answers per model by reason (% of its judged records; only the reasons that
    occur), rank order; "" when no model has one."""
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


def render(
    title: str,
    facts: list[str],
    board: str,
    figures: bool,
    compare_to: str | None,
    notes: list[str] | None = None,
) -> str:
    fig = "<figure><img src='figures/{0}' alt='{1}'><figcaption>{1}</figcaption></figure>"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>{' · '.join(html.escape(f) for f in facts)}</p>",
        *(f"<p class='note'>{html.escape(n)}</p>" for n in notes or []),
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
    notes: list[str] | None = None,
    comparison: Comparison | None = None,
) -> None:
    """<out>/report.html and <out>/figures/*.png, in the leaderboard's ranking: the job's `comparison`
    (else accuracy/ranks.parquet and pairwise.parquet, written before it by write_tables); `notes`: the
    job's notes, shown at the top (a fallback to `rules`, conflicting gold answers)."""
    rows = ranked_rows(out, by_model, comparison)  # (unknown) left out: its rejects are in the facts line
    drawn = rows[rows["accuracy_micro"].notna()].reset_index(drop=True)
    rates = reject_rates(rows)
    figures = {}
    if len(drawn):
        figures = {
            "accuracy.png": accuracy_figure(drawn),
            "rates.png": rates_figure(drawn, rates),
            "heatmap.png": heatmap_figure(by_task, drawn),
        }
    for name, data in figures.items():
        write_bytes_atomic(out.join("figures", name), data)
    name = out.uri.rstrip("/").rpartition("/")[2] or out.uri
    facts = [
        f"judge {extractor}" if extractor.startswith("verifier:") else f"extractor {extractor}",
        f"comparator {comparator}",
        f"{len(rows)} models ({int(rows['ranked'].sum())} ranked)",
        f"{int(rows['judged'].sum()) if len(rows) else 0} judged",
    ]
    unattributed = by_model.loc[by_model["model"] == UNKNOWN, "rejected"]
    if len(unattributed) and int(unattributed.sum()):
        facts.append(f"{int(unattributed.sum())} rejected without a readable model (rejects/)")
    shown = [n for n in [*(notes or []), guess_note(rows, extractor)] if n]
    board = leaderboard_html(rows, rates) + tiers_html(rows) + no_answer_html(rows)
    page = render(f"xfinder-ray: {name}", facts, board, bool(figures), compare_to, shown)
    write_bytes_atomic(out.join("report.html"), page.encode())
