"""Imported samples -> job-input Parquet (`records.parquet`) + `_import/rejects.parquet` + `_import/report.json`.

The framework readers (lm_eval.py, opencompass.py) yield `Sample`s and `Skipped` counts; this module
maps each sample through the task map, validates it exactly as the job will (records.check), and
writes it or rejects it with the reason. Nothing is dropped silently:
`read = written + rejected + skipped`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from xfinder_ray import records
from xfinder_ray.importers.formats import READERS, Reader
from xfinder_ray.importers.task_map import (
    Entry,
    TaskMap,
    TaskMapSource,
    Unrecoverable,
    load_task_map,
    recover,
)
from xfinder_ray.records import KEY_ANSWER_TYPES
from xfinder_ray.storage import Location, exists, list_files, resolve, write_json_atomic

log = logging.getLogger("xfinder_ray")
F = TypeVar("F")

RECORDS_FILE = "records.parquet"
META_DIR = "_import"  # `_`-prefixed: the job's input listing skips it, so DIR can be the job input as is
REJECTS_FILE = "rejects.parquet"
REPORT_FILE = "report.json"
ROW_GROUP_ROWS = 2048  # the job reads one task per row group: small groups spread a small import
MAX_ID_CHARS = records.MAX_FIELD_CHARS["record_id"]

SOURCE_COLUMNS = (
    ("source_judgment", pa.bool_()),  # the framework's own verdict; null when it has none per sample
    ("source_framework", pa.string()),  # lm-eval | opencompass
    ("source_metric", pa.string()),  # where the verdict came from, e.g. exact_match/strict-match
    ("source_task", pa.string()),  # the framework's task / dataset name, as written by it
    ("source_path", pa.string()),  # the framework's file
    ("source_index", pa.string()),  # doc_id (lm-eval) / prediction key (OpenCompass)
)
RECORD_SCHEMA = pa.schema([(f, pa.string()) for f in records.FIELDS] + list(SOURCE_COLUMNS))
REJECT_SCHEMA = pa.schema(
    [(f, pa.string()) for f in records.FIELDS]
    + [("reason", pa.string())]
    + [c for c in SOURCE_COLUMNS if c[0] != "source_judgment"]
)


@dataclass
class Sample:
    """One framework sample, before the task map. `problem` set: it is rejected with that reason."""

    framework: str
    path: str
    index: str
    model: str | None
    task: str | None
    prompt: str | None = None  # the question as the model saw it, few-shot examples removed
    response: str | None = None
    target: Any = None  # the framework's reference answer, raw
    doc: Mapping[str, Any] | None = None  # the dataset document, where the framework keeps it
    verdict: bool | None = None
    metric: str | None = None
    problem: str | None = None
    # The reader's own inference from the sample's structure (lettered choices -> alphabet_option),
    # used only when no task-map entry matches the task: an entry always overrides it.
    key_answer_type: str | None = None


@dataclass
class Found(Generic[F]):
    """What a reader's find_files found: its files (each with a `uri`), and notes on what it left out.
    (OpenCompass's reader groups its files by dataset and declares its own.)"""

    files: list[F]
    notes: list[str] = field(default_factory=list)

    @property
    def uris(self) -> list[str]:
        return [f.uri for f in self.files]

    @classmethod
    def unique(cls, files: list[F], notes: list[str], *, sort: bool = True) -> Found[F]:
        """`files` with a file named twice (by two of the paths given) kept once, sorted by uri."""
        seen: set[str] = set()
        kept = [f for f in files if not (f.uri in seen or seen.add(f.uri))]
        return cls(sorted(kept, key=lambda f: f.uri) if sort else kept, notes)


@dataclass
class Skipped:
    """Samples that have no response text to re-score (log-likelihood / perplexity scoring)."""

    framework: str
    path: str
    model: str | None
    task: str | None
    n: int
    reason: str


@dataclass
class ImportReport:
    framework: str
    output: str
    records: str
    rejects: str
    read: int = 0
    written: int = 0
    rejected: int = 0
    skipped: int = 0
    files: list[str] = field(default_factory=list)
    skipped_tasks: list[dict[str, Any]] = field(default_factory=list)
    reject_reasons: dict[str, int] = field(default_factory=dict)
    by_task: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    task_map: list[str] = field(default_factory=list)
    wall_time_s: float = 0.0

    def reconciles(self) -> bool:
        return self.read == self.written + self.rejected + self.skipped

    def summary(self) -> list[str]:
        lines = [
            f"{self.framework}: read {self.read} samples from {len(self.files)} file(s): "
            f"{self.written} written, {self.rejected} rejected, {self.skipped} skipped -> {self.records}"
        ]
        for s in self.skipped_tasks:
            lines.append(
                f"SKIPPED {s['n']} sample(s) of task {s['task']!r} (model {s['model']!r}): {s['reason']}"
            )
        if self.rejected:
            lines.append(f"REJECTED {self.rejected} sample(s) (details in {self.rejects}):")
            for reason, n in sorted(self.reject_reasons.items(), key=lambda x: (-x[1], x[0]))[:20]:
                lines.append(f"  {n:6d}  {reason}")
        lines.extend(f"NOTE: {n}" for n in self.notes)
        return lines


class ImportInputError(FileNotFoundError):
    """Nothing to import (no framework files under the paths); the message says what was looked for."""


def list_tree(loc: Location, suffixes: tuple[str, ...]) -> list[str]:
    """Files under a file or folder with one of `suffixes`, sorted. Unlike the job's listing, names
    starting with `_` are kept: lm-eval names a run's folder after the model path, `__models__x`."""
    return list_files(loc, suffixes, skip=(), missing=ImportInputError)


class OverBound(Exception):
    """A file over the byte bound of a whole-file read, not parsed. `size`: its listed size, None when
    the listing gave none (or too small a one) and the read found it over."""

    def __init__(self, size: int | None):
        super().__init__(size)
        self.size = size


class NotJson(Exception):
    """Bytes that are not UTF-8 JSON; the message says why, `cause` is the decoder's error."""

    def __init__(self, cause: ValueError | RecursionError):
        if isinstance(cause, UnicodeDecodeError):
            why = f"not valid UTF-8 (byte {cause.start})"
        else:
            why = f"not valid JSON ({getattr(cause, 'msg', cause)})"
        super().__init__(why)
        self.cause = cause


def parse_json(data: bytes, *, strip_bom: bool = False) -> Any:
    """UTF-8 JSON bytes parsed, or NotJson (RecursionError included: a deeply nested document)."""
    try:
        text = data.decode("utf-8")
        return json.loads(text.removeprefix("\ufeff") if strip_bom else text)
    except (ValueError, RecursionError) as e:
        raise NotJson(e) from None


def load_json(
    fs: pafs.FileSystem,
    path: str,
    limit: int,
    *,
    info: pafs.FileInfo | None = None,
    strip_bom: bool = False,
) -> Any:
    """A JSON file read whole and parsed, never more than `limit` bytes of it read (`info`: its listing,
    where the caller has it). Raises OverBound, NotJson, or the OSError of reading it."""
    size = (fs.get_file_info(path) if info is None else info).size
    if size is not None and size > limit:
        raise OverBound(size)
    with fs.open_input_stream(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OverBound(None)
    return parse_json(data, strip_bom=strip_bom)


def verdict_of(score: Any) -> bool | None:
    """A framework's per-sample score as its verdict: a bool, or a number that is 0 or 1; anything else
    (an F1 of 0.5, a string) is no verdict."""
    if isinstance(score, bool):
        return score
    if isinstance(score, (int, float)) and score in (0, 1):
        return bool(score)
    return None


def record_id(model: str, task: str, index: str) -> str:
    rid = f"{model}::{task}::{index}"
    if len(rid) > MAX_ID_CHARS:
        digest = hashlib.blake2b(rid.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        rid = f"{rid[: MAX_ID_CHARS - 40]}::{digest}"
    return rid


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]")


def _reason_key(reason: str) -> str:
    """Reasons grouped for the summary: quoted values and lists replaced by `…`."""
    return _QUOTED.sub("…", reason)[:200]


class _Writer:
    """Streams rows into Parquet row groups in a local temp folder; `_place` then moves the file."""

    def __init__(self, schema: pa.Schema, tmp_dir: str, name: str):
        self.schema = schema
        self.path = os.path.join(tmp_dir, name)
        self.rows: list[dict[str, Any]] = []
        self.n = 0
        self.writer = pq.ParquetWriter(self.path, schema)

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self.n += 1
        if len(self.rows) >= ROW_GROUP_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.writer.write_table(pa.Table.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def close(self) -> None:
        self.flush()
        self.writer.close()


def _digest_local(path: str) -> str:
    h = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _digest_remote(loc: Location) -> str | None:
    if not exists(loc):
        return None
    h = hashlib.blake2b(digest_size=32)
    with loc.fs.open_input_stream(loc.path) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _place(local: str, dest: Location) -> None:
    """Move a finished file into place, leaving an identical existing file untouched (its mtime is part
    of the job's input fingerprint: re-importing the same files must not break a resume)."""
    if _digest_remote(dest) == _digest_local(local):
        os.remove(local)
        return
    if isinstance(dest.fs, pafs.LocalFileSystem):
        os.makedirs(os.path.dirname(dest.path), exist_ok=True)
        tmp = f"{dest.path}.tmp-{os.getpid()}"
        with open(local, "rb") as src, open(tmp, "wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest.path)
        os.remove(local)
        return
    pafs.copy_files(
        local, dest.path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=dest.fs
    )
    os.remove(local)


def _reject_row(s: Sample, reason: str, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {f: None for f in records.FIELDS}
    # (Alike in shape only with extractors/vllm/engine.py:stage_config_from's keywords: field mapping.)
    row.update(
        record_id=record_id(s.model, s.task, s.index) if s.model and s.task else None,
        model=s.model,
        task=s.task,
        question=s.prompt,
        llm_output=s.response,
        correct_answer=None if s.target is None else _text(s.target),
    )
    row.update({k: v for k, v in (fields or {}).items() if k in row and v is not None})
    row.update(
        reason=reason,
        source_framework=s.framework,
        source_metric=s.metric,
        source_task=s.task,
        source_path=s.path,
        source_index=s.index,
    )
    for k, v in row.items():  # a reject keeps enough to find the sample, not megabytes of it
        if isinstance(v, str):
            row[k] = _clean(v[:20_000])
    return row


def _clean(text: str) -> str:
    """Text Arrow can hold: a lone surrogate (a `\\ud800` escape in JSON) becomes U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def to_record(s: Sample, task_map: TaskMap) -> dict[str, Any]:
    """The job-input row of one sample, or raise Unrecoverable with the reject reason."""
    if s.problem:
        raise Unrecoverable(s.problem)
    if not s.model:
        raise Unrecoverable("no model name")
    if not s.task:
        raise Unrecoverable("no task name")
    entry = task_map.lookup(s.task, s.framework)
    if entry is None and s.key_answer_type in KEY_ANSWER_TYPES:
        entry = Entry(f"{s.framework}:inferred", (s.task,), s.key_answer_type)
    if entry is None:
        raise Unrecoverable(f"unknown task: no task_map entry matches {s.task!r}")
    if s.response is None:
        raise Unrecoverable("no response text")
    question = s.prompt
    if entry.question and s.doc is not None and entry.question in s.doc:
        question = _text(s.doc[entry.question])
    if question is None or not question.strip():
        raise Unrecoverable("no question text")
    raw_answer = s.target
    if entry.answer:
        if s.doc is None or entry.answer not in s.doc:
            raise Unrecoverable(f"document has no answer field {entry.answer!r}")
        raw_answer = s.doc[entry.answer]
    answer_range, correct, _how = recover(entry, s.doc, question, raw_answer)
    row = dict(
        record_id=record_id(s.model, s.task, s.index),
        model=s.model,
        task=s.task,
        key_answer_type=entry.key_answer_type,
        question=question,
        llm_output=s.response,
        standard_answer_range=answer_range,
        correct_answer=correct,
    )
    reason = records.check(row)  # exactly what the job's validate stage will decide
    if reason is not None:
        raise Unrecoverable(reason)
    for name, value in row.items():
        if _clean(value) is not value:
            raise Unrecoverable(f"field {name!r} is not valid UTF-8 (an escaped lone surrogate)")
    row.update(
        source_judgment=s.verdict,
        source_framework=s.framework,
        source_metric=s.metric,
        source_task=s.task,
        source_path=s.path,
        source_index=s.index,
    )
    return row


def convert(
    events: Iterable[Sample | Skipped],
    output: Location,
    task_map: TaskMap,
    framework: str,
    files: list[str],
    notes: list[str],
) -> ImportReport:
    started = time.time()
    records_loc = output.join(RECORDS_FILE)
    rejects_loc = output.join(META_DIR, REJECTS_FILE)
    local = isinstance(output.fs, pafs.LocalFileSystem)
    report = ImportReport(
        framework,
        output.path if local else output.uri,
        records_loc.path if local else records_loc.uri,  # as the job's input listing names it
        rejects_loc.path if local else rejects_loc.uri,
        files=files,
        notes=notes,
    )
    report.task_map = task_map.sources
    reasons: Counter[str] = Counter()
    per_task: dict[tuple[str | None, str | None], Counter[str]] = {}
    seen: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="xfinder-import-") as tmp:
        good = _Writer(RECORD_SCHEMA, tmp, RECORDS_FILE)
        bad = _Writer(REJECT_SCHEMA, tmp, REJECTS_FILE)
        for ev in events:
            if isinstance(ev, Skipped):
                report.read += ev.n
                report.skipped += ev.n
                report.skipped_tasks.append(
                    dict(model=ev.model, task=ev.task, n=ev.n, reason=ev.reason, path=ev.path)
                )
                per_task.setdefault((ev.model, ev.task), Counter())["skipped"] += ev.n
                continue
            report.read += 1
            counts = per_task.setdefault((ev.model, ev.task), Counter())
            try:
                row = to_record(ev, task_map)
                first = seen.get(row["record_id"])
                if first is not None:
                    raise Unrecoverable(f"duplicate record_id: first occurrence is {first}")
            except Unrecoverable as e:
                reason = str(e)
                bad.add(_reject_row(ev, reason))
                reasons[_reason_key(reason)] += 1
                counts["rejected"] += 1
                continue
            seen[row["record_id"]] = f"{ev.path} #{ev.index}"
            good.add(row)
            counts["written"] += 1
        good.close()
        bad.close()
        report.written, report.rejected = good.n, bad.n
        _place(good.path, records_loc)
        _place(bad.path, rejects_loc)
    report.reject_reasons = dict(reasons)
    report.by_task = [
        dict(model=m, task=t, written=c["written"], rejected=c["rejected"], skipped=c["skipped"])
        for (m, t), c in sorted(per_task.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))
    ]
    report.wall_time_s = round(time.time() - started, 3)
    if not report.reconciles():  # cannot happen: every event is counted once, above
        raise RuntimeError(f"import counts do not reconcile: {report.summary()[0]}")
    write_json_atomic(output.join(META_DIR, REPORT_FILE), asdict(report))
    return report


# The import formats and their readers: xfinder_ray/importers/formats.py (light, for the CLI and config).


def import_files(
    fmt: str,
    paths: Sequence[str],
    output: str,
    *,
    task_map: TaskMapSource | Sequence[TaskMapSource] | TaskMap = None,
    model: str | None = None,
    lm_eval_filter: str | None = None,
    storage: Any = None,
) -> ImportReport:
    """Read `fmt` output files under `paths` and write `output`/records.parquet (job input schema +
    source_* columns), `output`/_import/rejects.parquet and `output`/_import/report.json."""
    reader: Reader = importlib.import_module(READERS.get(fmt))  # type: ignore[assignment]
    tm = task_map if isinstance(task_map, TaskMap) else load_task_map(task_map)
    out = resolve(output, storage)
    found = reader.find_files(list(paths), storage)
    notes = list(found.notes)
    events: Iterator[Sample | Skipped] = reader.read(
        found, model=model, lm_eval_filter=lm_eval_filter, notes=notes
    )
    return convert(events, out, tm, fmt, found.uris, notes)


def convert_inputs(
    paths: Sequence[str],
    fmt: str,
    task_map: TaskMapSource | Sequence[TaskMapSource] | TaskMap = None,
    out_dir: str | None = None,
    *,
    storage: Any = None,
    model: str | None = None,
) -> list[str]:
    """For the job (`input.format: lm-eval|opencompass`): import `paths` into `out_dir` (default: a new
    temp folder) and return the Parquet file(s) to read as `input.paths`. Logs the import summary;
    the full report is `out_dir`/_import/report.json."""
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="xfinder-imported-")
    report = import_files(fmt, paths, out_dir, task_map=task_map, model=model, storage=storage)
    for line in report.summary():
        log.warning(line) if line.startswith(("SKIPPED", "REJECTED")) else log.info(line)
    return [report.records]
