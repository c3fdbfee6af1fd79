"""The judge every verdict passes through: is the extracted key answer the correct answer?

    judge(key_answer_type, standard_answer_range, extracted, correct_answer, *, math="math-verify")

`math` names the comparator (kept as the config name for historical reasons; it applies to all
types): "math-verify" (default) judges math answers by bounded mathematical equivalence, plus
precision-aware numbers (an answer that rounds to a plain-decimal gold at the gold's stated
precision, `3.275 \times 10^{12}` for `3.3e12`), and non-math answers with xFinder's rule plus
option-text mapping; "math-verify-exact" is the same without the precision rule (the default before
it existed); "xfinder-compat" reproduces the
`xfinder` 0.2.6 package's comparator, misjudgments included. See docs/judging.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..records import NO_VALID_ANSWER, parse_answer_range
from ..registry import Registry
from .math_equiv import math_equivalent, stats, warm_up
from .text import option_equal, text_equal
from .xfinder_compat import compat_equal

__all__ = ["COMPARATORS", "MATH_COMPARATORS", "judge", "stats", "warm_up"]


def _is_no_valid_answer(text: str) -> bool:
    return text.strip().casefold() == NO_VALID_ANSWER.casefold()


def _math_verify_with(precision: bool) -> Callable[[str, Any, str, str], bool]:
    def compare(key_answer_type: str, answer_range: Any, extracted: str, correct_answer: str) -> bool:
        if key_answer_type == "math":
            return math_equivalent(extracted, correct_answer, precision=precision)
        if key_answer_type == "alphabet_option":
            return option_equal(extracted, correct_answer, answer_range)
        return text_equal(extracted, correct_answer)

    return compare


# name -> (key_answer_type, parsed range, extracted, correct) -> verdict; [No valid answer] is handled
# before any of them (never correct).
COMPARATORS: Registry[Callable[[str, Any, str, str], bool]] = Registry("comparator")
COMPARATORS.register("math-verify", _math_verify_with(precision=True))
COMPARATORS.register("math-verify-exact", _math_verify_with(precision=False))
COMPARATORS.register("xfinder-compat", compat_equal)
MATH_COMPARATORS = tuple(COMPARATORS.names())  # ("math-verify", "math-verify-exact", "xfinder-compat")


def judge(
    key_answer_type: str,
    standard_answer_range: Any,
    extracted: str,
    correct_answer: str,
    *,
    math: str = "math-verify",
) -> bool:
    """True when `extracted` is judged correct against `correct_answer`.

    `standard_answer_range` may be raw (JSON / Python-literal string, list) or already parsed.
    Raises ValueError for an unknown comparator and records.InvalidRecord (a ValueError) for an
    unknown key_answer_type or a malformed range. Never raises for any answer text, and a math
    comparison takes at most ~2 s whatever the strings.
    """
    if math not in COMPARATORS:
        raise ValueError(f"unknown math comparator {math!r}; expected one of {', '.join(MATH_COMPARATORS)}")
    compare = COMPARATORS.get(math)
    answer_range = parse_answer_range(standard_answer_range, key_answer_type)
    extracted = "" if extracted is None else str(extracted)
    correct_answer = "" if correct_answer is None else str(correct_answer)
    if _is_no_valid_answer(extracted):
        return False
    return compare(key_answer_type, answer_range, extracted, correct_answer)
