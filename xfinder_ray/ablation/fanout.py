"""fan out: one map_batches stage runs every extractor on each valid row and judges every
extraction with every comparator; rows rejected by validation pass through.

Output: one wide row per input row (the record, its position, its labels, then per extractor the
extraction, an extraction error and, on labelled rows, whether it matches the gold key answer, and
per extractor x comparator the judgment), as an Arrow table with a fixed schema so that every
written Parquet part has the same columns and types whatever its batch held.

An xFinder extractor (`xfinder:<label>`, ablation/model.py) has already run when a row gets here: its
raw output, log-probability and engine error are columns of the row; this stage parses the raw output
into the key answer (parsing.parse_output, as the scoring job does) and keeps the other two.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from xfinder_ray.ablation.comparators import get_comparator
from xfinder_ray.ablation.model import VERIFIER_PREFIX, is_model_extractor, is_verifier, logprob_col, raw_col
from xfinder_ray.ablation.source import LABELS
from xfinder_ray.extractors import get_record_extractor
from xfinder_ray.judging import judge
from xfinder_ray.parsing import parse_output
from xfinder_ray.records import FIELDS, NO_VALID_ANSWER, Record, validate

BASE_COLUMNS = (*FIELDS, "reject_reason", "source_file", "source_row", *LABELS)


def extracted_col(extractor: str) -> str:
    return f"extracted[{extractor}]"


def error_col(extractor: str) -> str:
    return f"extract_error[{extractor}]"


def extraction_ok_col(extractor: str) -> str:
    return f"extraction_ok[{extractor}]"


def judgment_col(extractor: str, comparator: str) -> str:
    return f"judgment[{extractor}|{comparator}]"


def wide_schema(extractors: list[str], comparators: list[str]) -> pa.Schema:
    fields = [pa.field(c, pa.string()) for c in (*FIELDS, "reject_reason", "source_file")]
    fields += [
        pa.field("source_row", pa.int64()),
        pa.field("gold_key_answer", pa.string()),
        pa.field("gold_judgment", pa.bool_()),
        pa.field("tags", pa.string()),
    ]
    for e in extractors:
        fields += [
            pa.field(extracted_col(e), pa.string()),
            pa.field(error_col(e), pa.string()),
            pa.field(extraction_ok_col(e), pa.bool_()),
        ]
        fields += [pa.field(judgment_col(e, c), pa.bool_()) for c in comparators]
        if is_model_extractor(e):
            fields += [pa.field(raw_col(e), pa.string()), pa.field(logprob_col(e), pa.float64())]
    return pa.schema(fields)


def _model_extraction(
    row: dict[str, Any], rec: Record, extractor: str
) -> tuple[str | None, str | None, bool | None]:
    """(key answer, error, verdict) of a model column from what its vLLM stage added: an xFinder
    extraction (no verdict: the comparators judge it), or a verifier's "" / [No valid answer] (its C)
    with its verdict."""
    error = row.get(error_col(extractor))
    if isinstance(error, str) and error:
        return None, f"model: {error[:300]}", None
    raw = row.get(raw_col(extractor))
    if not isinstance(raw, str):
        return None, "model: no output for this row", None
    if is_verifier(extractor):
        from xfinder_ray.stages.judge import from_verdict

        key, verdict, reason, _ = from_verdict(extractor[len(VERIFIER_PREFIX) :], raw)
        return key, reason, verdict
    return parse_output(raw, rec.key_answer_type, rec.answer_range), None, None


def extraction_matches(rec: Record, extracted: str, gold: str) -> bool:
    """The extraction-accuracy rule of benchmarks/baselines_accuracy.py: equal to the gold key answer,
    or, for math, both real answers and equivalent under our judge (math-verify)."""
    if extracted == gold:
        return True
    if rec.key_answer_type != "math" or NO_VALID_ANSWER in (extracted, gold):
        return False
    return bool(judge("math", rec.answer_range, extracted, gold))


def fanout_batch(batch: pd.DataFrame, *, extractors: list[str], comparators: list[str]) -> pa.Table:
    schema = wide_schema(extractors, comparators)
    extract = {e: get_record_extractor(e) for e in extractors if not is_model_extractor(e)}
    compare = {c: get_comparator(c) for c in comparators}
    cols: dict[str, list[Any]] = {name: [] for name in schema.names}
    memo: dict[tuple[Any, ...], bool] = {}  # extractors often agree: judge each distinct answer once

    for row in batch.to_dict("records"):
        for name in BASE_COLUMNS:
            value = row.get(name)
            if name == "source_row":
                value = int(value)
            elif isinstance(value, float) and value != value:  # NaN: pandas' null
                value = None
            cols[name].append(value)
        rec: Record | None = None
        if not isinstance(row.get("reject_reason"), str):
            rec = validate({f: row[f] for f in FIELDS})  # the validate stage already checked it
        gold = row.get("gold_key_answer")
        gold = gold if isinstance(gold, str) else None
        for e in extractors:
            extracted, error, judged = None, None, None  # judged: a verifier's verdict
            if rec is not None and is_model_extractor(e):
                extracted, error, judged = _model_extraction(row, rec, e)
            elif rec is not None:
                try:
                    extracted = extract[e](rec)
                except Exception as exc:  # a faulty extractor rejects the row for itself only
                    error = f"{type(exc).__name__}: {str(exc)[:300]}"
            cols[extracted_col(e)].append(extracted)
            cols[error_col(e)].append(error)
            ok = None
            if rec is not None and extracted is not None and gold is not None and not is_verifier(e):
                ok = extraction_matches(rec, extracted, gold)  # a verifier extracts nothing to check
            cols[extraction_ok_col(e)].append(ok)
            for c in comparators:
                verdict = None
                if is_verifier(e):
                    verdict = judged  # its verdict, whatever the comparator
                elif rec is not None and extracted is not None:
                    key = (
                        c,
                        rec.key_answer_type,
                        rec.task,
                        str(row["standard_answer_range"]),
                        extracted,
                        rec.correct_answer,
                    )
                    if key not in memo:
                        memo[key] = bool(compare[c](rec, extracted))
                    verdict = memo[key]
                cols[judgment_col(e, c)].append(verdict)
            if is_model_extractor(e):
                raw, lp = row.get(raw_col(e)), row.get(logprob_col(e))
                cols[raw_col(e)].append(raw if rec is not None and isinstance(raw, str) else None)
                cols[logprob_col(e)].append(
                    float(lp) if rec is not None and lp is not None and lp == lp else None
                )
    return pa.Table.from_pydict(cols, schema=schema)
