"""The strict router: settle without a model only the responses whose key answer is beyond doubt.

Off by default (`extractor.router: strict` turns it on). A response is settled when the `rules`
extractor rates its extraction `certain`: the response is exactly the requested format with one
clean value, and nothing else in it claims an answer --

    {"reasoning": "...", "answer": "C"}        (one JSON object a strict parser accepts)
    The answer is (B).        Answer: B        #### 42        The final answer is \\boxed{42}.

with the value, exactly, a candidate of the range (alphabet_option: a letter in range; short_text /
categorical_label: one candidate; math: a plain number). Anything else -- a second claim, a hedge,
a correction, text around the object, an option text that does not match its letter, an
expression -- goes to xFinder. Precision on the labelled dev sets is in docs/performance.md.
"""

from __future__ import annotations

from xfinder_ray.extractors.rules import CERTAIN, RULES_VERSION, Extraction, extract_scored
from xfinder_ray.records import Record

ROUTER_VERSION = f"strict-2+{RULES_VERSION}"


def strict_extraction(rec: Record) -> Extraction | None:
    """`rules`' extraction when it is beyond doubt (a `certain` answer, or a `certain` [No valid answer]
    with its reason), else None (the record goes to the model)."""
    e = extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
    return e if e.confidence == CERTAIN else None


def strict_answer(rec: Record) -> str | None:
    """The key answer when it is beyond doubt, else None (the record goes to the model)."""
    e = strict_extraction(rec)
    return e.answer if e is not None else None
