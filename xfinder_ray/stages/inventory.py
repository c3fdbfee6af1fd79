"""inventory: input files -> what is in them, before any row is processed.

One cheap pass of Ray tasks (a Parquet file's footer and record_id column; a JSONL file's lines, a
task per SCAN_CHUNK_BYTES of it) gives the job what a streaming pass cannot know by itself:
- the rows of every file: the `input` of `input = judged + rejected`;
- read shards with their row numbers, so every row has a stable position (source_file, source_row): the
  key that resume uses. A Parquet shard is a row group; a JSONL shard is a line range of at most
  `input.jsonl_shard_rows` rows and JSONL_SHARD_BYTES bytes, found by the byte offset of its first line
  (a gzip'ed file cannot be entered midway: it is one shard);
- duplicate record_ids across the whole input: the first occurrence (files in sorted path order,
  then row order) is judged, every later one is rejected.
A file that cannot be opened is named: an error (`on_bad_file: fail`) or listed and skipped (`skip`).
Duplicate detection keeps 16 bytes per row on the driver (a BLAKE2b digest of the id) and 8 for its row
number (JSONL: 8 more for its byte offset), e.g. 240-320 MB for 10M rows, while the inventory is built.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import ray

from xfinder_ray.config import InputConfig, StorageConfig
from xfinder_ray.records import FIELD_ALIASES
from xfinder_ray.storage import is_transient, list_files, resolve, uri_of

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson")
# A .json file holds one JSON document (lm-eval's results_*.json, OpenCompass predictions), not JSON
# Lines: read line by line it would turn into hundreds of rejected "records", so it is refused.
JSON_DOCUMENT_SUFFIXES = (".json", ".json.gz")
MAX_LINE_BYTES = 2_000_000
# What is kept of a line over MAX_LINE_BYTES: its head, where the read stage finds record_id, model and
# task (they usually come before the response) without holding the line.
HEAD_BYTES = 64 * 1024
READ_BLOCK = 1 << 20  # JSONL is read a block at a time: memory stays bounded however long a line is
SCAN_CHUNK_BYTES = 128 << 20  # the inventory scans a JSONL file in parallel pieces of this many bytes
JSONL_SHARD_BYTES = 64 << 20  # a JSONL read shard also ends once its lines reach this many bytes
NO_ID = b""  # digest slot of a row without a usable record_id (it is rejected by validation)


class BadInputFile(RuntimeError):
    """An input file that cannot be read (on_bad_file=fail). The message names the file."""


@dataclass
class InputFile:
    uri: str  # written as `source_file` on every output row
    path: str  # inside the filesystem
    fmt: str  # parquet | jsonl
    fs: pafs.FileSystem
    n_rows: int = 0
    row_groups: list[int] = field(default_factory=list)  # Parquet: rows per row group
    columns: list[str] = field(default_factory=list)  # Parquet: columns present in this file
    # JSONL: the read shards, each (first line, line after its last row, rows, byte offset of the first
    # line, byte offset where the next shard starts or None: the end of the file)
    jsonl_shards: list[tuple[int, int, int, int, int | None]] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class Shard:
    """The unit of one read task: a Parquet row group or a JSONL line range. Rows are numbered by row
    (Parquet) or by line (JSONL, blank lines included: they are not rows), from 0 in each file."""

    file: InputFile
    start: int  # first row / line number of the shard
    stop: int  # past its last row / line
    row_group: int | None = None
    n_rows: int | None = None  # JSONL: the rows in [start, stop) (blank lines are not rows)
    byte_start: int = 0  # JSONL: where line `start` begins in the file
    byte_stop: int | None = None  # JSONL: where the next shard begins; None: the end of the file

    @property
    def rows(self) -> int:
        return self.stop - self.start if self.n_rows is None else self.n_rows


@dataclass
class Inventory:
    files: list[InputFile]
    duplicates: dict[str, dict[int, str]]  # file uri -> {row: reason}
    skipped: list[dict[str, str]]  # [{"file", "error"}]
    notes: list[str] = field(default_factory=list)  # what the listing left out, and why

    @property
    def n_rows(self) -> int:
        return sum(f.n_rows for f in self.files if f.error is None)

    def shards(self) -> list[Shard]:
        out: list[Shard] = []
        for f in self.files:
            if f.error is not None:
                continue
            if f.fmt == "jsonl":
                # Each read task carries its shard's file: without the list of every other shard.
                light = replace(f, jsonl_shards=[])
                out.extend(Shard(light, a, b, None, n, lo, hi) for a, b, n, lo, hi in f.jsonl_shards)
                continue
            start = 0
            for i, n in enumerate(f.row_groups):
                if n:
                    out.append(Shard(f, start, start + n, i))
                start += n
        return out

    def fingerprint(self) -> list[list[Any]]:
        """What identifies the input for resume: each file with its size and modification time."""
        infos = {}
        for f in self.files:
            info = f.fs.get_file_info(f.path)
            infos[f.uri] = [f.uri, info.size, info.mtime_ns, f.n_rows]
        return [infos[k] for k in sorted(infos)]


def id_digest(value: Any) -> bytes:
    """16-byte digest of a record_id as the read stage will see it; NO_ID if it cannot be an id."""
    if value is None or isinstance(value, (bool, list, dict, tuple)):
        return NO_ID
    if isinstance(value, float):
        if value != value:
            return NO_ID
    text = value if isinstance(value, str) else str(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def id_names(columns: dict[str, str]) -> list[str]:
    if "record_id" in columns:
        return [columns["record_id"]]
    return ["record_id", *(a for a, c in FIELD_ALIASES.items() if c == "record_id")]


def open_jsonl(f: InputFile, offset: int = 0) -> Any:
    """A JSONL file as a stream from byte `offset` (a .gz file is decompressed: only from 0)."""
    raw = f.fs.open_input_file(f.path)
    if f.path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    raw.seek(offset)
    return raw


def iter_lines(
    read: Callable[[int], bytes], first_line: int = 0, limit: int | None = None
) -> Iterator[tuple[int, int, bytes, int]]:
    """(line number, byte offset from where reading began, line, its length in bytes) for every line of a
    stream (LF ends a line; a CR before it stays, JSON reads it as whitespace). `line` is b"" for a blank
    line and only the first HEAD_BYTES of a line over MAX_LINE_BYTES, so memory stays bounded however long
    a line is. `limit`: read only that many bytes (a shard ends where the next line begins)."""
    number, offset, remaining = first_line, 0, limit
    head, length, content = bytearray(), 0, False  # the line that continues past the block read so far
    while remaining is None or remaining > 0:
        block = read(READ_BLOCK if remaining is None else min(READ_BLOCK, remaining))
        if not block:
            break
        if remaining is not None:
            remaining -= len(block)
        pieces = block.split(b"\n")
        for piece in pieces[:-1]:
            if length:  # the end of a line begun in an earlier block
                if len(head) <= MAX_LINE_BYTES:
                    head += piece[: MAX_LINE_BYTES + 1 - len(head)]
                piece, n, blank = bytes(head), length + len(piece), not (content or piece.strip())
                head, length, content = bytearray(), 0, False
            else:
                n, blank = len(piece), not piece.strip()
            yield number, offset, b"" if blank else piece if n <= MAX_LINE_BYTES else piece[:HEAD_BYTES], n
            number, offset = number + 1, offset + n + 1
        last = pieces[-1]
        if last:
            if len(head) <= MAX_LINE_BYTES:
                head += last[: MAX_LINE_BYTES + 1 - len(head)]
            length, content = length + len(last), content or bool(last.strip())
    if length:  # a last line without a newline
        yield (
            number,
            offset,
            b"" if not content else bytes(head[:HEAD_BYTES] if length > MAX_LINE_BYTES else head),
            length,
        )


def iter_shard_lines(shard: Shard) -> Iterator[tuple[int, bytes, int]]:
    """(line number, line, length) for the non-blank lines of a JSONL shard (see iter_lines)."""
    limit = None if shard.byte_stop is None else shard.byte_stop - shard.byte_start
    with open_jsonl(shard.file, shard.byte_start) as stream:
        for number, _, line, length in iter_lines(stream.read, shard.start, limit):
            if line:
                yield number, line, length


def _line_id(line: bytes, length: int, names: list[str]) -> bytes:
    """The id digest of one JSONL line, as the read stage will see it."""
    if length > MAX_LINE_BYTES:
        return NO_ID  # rejected by the read stage whatever its id (it never parses such a line)
    try:
        obj = json.loads(line.decode("utf-8").removeprefix("\ufeff"), strict=False)
    except ValueError:  # includes invalid UTF-8
        return NO_ID
    return id_digest(next((obj[n] for n in names if n in obj), None) if isinstance(obj, dict) else None)


@dataclass
class JsonlPiece:
    """What a scan task found in the lines that begin inside its byte range of a JSONL file."""

    lines: int = 0  # lines beginning in the range, blank ones too: the next range's first line number
    rows: np.ndarray = field(
        default_factory=lambda: np.empty(0, np.int64)
    )  # line numbers from the range's first
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # where each row begins
    digests: np.ndarray = field(default_factory=lambda: np.empty(0, "S16"))
    error: str | None = None


def _first_line_at(f: InputFile, begin: int, end: int | None) -> int | None:
    """Where the first line beginning at or after `begin` begins; None when none begins before `end`
    (the range is inside one long line: it is not read to its end)."""
    if begin == 0:
        return 0
    with open_jsonl(f, begin - 1) as stream:
        at = begin - 1
        while end is None or at < end:
            block = stream.read(READ_BLOCK)
            if not block:
                return None
            lf = block.find(b"\n")
            if lf >= 0:
                start = at + lf + 1
                return start if end is None or start < end else None
            at += len(block)
    return None


def _scan_jsonl(f: InputFile, names: list[str], begin: int, end: int | None) -> JsonlPiece:
    """The lines of `f` that begin in [begin, end) (end None: to the end of the file). The line running
    into the range from before is the range before's."""
    rows: list[int] = []
    offsets: list[int] = []
    digests: list[bytes] = []
    lines = 0
    try:
        at = _first_line_at(f, begin, end)
        if at is None:
            return JsonlPiece()
        with open_jsonl(f, at) as stream:
            for _, offset, line, length in iter_lines(stream.read):
                if end is not None and at + offset >= end:
                    break
                if line:
                    rows.append(lines)
                    offsets.append(at + offset)
                    digests.append(_line_id(line, length, names))
                lines += 1
    except Exception as e:
        if is_transient(e):  # a storage outage is not a bad file: let the task retry
            raise
        return JsonlPiece(error=f"{type(e).__name__}: {e}")
    return JsonlPiece(
        lines, np.array(rows, np.int64), np.array(offsets, np.int64), np.array(digests, dtype="S16")
    )


