"""validate (stages/validate.py), without Ray."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.stages.validate import validate_batch


def test_invalid_records_are_rejected_with_the_reason_and_the_stage():
    df = batch(record(0), record(1, correct_answer=None), record(2, key_answer_type="essay"), record(3))
    out = validate_batch(df)
    reasons = [None if pd.isna(r) else r for r in out["reject_reason"]]
    assert reasons[0] is None and reasons[3] is None
    assert "correct_answer" in reasons[1]
    assert "essay" in reasons[2]
    assert list(out["rejected_by"].fillna("-")) == ["-", "validate", "validate", "-"]
    assert validate_batch.stats(out) == {"rejected": 2}


def test_an_earlier_reject_keeps_its_reason():
    df = batch(record(0, correct_answer=None), reasons=["line is not valid JSON"])
    out = validate_batch(df)
    assert list(out["reject_reason"]) == ["line is not valid JSON"]
    assert out["rejected_by"].isna().all()  # rejected while reading, not by validate
    assert validate_batch.stats(out) == {"rejected": 0}
