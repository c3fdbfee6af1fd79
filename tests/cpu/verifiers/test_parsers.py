"""Verifier output -> Verdict, on verdict texts the verifiers' own repositories publish."""

from __future__ import annotations

import pytest

from xfinder_ray.verifiers import parse_verdict
from xfinder_ray.verifiers.compassverifier import parse as parse_cv
from xfinder_ray.verifiers.xverify import parse as parse_xverify

# --- xVerify -----------------------------------------------------------------------------------------

# README.md "Evaluation Examples" (IAAR-Shanghai/xVerify@5e3606a): the "xVerify_judgment" of its seven
# examples is "Correct" (1, 2, 4, 5, 6, 7) or "Incorrect" (3). judge_prompt.py asks for "[Correct]" or
# "[Incorrect]"; eval.py stat_results accepts any case and surrounding whitespace.
XVERIFY_VERDICTS = [
    ("Correct", "correct"),
    ("Incorrect", "incorrect"),
    ("[Correct]", "correct"),
    ("[Incorrect]", "incorrect"),
    (" correct\n", "correct"),
    ("INCORRECT", "incorrect"),
    ("**Incorrect**.", "incorrect"),
    ("[Correct].", "correct"),
    ("Judgement: [Incorrect]", "incorrect"),
]


@pytest.mark.parametrize("text,verdict", XVERIFY_VERDICTS)
def test_xverify_verdicts(text, verdict):
    v = parse_xverify(text)
    assert (v.verdict, v.label, v.detail, v.raw, v.parsed) == (
        verdict,
        verdict.capitalize(),
        None,
        text,
        True,
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The output sentence is correct.",  # a sentence, not the one-word label
        "Correct or Incorrect",
        "Incorrect answer",
        "In correct",
        "[Correct] [Incorrect]",
        "Judgement:",
    ],
)
def test_xverify_non_verdicts_are_invalid_never_incorrect(text):
    v = parse_xverify(text)
    assert (v.verdict, v.label, v.detail, v.raw, v.parsed) == ("invalid", None, "unparsed", text, False)


# --- CompassVerifier ---------------------------------------------------------------------------------


# src/cv_eval.ipynb (open-compass/CompassVerifier@2d7cba6), "For straight forward verification": the
# three samples' outputs with CV_PROMPT, also in the README's "outputs" block.
@pytest.mark.parametrize("text,verdict", [("A", "correct"), ("B", "incorrect"), ("C", "invalid")])
def test_compassverifier_plain_outputs(text, verdict):
    v = parse_cv(text)
    assert (v.verdict, v.label, v.parsed) == (verdict, text, True)
    assert v.detail == ("INVALID" if text == "C" else None)  # CV_PROMPT: "C: INVALID"


# The same notebook, "For COT verification": the three outputs with CV_COT_PROMPT, verbatim.
COT_A = """Analysis step by step:

1. **Validity Check**:
   - The candidate's answer is complete, not repetitive, and not a refusal. It provides a detailed explanation and arrives at a final answer.

2. **Question Requirements**:
   - The question asks for the probability that Harold gets at least as many heads as tails when tossing a nickel four times. The standard answer is \\(\\frac{11}{16}\\), which is approximately 0.6875.

3. **Comparison of Answers**:
   - The candidate's final answer is \\(\\boxed{0.6875}\\).
   - The standard answer is \\(\\frac{11}{16}\\), which is numerically equivalent to 0.6875.
   - The candidate's answer matches the standard answer in both value and meaning, despite the difference in presentation (decimal vs. fraction).

4. **Numerical Precision**:
   - The candidate's answer is precise and matches the standard answer when converted to decimal form.

Final Judgment: \\boxed{A} - CORRECT"""

COT_B = """Analysis step by step:

1. **Validity Check**:
   - The candidate's answer is complete, not repetitive, and not a refusal. It provides a detailed explanation and concludes with a final answer.

2. **Question Requirements**:
   - The question asks to factor the polynomial completely over the set of polynomials with integer coefficients. The standard answer provides a factored form: \\((x^2 + 1)(x^2 - 4x + 13)\\).

3. **Comparison of Answers**:
   - The candidate's final answer is \\(x^4 - 4x^3 + 14x^2 - 4x + 13\\), which is the original polynomial. This does not match the standard answer \\((x^2 + 1)(x^2 - 4x + 13)\\).
   - The candidate concludes that the polynomial does not factor further, which contradicts the standard answer, which provides a complete factorization.

4. **Conclusion**:
   - The candidate's answer does not match the standard answer. The standard answer provides a complete factorization, while the candidate claims the polynomial cannot be factored further.

Final Judgment: \\boxed{B} - INCORRECT"""

