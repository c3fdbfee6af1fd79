"""Named, registered extractors (in the style of lm-evaluation-harness's filter registry).

A record-level extractor maps a validated Record to a key answer; it runs anywhere (CLI, Ray
map_batches). Model extractors (``xfinder``) run as a Ray Data stage over rendered prompts instead;
the jobs build them from config (xfinder_ray/extractors/model.py; the engine stage is extractors/vllm/).
"""

from __future__ import annotations

from collections.abc import Callable

from xfinder_ray.records import Record
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


def get_scored_extractor(name: str) -> Callable[[Record], tuple[str, str | None]]:
    """Record -> (key answer, confidence tier). Only `rules` rates its extractions (certain | likely |
    unsure); every other record-level extractor gives None as its tier."""
    if name == "rules":
        from xfinder_ray.extractors import rules

        def scored(rec: Record) -> tuple[str, str | None]:
            e = rules.extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
            return e.answer, e.confidence

        return scored
    extract = get_record_extractor(name)
    return lambda rec: (extract(rec), None)


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
