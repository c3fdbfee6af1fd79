"""read: inventory shards -> rows with the canonical columns (strings or null), `reject_reason`,
and their position `source_file`, `source_row`.

A Ray Data datasource with one read task per shard (Parquet row group, JSONL file). Each task
reads only the columns the job needs, skips rows a previous attempt already wrote (resume), and
marks later duplicates of a record_id. Nothing that is in a file is dropped: a line that is not
JSON, a value of the wrong type, invalid UTF-8 or a row group that cannot be decoded all become
rows with a `reject_reason`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import ray
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from xfinder_ray.records import FIELD_ALIASES, FIELDS
from xfinder_ray.stages.inventory import (
    MAX_LINE_BYTES,
    BadInputFile,
    Inventory,
    Shard,
    jsonl_lines,
    read_jsonl_bytes,
)
from xfinder_ray.storage import is_transient

OUT_COLUMNS = (*FIELDS, "reject_reason", "source_file", "source_row")
BLOCK_ROWS = 8192
# Fields that may arrive as a list (the range) and are kept as JSON text; any other field must be scalar.
STRUCTURED_FIELDS = ("standard_answer_range",)


def _source_names(columns: dict[str, str]) -> dict[str, list[str]]:
    """For each canonical field, the source column names to look for, in order of preference."""
    names = {f: [columns[f]] if f in columns else [f] for f in FIELDS}
    for alias, canonical in FIELD_ALIASES.items():
        if canonical not in columns:
            names[canonical].append(alias)
    return names


def _as_text(field: str, value: Any) -> tuple[Any, str | None]:
    """(text or None, reason) for one source value."""
    if value is None or isinstance(value, str):
        return value, None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, bool):
        return None, f"field {field!r} must be a string, got bool"
    if isinstance(value, float) and value != value:  # NaN from pandas
        return None, None
    if isinstance(value, (list, tuple, dict)):
        if field in STRUCTURED_FIELDS:
            return json.dumps(value, ensure_ascii=False), None
        return None, f"field {field!r} must be a string, got {type(value).__name__}"
    if isinstance(value, bytes):
        return None, f"field {field!r} must be a string, got binary"
    return str(value), None


def canonical_rows(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    names = _source_names(columns)
    out: dict[str, list[Any]] = {c: [] for c in (*FIELDS, "reject_reason")}
    for row in rows:
        reason = row.get("reject_reason")
        for field in FIELDS:
            src = next((n for n in names[field] if n in row), None)
            value, problem = _as_text(field, row[src]) if src is not None else (None, None)
            if src is None and reason is None:
                reason = f"missing field {field!r}"
            reason = reason or problem
            out[field].append(value)
        out["reject_reason"].append(reason)
    # object columns: pandas' `str` dtype would turn None into NaN and mix types across batches.
    return pd.DataFrame(
        {k: pd.Series(v, dtype=object) for k, v in out.items()}, columns=[*FIELDS, "reject_reason"]
    )


def _parse_line(line: bytes) -> dict[str, Any]:
    if len(line) > MAX_LINE_BYTES:
        return {"reject_reason": f"line longer than {MAX_LINE_BYTES} bytes"}
    try:
        text = line.decode("utf-8").removeprefix("\ufeff")  # a byte order mark is not part of the record
    except UnicodeDecodeError as e:
        return {"reject_reason": f"line is not valid UTF-8 (byte {e.start})"}
    try:
        obj = json.loads(text, strict=False)  # control characters inside strings are just text
    except ValueError as e:
        return {"reject_reason": f"not valid JSON ({getattr(e, 'msg', e)})", "llm_output": text[:200]}
    if not isinstance(obj, dict):
        return {"reject_reason": f"expected a JSON object, got {type(obj).__name__}"}
    if "\\u" in text:  # an escaped lone surrogate is valid JSON but not text Arrow can hold
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return {"reject_reason": "line is not valid UTF-8 (an escaped lone surrogate)"}
    return obj


def _parquet_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of a row group; a string column with invalid UTF-8 is decoded value by value."""
    try:
        return table.to_pylist()
    except (UnicodeDecodeError, pa.ArrowException):
        pass
    rows: list[dict[str, Any]] = [{} for _ in range(table.num_rows)]
    for name in table.column_names:
        col = table.column(name)
        try:
            values = col.to_pylist()
        except (UnicodeDecodeError, pa.ArrowException):
            values = []
            for raw in col.cast(pa.binary()).to_pylist():
                try:
                    values.append(None if raw is None else raw.decode("utf-8"))
                except UnicodeDecodeError:
                    values.append(_BadText(name))
        for row, value in zip(rows, values, strict=True):
            if isinstance(value, _BadText):
                row.setdefault("reject_reason", f"field {name!r} is not valid UTF-8")
                value = None
            row[name] = value
    return rows


