"""Raw extractor text -> key answer: a member of the answer range, a math answer, or [No valid answer]."""

from __future__ import annotations

import re
import unicodedata

from xfinder_ray.records import NO_VALID_ANSWER, AnswerRange

# xFinder's stop strings (the checkpoints' end-of-turn markers across base models).
STOP_STRINGS = ("<|endoftext|>", "<|im_end|>", "<eoa>", "<||>", "<end_of_turn>", "<|eot_id|>")
MAX_PARSE_CHARS = 4_000  # a key answer is short; anything longer is cut before matching

_PREFIX = re.compile(
    r"^\s*(?:key\s+extracted\s+answer|extracted\s+answer|key\s+answer|answer)\s*[:：]\s*", re.I
)
_QUOTES = "\"'`“”‘’「」"
_NO_ANSWER = re.compile(r"^\[?\s*no\s+valid\s+answer\s*\]?\.?$", re.I)
# A bare option letter, optionally decorated: "B", "(B)", "B.", "B)", "**B**", "Option B", "B: text".
_LETTER = re.compile(
    r"^(?:option|choice|answer)?\s*[\(\[]?([A-Za-z])[\)\]]?(?:\s*[\.:：、)]\s*(.*))?$", re.S | re.I
)


def normalize_text(text: str) -> str:
    """Case-, width-, whitespace- and edge-punctuation-insensitive form used to compare candidates."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = " ".join(text.split())
    return text.strip(" .,;:!?。，；：！？" + _QUOTES + "*_")


def clean_output(raw: str, stop: tuple[str, ...] = STOP_STRINGS) -> str:
    """Cut at the first stop string, strip a restated 'Key extracted answer:' prefix and wrapping quotes."""
    text = raw or ""
    for s in stop:
        cut = text.find(s)
        if cut >= 0:
            text = text[:cut]
    text = text.strip()[:MAX_PARSE_CHARS]
    text = _PREFIX.sub("", text, count=1).strip()
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def is_no_valid_answer(text: str) -> bool:
    return not text.strip() or bool(_NO_ANSWER.match(text.strip()))


def match_candidate(key_answer_type: str, answer_range: AnswerRange, text: str) -> str:
    """Map an answer (a letter, an option's text, a candidate in any case) to its exact range entry.

    Returns the option letter for alphabet_option, the candidate as written in the range for
    short_text and categorical_label, or [No valid answer] when the text is not in the range.
    """
    if is_no_valid_answer(text):
        return NO_VALID_ANSWER
    target = normalize_text(text)
    if key_answer_type == "alphabet_option":
        letters = {normalize_text(letter): letter for letter, _ in answer_range}
        by_text = {normalize_text(option): letter for letter, option in answer_range}
        if target in letters:
            return letters[target]
        if target in by_text:
            return by_text[target]
        m = _LETTER.match(text.strip().strip("*_ "))
        if m and normalize_text(m.group(1)) in letters:
            letter = letters[normalize_text(m.group(1))]
            rest = normalize_text(m.group(2) or "")
            # "B. <text of B>" is B; "B. <text of another option>" is contradictory.
            if not rest or rest == normalize_text(dict(answer_range)[letter]) or rest not in by_text:
                return letter
        return NO_VALID_ANSWER
    for candidate in answer_range:
        if normalize_text(candidate) == target:
            return candidate
    return NO_VALID_ANSWER


def parse_output(raw: str, key_answer_type: str, answer_range: AnswerRange) -> str:
    """The key answer from an extractor's raw generation."""
    text = clean_output(raw)
    if is_no_valid_answer(text):
        return NO_VALID_ANSWER
    if key_answer_type == "math":
        # Math answers stay as written (the judge decides equivalence); only a closing period goes.
        return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text
    return match_candidate(key_answer_type, answer_range, text)
