"""aggregate: a pass over written judgments/ -> accuracy tables and the leaderboard.

Streams the four needed columns batch by batch (memory stays flat however many judgments there
are) and keeps only per (model, task) counters.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from xfinder_ray.records import NO_VALID_ANSWER
from xfinder_ray.storage import Location, write_bytes_atomic

Z95 = 1.959963984540054


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (sound at 0%, 100% and small n)."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def count_judgments(judgments: Location) -> dict[tuple[str, str], list[int]]:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # n, correct, no_valid
    files = [
        f.path
        for f in judgments.fs.get_file_info(pa.fs.FileSelector(judgments.path, allow_not_found=True))
        if f.path.endswith(".parquet")
    ]
    if not files:
        return {}
    dataset = pads.dataset(files, format="parquet", filesystem=judgments.fs)
    for batch in dataset.to_batches(columns=["model", "task", "judgment", "extracted_answer"]):
        table = pa.Table.from_batches([batch])
        nva = pa.compute.equal(table["extracted_answer"], NO_VALID_ANSWER)
        table = table.append_column("nva", nva)
        grouped = table.group_by(["model", "task"]).aggregate(
            [("judgment", "count"), ("judgment", "sum"), ("nva", "sum")]
        )
        for m, t, n, c, v in zip(
            *(grouped[c].to_pylist() for c in ("model", "task", "judgment_count", "judgment_sum", "nva_sum")),
            strict=True,
        ):
            acc = counts[(m, t)]
            acc[0] += n
            acc[1] += c or 0
            acc[2] += v or 0
    return dict(counts)


def build_tables(counts: dict[tuple[str, str], list[int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = []
    for (model, task), (n, correct, nva) in sorted(counts.items()):
        lo, hi = wilson(correct, n)
        rows.append(
            dict(
                model=model,
                task=task,
                n=n,
                correct=correct,
                accuracy=correct / n if n else float("nan"),
                no_valid_answer_rate=nva / n if n else float("nan"),
                ci95_low=lo,
                ci95_high=hi,
            )
        )
    cols = ["model", "task", "n", "correct", "accuracy", "no_valid_answer_rate", "ci95_low", "ci95_high"]
    by_task = pd.DataFrame(rows, columns=cols)
    model_rows = []
    for model, g in by_task.groupby("model", sort=True):
        n, correct = int(g["n"].sum()), int(g["correct"].sum())
        nva = float((g["no_valid_answer_rate"] * g["n"]).sum())
        lo, hi = wilson(correct, n)
        model_rows.append(
            dict(
                model=model,
                tasks=len(g),
                n=n,
                correct=correct,
                accuracy_micro=correct / n,
                accuracy_macro=float(g["accuracy"].mean()),
                no_valid_answer_rate=nva / n,
                ci95_low=lo,
                ci95_high=hi,
            )
        )
    by_model = pd.DataFrame(
        model_rows,
        columns=[
            "model",
            "tasks",
            "n",
            "correct",
            "accuracy_micro",
            "accuracy_macro",
            "no_valid_answer_rate",
            "ci95_low",
            "ci95_high",
        ],
    )
    by_model = by_model.sort_values(["accuracy_macro", "model"], ascending=[False, True]).reset_index(
        drop=True
    )
    return by_task, by_model


def leaderboard_markdown(by_task: pd.DataFrame, by_model: pd.DataFrame, extractor: str) -> str:
    tasks = sorted(by_task["task"].unique())
    acc = {(r.model, r.task): r.accuracy for r in by_task.itertuples()}
    # imported runs (input.format lm-eval | opencompass): the framework's own accuracy in parentheses
    src = {}
    if "source_accuracy" in by_task:
        src = {(r.model, r.task): r.source_accuracy for r in by_task.itertuples() if r.source_n > 0}
    fw = "source_accuracy_macro" in by_model
    head = ["rank", "model", "macro", *(["framework macro"] if fw else []), "micro (95% CI)", *tasks]
    note = " Per task: ours (the framework's own)." if src else ""
    lines = [
        f"# Leaderboard\n\nExtractor: `{extractor}`. Accuracy in %; macro = mean over tasks.{note}\n",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]

    def cell(key: tuple[str, str]) -> str:
        if key not in acc:
            return "–"
        return f"{100 * acc[key]:.1f}" + (f" ({100 * src[key]:.1f})" if key in src else "")

    for i, r in enumerate(by_model.itertuples(), 1):
        cells = [str(i), r.model, f"{100 * r.accuracy_macro:.1f}"]
        if fw:
            cells.append(
                "–"
                if r.source_accuracy_macro != r.source_accuracy_macro
                else f"{100 * r.source_accuracy_macro:.1f}"
            )
        cells.append(f"{100 * r.accuracy_micro:.1f} ({100 * r.ci95_low:.1f}–{100 * r.ci95_high:.1f})")
        cells += [cell((r.model, t)) for t in tasks]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_table(loc: Location, name: str, df: pd.DataFrame, csv: bool = True) -> None:
    """A small driver-side table: <loc>/<name>.parquet (and .csv), each written whole (local: temp +
    rename; S3: one PUT)."""
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf)
    write_bytes_atomic(loc.join(f"{name}.parquet"), buf.getvalue())
    if csv:
        write_bytes_atomic(loc.join(f"{name}.csv"), df.to_csv(index=False).encode())


def write_tables(accuracy: Location, by_task: pd.DataFrame, by_model: pd.DataFrame, extractor: str) -> str:
    accuracy.fs.create_dir(accuracy.path, recursive=True)
    for name, df in (("by_model_task", by_task), ("by_model", by_model)):
        write_table(accuracy, name, df)
    board = leaderboard_markdown(by_task, by_model, extractor)
    write_bytes_atomic(accuracy.join("leaderboard.md"), board.encode())
    return board
