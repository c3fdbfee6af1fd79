"""read + labels: the scoring job's read stage (stages/read.py), with the label columns of a
labelled input (gold_key_answer, gold_judgment, tags) attached to each row.

read_shard keeps only the canonical fields, so each read task also reads the label columns of its
own shard: for Parquet a column projection of the same row group (no other column is read twice);
for JSONL the file's lines are parsed a second time in the same task (labelled sets are small).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
from ray.data.block import BlockMetadata
from ray.data.datasource import ReadTask

from xfinder_ray.stages.inventory import Inventory, Shard, jsonl_lines, read_jsonl_bytes
from xfinder_ray.stages.read import InputSource, read_shard

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
            for number, line in jsonl_lines(read_jsonl_bytes(f.fs, f.path)):
                try:
                    obj = json.loads(line.decode("utf-8").removeprefix("\ufeff"), strict=False)
                except ValueError:  # the read stage rejects this row; it has no labels
                    continue
                if isinstance(obj, dict) and any(k in obj for k in LABELS):
                    out[number] = _label_values(obj)
    except Exception:  # noqa: BLE001 - an unreadable shard is read_shard's to report (reject or fail)
        return {}
    return out


def read_labelled_shard(
    shard: Shard,
    columns: dict[str, str],
    skip_rows: Any,
    duplicates: dict[int, str],
    on_bad_file: str,
) -> Iterator[pd.DataFrame]:
    labels = shard_labels(shard)
    none = (None, None, None)
    for df in read_shard(shard, columns, skip_rows, duplicates, on_bad_file):
        values = [labels.get(int(r), none) for r in df["source_row"]]
        for i, name in enumerate(LABELS):
            df[name] = pd.Series([v[i] for v in values], dtype=object, index=df.index)
        yield df


class LabelledSource(InputSource):
    """InputSource whose rows carry the label columns (null where the input has none)."""

    def __init__(self, inventory: Inventory, columns: dict[str, str], on_bad_file: str):
        super().__init__(inventory, columns, {}, on_bad_file)  # an ablation never resumes: nothing is done

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        tasks = []
        for shard, done in self.pending_shards():
            dups = {
                r: reason
                for r, reason in self.inventory.duplicates.get(shard.file.uri, {}).items()
                if shard.file.fmt == "jsonl" or shard.start <= r < shard.stop
            }
            args = (shard, self.columns, done, dups, self.on_bad_file)
            meta = BlockMetadata(
                num_rows=shard.stop - shard.start,
                size_bytes=None,
                input_files=[shard.file.uri],
                exec_stats=None,
            )
            tasks.append(
                ReadTask(lambda a=args: read_labelled_shard(*a), meta, per_task_row_limit=per_task_row_limit)
            )
        return tasks


def has_labels(inventory: Inventory) -> bool:
    """Whether any input file may carry labels (Parquet: a label column; JSONL: unknown until read)."""
    return any(
        f.fmt == "jsonl" or any(c in f.columns for c in LABELS) for f in inventory.files if f.error is None
    )
