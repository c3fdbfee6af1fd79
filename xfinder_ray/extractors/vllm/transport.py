"""Row transport through `ray.data.llm`'s processor: pack each row whole, unpack it after the engine.

The processor nests every row in one struct column and its vLLM stage reads and rewrites well-known
keys in it: a row key ``model`` (our canonical column!) is taken as a LoRA adapter name, and
``prompt``, ``params``, ``metrics``, ``request_id``... are overwritten. So before the processor each
row is serialized whole (a one-row Arrow IPC stream: exact types, no Python round trip) into one
binary column, and restored after it. Rows sharing a prompt travel as one request (greedy decoding:
same prompt, same output), so identical prompts in a batch always get identical outputs.

Columns in:  ``prompt`` plus any other columns, which come back untouched (same values, same types).
Columns out: ``raw_output`` (str; "" when the row failed), ``prompt_tokens`` (int; 0 when it failed),
             ``extract_error`` (str | None: the engine's message for that row, e.g. prompt too long),
             and with logprobs only, ``logprob`` (float | None: log P(output | prompt) under greedy
             decoding; null when the row failed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

PROMPT_COLUMN = "prompt"
OUTPUT_COLUMNS = ("raw_output", "prompt_tokens", "extract_error")
LOGPROB_COLUMN = "logprob"  # with VLLMStageConfig.logprobs only
_ROW_COLUMN = "__xr_row"  # the packed input row
_ERROR_KEY = "__inference_error__"  # ray.data.llm's per-row error field (should_continue_on_error=True)


def _pack_rows(table: pa.Table, indices: list[int]) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.take(pa.array(indices, pa.int64())))
    return sink.getvalue().to_pybytes()


def _unpack_rows(blobs: list[bytes]) -> tuple[pa.Table, list[int]]:
    """The packed rows, and how many rows each blob held."""
    tables = [pa.ipc.open_stream(pa.py_buffer(b)).read_all() for b in blobs]
    counts = [t.num_rows for t in tables]
    try:
        return pa.concat_tables(tables), counts
    except pa.ArrowInvalid:
        # Blocks of one dataset can differ slightly (e.g. an all-null column typed null in one file).
        return pa.concat_tables(tables, promote_options="permissive"), counts


def make_pack(sp: dict[str, Any]) -> Callable[[pa.Table], pa.Table]:
    def pack(batch: pa.Table) -> pa.Table:
        """One engine request per distinct prompt in the batch; the rows sharing it travel packed
        together and are fanned out again by unpack (greedy decoding: same prompt, same output)."""
        if PROMPT_COLUMN not in batch.column_names:
            raise KeyError(f"the extraction stage needs a {PROMPT_COLUMN!r} column; got {batch.column_names}")
        groups: dict[str, list[int]] = {}
        for i, prompt in enumerate(batch[PROMPT_COLUMN].to_pylist()):
            groups.setdefault(prompt, []).append(i)
        return pa.table(
            {
                PROMPT_COLUMN: pa.array(list(groups), pa.string()),
                "sampling_params": pa.array([sp] * len(groups)),
                _ROW_COLUMN: pa.array([_pack_rows(batch, ix) for ix in groups.values()], pa.binary()),
            }
        )

    return pack


def slim(row: dict[str, Any]) -> dict[str, Any]:
    """Processor postprocess (success rows only): keep what the unpack step reads.

    Error rows bypass it and arrive with the whole internal row, so both kinds share these names.
    """
    return {
        _ROW_COLUMN: row[_ROW_COLUMN],
        "generated_text": row["generated_text"],
        "num_input_tokens": row["num_input_tokens"],
    }


def _step_logprob(step: Any, token: Any) -> float | None:
    """One generated position's log-probability: ray.data.llm gives {token_id: {logprob, rank, ...}}."""
    if not step:
        return None
    if hasattr(step, "items"):
        entries = dict(step.items())
    else:  # a list of (key, value) pairs, as Arrow may hand back a map
        entries = dict(step)
    entry = None
    if token is not None:
        entry = entries.get(int(token), entries.get(str(int(token))))
    if entry is None and len(entries) == 1:
        entry = next(iter(entries.values()))
    if entry is None:
        return None
    value = entry.get("logprob") if hasattr(entry, "get") else getattr(entry, "logprob", None)
    return None if value is None else float(value)


def generated_logprob(logprobs: Any, tokens: Any) -> float | None:
    """The sum of the generated tokens' log-probabilities (0.0 for an empty generation); None when the
    engine returned none or a position is missing."""
    if logprobs is None:
        return None
    tokens = list(tokens) if tokens is not None else []
    total = 0.0
    for i, step in enumerate(logprobs):
        value = _step_logprob(step, tokens[i] if i < len(tokens) else None)
        if value is None:
            return None
        total += value
    return total


def slim_logprob(row: dict[str, Any]) -> dict[str, Any]:
    """slim plus the generation's log-probability, under the engine's own key `logprobs` (error rows
    carry that key too, as null), reduced to one float so the per-token dicts go no further."""
    return {**slim(row), "logprobs": generated_logprob(row.get("logprobs"), row.get("generated_tokens"))}


def unpack(batch: pa.Table, logprobs: bool = False) -> pa.Table:
    n = batch.num_rows
    cols = batch.column_names
    if n == 0:
        return pa.table({})
    out, counts = _unpack_rows(batch[_ROW_COLUMN].to_pylist())
    errors = batch[_ERROR_KEY].to_pylist() if _ERROR_KEY in cols else [None] * n
    errors = [e if e else None for e in errors]
    texts = batch["generated_text"].to_pylist()
    ntok = batch["num_input_tokens"].to_pylist()
    raw = [("" if e or t is None else t) for t, e in zip(texts, errors, strict=True)]
    toks = [(0 if e or k is None else int(k)) for k, e in zip(ntok, errors, strict=True)]
    fan_out = lambda values: [v for v, c in zip(values, counts, strict=True) for _ in range(c)]  # noqa: E731
    outputs = [
        ("raw_output", pa.array(fan_out(raw), pa.string())),
        ("prompt_tokens", pa.array(fan_out(toks), pa.int64())),
        ("extract_error", pa.array(fan_out(errors), pa.string())),
    ]
    if logprobs:
        lps = batch["logprobs"].to_pylist() if "logprobs" in cols else [None] * n
        lps = [None if e or v is None else float(v) for v, e in zip(lps, errors, strict=True)]
        outputs.append((LOGPROB_COLUMN, pa.array(fan_out(lps), pa.float64())))
    for name, arr in outputs:
        # A re-run on already-extracted rows replaces the old outputs.
        if name in out.column_names:
            out = out.set_column(out.column_names.index(name), name, arr)
        else:
            out = out.append_column(name, arr)
    return out
