"""`rules`: a model-free key-answer extractor, following the xFinder annotation rules.

It is the embedded default where no model can be loaded, the router's cheap path and the baseline
in ablations. Given an LLM response it returns the key answer the response commits to -- the option
letter (alphabet_option), the candidate as written in the range (short_text, categorical_label), the
math answer as the response wrote it (math), or ``[No valid answer]`` -- and how sure that is:

    certain  the response is exactly the requested format with one clean value (the router
             settles these without the model)
    likely   an explicit answer: a JSON answer field, "the answer is ...", \\boxed{...}
    unsure   inferred: a weak conclusion, a lone candidate, a fallback, a withdrawn answer

The stages (docs/rules.md has the details and examples), one module each:
1. ``text``: prepare the text (stop strings, ``</think>``, markdown bold, width, size cap);
2. ``structured``: find the answer fields of JSON objects the prompt asked for, leniently;
3. ``claims``: find prose answer claims ("the answer is", "Answer:", "#### ", ``\\boxed{}``, ...);
4. ``values`` / ``candidates``: resolve each claim's value to a candidate of the range;
5. ``decide``: the commitment -- a structured answer unless prose after it corrects it; else the
   last prose claim of the highest tier, withdrawn by hedging, retraction or ambiguity; else the
   fallbacks (a bare answer, a lone answer line, the one candidate mentioned).

Every regex is bounded, every scan is over a capped slice, no pattern is compiled per record, and
nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules import structured
from xfinder_ray.extractors.rules.candidates import ALPHA, MATH, index_for
from xfinder_ray.extractors.rules.claims import find_claims, parse_claim
from xfinder_ray.extractors.rules.decide import CERTAIN, LIKELY, UNSURE, decide_prose, restricted_answer
from xfinder_ray.extractors.rules.text import MAX_QUESTION, prepare
from xfinder_ray.extractors.rules.values import resolve_value
from xfinder_ray.parsing import is_no_valid_answer
from xfinder_ray.records import NO_VALID_ANSWER, AnswerRange

RULES_VERSION = "rules-2"
CONFIDENCE_TIERS = (CERTAIN, LIKELY, UNSURE)

__all__ = [
    "CERTAIN",
    "CONFIDENCE_TIERS",
    "LIKELY",
    "UNSURE",
    "Extraction",
    "RULES_VERSION",
    "extract",
    "extract_scored",
]


@dataclass(frozen=True)
class Extraction:
    answer: str  # the key answer, or [No valid answer]
    confidence: str  # certain | likely | unsure


def extract_scored(
    key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange
) -> Extraction:
    """The key answer `llm_output` commits to, with its confidence tier.

    `answer_range` is as parsed by xfinder_ray.records.parse_answer_range.
    """
    kat = (key_answer_type or "").strip()
    text = prepare(llm_output, kat)
    if not text.strip() or is_no_valid_answer(text):
        return Extraction(NO_VALID_ANSWER, LIKELY)
    question = (question or "")[:MAX_QUESTION]
    ix = None if kat == MATH else index_for(kat, answer_range)

    fields = structured.keep_answered_question(text, structured.find_fields(text))
    if fields:
        last = fields[-1]
        status, answer = resolve_value(last.value, question, ix)
        after = text[structured.block_end(text, last) :]
        correction = _correction_after(after, question, ix, answer)
        if correction is not None:
            return Extraction(correction, LIKELY)
        if status != "ok":
            return Extraction(NO_VALID_ANSWER, LIKELY if status == "none" else UNSURE)
        clean = len(fields) == 1 and last.closed and not after.strip(" \n`")
        if clean and _is_clean_value(last.value or "", answer, kat) and structured.is_strict_object(text):
            return Extraction(answer, CERTAIN)
        return Extraction(answer, LIKELY)

    opened = structured.unanswered_object(text)
    if opened >= 0:
        # Cut off inside the requested object, before its answer field: only prose before the
        # object can have answered ("... $50 - $35 = $15." and then a truncated JSON).
        before = text[:opened].rstrip().removesuffix("```json").removesuffix("```")
        if len(before.strip()) < 20:
            return Extraction(NO_VALID_ANSWER, LIKELY)
        text = before
    answer, confidence = decide_prose(text, question, ix)
    if confidence == LIKELY and restricted_answer(text, kat, ix) == answer:
        confidence = CERTAIN
    return Extraction(answer, confidence)


def extract(key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange) -> str:
    """The key answer `llm_output` commits to, or [No valid answer]."""
    return extract_scored(key_answer_type, question, llm_output, answer_range).answer


def _correction_after(after: str, question: str, ix, answer: str) -> str | None:
    """A strong prose claim after the last JSON block that names another answer: "the correct answer
    is 35, not 38", "Corrected answer: C". Commentary that agrees, or names nothing, changes nothing."""
    after = after[:4000]
    if len(after.strip()) < 4:
        return None
    low = after.lower()
    if not any(w in low for w in _CORRECTION_WORDS):
        return None  # no answer phrase at all: the common case, decided without the claim patterns
    m = (_NOT_NUMBER if ix is None else _NOT_LETTER).search(after)
    if m and _same(m.group(2), answer, ix) and not _same(m.group(1), answer, ix):
        return m.group(1).lstrip("$") if ix is None else ix.letters.get(m.group(1), None)
    for c in reversed(find_claims(after, math=ix is None)[-20:]):
        if c.backward:
            continue
        parse_claim(after, c, ix, question)
        if c.status == "ok" and c.tier >= P.NORMAL:
            return c.value if c.value != answer else None
    return None


# A later answer needs one of these (the forward claim phrases of tier normal and above, and "not").
_CORRECTION_WORDS = (
    "answer",
    "box",
    "####",
    "option",
    "choice",
    "choose",
    "select",
    "pick",
    "correct",
    "final",
    "label",
    "classif",
    "categor",
    "verdict",
    "go with",
    "say",
    " not ",
    "result",
)

# "35, not 38" / "(C), not (D)": a correction of the answer given before.
_NOT_NUMBER = re.compile(
    r"(\$?-?\d(?:[\d,]*\d)?(?:\.\d+)?)\s{0,3},?\s{0,3}(?:and\s{1,3})?not\s{1,3}\$?(-?\d[\d,]*(?:\.\d+)?)"
)
_NOT_LETTER = re.compile(r"\(?\b([A-Z])\b\)?\s{0,3},?\s{0,3}(?:and\s{1,3})?not\s{1,3}\(?\b([A-Z])\b\)?")


def _same(raw: str, answer: str, ix) -> bool:
    if ix is None:
        return raw.lstrip("$").replace(",", "").rstrip(".") == answer.lstrip("$").replace(",", "")
    return ix.letters.get(raw) == answer


def _is_clean_value(raw: str, answer: str, kat: str) -> bool:
    """The field holds exactly the answer: "C", "(C)", "42", "positive" -- nothing to interpret."""
    v = raw.strip()
    if kat == ALPHA:
        return v.strip("()") == answer
    if kat == MATH:
        return v == answer and v.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()
    return v.casefold() == answer.casefold()
