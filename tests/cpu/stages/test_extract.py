"""extract with a record-level extractor (stages/extract.py), without Ray."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.stages.extract import extract_stats, record_batch


def test_rules_extract_valid_rows_with_their_tier():
    df = batch(record(0), record(1, llm_output="I think (C) Fifteenth."), reasons=[None, None])
    df.loc[len(df)] = {**record(2), "reject_reason": "bad", "source_file": "in.jsonl", "source_row": 2}
    out = record_batch(df, name="rules")
    assert list(out["raw_output"][:2]) == ["A", "C"]
    assert out.loc[0, "confidence"] in ("certain", "likely", "unsure")
    assert pd.isna(out.loc[2, "raw_output"])  # rejected rows are never extracted
    assert extract_stats(out) == {"extracted": 2, "errors": 0}


def test_a_baseline_extractor_has_no_tier():
    out = record_batch(batch(record(0)), name="lm-eval")
    assert pd.isna(out.loc[0, "confidence"])
    assert isinstance(out.loc[0, "raw_output"], str)


def test_model_failures_are_counted_as_errors():
    df = batch(record(0), record(1)).assign(raw_output=["A", ""], extract_error=[None, "prompt too long"])
    assert extract_stats(df) == {"extracted": 1, "errors": 1}