COT_C = """Analysis step by step: [
1. First, check if the candidate's answer is INCOMPLETE, REPETITIVE, or a REFUSAL. The candidate's answer is cut off mid-sentence at step 15, specifically during the calculation of $\\cos 2 \\alpha$. Therefore, it is INCOMPLETE.
2. Since the answer is INCOMPLETE, we do not proceed to compare it with the standard answer.
]

Final Judgment: \\boxed{C} - INCOMPLETE"""


@pytest.mark.parametrize(
    "text,verdict,label,detail",
    [
        (COT_A, "correct", "A", "CORRECT"),
        (COT_B, "incorrect", "B", "INCORRECT"),
        (COT_C, "invalid", "C", "INCOMPLETE"),
    ],
)
def test_compassverifier_cot_outputs(text, verdict, label, detail):
    v = parse_cv(text)
    assert (v.verdict, v.label, v.detail, v.raw) == (verdict, label, detail, text)


@pytest.mark.parametrize(
    "text,label,detail",
    [
        # CV_COT_PROMPT's grading scale: C must name its type
        ("Final Judgment: \\boxed{C} - REPETITIVE", "C", "REPETITIVE"),
        ("Final Judgment: \\boxed{C} - REFUSAL", "C", "REFUSAL"),
        ("Final Judgment: \\boxed{C} - <REFUSAL>", "C", "REFUSAL"),
        ("Final Judgment: \\boxed{C}", "C", "INVALID"),  # no type given
        ("Final Judgment: \\boxed{ B }", "B", None),
        # the repository's process_judgment takes the last box; a box in the analysis is not the verdict
        ("(1) not \\boxed{C}: complete.\nFinal Judgment: \\boxed{A} - CORRECT", "A", "CORRECT"),
        # its fallback: the letter after "Final Judgment:" without a box
        ("Analysis...\nFinal Judgment: B - INCORRECT", "B", "INCORRECT"),
        # CV_PROMPT's own wording: "A: CORRECT", and "reply with either CORRECT, INCORRECT, or INVALID"
        ("A: CORRECT", "A", "CORRECT"),
        ("INCORRECT", "B", "INCORRECT"),
        ("Invalid.", "C", "INVALID"),
        ("(A)", "A", None),
        ("\\boxed{B}", "B", None),
    ],
)
def test_compassverifier_label_forms(text, label, detail):
    v = parse_cv(text)
    assert (v.label, v.detail, v.parsed) == (label, detail, True)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "D",
        "The candidate is right.",
        "Final Judgment: \\boxed{A} - INCORRECT",  # letter and type disagree: no verdict to trust
        "C - CORRECT",
        "Final Judgment: \\boxed{A/B/C} - <CORRECT/INCORRECT/INCOMPLETE/REPETITIVE/REFUSAL>",  # the format echoed
        "Analysis step by step: [\n1. The candidate's answer is cut off",  # the verifier itself cut off
        "A B",
    ],
)
def test_compassverifier_non_verdicts_are_invalid_never_incorrect(text):
    v = parse_cv(text)
    assert (v.verdict, v.label, v.detail, v.raw, v.parsed) == ("invalid", None, "unparsed", text, False)


def test_parse_verdict_dispatches_on_the_checkpoint():
    # "A" is CompassVerifier's "correct" but no xVerify verdict
    assert parse_verdict("CompassVerifier-7B", "A").verdict == "correct"
    assert parse_verdict("xVerify-9B-C", "A").parsed is False
    assert parse_verdict("xVerify-9B-C", "Incorrect").verdict == "incorrect"
    assert parse_verdict("CompassVerifier-3B", COT_C).detail == "INCOMPLETE"
    with pytest.raises(ValueError, match="unknown verifier checkpoint"):
        parse_verdict("xFinder-qwen1505", "A")