def jsonl_shards(
    rows: np.ndarray, offsets: np.ndarray, max_rows: int, max_bytes: int = JSONL_SHARD_BYTES
) -> list[tuple[int, int, int, int, int | None]]:
    """Read shards of a JSONL file from its rows' line numbers and byte offsets: consecutive rows, at most
    `max_rows` and (unless one row is longer) `max_bytes` a shard; the first shard starts at line 0, so
    the blank lines before the first row are read with it (InputFile.jsonl_shards)."""
    out: list[tuple[int, int, int, int, int | None]] = []
    i, n = 0, len(rows)
    while i < n:
        over_budget = int(np.searchsorted(offsets, offsets[i] + max_bytes, side="left"))
        j = max(i + 1, min(i + max_rows, n, over_budget))
        first, byte_start = (0, 0) if i == 0 else (int(rows[i]), int(offsets[i]))
        stop, byte_stop = (int(rows[j]), int(offsets[j])) if j < n else (int(rows[-1]) + 1, None)
        out.append((first, stop, j - i, byte_start, byte_stop))
        i = j
    return out


def _scan(f: InputFile, names: list[str]) -> tuple[InputFile, np.ndarray, np.ndarray]:
    """Row counts, id digests and row numbers of one Parquet file; an unreadable file has `error` set."""
    digests: list[bytes] = []
    try:
        pf = pq.ParquetFile(f.fs.open_input_file(f.path))
        md = pf.metadata
        f.row_groups = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
        f.columns = list(pf.schema_arrow.names)
        f.n_rows = md.num_rows
        id_col = next((n for n in names if n in f.columns), None)
        for i, n in enumerate(f.row_groups):
            try:
                values = pf.read_row_group(i, columns=[id_col]).column(0).to_pylist() if id_col else None
            except Exception as e:  # a corrupt row group: its rows become rejects when it is read
                if is_transient(e):
                    raise
                values = None
            digests.extend([id_digest(v) for v in values] if values is not None else [NO_ID] * n)
    except Exception as e:
        if is_transient(e):  # a storage outage is not a bad file: let the task retry
            raise
        f.error = f"{type(e).__name__}: {e}"
        f.n_rows, f.row_groups, digests = 0, [], []
    return f, np.array(digests, dtype="S16"), np.arange(len(digests), dtype=np.int64)


