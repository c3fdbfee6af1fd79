"""Comparison of non-math key answers (alphabet_option, short_text, categorical_label).

xFinder's rule (case- and trailing-period-insensitive equality) with whitespace normalized and
surrounding quotes / markdown emphasis removed; for alphabet_option an answer may name the option
by its letter ("C", "(C)", "c)"), by its text ("Canberra") or by both ("C. Canberra").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Longer answers are compared as whole strings only (keeps the regexes below cheap).
_MAX_PATTERN_CHARS = 1_000
# (A data table; alike in shape only with judging/xfinder_compat.py:_NFA_SUBSTITUTIONS.)
_PAIRS = (
    ('"', '"'),
    ("'", "'"),
    ("\u201c", "\u201d"),
    ("\u2018", "\u2019"),
    ("`", "`"),
    ("**", "**"),
    ("*", "*"),
)
_BRACKETED = re.compile(r"[(\[{<]\s*(.+?)\s*[)\]}>]|(.+?)\s*[)\]]")
# "C. Canberra", "(C) Canberra", "C: Canberra", "C - Canberra", "C Canberra"
_LETTER_AND_TEXT = re.compile(r"[(\[]?\s*([^\s()\[\].:]{1,3})\s*(?:[)\].:\-]|\s)\s*(.+)")


def norm(text: str) -> str:
    """Case-, whitespace- and trailing-period-insensitive form, quotes and emphasis removed."""
    s = " ".join(text.split())
    for _ in range(4):
        before = s
        s = s.strip().rstrip(".").strip()
        for op, cl in _PAIRS:
            if len(s) > len(op) + len(cl) and s.startswith(op) and s.endswith(cl):
                s = s[len(op) : len(s) - len(cl)]
        if s == before:
            break
    return s.casefold()


def text_equal(extracted: str, correct: str) -> bool:
    return norm(extracted) == norm(correct)


def _letters_named(answer: str, options: Sequence[tuple[str, str]]) -> set[str]:
    """The option letters an answer names (empty if none, or if letter and text disagree)."""
    n = norm(answer)
    by_letter = {norm(letter): letter for letter, _ in options}
    if n in by_letter:
        return {by_letter[n]}
    m = _BRACKETED.fullmatch(n) if len(n) <= _MAX_PATTERN_CHARS else None
    if m:
        inner = norm(m.group(1) or m.group(2))
        if inner in by_letter:
            return {by_letter[inner]}
    by_text = {letter for letter, text in options if norm(text) == n}
    if by_text:
        return by_text
    m = _LETTER_AND_TEXT.fullmatch(n) if len(n) <= _MAX_PATTERN_CHARS else None
    if m and norm(m.group(1)) in by_letter:
        letter = by_letter[norm(m.group(1))]
        option_text = dict(options)[letter]
        if norm(m.group(2)) == norm(option_text):
            return {letter}
    return set()


def option_equal(extracted: str, correct: str, options: Sequence[tuple[str, str]]) -> bool:
    if text_equal(extracted, correct):
        return True
    return bool(_letters_named(extracted, options) & _letters_named(correct, options))
