"""prompt (stages/prompt.py), without Ray: the training-exact prompt for the rows a model must read."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.prompts import render_prompt
from xfinder_ray.records import parse_answer_range
from xfinder_ray.stages.prompt import prompt_batch

KW = dict(checkpoint="xFinder-qwen1505", fmt="training", max_prompt_tokens=2016)


def test_prompts_for_valid_unrouted_rows_only_grouped_by_question():
    rows = [record(0, question="Q b"), record(1, question="Q a"), record(2, question="Q c"), record(3)]
    df = batch(*rows, reasons=[None, None, "bad", None])
    df["routed"] = [False, False, False, True]
    out = prompt_batch(df, **KW)
    by_id = out.set_index("record_id")
    r1 = rows[1]
    expected = render_prompt(
        r1["question"],
        r1["llm_output"],
        parse_answer_range(r1["standard_answer_range"], r1["key_answer_type"]),
        checkpoint=KW["checkpoint"],
        fmt=KW["fmt"],
        max_prompt_tokens=KW["max_prompt_tokens"],
    ).prompt
    assert by_id.loc["r1", "prompt"] == expected
    assert pd.isna(by_id.loc["r2", "prompt"])  # rejected
    assert pd.isna(by_id.loc["r3", "prompt"])  # settled by the router
    assert list(out["question"])[:2] == ["Q a", "Q b"]  # sorted, so shared prefixes meet
    assert prompt_batch.stats(out) == {"prompted": 2, "truncated": 0}


def test_a_long_response_is_truncated_and_counted():
    df = batch(record(0, llm_output="word " * 5000))
    out = prompt_batch(df, **KW)
    assert bool(out.loc[0, "truncated"]) is True
    assert prompt_batch.stats(out) == {"prompted": 1, "truncated": 1}
