"""parse + judge (stages/judge.py), without Ray: verdicts, failed extractions as rejects, and the
comparisons stopped by a bound."""

from __future__ import annotations

import pandas as pd

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.extractors import rules
from xfinder_ray.records import NO_VALID_ANSWER, validate
from xfinder_ray.stages.judge import judge_batch


def test_verdicts_and_failed_extractions():
    df = batch(record(0), record(1), record(2), reasons=[None, None, "bad range"])
    df = df.assign(raw_output=["A", "", None], extract_error=[None, "prompt too long", None])
    out = judge_batch(df, math="math-verify", parse=False)
    assert bool(out.loc[0, "judgment"]) is True
    assert out.loc[1, "reject_reason"] == "extraction failed: prompt too long"
    assert out.loc[1, "rejected_by"] == "judge"
    assert out.loc[2, "reject_reason"] == "bad range" and pd.isna(out.loc[2, "judgment"])
    stats = judge_batch.stats(out)
    assert (stats["judged"], stats["correct"], stats["rejected"]) == (1, 1, 1)


def test_model_output_is_parsed_against_the_range():
    df = batch(record(0)).assign(raw_output=["C"])
    out = judge_batch(df, math="math-verify", parse=True)
    assert out.loc[0, "extracted_answer"] == "C" and bool(out.loc[0, "judgment"]) is False


def test_a_comparison_stopped_by_its_time_bound_is_marked_and_counted():
    math_row = dict(key_answer_type="math", standard_answer_range="a(n) number", correct_answer="7")
    df = batch(record(0, **math_row), record(1, **math_row)).assign(raw_output=["10^{10^{10}}", "7"])
    out = judge_batch(df, math="math-verify", parse=False)
    assert [None if pd.isna(v) else v for v in out["comparison_bound"]] == ["timeout", None]
    assert list(out["judgment"]) == [False, True]  # a bounded comparison is "not equivalent"
    stats = judge_batch.stats(out)
    assert stats["comparison_timeout"] == 1 and stats["judged"] == 2


def test_a_non_answer_keeps_its_reason_and_a_model_one_gets_rules_reason():
    hedge = "Hmm, maybe A, or perhaps C; hard to say."
    rows = [record(0), record(1, llm_output=hedge), record(2, llm_output=hedge), record(3)]
    # 0: an answer; 1: rules' own reason carried; 2: a model's non-answer with none (rules finds none
    # either: rules' reason); 3: a model's non-answer where rules does find an answer: none_found
    df = batch(*rows).assign(
        raw_output=["A", NO_VALID_ANSWER, "Z", "no idea"], no_answer_reason=[None, "hedged", None, None]
    )
    out = judge_batch(df, math="math-verify", parse=True)
    assert list(out["extracted_answer"]) == ["A"] + [NO_VALID_ANSWER] * 3
    rec = validate(rows[2])
    expected = rules.extract_scored(
        rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range
    ).reason
    assert pd.isna(out.loc[0, "no_answer_reason"]) and out.loc[1, "no_answer_reason"] == "hedged"
    assert out.loc[2, "no_answer_reason"] == expected != ""
    assert out.loc[3, "no_answer_reason"] == "none_found"


def test_a_verifier_judge_verdict_is_the_judgment():
    """With a verifier (extractor.name xverify | compassverifier) the judge reads the verdict from its
    output; the router's rows are still compared; a non-verdict is a reject keeping the text."""
    df = batch(*(record(i) for i in range(5))).assign(
        # CompassVerifier outputs (its README's labels; the CoT form's boxed verdict with a type)
        raw_output=["A", "B", "Final Judgment: \\boxed{C} - REPETITIVE", "I think it is fine", "A"],
        routed=[False, False, False, False, True],
        logprob=[-0.01, -0.7, -0.2, -3.0, float("nan")],
    )
    out = judge_batch(df, math="math-verify", parse=False, verifier="CompassVerifier-3B")
    assert list(out["judgment"][:3]) == [True, False, False]
    assert list(out["extracted_answer"][:3]) == ["", "", NO_VALID_ANSWER]
    assert out.loc[2, "no_answer_reason"] == "loop"  # REPETITIVE: a repetition loop
    # the verdict's log-probability is its confidence; none for a non-verdict or a routed row
    assert list(out["verdict_logprob"][:3]) == [-0.01, -0.7, -0.2]
    assert pd.isna(out.loc[3, "verdict_logprob"]) and pd.isna(out.loc[4, "verdict_logprob"])
    assert pd.isna(out.loc[3, "judgment"]) and out.loc[3, "rejected_by"] == "judge"
    assert out.loc[3, "reject_reason"] == "verifier gave no verdict: 'I think it is fine'"
    # The routed row carries rules' key answer "A", compared with the correct answer as usual.
    assert out.loc[4, "extracted_answer"] == "A" and bool(out.loc[4, "judgment"]) is True
    stats = judge_batch.stats(out)
    assert (stats["judged"], stats["correct"], stats["rejected"]) == (4, 2, 1)


def test_a_verifier_output_that_is_no_verdict_counts_against_the_response():
    from xfinder_ray.stages.aggregate import reject_cause

    assert reject_cause("judge", "verifier gave no verdict: 'hmm'") == "response"
