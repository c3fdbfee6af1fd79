"""read: inventory shards -> rows with the canonical columns (strings or null), `reject_reason`,
and their position `source_file`, `source_row`.

A Ray Data datasource with one read task per shard (Parquet row group, JSONL line range). Each task
reads only the columns the job needs (a JSONL shard: only its bytes, a block at a time), skips rows a
previous attempt already wrote (resume), and marks later duplicates of a record_id. Nothing that is in a
file is dropped: a line that is not JSON, a value of the wrong type, invalid UTF-8 or a row group that
cannot be decoded all become rows with a `reject_reason`. A JSONL line over MAX_LINE_BYTES is never
parsed: its record_id, model, task... are read from its head (head_fields), so the reject is the model's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
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
    HEAD_BYTES,
    MAX_LINE_BYTES,
    BadInputFile,
    Inventory,
    Shard,
    iter_shard_lines,
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


# `"key": "text"` or `"key": number` after `{` or `,`: a string value's own quotes are escaped, so the
# pattern cannot start inside one. A string's characters are one-way alternatives (plain or escaped, one
# at a time), so a value cut off by the head's end fails in linear time (Python 3.10 has no possessive
# quantifiers).
_HEAD_PAIR = re.compile(r'[{,]\s*"([^"\\]{1,64})"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def head_fields(head: bytes) -> dict[str, Any]:
    """The string and number fields whose whole value is in a line's head (the first occurrence of
    each key), read without parsing the line: a line too long to parse still names its record_id,
    model and task when they come before the long field. A nested object's key may be taken for a
    top-level one; values are only used to attribute a reject."""
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    found: dict[str, Any] = {}
    for m in _HEAD_PAIR.finditer(text):
        if m.group(1) not in found:
            try:
                found[m.group(1)] = json.loads(m.group(2))
            except ValueError:
                continue
    return found


def _parse_line(line: bytes, length: int | None = None) -> dict[str, Any]:
    """One JSONL line as a record, or a `reject_reason`. `length`: the line's length in bytes when
    `line` is only its head (inventory.iter_lines keeps the head of a line over MAX_LINE_BYTES)."""
    if (len(line) if length is None else length) > MAX_LINE_BYTES:
        # Response-caused (stages/aggregate.py): counted against the model named in the head.
        return {**head_fields(line[:HEAD_BYTES]), "reject_reason": f"line longer than {MAX_LINE_BYTES} bytes"}
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


# A block of a shard: its rows' numbers, and what gives the raw rows at some of its indexes (Python
# objects only for one block at a time: a row group can hold millions of rows).
Block = tuple[np.ndarray, Callable[[list[int]], list[dict[str, Any]]]]


def _parquet_blocks(shard: Shard, columns: dict[str, str]) -> Iterator[Block]:
    f = shard.file
    wanted = {n for ns in _source_names(columns).values() for n in ns}
    present = [n for n in f.columns if n in wanted]
    table = pq.ParquetFile(f.fs.open_input_file(f.path)).read_row_group(shard.row_group, columns=present)
    # Row counts from the footer: a table of no columns (none of the job's) has no length of its own.
    for lo in range(0, shard.rows, BLOCK_ROWS):
        hi = min(lo + BLOCK_ROWS, shard.rows)
        numbers = np.arange(shard.start + lo, shard.start + hi, dtype=np.int64)
        part = table.slice(lo, hi - lo)
        yield numbers, lambda idx, t=part: [rows[i] for rows in [_parquet_rows(t)] for i in idx]


def _jsonl_block(lines: list[tuple[int, bytes, int]]) -> Block:
    numbers = np.array([n for n, _, _ in lines], dtype=np.int64)
    return numbers, lambda idx: [_parse_line(lines[i][1], lines[i][2]) for i in idx]


def _jsonl_blocks(shard: Shard) -> Iterator[Block]:
    lines: list[tuple[int, bytes, int]] = []
    for line in iter_shard_lines(shard):
        lines.append(line)
        if len(lines) == BLOCK_ROWS:
            yield _jsonl_block(lines)
            lines = []
    if lines:
        yield _jsonl_block(lines)


def _blocks(shard: Shard, columns: dict[str, str], on_bad_file: str) -> Iterator[Block]:
    """The shard's blocks; what cannot be read fails the job (on_bad_file=fail) or becomes rejects."""
    f = shard.file
    n_read, last = 0, shard.start - 1
    try:
        for numbers, rows_of in (
            _parquet_blocks(shard, columns) if f.fmt == "parquet" else _jsonl_blocks(shard)
        ):
            yield numbers, rows_of
            n_read, last = n_read + len(numbers), int(numbers[-1])
    except Exception as e:
        if is_transient(e):  # a storage outage is not a bad file: let the task retry
            raise
        where = (
            f"row group {shard.row_group}" if f.fmt == "parquet" else f"lines {shard.start}-{shard.stop - 1}"
        )
        if on_bad_file == "fail":
            raise BadInputFile(f"cannot read {f.uri} ({where}): {type(e).__name__}: {e}") from e
        # on_bad_file=skip: the inventory counted the rows, so each one not read becomes a reject, never a
        # gap. Their numbers follow the last row read (a JSONL shard's rows are a subset of its lines).
        reason = f"unreadable: {where} of {f.uri} ({type(e).__name__}: {str(e)[:300]})"
        numbers = np.arange(last + 1, last + 1 + shard.rows - n_read, dtype=np.int64)
        for lo in range(0, len(numbers), BLOCK_ROWS):
            yield numbers[lo : lo + BLOCK_ROWS], lambda idx: [{"reject_reason": reason} for _ in idx]


def read_shard(
    shard: Shard,
    columns: dict[str, str],
    skip_rows: np.ndarray,
    duplicates: dict[int, str],
    on_bad_file: str,
) -> Iterator[pd.DataFrame]:
    """Canonical rows of one shard, without `skip_rows` (already written by an earlier attempt)."""
    for numbers, rows_of in _blocks(shard, columns, on_bad_file):
        keep = np.nonzero(~np.isin(numbers, skip_rows))[0] if len(skip_rows) else np.arange(len(numbers))
        if not len(keep):
            continue
        picked = rows_of(keep.tolist())
        for number, row in zip(numbers[keep].tolist(), picked, strict=True):
            dup = duplicates.get(number)
            if dup and not row.get("reject_reason"):
                row["reject_reason"] = dup
        df = canonical_rows(picked, columns)
        df["source_file"] = shard.file.uri
        df["source_row"] = numbers[keep]
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
    """Pending shards grouped by position in their file (row group index and row range; JSONL: line
    range), at most `max_files` shards and `max_rows` rows a group, in input order."""
    by_position: dict[tuple[Any, ...], list[tuple[Shard, np.ndarray]]] = {}
    for shard, done in pending:
        by_position.setdefault((shard.file.fmt, shard.row_group, shard.start, shard.stop), []).append(
            (shard, done)
        )
    groups = []
    for members in by_position.values():
        rows = max(1, members[0][0].rows)
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
            lo, hi = np.searchsorted(done, [shard.start, shard.stop])
            done = done[lo:hi]
            if len(done) < shard.rows:
                out.append((shard, done))
        return out

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        tasks = []
        for group in self.task_groups():
            members = [self.shard_args(shard, done) for shard, done in group]
            meta = BlockMetadata(
                num_rows=sum(shard.rows - len(done) for shard, done in group),
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
            if shard.start <= r < shard.stop
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
