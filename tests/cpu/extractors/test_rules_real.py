"""`rules` on real model output: phenomena of real responses (own wording, modelled on what public
evaluation logs show), confidence tiers, bounded time on adversarial structured input, and floors on
the labelled real responses of ../shared/data/real_dev.jsonl (ahead of every RegEx baseline)."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import pytest

from xfinder_ray.extractors import get_record_extractor, rules
from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.extractors.rules_eval import extraction_matches, load_judge, load_rows, score_rows
from xfinder_ray.records import NO_VALID_ANSWER as NVA
from xfinder_ray.records import parse_answer_range, validate

REAL_DEV = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "real_dev.jsonl"
MATH_RANGE = parse_answer_range(None, "math")
OPTS = [("A", "a lever"), ("B", "a pulley"), ("C", "a wedge"), ("D", "a screw")]
TEN = [(chr(65 + i), f"{10 * (i + 1)} J") for i in range(10)]
YESNO = ["Yes", "No"]


def alpha(text: str, rng=OPTS) -> rules.Extraction:
    return rules.extract_scored("alphabet_option", "Which simple machine is an axe head?", text, rng)


def math(text: str, q: str = "How many apples are left?") -> rules.Extraction:
    return rules.extract_scored("math", q, text, MATH_RANGE)


def label(text: str, rng=YESNO) -> rules.Extraction:
    return rules.extract_scored("categorical_label", "Can a penguin fly?", text, rng)


# --- structured answers (the JSON a prompt asked for) --------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"reasoning": "An axe head splits wood.", "answer": "C"}', "C"),
        ('```json\n{\n  "reasoning": "splits wood",\n  "answer": "(C)"\n}\n```', "C"),
        # broken JSON: raw line breaks and LaTeX in the string, an unquoted comment, no closing brace
        ('{\n  "reasoning": "It splits\nwood: $\\frac{1}{2}$ ...",\n  "answer": "C" // a wedge\n', "C"),
        ("{'reasoning': 'splits wood', 'answer': 'C'}", "C"),
        # prose in the answer field
        ('{"reasoning": "...", "answer": "C (with a caveat about the handle)"}', "C"),
        ('{"reasoning": "...", "answer": "(C) a wedge"}', "C"),
        ('{"reasoning": "...", "answer": "a wedge"}', "C"),
        # several blocks: a corrected second object wins
        (
            '```json\n{"reasoning": "lever?", "answer": "A"}\n```\nCorrection:\n```json\n{"answer": "C"}\n```',
            "C",
        ),
        # placeholders, null, none of the options, two options -> no valid answer
        ('{"reasoning": "...", "answer": "___"}', NVA),
        ('{"reasoning": "...", "answer": " "}', NVA),
        ('{"reasoning": "...", "answer": null}', NVA),
        ('{"reasoning": "...", "answer": "None of the options fits"}', NVA),
        ('{"reasoning": "...", "answer": "C (or D, both work)"}', NVA),
        ('{"reasoning": "...", "answer": "A and C"}', NVA),
        # a later explicit correction in prose after the object
        ('{"reasoning": "...", "answer": "A"}\n\nOn reflection the correct answer is C, not A.', "C"),
        # commentary after the object that names options without answering changes nothing
        ('{"reasoning": "...", "answer": "C"}\n\nWhy not the others: (A) is incorrect, (B) is wrong.', "C"),
    ],
)
def test_structured_alpha(text, expected):
    assert alpha(text).answer == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"reasoning": "12 - 5 = 7", "answer": "7"}', "7"),
        ('{"reasoning": "...", "answer": "There are 7 apples left."}', "7"),
        ('{"reasoning": "...", "answer": "12 - 5 = 7 apples"}', "7"),
        ('{"reasoning": "...", "answer": "\\\\frac{7}{2}"}', "\\frac{7}{2}"),
        ('{"reasoning": "...", "answer": "2 \\u221a3"}', "2 √3"),
        ('{"reasoning": "...", "answer": "infinite"}', "infinite"),
        ('{"reasoning": "...", "answer": "___"}', NVA),
        ('{"reasoning": "...", "answer": "N/A"}', NVA),
        # a field quoted inside the reasoning string
        ('{"reasoning": "So 12 - 5 = 7. Answer: \\"answer\\": \\"7\\""}', "7"),
        # the answer to the question asked, not to the questions the model went on to invent
        (
            '{"reasoning": "12 - 5", "answer": "7"}\n\n## Question:\nTom has 9 pears ...\n\n'
            '{"reasoning": "9 - 2", "answer": "7"}\n\nQuestion: Ann has 4 ...\n{"answer": "2"}',
            "7",
        ),
        # "35, not 38" after the object corrects it
        ('{"reasoning": "...", "answer": "8"}\n\nThe right count is 7, not 8.', "7"),
        # cut off inside the object before any answer field: only prose before it can answer
        ('{\n  "reasoning": "First 12 apples, then she eats 5, so 12 - ', NVA),
        ('She had 12 and ate 5: 12 - 5 = 7.\n\n```json\n{\n  "reasoning": "12 - 5 = ', "7"),
        # ... a dict in code is not that object (Qwen2.5-Math-7B's scipy check, SkyThought's MATH500 logs)
        (
            "We check it numerically.\n```python\ncons = {'type': 'eq', 'fun': constraint}\nprint(f(x))\n```\n"
            "```output\n2.000000000000001\n```\nThe minimum value is indeed \\(\\boxed{2}\\).",
            "2",
        ),
        (
            'p = {\n  "9th": {"males": 41.1, "females": 39.4},\n  "10th": {"males": 34.4\nSo the answer is 12.',
            "12",
        ),
    ],
)
def test_structured_math(text, expected):
    assert math(text).answer == expected


# --- prose phenomena of real responses -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # two-stage prompting appends a trigger that names the labels: its own "Yes" is no answer
        ("Penguins have wings but cannot fly.\nTherefore, the answer (Yes or No) is No.", "No"),
        ("Penguins cannot fly at all.\nTherefore, the answer (Yes or No) is", NVA),
        # a verdict that opens the response stands although the rest is cut off
        ("No, penguins cannot fly. Their wings evolved into flippers that are used for", "No"),
    ],
)
def test_label_triggers_and_opening_verdicts(text, expected):
    assert label(text).answer == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Let's think.\nTherefore, the answer (arabic numerals) is 7.", "7"),
        ("Let's think.\nTherefore, the answer (arabic numerals) is seven.", "7"),
        ("She ate 5 of 12: 12-5=<<12-5=7>>7 apples.\nA: 7", "7"),
        ("Answer:\n7 apples are left in the basket.", "7"),
        ("The answer is twenty-one.", "21"),
        ("The answer is two hundred and five.", "205"),
        ("The final answer is 4! / 2 = 24 / 2 = 12.", "12"),
        # cut off inside a formula, and a formula's exponents are not results
        ("We solve it: $z = \\frac{-(1)\\pm\\sqrt{900-1540+829", NVA),
        ("There is no way to find a^2 - b^2 + c^2 from these equations alone.", NVA),
    ],
)
def test_math_prose(text, expected):
    assert math(text).answer == expected


@pytest.mark.parametrize(
    "text",
    [
        # capitals that are variables, pronouns or list markers are not claims in long text
        "Let $G$ be the gravitational constant and $E$ the energy. Then the work done is W = F d, and "
        "using the relation for a spring we get the work for the first extension, and then the",
        "I cannot determine the stored energy without the spring constant, which the question does not "
        "give; the energy depends on k and on the square of the extension x, so more is needed here.",
        "a) The sense strand is read 5' to 3'. b) The template strand is read 3' to 5'. Both happen "
        "during transcription and neither says how much work was done on the spring in this question.",
        # an answer phrase that names no option, and a response cut off right after opening a formula
        "Only (iii) holds, and no option says so.\n\nThe answer is (None of the provided options are correct).",
        "The work is W = F d. With the values of (C) and (D) substituted we obtain $",
        # hedges and several letters
        "The answer is (A) or (B).",
        "The answer is A, C and E.",
    ],
)
def test_no_claim_from_variables_pronouns_or_hedges(text):
    assert alpha(text, TEN).answer == NVA


def test_among_a_through_e_is_not_an_answer():
    text = "The axe splits wood like a wedge.\nTherefore, among A through D, the answer is C."
    assert alpha(text).answer == "C"
    assert alpha("Hmm.\nTherefore, among A through D, the answer is").answer == NVA


# --- confidence ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tier",
    [
        ('{"reasoning": "splits wood", "answer": "C"}', "certain"),
        ('```json\n{\n  "reasoning": "splits wood",\n  "answer": "C"\n}\n```', "certain"),
        ("It splits wood.\nThe answer is (C).", "certain"),
        ('{"reasoning": "splits wood", "answer": "C"}\nThat is my answer.', "likely"),  # text after
        ('{"reasoning": "raw\nbreak", "answer": "C"}', "likely"),  # not strict JSON
        ('{"reasoning": "...", "answer": "(C) a wedge"}', "likely"),  # prose in the field
        ("An axe head is a wedge, so the answer is C, I think. Probably.", "likely"),
        ("It splits wood. A wedge does that.", "unsure"),
    ],
)
def test_confidence_tiers(text, tier):
    e = alpha(text)
    assert e.confidence == tier, e
    assert e.confidence in rules.CONFIDENCE_TIERS


def test_router_settles_only_certain():
    def rec(text):
        return validate(
            dict(
                record_id="r",
                model="m",
                task="t",
                key_answer_type="alphabet_option",
                question="q",
                llm_output=text,
                standard_answer_range=[list(o) for o in OPTS],
                correct_answer="C",
            )
        )

    assert strict_answer(rec('{"reasoning": "x", "answer": "C"}')) == "C"
    assert strict_answer(rec('{"reasoning": "x", "answer": "(C) a wedge"}')) is None
    assert strict_answer(rec('{"reasoning": "x", "answer": "___"}')) is None


# --- bounds ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '"answer": "' * 50_000,
        '{"answer": "' + "\\" * 200_000 + '"}',
        "{" * 100_000 + '"reasoning": "x"',
        '{"reasoning": "' + "the answer (a or b) is " * 20_000,
        '"answer": {' * 30_000,
        "Therefore, among A through D, " * 20_000,
    ],
)
def test_adversarial_structured_input_is_bounded(text):
    t0 = time.process_time()
    for kat, rng in (("alphabet_option", OPTS), ("math", MATH_RANGE)):
        out = rules.extract_scored(kat, "q", text, rng)
        assert isinstance(out.answer, str)
    assert time.process_time() - t0 < 3.0


# --- floors on labelled real responses -------------------------------------------------------------

needs_real_dev = pytest.mark.skipif(not REAL_DEV.exists(), reason="needs ../shared/data/real_dev.jsonl")


@pytest.fixture(scope="module")
def real_rows():
    return load_rows(REAL_DEV)


@pytest.fixture(scope="module")
def real_scores(real_rows):
    return score_rows(real_rows, judge=load_judge())


def _rate(items, key):
    return sum(r[key] for r in items) / len(items)


@needs_real_dev
def test_real_dev_floors(real_rows, real_scores):
    assert _rate(real_scores, "extraction_ok") >= 0.95
    assert _rate(real_scores, "judgment_ok") >= 0.97
    hard = [s for s, r in zip(real_scores, real_rows, strict=True) if r["stratum"] == "hard"]
    assert len(hard) >= 50 and _rate(hard, "extraction_ok") >= 0.90


@needs_real_dev
@pytest.mark.parametrize("baseline", ["opencompass", "lm-eval", "ultraeval"])
def test_real_dev_ahead_of_every_regex_baseline_per_type(real_rows, real_scores, baseline):
    judge = load_judge()
    extract = get_record_extractor(baseline)
    ours: dict[str, list[bool]] = defaultdict(list)
    theirs: dict[str, list[bool]] = defaultdict(list)
    for row, s in zip(real_rows, real_scores, strict=True):
        rec = validate(row)
        got = extract(rec)
        ok = extraction_matches(rec.key_answer_type, rec.answer_range, got, row["gold_key_answer"], judge)
        theirs[rec.key_answer_type].append(ok)
        ours[rec.key_answer_type].append(s["extraction_ok"])
    for kat in ours:
        assert sum(ours[kat]) / len(ours[kat]) > sum(theirs[kat]) / len(theirs[kat]), kat


@needs_real_dev
def test_real_dev_router_precision_and_share(real_rows):
    judge = load_judge()
    routed = exact = 0
    for row in real_rows:
        rec = validate(row)
        answer = strict_answer(rec)
        if answer is None:
            continue
        routed += 1
        exact += extraction_matches(
            rec.key_answer_type, rec.answer_range, answer, row["gold_key_answer"], judge
        )
    assert routed >= 0.35 * len(real_rows)
    assert exact / routed >= 0.995