class _BadText:
    def __init__(self, name: str):
        self.name = name


def read_shard(
    shard: Shard,
    columns: dict[str, str],
    skip_rows: np.ndarray,
    duplicates: dict[int, str],
    on_bad_file: str,
) -> Iterator[pd.DataFrame]:
    """Canonical rows of one shard, without `skip_rows` (already written by an earlier attempt)."""
    f = shard.file
    try:
        if f.fmt == "parquet":
            wanted = {n for ns in _source_names(columns).values() for n in ns}
            present = [n for n in f.columns if n in wanted]
            table = pq.ParquetFile(f.fs.open_input_file(f.path)).read_row_group(
                shard.row_group, columns=present
            )
            row_numbers = np.arange(shard.start, shard.stop, dtype=np.int64)
            # Python objects only for one block at a time: a row group can hold millions of rows.
            rows_of = lambda lo, hi: _parquet_rows(table.slice(lo, hi - lo))  # noqa: E731
        else:
            numbered = jsonl_lines(read_jsonl_bytes(f.fs, f.path))
            row_numbers = np.array([i for i, _ in numbered], dtype=np.int64)
            rows_of = lambda lo, hi: [_parse_line(line) for _, line in numbered[lo:hi]]  # noqa: E731
    except Exception as e:
        if is_transient(e):  # a storage outage is not a bad file: let the task retry
            raise
        if on_bad_file == "fail":
            raise BadInputFile(
                f"cannot read {f.uri} (row group {shard.row_group}): {type(e).__name__}: {e}"
            ) from e
        # on_bad_file=skip: the rows are known from the footer, so each becomes a reject, never a gap.
        reason = f"unreadable: row group {shard.row_group} of {f.uri} ({type(e).__name__}: {str(e)[:300]})"
        row_numbers = np.arange(shard.start, shard.stop, dtype=np.int64)
        rows_of = lambda lo, hi: [{"reject_reason": reason} for _ in range(lo, hi)]  # noqa: E731
    keep = ~np.isin(row_numbers, skip_rows) if len(skip_rows) else np.ones(len(row_numbers), dtype=bool)
    for begin in range(0, len(row_numbers), BLOCK_ROWS):
        end = min(begin + BLOCK_ROWS, len(row_numbers))
        if not keep[begin:end].any():
            continue
        block = rows_of(begin, end)
        idx = [i for i in range(begin, end) if keep[i]]
        picked = [block[i - begin] for i in idx]
        for i, row in zip(idx, picked, strict=True):
            dup = duplicates.get(int(row_numbers[i]))
            if dup and not row.get("reject_reason"):
                row["reject_reason"] = dup
        df = canonical_rows(picked, columns)
        df["source_file"] = f.uri
        df["source_row"] = row_numbers[idx]
        yield df


# Question grouping (model path): at most this many aligned shards, and rows, in one read task. Each
# member holds its row group in memory while the task runs.
GROUP_MAX_FILES = 16
GROUP_MAX_ROWS = 262_144


def read_grouped(members: list[tuple[Any, ...]]) -> Iterator[pd.DataFrame]:
    """Shards at the same position of different files, read in step: their i-th blocks are merged and
    sorted by question, so the answers of several models to one question leave the task together.

    Files of per-model results usually follow one dataset order, so the same position holds the same
    questions; where they do not, the rows come out in another order, never different rows.
    """
    streams = [read_shard(*m) for m in members]
    while streams:
        blocks, alive = [], []
        for stream in streams:
            block = next(stream, None)
            if block is not None:
                blocks.append(block)
                alive.append(stream)
        streams = alive
        if blocks:
            merged = pd.concat(blocks, ignore_index=True)
            # Questions may be null on rejected rows: sort those last, as strings they cannot be compared.
            order = merged["question"].map(lambda q: (0, q) if isinstance(q, str) else (1, ""))
            yield merged.iloc[order.sort_values(kind="stable").index].reset_index(drop=True)


