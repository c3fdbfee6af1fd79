"""The strict router: settle without a model only the responses whose key answer is beyond doubt.

Off by default (`router: strict` turns it on). A response is settled only when its whole last line is
one restricted-format claim and nothing else in the text claims an answer:

    The answer is (B).        The answer is B.        Answer: B
    The answer is Location.   The answer is 42.       #### 42        The final answer is \\boxed{42}.

and the claimed value is, exactly, a candidate of the range (alphabet_option: a letter in range;
short_text / categorical_label: one candidate, case-insensitive; math: a plain number). Anything else
— a second claim, a hedge, a correction, an option text that does not match its letter, an
expression — goes to xFinder. Precision on the labelled dev set is in docs/performance.md.
"""

from __future__ import annotations

import re

from xfinder_ray.records import Record

ROUTER_VERSION = "strict-1"
MAX_OUTPUT = 20_000  # longer responses always go to the model
_LEAD = r"(?:(?:so|thus|therefore|hence),?\s{1,3})?(?:the\s{1,3})?(?:final\s{1,3}|correct\s{1,3})?"
_CLAIM = re.compile(
    rf"^{_LEAD}answer\s{{0,3}}(?:is\s{{0,3}}:?|:)\s{{0,3}}(?P<v>.{{1,200}}?)\s{{0,3}}\.?$", re.I
)
_HASHES = re.compile(r"^####\s{0,3}(?P<v>.{1,60}?)\s{0,3}$")
_ANY_CLAIM = re.compile(r"answer\s{0,3}(?:is|:)|####", re.I)
_ANY_BOXED = re.compile(r"\\(?:boxed|fbox)")
_LETTER = re.compile(r"^\(?(?P<l>[A-Z])\)?(?:[.:]\s{0,3}(?P<t>.{1,150}))?$")
_NUMBER = re.compile(r"^-?\d{1,15}(?:\.\d{1,10})?$")
_BOXED = re.compile(r"^\$?\\boxed\{(?P<v>[^{}]{1,60})\}\$?$")
_DECOR = re.compile(r"^[*_`\"'“”]+|[*_`\"'“”]+$")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return _DECOR.sub("", lines[-1]).strip() if lines else ""


def strict_answer(rec: Record) -> str | None:
    """The key answer when it is beyond doubt, else None (the record goes to the model)."""
    text = rec.llm_output
    if not text or len(text) > MAX_OUTPUT or len(_ANY_CLAIM.findall(text)) != 1:
        return None
    line = _last_line(text)
    boxes = len(_ANY_BOXED.findall(text))
    if boxes > 1 or (boxes == 1 and not _ANY_BOXED.search(line)):
        return None
    m = _CLAIM.match(line) or _HASHES.match(line)
    if not m:
        return None
    value = _DECOR.sub("", m.group("v")).strip()
    kat = rec.key_answer_type
    if kat == "alphabet_option":
        lm = _LETTER.match(value)
        options = dict(rec.answer_range)  # letter -> option text
        if not lm or lm.group("l") not in options:
            return None
        if (
            lm.group("t") is not None
            and lm.group("t").strip(" .").casefold() != options[lm.group("l")].strip().casefold()
        ):
            return None
        return lm.group("l")
    if kat in ("short_text", "categorical_label"):
        hits = [c for c in rec.answer_range if c.strip().casefold() == value.strip(" .").casefold()]
        return hits[0] if len(hits) == 1 else None
    if kat == "math":
        boxed = _BOXED.match(value)
        value = boxed.group("v").strip() if boxed else value.strip("$ ")
        return value if _NUMBER.match(value) else None
    return None
