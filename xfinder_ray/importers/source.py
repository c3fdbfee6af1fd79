"""The framework's own accuracy next to ours, over the same records.

The job's judgments keep each record's input position (source_file, source_row); the imported
records.parquet keeps the framework's verdict (`source_judgment`) at that position. Joining the two
gives, per (model, task), how many judged records carry a framework verdict and how many of those the
framework counted correct: an apples-to-apples comparison (rejected records are in neither).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from xfinder_ray.storage import Location, resolve, uri_of

SOURCE_COLUMNS = ["source_n", "source_correct", "source_accuracy"]


def _verdicts(uri: str, storage: Any) -> np.ndarray:
    """Per row of an imported file: 1 correct, 0 wrong, -1 no verdict."""
    loc = resolve(uri, storage)
    pf = pq.ParquetFile(loc.fs.open_input_file(loc.path))
    if "source_judgment" not in pf.schema_arrow.names:
        return np.full(pf.metadata.num_rows, -1, dtype=np.int8)
    values = pf.read(columns=["source_judgment"]).column(0).to_pylist()
    return np.array([-1 if v is None else int(bool(v)) for v in values], dtype=np.int8)


def source_accuracy(judgments: Location | str, imported: Sequence[str], storage: Any = None) -> pd.DataFrame:
    """model, task, source_n (judged records with a framework verdict), source_correct, source_accuracy."""
    loc = judgments if isinstance(judgments, Location) else resolve(judgments, storage)
    by_file = {}
    for uri in imported:
        arr = _verdicts(uri, storage)
        r = resolve(uri, storage)
        # the job writes source_file as storage.uri_of names it: the path for local files, else scheme://key
        by_file[uri_of(r, r.path)] = arr
        by_file[uri] = arr
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    files = [
        f.path
        for f in loc.fs.get_file_info(pa.fs.FileSelector(loc.path, allow_not_found=True))
        if f.path.endswith(".parquet")
    ]
    if files:
        dataset = pads.dataset(files, format="parquet", filesystem=loc.fs)
        for batch in dataset.to_batches(columns=["model", "task", "source_file", "source_row"]):
            cols = batch.to_pydict()
            for model, task, src, row in zip(
                cols["model"], cols["task"], cols["source_file"], cols["source_row"], strict=True
            ):
                arr = by_file.get(src)
                if arr is None or row is None or not 0 <= row < len(arr) or arr[row] < 0:
                    continue
                acc = counts[(model, task)]
                acc[0] += 1
                acc[1] += int(arr[row])
    rows = [
        dict(model=m, task=t, source_n=n, source_correct=c, source_accuracy=c / n if n else float("nan"))
        for (m, t), (n, c) in sorted(counts.items())
    ]
    return pd.DataFrame(rows, columns=["model", "task", *SOURCE_COLUMNS])


def add_source_accuracy(
    by_task: pd.DataFrame, by_model: pd.DataFrame, source: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The job's tables with the framework's accuracy beside ours: by_task gets source_n,
    source_correct, source_accuracy; by_model gets source_n, source_correct, source_accuracy_micro,
    source_accuracy_macro (over the tasks that have framework verdicts)."""
    task = by_task.merge(source, on=["model", "task"], how="left")
    task["source_n"] = task["source_n"].fillna(0).astype("int64")
    task["source_correct"] = task["source_correct"].fillna(0).astype("int64")
    model_rows = []
    for model, g in task.groupby("model", sort=False):
        n, c = int(g["source_n"].sum()), int(g["source_correct"].sum())
        with_verdicts = g[g["source_n"] > 0]
        model_rows.append(
            dict(
                model=model,
                source_n=n,
                source_correct=c,
                source_accuracy_micro=c / n if n else float("nan"),
                source_accuracy_macro=float(with_verdicts["source_accuracy"].mean())
                if len(with_verdicts)
                else float("nan"),
            )
        )
    extra = pd.DataFrame(
        model_rows,
        columns=["model", "source_n", "source_correct", "source_accuracy_micro", "source_accuracy_macro"],
    )
    model = by_model.merge(extra, on="model", how="left")
    return task, model
