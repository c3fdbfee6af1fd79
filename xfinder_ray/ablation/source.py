"""read + labels: the scoring job's read stage (stages/read.py), with the label columns of a
labelled input (gold_key_answer, gold_judgment, tags) attached to each row.

read_shard keeps only the canonical fields, so each of the read stage's tasks is wrapped to also
read the label columns of its own shard: for Parquet a column projection of the same row group (no
other column is read twice); for JSONL the shard's lines are parsed a second time in the same task
(labelled sets are small).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from ray.data.datasource import ReadTask

from xfinder_ray.stages.inventory import Inventory, Shard, iter_shard_lines
from xfinder_ray.stages.read import InputSource

LABELS = ("gold_key_answer", "gold_judgment", "tags")


def _label_values(obj: dict[str, Any]) -> tuple[str | None, bool | None, str | None]:
    """(gold_key_answer, gold_judgment, tags as JSON text) from one raw row; odd types become null."""
    gold = obj.get("gold_key_answer")
    gold = gold if isinstance(gold, str) else None
    verdict = obj.get("gold_judgment")
    if isinstance(verdict, str) and verdict.strip().lower() in ("true", "false"):
        verdict = verdict.strip().lower() == "true"
    verdict = bool(verdict) if isinstance(verdict, bool) else None
    tags = obj.get("tags")
    if hasattr(tags, "tolist"):
        tags = tags.tolist()
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    # JSON text, not a list column: blocks with and without tags then share one Arrow type.
    tags = json.dumps([str(t) for t in tags], ensure_ascii=False) if isinstance(tags, (list, tuple)) else None
    return gold, verdict, tags


def shard_labels(shard: Shard) -> dict[int, tuple[str | None, bool | None, str | None]]:
    """{row number: labels} for one shard; empty when the file has no label column or cannot be read."""
    f = shard.file
    out: dict[int, tuple[str | None, bool | None, str | None]] = {}
    try:
        if f.fmt == "parquet":
            present = [c for c in LABELS if c in f.columns]
            if not present:
                return out
            table = pq.ParquetFile(f.fs.open_input_file(f.path)).read_row_group(
                shard.row_group, columns=present
            )
            for i, row in enumerate(table.to_pylist()):
                out[shard.start + i] = _label_values(row)
        else:
            for number, line, _ in iter_shard_lines(shard):  # an over-long line is a reject: no labels
                try:
                    obj = json.loads(line.decode("utf-8").removeprefix("\ufeff"), strict=False)
                except ValueError:  # the read stage rejects this row; it has no labels
                    continue
                if isinstance(obj, dict) and any(k in obj for k in LABELS):
                    out[number] = _label_values(obj)
    except Exception:  # noqa: BLE001 - an unreadable shard is read_shard's to report (reject or fail)
        return {}
    return out


def with_labels(shard: Shard, blocks: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The read stage's blocks of one shard, each with the label columns of its rows."""
    labels = shard_labels(shard)
    none = (None, None, None)
    for df in blocks:
        values = [labels.get(int(r), none) for r in df["source_row"]]
        for i, name in enumerate(LABELS):
            df[name] = pd.Series([v[i] for v in values], dtype=object, index=df.index)
        yield df


class LabelledSource(InputSource):
    """InputSource whose rows carry the label columns (null where the input has none).

    Its read tasks are the read stage's own (InputSource.get_read_tasks: one per pending shard, in
    pending_shards() order, as this source never groups shards), each wrapped to attach the labels of
    its shard; a count mismatch fails loudly (zip strict) rather than mislabel rows."""

    def __init__(
        self,
        inventory: Inventory,
        columns: dict[str, str],
        on_bad_file: str,
        done: dict[str, np.ndarray] | None = None,
    ):
        # `done`: the rows an unfinished run of the same ablation already wrote (resume).
        super().__init__(inventory, columns, done or {}, on_bad_file)

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        tasks = super().get_read_tasks(parallelism, per_task_row_limit, data_context)
        shards = [shard for shard, _ in self.pending_shards()]
        return [
            ReadTask(lambda s=shard, t=task: with_labels(s, iter(t())), task.metadata)
            for shard, task in zip(shards, tasks, strict=True)
        ]


def has_labels(inventory: Inventory) -> bool:
    """Whether any input file may carry labels (Parquet: a label column; JSONL: unknown until read)."""
    return any(
        f.fmt == "jsonl" or any(c in f.columns for c in LABELS) for f in inventory.files if f.error is None
    )