def _assemble_jsonl(
    f: InputFile, pieces: list[JsonlPiece], max_rows: int
) -> tuple[InputFile, np.ndarray, np.ndarray]:
    """One JSONL file from its scanned pieces, in order: its rows, their line numbers and its shards."""
    bad = next((p.error for p in pieces if p.error is not None), None)
    if bad is not None:
        f.error, f.n_rows, f.jsonl_shards = bad, 0, []
        return f, np.empty(0, "S16"), np.empty(0, np.int64)
    bases = np.cumsum([0] + [p.lines for p in pieces[:-1]])
    rows = np.concatenate([p.rows + base for p, base in zip(pieces, bases, strict=True)])
    offsets = np.concatenate([p.offsets for p in pieces])
    f.n_rows = len(rows)
    gz = f.path.endswith(".gz")  # a compressed stream cannot be entered midway: one shard
    f.jsonl_shards = jsonl_shards(
        rows, offsets, len(rows) if gz else max_rows, 1 << 62 if gz else JSONL_SHARD_BYTES
    )
    return f, np.concatenate([p.digests for p in pieces]), rows


# Only transient storage errors escape a scan (a bad file is recorded in the result), so retry those.
_scan_remote = ray.remote(num_cpus=0.5, max_retries=3, retry_exceptions=[OSError])(_scan)
_scan_jsonl_remote = ray.remote(num_cpus=0.5, max_retries=3, retry_exceptions=[OSError])(_scan_jsonl)


