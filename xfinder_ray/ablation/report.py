"""report.html: one static page (no script, no server) with the headline tables and the figures,
referenced by relative path (figures/*.png next to it). Every value from the data is HTML-escaped:
model and task names come from untrusted input.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from xfinder_ray.ablation.compare import ALL_TASKS

_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
"""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3f}"
    return html.escape(str(value))


def html_table(df: pd.DataFrame, index: bool = False) -> str:
    if index:
        df = df.reset_index()
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in df.itertuples(index=False)
    )
    return f"<table><tr>{head}</tr>{body}</table>"


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
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if skipped:
        parts.append("<h2>Extractors skipped</h2><ul>")
        parts += [f"<li>{html.escape(s['extractor'])}: {html.escape(s['reason'])}</li>" for s in skipped]
        parts.append("</ul>")
    parts += [
        "<h2>Records per extractor</h2><p>input = judged + rejected for every extractor.</p>",
        html_table(counts),
        "<h2>Accuracy per extractor and comparator (micro, all judged records)</h2>",
        html_table(overall),
        f"<h2>Judgment agreement between extractors ({html.escape(primary)})</h2>",
        html_table(agreement, index=True),
    ]
    if labelled is not None and len(labelled):
        parts += [
            "<h2>Against the labels</h2><p>Extraction: the extracted key answer equals the gold key answer "
            "(math: or is equivalent to it). Judgment: the verdict equals the gold judgment.</p>",
            html_table(labelled),
        ]
    overall_tau = taus[(taus["task"] == ALL_TASKS) & (taus["comparator"] == primary)]
    parts += [
        f"<h2>Ranking agreement: Kendall &tau;-b over all tasks ({html.escape(primary)})</h2>",
        html_table(overall_tau.drop(columns=["task", "comparator"])),
        "<p>Per task and per comparator: comparison/kendall_tau.csv.</p>",
        f"<h2>Largest rank shifts ({html.escape(primary)})</h2>",
        html_table(flips[flips["comparator"] == primary].head(20)),
    ]
    if low_confidence is not None:
        shown = ["extractor", "record_id", "model", "task", "key_answer_type", "correct_answer"]
        shown += ["extracted", "raw_output", "logprob", "judgment"]
        parts += [
            "<h2>Least confident xFinder extractions</h2>",
            f"<p>review/low_confidence.parquet: per xFinder extractor the {low_confidence_limit} judged "
            "records with the lowest log-probability of the model's raw output, the text the key "
            "answer is parsed from (the sum over its tokens; 0 = certain), lowest first, with the "
            "response. review/review.parquet (the records the extractors disagree on) has each xFinder "
            "extractor's logprob too. Up to 10 per extractor:</p>",
            html_table(low_confidence.groupby("extractor", sort=False).head(10)[shown]),
        ]
    parts += [
        "<h2>Figures</h2>",
    ]
    for caption, path in figures.items():
        parts.append(
            f"<h3>{html.escape(caption)}</h3><img src='{html.escape(path, quote=True)}' alt='{html.escape(caption, quote=True)}'>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)
