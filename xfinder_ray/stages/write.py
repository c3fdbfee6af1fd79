"""write: judged and rejected rows -> `judgments/` and `rejects/` Parquet, in one pass.

Rows with a `reject_reason` go to rejects/ (the original fields + reason), the others to
judgments/. Each write task names its files by a hash of the record ids it holds, so a retried task
overwrites its own files instead of adding duplicates. Every file has a fixed schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from ray.data.block import BlockAccessor
from ray.data.datasource import Datasink

from xfinder_ray.records import FIELDS
from xfinder_ray.storage import Location

JUDGMENT_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("model", pa.string()),
        ("task", pa.string()),
        ("key_answer_type", pa.string()),
        ("correct_answer", pa.string()),
        ("extracted_answer", pa.string()),
        ("judgment", pa.bool_()),
        ("extractor", pa.string()),
        ("comparator", pa.string()),
        ("raw_output", pa.string()),
        ("truncated", pa.bool_()),
        ("prompt_tokens", pa.int64()),
    ]
)
REJECT_SCHEMA = pa.schema(
    [(f, pa.string()) for f in FIELDS] + [("reason", pa.string()), ("extractor", pa.string())]
)


def _table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    cols = {}
    for f in schema:
        values = df[f.name] if f.name in df else [None] * len(df)
        values = [None if (v is None or (isinstance(v, float) and v != v)) else v for v in values]
        if pa.types.is_integer(f.type):
            values = [None if v is None else int(v) for v in values]
        elif pa.types.is_boolean(f.type):
            values = [None if v is None else bool(v) for v in values]
        elif pa.types.is_string(f.type):
            values = [None if v is None else str(v) for v in values]
        cols[f.name] = pa.array(values, type=f.type)
    return pa.table(cols, schema=schema)


class OutputSink(Datasink):
    def __init__(self, judgments: Location, rejects: Location, extractor: str, comparator: str):
        self.judgments = judgments
        self.rejects = rejects
        self.extractor = extractor
        self.comparator = comparator

    def on_write_start(self, schema: Any = None) -> None:
        for loc in (self.judgments, self.rejects):
            loc.fs.create_dir(loc.path, recursive=True)

    def write(self, blocks: Iterable[Any], ctx: Any) -> dict[str, int]:
        frames = [BlockAccessor.for_block(b).to_pandas() for b in blocks]
        frames = [f for f in frames if len(f)]
        if not frames:
            return {"judged": 0, "rejected": 0}
        df = pd.concat(frames, ignore_index=True)
        key = hashlib.sha1("\0".join(map(str, df["record_id"])).encode()).hexdigest()[:20]
        rejected = df[df["reject_reason"].notna()].rename(columns={"reject_reason": "reason"})
        judged = df[df["reject_reason"].isna()]
        if len(judged):
            judged = judged.assign(extractor=self.extractor, comparator=self.comparator)
            self._write(_table(judged, JUDGMENT_SCHEMA), self.judgments, key)
        if len(rejected):
            self._write(_table(rejected.assign(extractor=self.extractor), REJECT_SCHEMA), self.rejects, key)
        return {"judged": len(judged), "rejected": len(rejected)}

    @staticmethod
    def _write(table: pa.Table, loc: Location, key: str) -> None:
        pq.write_table(table, f"{loc.path}/part-{key}.parquet", filesystem=loc.fs, compression="zstd")

    def on_write_complete(self, write_result: Any) -> None:
        returns = [r for r in write_result.write_returns if r]
        self.counts = {
            "judged": sum(r["judged"] for r in returns),
            "rejected": sum(r["rejected"] for r in returns),
        }
