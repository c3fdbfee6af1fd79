"""route (stages/route.py), without Ray: only beyond-doubt answers are settled, by the router."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
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
    assert out.loc[0, "confidence"] == "certain"
    assert pd.isna(out.loc[1, "raw_output"]) and not out.loc[1, "routed"]
    assert pd.isna(out.loc[2, "raw_output"])  # rejected earlier: never routed
    assert route_batch.stats(out) == {"routed": 1}
