"""write: judged and rejected rows -> `judgments/` and `rejects/` Parquet, in one pass.

Rows with a `reject_reason` go to rejects/ (the original fields + reason), the others to
judgments/; new model extractions also go to the extraction cache. Each write task names its files
by a hash of the row positions it holds, so a retried task overwrites its own files instead of adding
duplicates, and each file appears whole or not at all (temp file + rename locally; one PUT on S3):
the written part files are the job's checkpoint. Every file has a fixed schema.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from ray.data.block import BlockAccessor
from ray.data.datasource import Datasink

from xfinder_ray.records import FIELDS
from xfinder_ray.stages.aggregate import question_keys
from xfinder_ray.stages.cache import flag
from xfinder_ray.storage import Location

# Schema declarations: JUDGMENT_SCHEMA and REJECT_SCHEMA share their shape and a few fields, not logic.
JUDGMENT_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("model", pa.string()),
        ("task", pa.string()),
        ("question_key", pa.string()),  # the item: sha256(task \0 question)[:16], pairs models' answers
        ("key_answer_type", pa.string()),
        ("correct_answer", pa.string()),
        ("extracted_answer", pa.string()),
        ("judgment", pa.bool_()),
        ("extractor", pa.string()),
        ("comparator", pa.string()),
        ("confidence", pa.string()),  # rules: certain | likely | unsure; model extractions: null
        # null for an answer; for [No valid answer] one of rules.NO_ANSWER_REASONS (docs/rules.md)
        ("no_answer_reason", pa.string()),
        ("raw_output", pa.string()),
        ("truncated", pa.bool_()),
        ("prompt_tokens", pa.int64()),
        ("cache_hit", pa.bool_()),
        ("source_file", pa.string()),
        ("source_row", pa.int64()),
        # a verifier judge's verdict: the log-probability of its output (the verdict tokens); else null
        ("verdict_logprob", pa.float64()),
        # second_opinion (stages/second_opinion.py): rules' judgment of each row a model judged; on a
        # disagreement, the first model's judgment, the second judge's verdict, identity and output
        ("rules_judgment", pa.bool_()),
        ("first_judgment", pa.bool_()),
        ("second_judgment", pa.bool_()),
        ("second_judge", pa.string()),
        ("second_raw_output", pa.string()),
    ]
)
REJECT_SCHEMA = pa.schema(
    [(f, pa.string()) for f in FIELDS]
    + [
        ("reason", pa.string()),
        ("stage", pa.string()),  # the stage that rejected the record: read | validate | judge
        ("extractor", pa.string()),
        ("source_file", pa.string()),
        ("source_row", pa.int64()),
    ]
)


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    cols = {}
    for f in schema:
        values = df[f.name] if f.name in df else [None] * len(df)
        values = [None if _missing(v) else v for v in values]
        if pa.types.is_integer(f.type):
            values = [None if v is None else int(v) for v in values]
        elif pa.types.is_boolean(f.type):
            values = [None if v is None else bool(v) for v in values]
        elif pa.types.is_string(f.type):
            values = [None if v is None else str(v) for v in values]
        cols[f.name] = pa.array(values, type=f.type)
    return pa.table(cols, schema=schema)


COUNTERS = ("judged", "rejected", "cache_hits", "cache_misses", "routed")
StageStats = Callable[[pd.DataFrame], dict[str, int]]


class OutputSink(Datasink):
    def __init__(
        self,
        judgments: Location,
        rejects: Location,
        extractor: str,
        comparator: str,
        cache: Location | None = None,
        stage_stats: dict[str, StageStats] | None = None,
    ):
        self.judgments = judgments
        self.rejects = rejects
        self.cache = cache
        self.extractor = extractor
        self.comparator = comparator
        # Each stage's counts over the rows written (stages/rows.py); summed into `stage_counts`.
        self.stage_stats = dict(stage_stats or {})
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.stage_counts: dict[str, dict[str, int]] = {}

    def on_write_start(self, schema: Any = None) -> None:
        for loc in (self.judgments, self.rejects, self.cache):
            if loc is not None:
                loc.fs.create_dir(loc.path, recursive=True)

    def write(self, blocks: Iterable[Any], ctx: Any) -> dict[str, int]:
        frames = [BlockAccessor.for_block(b).to_pandas() for b in blocks]
        frames = [f for f in frames if len(f)]
        if not frames:
            return dict.fromkeys(COUNTERS, 0)
        df = pd.concat(frames, ignore_index=True)
        stages = {name: stats(df) for name, stats in self.stage_stats.items()}
        key = position_key(df["source_file"], df["source_row"])
        is_reject = pd.Series([isinstance(r, str) for r in df["reject_reason"]], index=df.index)
        rejected = df[is_reject].rename(columns={"reject_reason": "reason"})
        by = rejected["rejected_by"] if "rejected_by" in rejected else pd.Series(None, index=rejected.index)
        rejected = rejected.assign(stage=by.where(by.notna(), "read"))
        judged = df[~is_reject]
        hits = misses = routed = 0
        if "cache_hit" in df:  # every row looked up, judged or not (a verifier's non-verdict is cached too)
            hits = int(flag(df["cache_hit"], True).sum())
            misses = int(flag(df["cache_hit"], False).sum())
        if "routed" in judged:
            routed = int(flag(judged["routed"], True).sum())
        # Cache first: a row counts as done once its judgment file exists, and then its extraction
        # must already be reusable.
        if self.cache is not None and "cache_key" in df:
            from xfinder_ray.stages.cache import new_entries

            entries = new_entries(df)
            if entries.num_rows:
                write_parquet_atomic(entries, self.cache, key)
        if len(judged):
            # Rows settled by the router carry their own extractor; every other row has the job's.
            own = judged["extractor"] if "extractor" in judged else pd.Series(None, index=judged.index)
            judged = judged.assign(
                extractor=own.where(own.notna(), self.extractor),
                comparator=self.comparator,
                question_key=question_keys(judged["task"], judged["question"]),
            )
            write_parquet_atomic(_table(judged, JUDGMENT_SCHEMA), self.judgments, key)
        if len(rejected):
            write_parquet_atomic(
                _table(rejected.assign(extractor=self.extractor), REJECT_SCHEMA), self.rejects, key
            )
        return {
            "judged": len(judged),
            "rejected": len(rejected),
            "cache_hits": hits,
            "cache_misses": misses,
            "routed": routed,
            "stages": stages,
        }

    def on_write_complete(self, write_result: Any) -> None:
        returns = [r for r in write_result.write_returns if r]
        self.counts = {c: sum(r[c] for r in returns) for c in COUNTERS}
        totals: dict[str, dict[str, int]] = {}
        for r in returns:
            for stage, counts in r.get("stages", {}).items():
                into = totals.setdefault(stage, {})
                for k, v in counts.items():
                    into[k] = into.get(k, 0) + int(v)
        self.stage_counts = totals


def position_key(source_files: Iterable[Any], source_rows: Iterable[Any]) -> str:
    """A file name key from the row positions a write task holds: a retried task overwrites its own
    files instead of adding duplicates."""
    positions = "\0".join(f"{f}\0{r}" for f, r in zip(source_files, source_rows, strict=True))
    return hashlib.sha1(positions.encode("utf-8", "surrogatepass")).hexdigest()[:24]


class PartsSink(Datasink):
    """Blocks -> `part-<position key>.parquet` files in one folder, each whole or absent, with a fixed
    schema: a checkpoint that resume.written_positions can read (the ablation's records/)."""

    def __init__(self, folder: Location, schema: pa.Schema):
        self.folder = folder
        self.schema = schema

    def on_write_start(self, schema: Any = None) -> None:
        self.folder.fs.create_dir(self.folder.path, recursive=True)

    def write(self, blocks: Iterable[Any], ctx: Any) -> int:
        tables = [BlockAccessor.for_block(b).to_arrow() for b in blocks]
        tables = [t.select(self.schema.names).cast(self.schema) for t in tables if t.num_rows]
        if not tables:
            return 0
        table = pa.concat_tables(tables)
        key = position_key(table["source_file"].to_pylist(), table["source_row"].to_pylist())
        write_parquet_atomic(table, self.folder, key)
        return table.num_rows


def write_parquet_atomic(table: pa.Table, loc: Location, key: str) -> None:
    """Write `part-<key>.parquet` so that it exists whole or not at all."""
    final = f"{loc.path}/part-{key}.parquet"
    if isinstance(loc.fs, pafs.LocalFileSystem):
        tmp = f"{loc.path}/.part-{key}.parquet.tmp-{os.getpid()}-{threading.get_ident()}"
        pq.write_table(table, tmp, filesystem=loc.fs, compression="zstd")
        os.replace(tmp, final)
    else:  # S3: an object becomes visible only when its (multipart) upload completes
        pq.write_table(table, final, filesystem=loc.fs, compression="zstd")