def scan_files(
    files: list[InputFile], names: list[str], shard_rows: int, chunk: int = SCAN_CHUNK_BYTES
) -> list[tuple[InputFile, np.ndarray, np.ndarray]]:
    """Each file's (file with rows and shards, id digests, row numbers), scanned by Ray tasks: a
    Parquet file in one, a JSONL file in one per `chunk` bytes (a .gz one in one)."""
    refs: list[Any] = []
    for f in files:
        if f.fmt == "parquet":
            refs.append(_scan_remote.remote(f, names))
            continue
        size = 0 if f.path.endswith(".gz") else f.fs.get_file_info(f.path).size or 0
        bounds = [(a, a + chunk if a + chunk < size else None) for a in range(0, size, chunk)] or [(0, None)]
        refs.append([_scan_jsonl_remote.remote(f, names, a, b) for a, b in bounds])
    out = []
    for f, ref in zip(files, refs, strict=True):
        out.append(ray.get(ref) if f.fmt == "parquet" else _assemble_jsonl(f, ray.get(ref), shard_rows))
    return out


def find_duplicates(
    files: list[InputFile], digests: list[np.ndarray], rows: list[np.ndarray]
) -> dict[str, dict[int, str]]:
    """{file uri: {row: reason}} for every occurrence of a record_id after its first."""
    if not sum(len(d) for d in digests):
        return {}
    flat = np.concatenate(digests)
    file_idx = np.concatenate([np.full(len(d), i, dtype=np.int32) for i, d in enumerate(digests)])
    row_of = np.concatenate(rows)
    has_id = flat != NO_ID
    flat, file_idx, row_of = flat[has_id], file_idx[has_id], row_of[has_id]
    _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    first_of = first[inverse.reshape(-1)]
    out: dict[str, dict[int, str]] = {}
    for k in np.nonzero(first_of != np.arange(len(flat)))[0]:
        j = first_of[k]
        out.setdefault(files[file_idx[k]].uri, {})[int(row_of[k])] = (
            f"duplicate record_id: first occurrence is {files[file_idx[j]].uri} row {int(row_of[j])}"
        )
    return out


