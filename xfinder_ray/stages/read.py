"""read: input files -> rows with the canonical columns (strings or null) and `reject_reason`.

Reads Parquet (only the needed columns) and JSON Lines (parsed here, so one malformed line becomes
a reject instead of failing the read). `standard_answer_range` is normalised to a JSON string so
every block has the same schema whatever the source used (list column, JSON or Python literal).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import ray

from xfinder_ray.config import InputConfig, StorageConfig
from xfinder_ray.records import FIELD_ALIASES, FIELDS
from xfinder_ray.storage import list_files, resolve

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
MAX_LINE_CHARS = 2_000_000
OUT_COLUMNS = (*FIELDS, "reject_reason")


def _source_names(columns: dict[str, str]) -> dict[str, list[str]]:
    """For each canonical field, the source column names to look for, in order of preference."""
    names = {f: [columns[f]] if f in columns else [f] for f in FIELDS}
    for alias, canonical in FIELD_ALIASES.items():
        if canonical not in columns:
            names[canonical].append(alias)
    return names


def _as_text(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value != value:  # NaN from pandas
        return None
    return value if isinstance(value, bool) else str(value)


def canonical_rows(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    names = _source_names(columns)
    out: dict[str, list[Any]] = {c: [] for c in OUT_COLUMNS}
    for row in rows:
        reason = row.get("reject_reason")
        for field in FIELDS:
            src = next((n for n in names[field] if n in row), None)
            value = _as_text(row[src]) if src is not None else None
            if src is None and reason is None:
                reason = f"missing field {field!r}"
            if isinstance(value, bool) and reason is None:
                reason = f"field {field!r} must be a string, got bool"
            out[field].append(value if not isinstance(value, bool) else None)
        out["reject_reason"].append(reason)
    return pd.DataFrame(out, columns=list(OUT_COLUMNS))


def _parse_jsonl(batch: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for line in batch["text"]:
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            rows.append(
                {"reject_reason": f"line longer than {MAX_LINE_CHARS} characters", "llm_output": line[:200]}
            )
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            rows.append({"reject_reason": f"not valid JSON ({e.msg})", "llm_output": line[:200]})
            continue
        if not isinstance(obj, dict):
            rows.append({"reject_reason": f"expected a JSON object, got {type(obj).__name__}"})
            continue
        rows.append(obj)
    return canonical_rows(rows, columns)


def _canonical_parquet(batch: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    return canonical_rows(batch.to_dict("records"), columns)


def read_input(cfg: InputConfig, storage: StorageConfig) -> ray.data.Dataset:
    """One dataset over every input path, with the canonical columns and `reject_reason`."""
    parts: list[ray.data.Dataset] = []
    columns = dict(cfg.columns)
    for uri in cfg.paths:
        loc = resolve(uri, storage)
        fmt = cfg.format
        if fmt == "auto":
            fmt = "jsonl" if uri.rstrip("/").endswith(JSONL_SUFFIXES) else "parquet"
        files = list_files(loc, PARQUET_SUFFIXES if fmt == "parquet" else JSONL_SUFFIXES)
        if not files:
            raise FileNotFoundError(f"no {fmt} files under {uri!r}")
        if fmt == "parquet":
            # Read only the columns the job needs: the canonical fields under their source names.
            schema = pq.read_schema(files[0], filesystem=loc.fs)
            wanted = {n for names in _source_names(columns).values() for n in names}
            present = [n for n in schema.names if n in wanted]
            ds = ray.data.read_parquet(files, filesystem=loc.fs).select_columns(present)
            parts.append(
                ds.map_batches(_canonical_parquet, batch_format="pandas", fn_kwargs={"columns": columns})
            )
        else:
            ds = ray.data.read_text(files, filesystem=loc.fs)
            parts.append(ds.map_batches(_parse_jsonl, batch_format="pandas", fn_kwargs={"columns": columns}))
    return parts[0] if len(parts) == 1 else parts[0].union(*parts[1:])
