"""route (stages/route.py), without Ray: only beyond-doubt answers are settled, by the router."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.extractors.rules import CERTAIN, Extraction
from xfinder_ray.records import NO_VALID_ANSWER
from xfinder_ray.stages import route
from xfinder_ray.stages.route import ROUTED_BY, route_batch


def test_only_certain_answers_are_routed_and_rejected_rows_pass_through():
    df = batch(
        record(0, llm_output='{"answer": "A"}'),
        record(1, llm_output="Hmm, maybe A, or perhaps C; hard to say."),
        record(2, llm_output='{"answer": "B"}'),
        reasons=[None, None, "bad range"],
    )
    out = route_batch(df)
    assert out.loc[0, "raw_output"] == "A" and out.loc[0, "extractor"] == ROUTED_BY
    assert out.loc[0, "confidence"] == "certain" and pd.isna(out.loc[0, "no_answer_reason"])
    assert pd.isna(out.loc[1, "raw_output"]) and not out.loc[1, "routed"]
    assert pd.isna(out.loc[2, "raw_output"])  # rejected earlier: never routed
    assert route_batch.stats(out) == {"routed": 1}


def test_a_certain_non_answer_is_settled_with_its_reason(monkeypatch):
    real = route.strict_extraction
    # rules rating a non-answer `certain` (e.g. cut off mid-thought): the router settles it, reason and all
    loop = Extraction(NO_VALID_ANSWER, CERTAIN, "loop")
    monkeypatch.setattr(route, "strict_extraction", lambda rec: loop if rec.record_id == "r1" else real(rec))
    out = route_batch(batch(record(0, llm_output='{"answer": "A"}'), record(1, llm_output="again " * 50)))
    assert out.loc[1, "raw_output"] == NO_VALID_ANSWER and out.loc[1, "routed"]
    assert out.loc[1, "extractor"] == ROUTED_BY and out.loc[1, "no_answer_reason"] == "loop"
    assert pd.isna(out.loc[0, "no_answer_reason"])
