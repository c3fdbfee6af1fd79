"""The comparators an ablation can judge with: (record, extracted) -> bool.

- `math-verify`, `xfinder-compat`: our judge (xfinder_ray.judging.judge), every key_answer_type.
- `opencompass`, `lm-eval`, `ultraeval`: that framework's own math check for math records, on the
  route its configs take for the task (GSM8K-like tasks: the GSM8K check, others: the MATH one).
- `opencompass:math`, `lm-eval:gsm8k`, ...: one framework check (extractors.baselines.COMPARATORS)
  for every math record.
The frameworks' checks are math checks only: on the other types a framework comparator judges with
our `math-verify` rules (option letter / text match), so that the ablation varies one thing, the
math equivalence. `[No valid answer]` is never correct, whatever the comparator.
"""

from __future__ import annotations

from collections.abc import Callable

from xfinder_ray.extractors.baselines import COMPARATORS as BASELINE_COMPARATORS
from xfinder_ray.extractors.baselines import comparator as baseline_comparator
from xfinder_ray.extractors.baselines._common import is_gsm8k_like
from xfinder_ray.judging import MATH_COMPARATORS, judge
from xfinder_ray.records import NO_VALID_ANSWER, Record

Comparator = Callable[[Record, str], bool]
FRAMEWORKS = ("opencompass", "lm-eval", "ultraeval")


def comparator_names() -> list[str]:
    return [*MATH_COMPARATORS, *FRAMEWORKS, *BASELINE_COMPARATORS]


def get_comparator(name: str) -> Comparator:
    """(record, extracted) -> judgment for a comparator name (comparator_names())."""
    if name in MATH_COMPARATORS:

        def ours(rec: Record, extracted: str) -> bool:
            return judge(rec.key_answer_type, rec.answer_range, extracted, rec.correct_answer, math=name)

        return ours
    if name in FRAMEWORKS:
        gsm8k, math = baseline_comparator(f"{name}:gsm8k"), baseline_comparator(f"{name}:math")
        return _framework(lambda rec: gsm8k if is_gsm8k_like(rec.task) else math)
    if name in BASELINE_COMPARATORS:
        fn = baseline_comparator(name)
        return _framework(lambda rec: fn)
    raise ValueError(f"unknown comparator {name!r}; known: {', '.join(comparator_names())}")


def _framework(pick: Callable[[Record], Callable[[str, str], bool]]) -> Comparator:
    def compare(rec: Record, extracted: str) -> bool:
        if extracted.strip().casefold() == NO_VALID_ANSWER.casefold():
            return False
        if rec.key_answer_type != "math":
            return judge(rec.key_answer_type, rec.answer_range, extracted, rec.correct_answer)
        try:
            return bool(pick(rec)(extracted, rec.correct_answer))
        except (
            Exception
        ):  # an upstream check that raises on odd text judges it wrong, as upstream scoring would
            return False

    return compare