def aligned_groups(
    pending: list[tuple[Shard, np.ndarray]], max_files: int = GROUP_MAX_FILES, max_rows: int = GROUP_MAX_ROWS
) -> list[list[tuple[Shard, np.ndarray]]]:
    """Pending shards grouped by position in their file (row group index and row range; a JSONL file by
    its line count), at most `max_files` shards and `max_rows` rows a group, in input order."""
    by_position: dict[tuple[Any, ...], list[tuple[Shard, np.ndarray]]] = {}
    for shard, done in pending:
        by_position.setdefault((shard.file.fmt, shard.row_group, shard.start, shard.stop), []).append(
            (shard, done)
        )
    groups = []
    for members in by_position.values():
        rows = max(1, members[0][0].stop - members[0][0].start)
        size = max(1, min(max_files, max_rows // rows))
        groups.extend(members[i : i + size] for i in range(0, len(members), size))
    return groups


class InputSource(Datasource):
    def __init__(
        self,
        inventory: Inventory,
        columns: dict[str, str],
        done: dict[str, np.ndarray],
        on_bad_file: str,
        group_by_question: bool = False,
    ):
        self.inventory = inventory
        self.columns = columns
        self.done = done
        self.on_bad_file = on_bad_file
        # Model path: read aligned shards of different files together, rows sorted by question (vLLM's
        # prefix cache then serves each question once for all models' answers to it).
        self.group_by_question = group_by_question

    def estimate_inmemory_data_size(self) -> int | None:
        return None

    def pending_shards(self) -> list[tuple[Shard, np.ndarray]]:
        """Shards with rows still to do, with the rows of each that are already done."""
        out = []
        for shard in self.inventory.shards():
            done = self.done.get(shard.file.uri, np.empty(0, dtype=np.int64))
            if shard.file.fmt == "parquet":
                lo, hi = np.searchsorted(done, [shard.start, shard.stop])
                done = done[lo:hi]
            if len(done) < shard.stop - shard.start:
                out.append((shard, done))
        return out

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        tasks = []
        for group in self.task_groups():
            members = [self.shard_args(shard, done) for shard, done in group]
            meta = BlockMetadata(
                num_rows=sum(shard.stop - shard.start - len(done) for shard, done in group),
                size_bytes=None,
                input_files=[shard.file.uri for shard, _ in group],
                exec_stats=None,
            )
            if len(members) == 1:
                read = lambda a=members[0]: read_shard(*a)  # noqa: E731
            else:
                read = lambda m=members: read_grouped(m)  # noqa: E731
            tasks.append(ReadTask(read, meta, per_task_row_limit=per_task_row_limit))
        return tasks

    def task_groups(self) -> list[list[tuple[Shard, np.ndarray]]]:
        """The shards each read task reads: one each, or aligned groups when grouping by question."""
        pending = self.pending_shards()
        return aligned_groups(pending) if self.group_by_question else [[p] for p in pending]

    def shard_args(self, shard: Shard, done: np.ndarray) -> tuple[Any, ...]:
        """read_shard's arguments for one shard: its done rows and its duplicate-id rejects."""
        dups = {
            r: reason
            for r, reason in self.inventory.duplicates.get(shard.file.uri, {}).items()
            if shard.file.fmt == "jsonl" or shard.start <= r < shard.stop
        }
        return (shard, self.columns, done, dups, self.on_bad_file)


def read_input(source: InputSource) -> ray.data.Dataset | None:
    """The rows still to do, or None when every row is already written."""
    tasks = len(source.task_groups())
    if not tasks:
        return None
    # One block stream per task: Ray's default would split each task's output into tiny blocks.
    return ray.data.read_datasource(source, override_num_blocks=tasks)


def read_stats(df: pd.DataFrame) -> dict[str, int]:
    """Rows read, and those rejected while reading (unreadable lines, duplicates...)."""
    by = df["rejected_by"] if "rejected_by" in df else pd.Series(None, index=df.index)
    return {"rows": len(df), "rejected": int((df["reject_reason"].notna() & by.isna()).sum())}
