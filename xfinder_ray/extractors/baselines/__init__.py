"""Faithful RegEx baselines: the answer extraction of OpenCompass, lm-evaluation-harness and
UltraEval, re-implemented from their published code (quirks included), as record extractors.

Each extractor maps a validated Record to a string: what the framework would have extracted, with
its "no match" value (``''``, ``'NULL'``, ``'[invalid]'``) mapped to ``[No valid answer]`` so that
judgments are comparable. One extractor per upstream function (``opencompass:first_option``, ...)
and one dispatcher per framework (``opencompass``, ``lm-eval``, ``ultraeval``) that picks the
function that framework's configs use for the record's key_answer_type (and, for math and
multiple choice, its task name). docs/baselines.md describes each one, its upstream source and
version, the quirks kept, and the accuracy on the shared dev set.

The frameworks' own math equivalence checks are in COMPARATORS (``name -> (pred, gold) -> bool``),
for the pipeline to use alongside its own judge.

Every regex here runs on untrusted text of up to 1 MB in linear time: upstream patterns that
backtrack quadratically are replaced by exact linear equivalents (``_common``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xfinder_ray.extractors.baselines._common import BASELINES_VERSION
from xfinder_ray.records import Record

__all__ = ["BASELINES", "BASELINES_VERSION", "COMPARATORS", "comparator", "register"]

_PKG = "xfinder_ray.extractors.baselines"

# name -> (module, extractor function, upstream function it follows)
BASELINES: dict[str, tuple[str, str, str]] = {
    "opencompass": ("opencompass", "extract", "dispatcher"),
    "opencompass:first_option": ("opencompass", "extract_first_option", "first_option_postprocess"),
    "opencompass:first_capital": ("opencompass", "extract_first_capital", "first_capital_postprocess"),
    "opencompass:gsm8k": ("opencompass", "extract_gsm8k", "gsm8k_postprocess"),
    "opencompass:math_v2": ("opencompass", "extract_math_v2", "math_postprocess_v2"),
    "opencompass:general": ("opencompass", "extract_general", "general_postprocess+EMEvaluator"),
    "lm-eval": ("lmeval", "extract", "dispatcher"),
    "lm-eval:gsm8k-strict": ("lmeval", "extract_gsm8k_strict", "regex(gsm8k strict-match)"),
    "lm-eval:gsm8k-flexible": ("lmeval", "extract_gsm8k_flexible", "regex(gsm8k flexible-extract)"),
    "lm-eval:gsm8k-cot": ("lmeval", "extract_gsm8k_cot", "regex(gsm8k-cot strict-match)"),
    "lm-eval:multi_choice": ("lmeval", "extract_multi_choice", "multi_choice_regex"),
    "lm-eval:math-boxed": ("lmeval", "extract_math_boxed", "last_boxed_only_string+remove_boxed"),
    "ultraeval": ("ultraeval", "extract", "dispatcher"),
    "ultraeval:gsm8k": ("ultraeval", "extract_gsm8k", "GSM8KPost"),
    "ultraeval:math": ("ultraeval", "extract_math", "MathPost"),
    "ultraeval:single_choice": ("ultraeval", "extract_single_choice", "GaoKaoSingleChoicePost"),
    "ultraeval:agieval_single_answer": (
        "ultraeval",
        "extract_agieval_single_answer",
        "AGIEvalSingleAnswerPost",
    ),
    "ultraeval:prefix_match": ("ultraeval", "extract_prefix_match", "PrefixMatch"),
    "ultraeval:qa_match": ("ultraeval", "extract_qa_match", "QaMatch"),
}

# name -> (module, function): the frameworks' own answer comparators, (pred, gold) -> bool.
_COMPARATORS: dict[str, tuple[str, str]] = {
    "opencompass:math": ("opencompass", "is_equiv"),  # MATHEvaluator(version='v2')
    "opencompass:gsm8k": ("opencompass", "gsm8k_is_equal"),
    "lm-eval:math": ("lmeval", "is_equiv"),  # hendrycks_math
    "lm-eval:gsm8k": ("lmeval", "gsm8k_exact_match"),
    "ultraeval:math": ("ultraeval", "math_equal"),
    "ultraeval:gsm8k": ("ultraeval", "gsm8k_equal"),
}
COMPARATORS = tuple(sorted(_COMPARATORS))


def _module(name: str):
    return importlib.import_module(f"{_PKG}.{name}")


def comparator(name: str) -> Callable[[str, str], bool]:
    """A framework's own answer comparator by name (see COMPARATORS)."""
    if name not in _COMPARATORS:
        raise ValueError(f"unknown baseline comparator {name!r}; known: {', '.join(COMPARATORS)}")
    module, func = _COMPARATORS[name]
    return getattr(_module(module), func)


def _factory(module: str, func: str) -> Callable[[], Callable[[Record], str]]:
    def make() -> Callable[[Record], str]:
        return getattr(_module(module), func)

    return make


def _identity(module: str, upstream: str) -> Callable[[], str]:
    def ident() -> str:
        return _module(module).identity(upstream)

    return ident


def register(register_record_extractor: Callable) -> None:
    """Register every baseline with the extractor registry (xfinder_ray.extractors)."""
    for name, (module, func, upstream) in BASELINES.items():
        register_record_extractor(name, identity=_identity(module, upstream))(_factory(module, func))
