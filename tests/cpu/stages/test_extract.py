"""extract with a record-level extractor (stages/extract.py), without Ray."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.extractors import rules
from xfinder_ray.records import NO_VALID_ANSWER, validate
from xfinder_ray.stages.extract import extract_stats, record_batch

NO_ANSWER = "Hmm, maybe A, or perhaps C; hard to say."  # rules: [No valid answer]


def _rules_reason(row: dict) -> str:
    rec = validate(row)
    e = rules.extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
    assert e.answer == NO_VALID_ANSWER
    return e.reason


def test_rules_extract_valid_rows_with_their_tier():
    df = batch(record(0), record(1, llm_output="I think (C) Fifteenth."), reasons=[None, None])
    df.loc[len(df)] = {**record(2), "reject_reason": "bad", "source_file": "in.jsonl", "source_row": 2}
    out = record_batch(df, name="rules")
    assert list(out["raw_output"][:2]) == ["A", "C"]
    assert out.loc[0, "confidence"] in ("certain", "likely", "unsure")
    assert pd.isna(out.loc[2, "raw_output"])  # rejected rows are never extracted
    assert extract_stats(out) == {"extracted": 2, "errors": 0}


def test_rules_gives_its_reason_for_a_non_answer_and_null_for_an_answer():
    rows = [record(0), record(1, llm_output=NO_ANSWER), record(2, llm_output="")]
    out = record_batch(batch(*rows), name="rules")
    assert out.loc[0, "raw_output"] == "A" and pd.isna(out.loc[0, "no_answer_reason"])
    for i in (1, 2):
        assert out.loc[i, "raw_output"] == NO_VALID_ANSWER
        assert out.loc[i, "no_answer_reason"] == _rules_reason(rows[i])
        assert out.loc[i, "no_answer_reason"] in rules.NO_ANSWER_REASONS


def test_a_baseline_extractor_has_no_tier():
    out = record_batch(batch(record(0)), name="lm-eval")
    assert pd.isna(out.loc[0, "confidence"])
    assert isinstance(out.loc[0, "raw_output"], str)


def test_a_baseline_non_answer_takes_rules_reason_when_rules_has_none_either():
    rows = [record(0, llm_output=NO_ANSWER), record(1, llm_output="")]
    out = record_batch(batch(*rows), name="lm-eval")
    for i in (0, 1):
        assert out.loc[i, "raw_output"] == NO_VALID_ANSWER
        assert out.loc[i, "no_answer_reason"] == _rules_reason(rows[i])


def test_model_failures_are_counted_as_errors():
    df = batch(record(0), record(1)).assign(raw_output=["A", ""], extract_error=[None, "prompt too long"])
    assert extract_stats(df) == {"extracted": 1, "errors": 1}
