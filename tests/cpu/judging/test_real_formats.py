"""The math comparator on answer formats from real model output and the MATH / GSM8K golds.

One table per format class, true and false pairs (extracted, gold, verdict). Several rows are real
answer fields from the public ZeroEval result files (math-l5 / gsm), kept verbatim. The policies these
rows pin down are in docs/judging.md ("Real-output formats").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xfinder_ray.judging import judge, warm_up
from xfinder_ray.judging.math_normalize import compare_fast, prepare
from xfinder_ray.records import MATH_ANSWER_RANGE

SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"


@pytest.fixture(scope="module", autouse=True)
def _worker_started():
    warm_up()


def mj(extracted: str, correct: str) -> bool:
    return judge("math", MATH_ANSWER_RANGE, extracted, correct)


REAL_FORMATS = {
    "MATH thousands separator ,\\!": [
        ("11,\\! 111,\\! 100", "11111100", True),
        ("11111100", "11,\\! 111,\\! 100", True),
        ("\\$1,\\!000", "1000", True),
        ("10,\\!000", "10000", True),
        ("11,\\! 111,\\! 100", "11111110", False),
        ("1 000", "1,000", True),  # spaces as the separator
    ],
    "currency and units around the number": [
        ("1,000.99\u20ac", "1000.99", True),
        ("1,000.99m\u00b2", "1000.99", True),
        ("\u20ac1,000.99", "1000.99", True),
        ("\u00a35", "5", True),
        ("USD 5", "5", True),
        ("USD5", "5", True),
        ("5 USD", "5", True),
        ("50\u00a2", "50", True),
        ("1,000\u00a3", "1000", True),
        ("5 bags", "5", True),
        ("50 cm", "50", True),
        ("5\\text{ cm}^2", "5", True),
        ("12m^2", "12", True),
        ("5\\mbox{ dollars}", "5", True),
        ("2.75 dollars", "\\$2.75", True),
        ("18\\sqrt{3}\\text{ cm}^2", "18\\sqrt{3}", True),
        ("1,000.99\u20ac", "1000.9", False),
        ("5x^2", "5", False),  # a variable, not a unit
        ("5s^2", "5", False),  # only metres are read glued to the number with a power
        ("5 \\pi", "5", False),
    ],
    "scale words": [
        ("1.2 million", "1200000", True),
        ("1.2 \\text{ million}", "1200000", True),
        ("5 million dollars", "5000000", True),
        ("3 thousand", "3000", True),
        ("1.2 million", "1.2", False),  # "million" is never a unit word
    ],
    "decimal comma": [
        ("0,111", "0.111", True),
        ("1,5", "1.5", True),
        ("12,75", "12.75", True),
        ("12,5%", "12.5", True),
        ("1.000,99", "1000.99", True),
        ("-0,5", "-0.5", True),
        ("3,14159", "3.14159", True),  # 4+ digits: not a thousands group
        ("0,111", "111", False),  # a zero leading group is not a thousands group
        ("1,000", "1", False),  # 3 digits after a nonzero group: thousands
        ("1,000", "1000", True),
        ("1,2", "12", False),
        ("1,2", "2,1", True),  # two such answers compare as lists
        ("1, 5", "1.5", False),  # a space after the comma: a list
        ("1.5", "1,5", False),  # only the extracted side: a gold's comma is a list or thousands
        ("1,5", "1,50", False),  # two comma answers: lists {1, 5} and {1, 50}
    ],
    "decimal rounding of a repeating fraction": [
        ("0.0833333333333333", "\\frac{1}{12}", True),
        ("0.08333333333333333", "\\frac{1}{12}", True),
        ("0.166667", "\\frac16", True),  # rounded
        ("0.166666", "\\frac16", True),  # truncated
        ("1.6666666666666667", "\\frac{5}{3}", True),
        ("0.6666666666666666", "\\frac23", True),
        ("0.142857142857", "\\frac17", True),
        ("8.33333e-2", "\\frac{1}{12}", True),
        ("33.3333\\%", "\\frac{1}{3}", True),
        ("\\frac{1}{12}", "0.0833333333333333", True),  # either side
        ("0.166668", "\\frac16", False),  # off by 2 in the last digit
        ("0.16667", "\\frac16", False),  # 5 significant digits: too short
        ("0.083333", "\\frac{1}{12}", False),  # leading zeros are not significant
        ("0.0833333", "\\frac{1}{12}", True),
        ("0.33", "\\frac13", False),
        ("0.1", "\\frac19", False),
        ("1.6667", "\\frac53", False),
        ("4.99999999", "5", False),  # an integer gold is exact
        ("0.333333", "0.3333333", False),  # two decimals: the answer may not be less precise
        ("1000000.5", "1000000", False),
    ],
    "repeating decimals": [
        ("0.\\overline{1}", "\\frac{1}{9}", True),
        ("0.1\\overline{6}", "\\frac{1}{6}", True),
        ("0.(3)", "\\frac13", True),
        ("0.1(6)", "\\frac16", True),
        ("0.\\overline{142857}", "\\frac17", True),
        ("1.\\overline{6}", "\\frac53", True),
        ("0.\\bar{3}", "\\frac13", True),
        ("x = 0.\\overline{6}", "\\frac23", True),
        ("\\frac{2}{3}", "0.\\overline{6}", True),
        ("0.\\overline{3}", "0.333333", True),
        ("0.1666...", "\\frac16", True),
        ("0.166\u2026", "\\frac16", True),
        ("0.6944...", "\\frac{25}{36}", True),
        ("0.142857142857\\ldots", "\\frac17", True),
        ("0.3", "0.\\overline{3}", False),  # (gold "0.3" states 1 decimal: see test_precision.py)
        ("0.\\overline{3}", "\\frac{3}{10}", False),
        ("31.\\overline{6}", "31", False),  # ZeroEval math-l5
        ("0.1\\overline{6}", "\\frac{1}{5}", False),
    ],
    "mixed numbers": [
        ("2\\frac{1}{2}", "2.5", True),
        ("2 1/2", "2.5", True),
        ("2 1/2", "\\frac{5}{2}", True),
        ("6 \\frac{1}{4}", "\\frac{25}{4}", True),
        ("-6\\frac{1}{4}", "-6.25", True),
        ("1\\frac{1}{2}", "\\frac{3}{2}", True),
        ("2\u00bd", "2.5", True),
        ("33\\frac{1}{3}\\%", "\\frac13", True),
        ("2 1/2", "21/2", False),  # the space is not layout here
        ("6\\frac{1}{4}", "1.5", False),
    ],
    "JSON escaping damage": [
        ("\\\\frac{1}{2}", "0.5", True),
        ("2\\\\sqrt{3}", "\\sqrt{12}", True),
        ("-\x0crac{1}{6}", "-\\frac{1}{6}", True),  # "\f" eaten by JSON: ZeroEval math-l5
        ("\x08oxed{5}", "5", True),
        ("3\times 10^{2}", "300", True),  # "\t" eaten
        ("5\tcm", "5", True),  # a real tab before a word that is no command: layout
        ("67\\", "67", True),  # a stray trailing backslash: ZeroEval gsm
        ("\\\\begin{pmatrix}1\\\\\\\\2\\\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", True),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{pmatrix}1\\\\3\\end{pmatrix}", False),
        ("-\x0crac{12}{5}", "5", False),
    ],
    "quotes, backticks, markdown": [
        ("`$26`", "26", True),  # ZeroEval gsm
        ('"96"', "96", True),
        ("\u201c42\u201d", "42", True),
        ("**3**", "3", True),
        ("___3___", "3", True),  # ZeroEval math-l5
        ('"$8.60"', "8", False),
        ("___", "25", False),
    ],
    "Unicode scripts": [
        ("1112112\u2083", "1112112_3", True),  # ZeroEval math-l5
        ("1.2 \u00d7 10\u2075", "120000", True),
        ("10\u2076", "1000000", True),
        ("2\u207b\u00b9", "\\frac12", True),
        ("x\u00b2+2x+1", "(x+1)^2", True),
        ("10\u2075", "100000", True),
        ("10\u2075", "10^{6}", False),
    ],
    "bases": [
        ("-25", "-221_3", True),
        ("-221_3", "-221_3", True),
        ("221_3", "-221_3", False),
        ("25", "-221_3", False),
        # "written in base b": the letter subscript names the question's base (ZeroEval math-l5, o1-mini)
        ("100100_b", "100100", True),
        ("100100_{b}", "100100", True),
        ("100101_b", "100100", False),
        ("a_n", "n", False),
    ],
    "ordinal superscripts, subscript braces (SkyThought Sky-T1 / gemma-2 outputs vs MATH golds)": [
        ("12^{\\text{th}}", "12", True),
        ("12^{\\mathrm{th}}", "12", True),
        ("3^{rd}", "3", True),
        ("3^{rd}", "4", False),
        ("E_1, E_2", "E_{1},E_{2}", True),
        ("E_1, E_2", "E_{1},E_{3}", False),
    ],
    "a tuple against a bare list that repeats a value (a set would drop it)": [
        ("(-2, -2)", "-2,-2", True),
        ("-2, -2", "(-2,-2)", True),
        ("(1, 2, 2)", "1, 2, 2", True),
        ("(1, 2, 2)", "1, 2, 3", False),
        ("(2, -2)", "-2,-2", False),
        ("(2, 1)", "1, 2", True),  # distinct values: still a solution set, order-free
    ],
    "computation chains": [
        ("$840 + $756 = $1,596", "1596", True),  # ZeroEval gsm
        ("1,360 - (64 + 30 + 48) = 1,360 - 142 = 1,218", "1218", True),
        ("\u20ac1500 - \u20ac1423 = \u20ac77", "77", True),
        ("x = 2 + 3 = 5", "5", True),
        ("3 = x", "3", True),
        ("\\sqrt{2}\\cdot\\sqrt{2} = 2", "2", True),
        ("2 + 3 = 5", "2", False),  # the result is 5
        ("10,000 - 3,000 = 7,000", "3000", False),  # ZeroEval gsm
        ("82 - 13 + 9 = 78 + 9 = 87", "78", False),
        ("x^2 + y^2 = 25", "(x-1)^2 + y^2 = 25", False),  # an equation is compared whole
        ("x=2, x=3", "3", False),  # a list of solutions, not a chain
        ("x = 1 or x = 2", "2", False),
    ],
    "clock times": [
        ("2:00 pm", "2", True),  # ZeroEval gsm (36 records)
        ("2:00", "2", True),
        ("2:30 pm", "2:30", True),
        ("2:10 pm", "2", False),
        ("3:00 pm", "2", False),
        ("15:00", "2", False),
    ],
    "inequalities and intervals": [
        ("x < -2 \\text{ or } x > 3", "(-\\infty, -2) \\cup (3, \\infty)", True),
        ("x \\le -2 \\text{ or } x \\ge 3", "(-\\infty,-2] \\cup [3,\\infty)", True),
        ("x \\in [-2, 7]", "[-2,7]", True),
        ("x > 3", "(3,\\infty)", True),
        ("x < -2 \\text{ or } x > 3", "(-\\infty,-2] \\cup [3,\\infty)", False),
        ("x<-2 or x>4", "(-\\infty,-2) \\cup (3,\\infty)", False),
    ],
    "MATH gold shapes": [
        ("\\textbf{(C)}", "\\text{(C)}", True),
        ("C", "\\text{(C)}", True),
        ("75 degrees", "75^\\circ", True),
        ("12\\%", "0.12", True),
        ("\\frac{1}{4}", "25\\%", True),
        ("x = 2, y = 3", "(2,3)", True),
        ("\\left( \\frac{1}{2}, 3 \\right)", "(0.5, 3)", True),
        ("x = \\pm 5", "5, -5", True),
        ("2^{10}", "1024", True),
        ("\\frac{\\pi}{4}", "0.25\\pi", True),
        ("8\\text{ p.m.}", "8", True),
        ("4\\pi \\text{ square units}", "4\\pi", True),
        ("\\text{odd}", "\\text{even}", False),
        ("\\pm 3", "3", False),
        # a word in a text or roman font is the word (reasoning_dev, an economics answer)
        ("SRMC=LRMC", "\\text{SRMC} = \\text{LRMC}", True),
        ("\\mathrm{MC} = \\mathrm{AR}", "MC=AR", True),
        ("SRMC<LRMC", "\\text{SRMC} = \\text{LRMC}", False),
        ("\\text{LRMC} = \\text{SRMC}", "\\text{SRMC} = \\text{LRMC}", True),  # the same equation
    ],
    "astronomy's symbol subscripts and hyperbolic functions (SkyThought, Qwen2.5-14B on Minerva-Math)": [
        (
            "\\frac{dM}{dt} = \\frac{10^8 L_{\\odot}}{7 c^2 M_{\\odot}^6} M^6",
            "\\frac{dM}{dt}=\\frac{10^{5}L_{\\odot}}{0.007c^{2}M_{\\odot}^{6}}M^{6}",
            True,
        ),
        ("2 L_\\odot", "3 L_{\\odot}", False),
        ("\\frac{1}{a} \\sinh(at)", "\\frac{1}{2a}(\\exp{a*t}-\\exp{-a*t})", True),
        ("\\sinh(t)", "\\frac{1}{2}(e^{t}+e^{-t})", False),
    ],
    "word answers, whatever their case (a box's \\text{East} against the gold east)": [
        ("\\text{East}", "east", True),
        ("east", "\\text{East}", True),
        ("North East", "north east", True),
        ("east", "West", False),
        ("Monday", "Tuesday", False),
    ],
    "never correct": [
        ("\\{1, 2\\}", "1", False),  # a set of two values is not one value
        ("1, 2", "1", False),
        ("-4, 1", "-4", False),  # ZeroEval math-l5
        ("10879, -10879", "10879", False),  # ZeroEval math-l5
        ("[No valid answer]", "[No valid answer]", False),
        ("[no valid answer]", "0", False),
        ("3", "-3", False),
        ("\\frac{1}{2}", "\\frac{1}{3}", False),
        ("2:00 pm", "14", False),
        ("", "0", False),
    ],
}


@pytest.mark.parametrize(
    "extracted, correct, expected",
    [
        pytest.param(*case, id=f"{group}: {case[0]!r} vs {case[1]!r}")
        for group, cases in REAL_FORMATS.items()
        for case in cases
    ],
)
def test_real_formats(extracted, correct, expected):
    assert mj(extracted, correct) is expected


FAST_PATH_DECIDES = [
    ("11,\\! 111,\\! 100", "11111100"),
    ("1,000.99\u20ac", "1000.99"),
    ("0,111", "0.111"),
    ("0.0833333333333333", "\\frac{1}{12}"),
    ("0.\\overline{1}", "\\frac{1}{9}"),
    ("0.1\\overline{6}", "\\frac16"),
    ("2 1/2", "2.5"),
    ("1.2 million", "1200000"),
    ("2:00 pm", "2"),
    ("$840 + $756 = $1,596", "1596"),
]


@pytest.mark.parametrize("pred, gold", FAST_PATH_DECIDES)
def test_plain_number_formats_are_decided_in_process(pred, gold):
    """These formats are plain numbers: no worker round trip, so no timeout can turn them false."""
    assert compare_fast(prepare(pred), prepare(gold)) is True


def test_real_dev_math_gold_key_answers_reproduce_gold_judgment():
    path = SHARED_DATA / "real_dev.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["key_answer_type"] == "math"]
    assert rows
    misses = [
        (r["id"], r["gold_key_answer"], r["correct_answer"])
        for r in rows
        if mj(r["gold_key_answer"], r["correct_answer"]) is not r["gold_judgment"]
    ]
    assert not misses


# --- answers a plain-number gold cannot equal, settled without math-verify -----------------------


@pytest.mark.parametrize(
    "extracted, gold, verdict",
    [
        ("infinitely many", "10", False),
        ("No solution", "5", False),
        ("12 - 10d", "12", False),
        ("1 + b + c", "-26", False),
        ("infinity", "3", False),
        ("6\\sqrt{2}", "6", False),
        ("2^{48}", "125", False),
        ("\\frac{44 \\sqrt{3}}{3}", "28", False),
        # equal values still reach math-verify and are judged equal
        ("\\sqrt{36}", "6", True),
        ("2^{3}", "8", True),
        ("7^6", "117649", True),
        ("\\frac{12}{2}", "6", True),
    ],
)
def test_plain_number_gold_against_words_and_expressions(extracted, gold, verdict):
    assert judge("math", None, extracted, gold) is verdict


@pytest.mark.parametrize(
    "canon, value",
    [
        ("6\\sqrt2", 6 * 2**0.5),
        ("2(3+1)", 8.0),
        ("((200/10)*400*(1-0.30))", 5600.0),
        ("-2^{2}", -4.0),
        ("9^9^9^9", None),  # exponent over the cap
        ("1/0", None),
        ("\\sqrt{-1}", None),
        ("x+1", None),
        ("(" * 119 + "1", None),
        ("1" * 121, None),  # over MAX_NUMERIC
    ],
)
def test_numeric_value_is_bounded_and_exact_enough(canon, value):
    from xfinder_ray.judging.math_normalize import numeric_value

    got = numeric_value(canon)
    assert (got is None) if value is None else abs(got - value) < 1e-9
