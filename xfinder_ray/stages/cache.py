"""cache: prompted rows -> the same rows with `raw_output` filled where this exact extraction was
already done, by this or any earlier run that shares the cache.

Content-addressed: the folder is named by a digest of everything that decides a model's output
except the prompt (checkpoint identity with its content hash, prompt format, dtype, decoding
settings), and each entry by a digest of the rendered prompt. Changing the checkpoint or the prompt
format therefore changes the folder or the key: stale entries can never be served. Entries are
Parquet part files (key, raw_output, prompt_tokens) written by the output sink next to the
judgments that used them; a run loads the folder's keys once, sorted, into the object store, and
each lookup task binary-searches them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import ray

from xfinder_ray.stages.rows import row_stage
from xfinder_ray.storage import Location, exists, write_json_atomic

KEY_BYTES = 16
# `logprob`: the output's log-probability when the stage asked for it (a verifier's verdict); entries
# written before it existed read as null.
ENTRY_SCHEMA = pa.schema(
    [
        ("key", pa.binary(KEY_BYTES)),
        ("raw_output", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("logprob", pa.float64()),
    ]
)


def prompt_key(prompt: str) -> bytes:
    return hashlib.blake2b(prompt.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


@dataclass(frozen=True)
class CacheIndex:
    keys: np.ndarray  # sorted, dtype S16
    raw_output: pa.Array
    prompt_tokens: np.ndarray
    logprob: np.ndarray | None = None  # float64, NaN where none was asked for


def cache_location(root: Location, identity: dict[str, Any]) -> Location:
    """The cache folder for one extraction identity (nothing written)."""
    text = json.dumps(identity, sort_keys=True)
    return root.join(hashlib.sha256(text.encode()).hexdigest()[:20])


def cache_folder(root: Location, identity: dict[str, Any]) -> Location:
    """The cache folder for one extraction identity; it records that identity for people to read."""
    folder = cache_location(root, identity)
    marker = folder.join("identity.json")
    if not exists(marker):
        write_json_atomic(marker, identity)
    return folder


def load_index(folder: Location) -> CacheIndex | None:
    files = [
        f.path
        for f in folder.fs.get_file_info(pa.fs.FileSelector(folder.path, allow_not_found=True))
        if f.path.rsplit("/", 1)[-1].startswith("part-") and f.path.endswith(".parquet")
    ]
    if not files:
        return None
    table = pads.dataset(files, format="parquet", filesystem=folder.fs, schema=ENTRY_SCHEMA).to_table()
    keys = np.array(table["key"].to_pylist(), dtype=f"S{KEY_BYTES}")
    keys, first = np.unique(keys, return_index=True)  # the same prompt may be cached by two runs
    logprob = table["logprob"].to_numpy(zero_copy_only=False).astype(np.float64)  # null -> NaN
    return CacheIndex(
        keys,
        table["raw_output"].take(pa.array(first)),
        table["prompt_tokens"].to_numpy()[first],
        logprob[first],
    )


def _lookup(rows: pd.DataFrame, *, index: Any) -> pd.DataFrame:
    idx: CacheIndex | None = ray.get(index) if isinstance(index, ray.ObjectRef) else index
    n = len(rows)
    keys = [prompt_key(p) for p in rows["prompt"]]
    hit: list[bool] = [False] * n
    raw: list[str | None] = [None] * n
    tokens: list[int | None] = [None] * n
    logprob = np.full(n, np.nan)
    if idx is not None and len(idx.keys):
        for i, key in enumerate(keys):
            probe = np.array(key, dtype=idx.keys.dtype)[
                ()
            ]  # numpy drops trailing NULs: compare like with like
            pos = int(np.searchsorted(idx.keys, probe))
            if pos < len(idx.keys) and idx.keys[pos] == probe:
                hit[i], raw[i], tokens[i] = True, idx.raw_output[pos].as_py(), int(idx.prompt_tokens[pos])
                logprob[i] = idx.logprob[pos] if idx.logprob is not None else np.nan
    return rows.assign(cache_key=keys, cache_hit=hit, raw_output=raw, prompt_tokens=tokens, logprob=logprob)


def _has_prompt(batch: pd.DataFrame) -> pd.Series:
    """Valid rows with a prompt (not rejected, not settled by the router)."""
    return batch["reject_reason"].isna() & batch["prompt"].map(lambda p: isinstance(p, str))


def _stats(df: pd.DataFrame) -> dict[str, int]:
    if "cache_hit" not in df:
        return {"hits": 0, "misses": 0}
    return {"hits": int(flag(df["cache_hit"], True).sum()), "misses": int(flag(df["cache_hit"], False).sum())}


# Prompted rows -> + `cache_key`, `cache_hit`, and `raw_output` for hits; rows without a prompt
# (rejected, or settled by the router) keep what they have.
lookup_batch = row_stage(
    "cache",
    reads=("prompt",),
    writes=("cache_key", "cache_hit", "raw_output", "prompt_tokens", "logprob"),
    fn=_lookup,
    rows=_has_prompt,
    stats=_stats,
)


def flag(column: pd.Series, value: bool) -> pd.Series:
    """Rows whose nullable bool `column` is `value` (null: neither), whatever dtype Arrow gave it."""
    return column.astype("boolean").fillna(not value).astype(bool) == value


def needs_model(batch: pd.DataFrame) -> pd.DataFrame:
    """Valid rows the cache could not answer."""
    return batch[flag(batch["cache_hit"], False)].reset_index(drop=True)


def no_model(batch: pd.DataFrame) -> pd.DataFrame:
    """Cache hits and rejected rows."""
    return batch[~flag(batch["cache_hit"], False)].reset_index(drop=True)


def new_entries(df: pd.DataFrame) -> pa.Table:
    """Cache entries for rows the model extracted in this run (not hits, not failures)."""
    errors = df["extract_error"] if "extract_error" in df else pd.Series([None] * len(df), index=df.index)
    fresh = df[flag(df["cache_hit"], False) & df["cache_key"].notna() & errors.isna()]
    return pa.table(
        {
            "key": pa.array(list(fresh["cache_key"]), pa.binary(KEY_BYTES)),
            "raw_output": pa.array([None if v is None else str(v) for v in fresh["raw_output"]], pa.string()),
            "prompt_tokens": pa.array(
                [None if v != v or v is None else int(v) for v in fresh["prompt_tokens"]], pa.int64()
            ),
            "logprob": pa.array(
                [None if pd.isna(v) else float(v) for v in fresh.get("logprob", [None] * len(fresh))],
                pa.float64(),
            ),
        },
        schema=ENTRY_SCHEMA,
    )
