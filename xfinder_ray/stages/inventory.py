"""inventory: input files -> what is in them, before any row is processed.

One cheap pass, a Ray task per file (Parquet footers and the record_id column; JSONL lines), gives
the job what a streaming pass cannot know by itself:
- the rows of every file: the `input` of `input = judged + rejected`;
- read shards (Parquet row groups, whole JSONL files) with their row numbers, so every row has a
  stable position (source_file, source_row): the key that resume uses;
- duplicate record_ids across the whole input: the first occurrence (files in sorted path order,
  then row order) is judged, every later one is rejected.
A file that cannot be opened is named: an error (`on_bad_file: fail`) or listed and skipped (`skip`).
Duplicate detection keeps 16 bytes per row on the driver (a BLAKE2b digest of the id), e.g. 160 MB
for 10M rows, for as long as the inventory is built.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
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
    error: str | None = None


@dataclass(frozen=True)
class Shard:
    """The unit of one read task: a Parquet row group or a whole JSONL file."""

    file: InputFile
    start: int  # first row (Parquet) / 0 (JSONL: rows are line numbers)
    stop: int
    row_group: int | None = None


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
                out.append(Shard(f, 0, f.n_rows))
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


def read_jsonl_bytes(fs: pafs.FileSystem, path: str) -> bytes:
    with fs.open_input_file(path) as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    return data


def jsonl_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) for every non-blank line: blank lines are not records."""
    return [(i, line) for i, line in enumerate(data.split(b"\n")) if line.strip()]


def _scan(f: InputFile, names: list[str]) -> tuple[InputFile, np.ndarray, np.ndarray]:
    """Row counts, id digests and row numbers of one file; an unreadable file has `error` set."""
    digests: list[bytes] = []
    rows: list[int] | None = None
    try:
        if f.fmt == "parquet":
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
        else:
            rows = []
            for number, line in jsonl_lines(read_jsonl_bytes(f.fs, f.path)):
                rows.append(number)
                try:
                    text = line.decode("utf-8").removeprefix("\ufeff")
                    obj = json.loads(text, strict=False) if len(line) <= MAX_LINE_BYTES else None
                except ValueError:  # includes invalid UTF-8
                    obj = None
                value = next((obj[n] for n in names if n in obj), None) if isinstance(obj, dict) else None
                digests.append(id_digest(value))
            f.n_rows = len(rows)
    except Exception as e:
        if is_transient(e):  # a storage outage is not a bad file: let the task retry
            raise
        f.error = f"{type(e).__name__}: {e}"
        f.n_rows, f.row_groups, digests, rows = 0, [], [], None
    row_numbers = np.arange(len(digests), dtype=np.int64) if rows is None else np.array(rows, dtype=np.int64)
    return f, np.array(digests, dtype="S16"), row_numbers


# Only transient storage errors escape _scan (a bad file is recorded in the result), so retry those.
_scan_remote = ray.remote(num_cpus=0.5, max_retries=3, retry_exceptions=[OSError])(_scan)


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
    names = id_names(dict(cfg.columns))
    scanned = ray.get([_scan_remote.remote(f, names) for f in files])
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
