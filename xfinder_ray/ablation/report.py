"""report.html: one short static page (no script, no server) with the headline tables and the figures,
referenced by relative path (figures/*.png next to it). Every value from the data is HTML-escaped:
model and task names come from untrusted input.

The page fits 1,280 px: one row per extractor (comparators as columns, not one row per pair), matrices
for agreement and Kendall tau, the largest rank shifts only, free text wrapped, and the per-extractor
heatmaps two to a row. Extractors keep the configured order everywhere; models are in rank order in the
heatmaps. The full tables are comparison/*.csv.
"""

from __future__ import annotations

import html
import math
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from xfinder_ray.ablation.compare import ALL_TASKS

SHIFTS_SHOWN = 10  # rows of "Largest rank shifts" on the page; all of them: comparison/rank_flips.csv

_STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.4em 0 1.2em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; overflow-wrap: anywhere; }
th { background: #f0f0f0; font-weight: 600; }
td.t, th.t { text-align: left; min-width: 7em; } td.x { text-align: left; max-width: 28em; font-size: 0.9em; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0.8em 1.2em; }
figure { margin: 0.5em 0; } figcaption { font-size: 0.85em; color: #444; }
img { max-width: 100%; border: 1px solid #ddd; } img.wide { max-width: min(100%, 1000px); }
p.note { font-size: 0.85em; color: #444; max-width: 60em; }
"""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3f}"
    return html.escape(str(value))


def _pct(value: Any) -> str:
    """A share as a percentage with one decimal; "–" where there is none (NaN, None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * float(value):.1f}"


def _name(value: Any) -> str:
    """An extractor, model or task name, escaped, with a line-break chance after each `:` and `/`
    (`opencompass:<wbr>first_capital`), so a narrow column breaks it there first."""
    return html.escape(str(value)).replace(":", ":<wbr>").replace("/", "/<wbr>")


def _rank(value: float) -> str:
    """A rank as written: 3, or 2.5 where two models tie for 2nd and 3rd (the average rank)."""
    return f"{value:g}"


def _row(cells: list[str], text_cols: int = 1) -> str:
    """One <tr>; the first `text_cols` cells are names (left-aligned); cells are already escaped."""
    return (
        "<tr>"
        + "".join(f"<td{' class=t' if i < text_cols else ''}>{c}</td>" for i, c in enumerate(cells))
        + "</tr>"
    )


def _head(names: list[str], text_cols: int = 1) -> str:
    return (
        "<tr>"
        + "".join(f"<th{' class=t' if i < text_cols else ''}>{_name(n)}</th>" for i, n in enumerate(names))
        + "</tr>"
    )


def extractor_table(counts: pd.DataFrame, overall: pd.DataFrame, primary: str) -> str:
    """One row per extractor (configured order): judged, rejected, extraction errors and the micro
    accuracy under each comparator, the primary one first."""
    comparators = [primary] + [c for c in dict.fromkeys(overall["comparator"]) if c != primary]
    acc = overall.pivot(index="extractor", columns="comparator", values="accuracy")
    head = ["extractor", "judged", "rejected", "extraction errors"]
    head += [f"{c} %" + (" (primary)" if c == primary else "") for c in comparators]
    rows = []
    for r in counts.itertuples(index=False):
        cells = [_name(r.extractor), str(r.judged), str(r.rejected), str(r.extraction_errors)]
        cells += [_pct(acc.at[r.extractor, c]) if r.extractor in acc.index else "–" for c in comparators]
        rows.append(_row(cells))
    return f"<table>{_head(head)}{''.join(rows)}</table>"


def labelled_table(labelled: pd.DataFrame, extractors: list[str]) -> str:
    """Against the labels, one row per extractor: extraction and judgment accuracy (%) overall and per
    key_answer_type, two columns per group under the group's name and n."""
    groups = list(dict.fromkeys(labelled["group"]))
    top = "<tr><th class=t rowspan=2>extractor</th>"
    for g in groups:
        n = labelled.loc[labelled["group"] == g, "n"]
        size = f"n={int(n.iloc[0])}" if n.nunique() == 1 else f"n={int(n.min())}–{int(n.max())}"
        top += f"<th colspan=2>{_name(g)}, % ({size})</th>"
    sub = "<tr>" + "<th>extraction</th><th>judgment</th>" * len(groups) + "</tr>"
    by = labelled.set_index(["extractor", "group"])
    rows = []
    for e in [e for e in extractors if e in set(labelled["extractor"])]:
        cells = [_name(e)]
        for g in groups:
            hit = (e, g) in by.index
            cells += [_pct(by.at[(e, g), "extraction_accuracy"]) if hit else "–"]
            cells += [_pct(by.at[(e, g), "judgment_accuracy"]) if hit else "–"]
        rows.append(_row(cells))
    return f"<table>{top}</tr>{sub}{''.join(rows)}</table>"


def _shade(value: float) -> str:
    """A cell background from white (0) to blue (1), so a matrix reads like a heatmap without a figure."""
    if math.isnan(value):
        return ""
    v = max(0.0, min(1.0, value))
    return f" style='background:rgb({round(255 - 130 * v)},{round(255 - 70 * v)},255)'"


def matrix_table(matrix: pd.DataFrame, fmt: Any, corner: str) -> str:
    """A square extractor x extractor table, shaded by value; the diagonal left empty (always 1)."""
    head = _head([corner, *[str(c) for c in matrix.columns]])
    rows = []
    for a, values in matrix.iterrows():
        cells = [f"<td class=t>{_name(a)}</td>"]
        for b, v in values.items():
            v = float(v) if v is not None else math.nan
            text = "" if a == b or math.isnan(v) else fmt(v)
            cells.append(f"<td{_shade(v) if a != b else ''}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def tau_matrix(taus: pd.DataFrame, primary: str, extractors: list[str]) -> tuple[pd.DataFrame, int]:
    """Kendall tau-b over all tasks between every two extractors (symmetric), and the models compared."""
    sub = taus[(taus["task"] == ALL_TASKS) & (taus["comparator"] == primary)]
    names = [e for e in extractors if e in set(sub["extractor_a"]) | set(sub["extractor_b"])]
    matrix = pd.DataFrame(math.nan, index=names, columns=names)
    for r in sub.itertuples(index=False):
        matrix.at[r.extractor_a, r.extractor_b] = matrix.at[r.extractor_b, r.extractor_a] = r.tau_b
    return matrix, int(sub["n_models"].max()) if len(sub) else 0


def shifts_table(flips: pd.DataFrame, primary: str, limit: int = SHIFTS_SHOWN) -> str:
    """The largest rank shifts: rank (accuracy %) under each of the two extractors; ranks as ranks
    (2.5 = a tie for 2nd and 3rd), not as floats."""
    head = ["task", "model", "extractor A", "rank A (acc. %)", "extractor B", "rank B (acc. %)", "shift"]
    rows = []
    for r in flips[flips["comparator"] == primary].head(limit).itertuples(index=False):
        cells = [_name(x) for x in (r.task, r.model, r.extractor_a)]
        cells.append(f"{_rank(r.rank_a)} ({_pct(r.accuracy_a)})")
        cells.append(_name(r.extractor_b))
        cells += [f"{_rank(r.rank_b)} ({_pct(r.accuracy_b)})", f"{r.shift:+g}"]
        rows.append(_row(cells, text_cols=3))
    return f"<table>{_head(head, text_cols=3)}{''.join(rows)}</table>"


def low_confidence_html(low: pd.DataFrame, limit: int) -> str:
    shown = ["extractor", "record_id", "model", "task", "key_answer_type", "correct_answer"]
    shown += ["extracted", "raw_output", "logprob", "judgment"]
    free_text = {"correct_answer", "extracted", "raw_output"}  # wrapped in a narrow column
    table = low.groupby("extractor", sort=False).head(10)[shown]
    rows = []
    for r in table.itertuples(index=False):
        cells = [
            f"<td{' class=x' if c in free_text else ''}>{_cell(v)}</td>"
            for c, v in zip(shown, r, strict=True)
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<h2>Least confident xFinder extractions</h2>"
        f"<p class=note>review/low_confidence.parquet: per xFinder extractor the {limit} judged records with "
        "the lowest log-probability of the model's raw output, the text the key answer is parsed from (the "
        "sum over its tokens; 0 = certain), lowest first, with the response. review/review.parquet (the "
        "records the extractors disagree on) has each xFinder extractor's logprob too. Up to 10 per "
        f"extractor:</p><table>{_head(shown)}{''.join(rows)}</table>"
    )


def figures_html(figures: dict[str, str]) -> str:
    """The per-extractor figures (accuracy heatmaps, log-probability histograms) two to a row, the
    others (the bump chart) full width; the agreement figure is the shaded table above, linked there."""
    wide, grid = [], []
    for caption, path in figures.items():
        name = PurePosixPath(path).name
        if name == "agreement.png":
            continue
        src, alt = html.escape(path, quote=True), html.escape(caption, quote=True)
        in_grid = name.startswith(("accuracy__", "logprob__"))
        img = f"<img src='{src}' alt='{alt}'" + ("" if in_grid else " class=wide") + ">"
        (grid if in_grid else wide).append(
            f"<figure>{img}<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    parts = ["<h2>Figures</h2>", *wide]
    if grid:
        parts.append(
            "<p class=note>Accuracy per model and task under each extractor (%): rows in that extractor's "
            "rank order (macro accuracy over the model's tasks; 2= is a tie), tasks alphabetical.</p>"
        )
        parts.append(f"<div class=grid>{''.join(grid)}</div>")
    return "\n".join(parts)


def render(
    *,
    title: str,
    counts: pd.DataFrame,
    overall: pd.DataFrame,
    agreement: pd.DataFrame,
    taus: pd.DataFrame,
    flips: pd.DataFrame,
    labelled: pd.DataFrame | None,
    figures: dict[str, str],
    primary: str,
    skipped: list[dict[str, str]] | None = None,
    low_confidence: pd.DataFrame | None = None,
    low_confidence_limit: int = 0,
) -> str:
    """The page. `figures` maps a caption to a relative PNG path; `skipped` lists the xFinder
    extractors not run (model not on disk); `low_confidence` is review/low_confidence (xFinder only)."""
    p = html.escape(primary)
    extractors = [str(e) for e in counts["extractor"]]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class=note>Primary comparator: {p} (agreement, ranks, figures). Extractors in the configured "
        "order; every table in full in comparison/*.csv.</p>",
    ]
    if skipped:
        parts.append("<h2>Extractors skipped</h2><ul>")
        parts += [f"<li>{html.escape(s['extractor'])}: {html.escape(s['reason'])}</li>" for s in skipped]
        parts.append("</ul>")
    parts += [
        "<h2>Accuracy per extractor</h2><p class=note>Micro accuracy over all judged records, per "
        "comparator; input = judged + rejected for every extractor.</p>",
        extractor_table(counts, overall, primary),
    ]
    if labelled is not None and len(labelled):
        parts += [
            "<h2>Against the labels</h2><p class=note>Extraction: the extracted key answer equals the gold "
            "key answer (math: or is equivalent to it). Judgment: the verdict equals the gold judgment. "
            "Per tag: comparison/labelled_accuracy.csv.</p>",
            labelled_table(labelled, extractors),
        ]
    tau, n_models = tau_matrix(taus, primary, extractors)
    link = next((path for path in figures.values() if PurePosixPath(path).name == "agreement.png"), None)
    parts += [
        f"<h2>Judgment agreement between extractors ({p})</h2><p class=note>The share of records two "
        "extractors judge alike (%)"
        + (f"; as a figure: <a href='{html.escape(link)}'>{html.escape(link)}</a>" if link else "")
        + ".</p>",
        matrix_table(agreement, lambda v: f"{100 * v:.1f}", "extractor"),
        f"<h2>Ranking agreement: Kendall &tau;-b over all tasks ({p})</h2><p class=note>Between the model "
        f"rankings of two extractors ({n_models} models; 1 = the same order). Per task and comparator: "
        "comparison/kendall_tau.csv.</p>",
        matrix_table(tau, lambda v: f"{v:.2f}", "extractor"),
        f"<h2>Largest rank shifts ({p})</h2><p class=note>The {SHIFTS_SHOWN} largest moves of a model's rank "
        "between two extractors, per task and over all tasks; all of them: comparison/rank_flips.csv.</p>",
        shifts_table(flips, primary),
    ]
    if low_confidence is not None:
        parts.append(low_confidence_html(low_confidence, low_confidence_limit))
    parts += [figures_html(figures), "</body></html>"]
    return "\n".join(parts)
