"""The strict router settles only responses whose key answer is beyond doubt."""

import json
from pathlib import Path

import pytest

from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.records import MATH_ANSWER_RANGE, validate

KAF_DEV = Path(__file__).resolve().parents[4] / "shared" / "data" / "kaf_dev.jsonl"
OPTIONS = [["A", "work"], ["B", "play"], ["C", "sleep"]]


def rec(kat, out, rng=None):
    rng = {"alphabet_option": OPTIONS, "math": MATH_ANSWER_RANGE}.get(kat, rng) if rng is None else rng
    correct = {"alphabet_option": "B", "math": "4"}.get(kat) or rng[0]
    return validate(
        dict(
            record_id="r",
            model="m",
            task="t",
            key_answer_type=kat,
            question="q?",
            llm_output=out,
            standard_answer_range=json.dumps(rng) if not isinstance(rng, str) else rng,
            correct_answer=correct,
        )
    )


@pytest.mark.parametrize(
    "kat,out,rng,expected",
    [
        ("alphabet_option", "Reasoning...\nThe answer is (B).", None, "B"),
        ("alphabet_option", "Reasoning...\nThe answer is B. play", None, "B"),
        ("alphabet_option", "**Answer: C**", None, "C"),
        ("categorical_label", "It asks where.\nThe answer is Location.", ["Person", "Location"], "Location"),
        ("math", "2 + 2 = 4\n#### 4", None, "4"),
        ("math", "So the final answer is $\\boxed{-12.5}$.", None, "-12.5"),
        # rules-3: a chain that concludes on one compact value, stated once, is settled too
        ("math", "Half of one is a half.\nThe answer is \\frac{1}{2}.", None, "\\frac{1}{2}"),
        ("alphabet_option", "B fits.\nThe answer is (B).\n\nQuestion: next one", None, "B"),
    ],
)
def test_settles_restricted_format_answers(kat, out, rng, expected):
    assert strict_answer(rec(kat, out, rng)) == expected


@pytest.mark.parametrize(
    "kat,out,rng",
    [
        ("alphabet_option", "The answer is A.\nWait, no. The answer is (B).", None),  # two claims
        ("alphabet_option", "The answer is (D).", None),  # not in range
        ("alphabet_option", "The answer is B. sleep", None),  # letter and text disagree
        ("alphabet_option", "The answer is B or C.", None),  # hedge
        ("alphabet_option", "The answer is (B).\nBut I am not sure.", None),  # not the last line
        ("alphabet_option", "I think B.", None),  # no restricted claim
        ("categorical_label", "The answer is probably Location.", ["Person", "Location"]),
        ("math", "The answer is x^2 + 2x + 1 for every x.", None),  # a spaced formula: the model reads it
        ("math", "The answer is 4, or maybe 5.", None),
        ("math", "First \\boxed{3}, then the answer is \\boxed{4}.", None),  # two boxed values
        ("math", "", None),
    ],
)
def test_sends_everything_else_to_the_model(kat, out, rng):
    assert strict_answer(rec(kat, out, rng)) is None


@pytest.mark.skipif(not KAF_DEV.exists(), reason="needs ../shared/data/kaf_dev.jsonl")
def test_precision_on_labelled_dev_set_is_at_least_99_5_percent():
    rows = [json.loads(line) for line in KAF_DEV.read_text().splitlines() if line.strip()]
    routed = correct = 0
    for r in rows:
        answer = strict_answer(validate(r))
        if answer is not None:
            routed += 1
            correct += answer == r["gold_key_answer"]
    assert routed >= 0.15 * len(rows)  # it must settle a real share, not nothing
    assert correct / routed >= 0.995
