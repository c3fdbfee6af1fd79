"""Precision-aware numeric judging (the `math-verify` comparator's extra rule; see docs/judging.md).

A gold written as a plain decimal with a fractional part (`0.33`, `12.5`, `3.3e12`,
`3.3 \\times 10^{12}`, `1.2E-3`) states its precision: one unit in its last printed digit. An
extracted answer that is one finite number is equal when it lies within half of that unit of the
gold (so rounding it half-even or half-up to the gold's precision gives the gold). Integer golds,
integer mantissas (`3e8`), fractions, repeating decimals and golds with an ellipsis state no
reduced precision: they are left to the exact rules.

Pure `fractions.Fraction` arithmetic on capped inputs; nothing here evaluates text, and
`precision_equal` never raises.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .math_normalize import MathAnswer, NumberReading, _symbolic_or_wordy, numeric_value

MAX_PRECISION_CHARS = 300  # either raw answer longer than this: the rule does not apply
MAX_DECIMAL_EXPONENT = 400  # values, and the gold's unit, must lie within 10^-400 .. 10^400
_MAX_BITS = 4_000  # numerator / denominator size of any value the rule touches (~1,200 digits)
_LOG2_10 = math.log2(10)
_REL_EPS = Fraction(1, 10**12)  # float noise of a constant expression read by numeric_value
_HUNDREDTH = Fraction(1, 100)
# A gold with an ellipsis ("12.24744...") is a truncation or a repeating decimal, not a rounding.
_ELLIPSIS = re.compile(r"\.\.\.|…|\\[lc]?dots(?![A-Za-z])")


def _bounded(q: Fraction) -> bool:
    """Whether q is small enough to work with: |q| is 0 or within 10^-400 .. 10^400."""
    num, den = abs(q.numerator), q.denominator
    if num.bit_length() > _MAX_BITS or den.bit_length() > _MAX_BITS:
        return False
    if num == 0:
        return True
    return abs(num.bit_length() - den.bit_length()) <= MAX_DECIMAL_EXPONENT * _LOG2_10 + 2


def _gold_reading(gold: MathAnswer) -> NumberReading | None:
    """The gold's number when it is one plain decimal that states a precision, else None."""
    if gold.over_cap or len(gold.raw) > MAX_PRECISION_CHARS or _ELLIPSIS.search(gold.raw):
        return None
    if gold.number is None or gold.base is not None or gold.chain or gold.first is not None:
        return None
    reading = gold.number
    if reading.unit is None or reading.unit <= 0:
        return None  # an integer, integer mantissa, fraction, repeating decimal...: exact only
    if not (_bounded(reading.value) and _bounded(reading.unit)):
        return None
    return reading


def _answer_readings(answer: MathAnswer) -> list[NumberReading]:
    """The finite values the extracted answer can stand for (exact where the reader is exact)."""
    if answer.over_cap or len(answer.raw) > MAX_PRECISION_CHARS or answer.base is not None:
        return []
    readings = answer.readings()
    if not readings and answer.alt is not None:
        readings = [answer.alt]  # "3,28" as a decimal comma
    if not readings and not answer.chain and "%" not in answer.text and not _symbolic_or_wordy(answer.canon):
        value = numeric_value(answer.canon)  # a constant expression: "\\frac{\\sqrt3}{2}", "2\\pi"
        if value is not None and math.isfinite(value):
            readings = [NumberReading(Fraction(value), "")]
    return [r for r in readings if _bounded(r.value)]


def _within(x: NumberReading, gold: NumberReading) -> bool:
    """|x - gold| <= half a unit in the gold's last printed place (plus a tiny relative epsilon)."""
    assert gold.unit is not None
    return abs(x.value - gold.value) <= gold.unit / 2 + _REL_EPS * abs(gold.value)


def _pairs(answer: MathAnswer, x: NumberReading, gold_pct: bool, g: NumberReading):
    """(answer value, gold value) pairs to try; a percent on one side is read both ways."""
    yield x, g
    if answer.pct and not gold_pct:
        yield x.scaled(_HUNDREDTH), g  # "33%" vs gold 0.33
    elif gold_pct and not answer.pct:
        yield x, g.scaled(_HUNDREDTH)  # "0.125" vs gold 12.5%: the unit scales too


def precision_equal(answer: MathAnswer, gold: MathAnswer) -> bool:
    """Whether the extracted `answer` agrees with a limited-precision plain-decimal `gold` at the
    gold's stated precision. False whenever the rule does not apply; never raises."""
    try:
        g = _gold_reading(gold)
        if g is None:
            return False
        if answer.var and gold.var and answer.var != gold.var:
            return False
        for x in _answer_readings(answer):
            if any(_within(a, b) for a, b in _pairs(answer, x, gold.pct, g)):
                return True
        return False
    except (ArithmeticError, ValueError, TypeError, OverflowError, RecursionError):
        return False
