"""Named, registered extractors (in the style of lm-evaluation-harness's filter registry).

A record-level extractor maps a validated Record to a key answer; it runs anywhere (CLI, Ray
map_batches). Model extractors (``xfinder``) run as a Ray Data stage over rendered prompts instead;
the jobs build them from config (xfinder_ray/extractors/model.py; the engine stage is extractors/vllm/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xfinder_ray.records import NO_VALID_ANSWER, Record
from xfinder_ray.registry import Registry

RecordExtractor = Callable[[Record], str]

# name -> (factory returning a Record -> key answer function, identity returning its version string)
EXTRACTORS: Registry[tuple[Callable[[], RecordExtractor], Callable[[], str]]] = Registry("extractor")


def register_record_extractor(name: str, identity: Callable[[], str]):
    """Register a factory returning a Record -> key answer function; `identity` names its version."""

    def deco(factory: Callable[[], RecordExtractor]) -> Callable[[], RecordExtractor]:
        EXTRACTORS.register(name, (factory, identity))
        return factory

    return deco


def record_extractor_names() -> list[str]:
    return EXTRACTORS.names()


def get_record_extractor(name: str) -> RecordExtractor:
    return EXTRACTORS.get(name)[0]()


def extractor_identity(name: str) -> str:
    return EXTRACTORS.get(name)[1]()


# (key answer, confidence tier or None, no-answer reason: None for an answer)
Scored = tuple[str, str | None, str | None]


def rules_no_answer_reason(key_answer_type: str, question: str, llm_output: str, answer_range: Any) -> str:
    """Why a response has no key answer, for an extractor that gives [No valid answer] without saying
    why (a RegEx baseline, xFinder): `rules`' reason when `rules` finds no answer either, else
    "none_found" (the extractors disagree, so no cause can be named)."""
    from xfinder_ray.extractors import rules

    e = rules.extract_scored(key_answer_type, question, llm_output, answer_range)
    return e.no_answer_reason or "none_found"


def get_scored_extractor(name: str) -> Callable[[Record], Scored]:
    """Record -> (key answer, confidence tier, no-answer reason). Only `rules` rates its extractions
    (certain | likely | unsure); every other record-level extractor gives None as its tier. The reason
    is None for an answer and one of rules.NO_ANSWER_REASONS for [No valid answer]: `rules`' own, or
    for another extractor rules_no_answer_reason's."""
    if name == "rules":
        from xfinder_ray.extractors import rules

        def scored(rec: Record) -> Scored:
            e = rules.extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
            return e.answer, e.confidence, e.no_answer_reason

        return scored
    extract = get_record_extractor(name)

    def other(rec: Record) -> Scored:
        answer = extract(rec)
        if answer != NO_VALID_ANSWER:
            return answer, None, None
        reason = rules_no_answer_reason(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
        return answer, None, reason

    return other


def _rules_identity() -> str:
    from xfinder_ray.extractors import rules

    return rules.RULES_VERSION


@register_record_extractor("rules", identity=_rules_identity)
def _rules() -> RecordExtractor:
    from xfinder_ray.extractors import rules

    def extract(rec: Record) -> str:
        return rules.extract(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)

    return extract


# The RegEx baselines of OpenCompass, lm-evaluation-harness and UltraEval (docs/baselines.md).
from xfinder_ray.extractors.baselines import register as _register_baselines  # noqa: E402

_register_baselines(register_record_extractor)