def _format_of(path: str) -> str | None:
    if path.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if path.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def _refuse_json_documents(uri: str, paths: list[str]) -> None:
    if not paths:
        return
    from xfinder_ray.importers.formats import FORMATS  # the registered import formats (no heavy imports)

    shown = ", ".join(repr(p.rsplit("/", 1)[-1]) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
    raise BadInputFile(
        f"{uri!r} holds {len(paths)} .json file(s) ({shown}): a .json file is one JSON document, not "
        "JSON Lines (one record per line). An evaluation framework's output: use "
        f"{' or '.join(f'input.format={f}' for f in FORMATS)} (docs/importing.md); records: write them "
        "one per line to a .jsonl file (or set input.format=parquet to read only a folder's Parquet files)"
    )


# A folder holding either is a scoring output (committed, or a run in progress), not input records.
RUN_MARKERS = ("manifest.json", "_run.json")


def _run_folders(loc: Any, uri: str) -> list[str]:
    """Folders below `loc` that hold a scoring output; `loc` itself being one is refused."""
    markers = list_files(loc, RUN_MARKERS, skip=(".",))
    folders = sorted({m.rsplit("/", 1)[0] for m in markers if m.rsplit("/", 1)[-1] in RUN_MARKERS})
    if loc.path.rstrip("/") in folders:
        raise FileNotFoundError(
            f"input {uri!r} holds a scoring output (manifest.json / _run.json), not input records: pass "
            "the records it was made from (its judgments are in judgments/, docs/reliability.md)"
        )
    return folders


def _outside(paths: list[str], folders: list[str]) -> list[str]:
    return [p for p in paths if not any(p.startswith(f + "/") for f in folders)]


def list_input(cfg: InputConfig, storage: StorageConfig, notes: list[str] | None = None) -> list[InputFile]:
    """The input files, sorted. In a folder, `auto` reads the Parquet and the JSONL files alike, each by
    its suffix (.parquet/.pq; .jsonl/.jsonl.gz/.ndjson), and refuses .json files (JSON documents, not
    JSON Lines); `jsonl` reads only JSONL files (and refuses .json ones); `parquet` only Parquet files.
    A file named on its own is read as `format` says (`auto`: JSONL by suffix, .json refused, else
    Parquet). Folders holding a scoring output are left out, with a note in `notes`."""
    files: list[InputFile] = []
    for uri in cfg.paths:
        loc = resolve(uri, storage)
        if loc.fs.get_file_info(loc.path).type == pafs.FileType.File:
            fmt = cfg.format
            if fmt == "auto":
                _refuse_json_documents(uri, [loc.path] if loc.path.endswith(JSON_DOCUMENT_SUFFIXES) else [])
                fmt = _format_of(loc.path) or "parquet"
            files.append(InputFile(uri_of(loc, loc.path), loc.path, fmt, loc.fs))
            continue
        runs = _run_folders(loc, str(uri))
        if runs and notes is not None:
            notes.append(
                f"left out {len(runs)} folder(s) under {uri!r} holding a scoring output (manifest.json / "
                f"_run.json), e.g. {runs[0]!r}: a run's outputs are not input records"
            )
        if cfg.format != "parquet":
            _refuse_json_documents(uri, _outside(list_files(loc, JSON_DOCUMENT_SUFFIXES), runs))
        suffixes = {"parquet": PARQUET_SUFFIXES, "jsonl": JSONL_SUFFIXES}.get(
            cfg.format, PARQUET_SUFFIXES + JSONL_SUFFIXES
        )
        paths = _outside(list_files(loc, suffixes), runs)
        if not paths:
            other = _outside(list_files(loc, PARQUET_SUFFIXES + JSONL_SUFFIXES), runs)
            hint = ""
            if other:
                kinds = "/".join(sorted({_format_of(p) or "?" for p in other}))
                hint = f" (it holds {len(other)} {kinds} file(s): set input.format=auto to read them)"
            wanted = {"parquet": "Parquet", "jsonl": "JSONL"}.get(cfg.format, "Parquet or JSONL")
            raise FileNotFoundError(f"no {wanted} files under {uri!r}{hint}")
        for p in paths:
            fmt = cfg.format if cfg.format != "auto" else (_format_of(p) or "parquet")
            files.append(InputFile(uri_of(loc, p), p, fmt, loc.fs))
    seen: set[str] = set()
    unique = [f for f in files if not (f.uri in seen or seen.add(f.uri))]  # a file listed twice is read once
    return sorted(unique, key=lambda f: f.uri)


def take_inventory(cfg: InputConfig, storage: StorageConfig) -> Inventory:
    notes: list[str] = []
    files = list_input(cfg, storage, notes)
    scanned = scan_files(files, id_names(dict(cfg.columns)), cfg.jsonl_shard_rows)
    files = [f for f, _, _ in scanned]
    bad = [f for f in files if f.error is not None]
    if bad and cfg.on_bad_file == "fail":
        listing = "; ".join(f"{f.uri}: {f.error}" for f in bad)
        raise BadInputFile(
            f"cannot read {len(bad)} input file(s): {listing} (set input.on_bad_file=skip to skip them)"
        )
    good = [s for s in scanned if s[0].error is None]
    duplicates = find_duplicates([s[0] for s in good], [s[1] for s in good], [s[2] for s in good])
    skipped = [{"file": f.uri, "error": f.error or ""} for f in bad]
    return Inventory(files, duplicates, skipped, notes)
