"""Text preparation for `rules`: stop strings, think tags, size cap, markdown, width; and truncation."""

from __future__ import annotations

import re
import unicodedata

from xfinder_ray.parsing import STOP_STRINGS

MATH = "math"


# Size bounds. A response longer than MAX_SCAN is reduced to its head and tail: the answer to the
# actual question is near the start (repetition loops) or near the end (chain of thought).
MAX_SCAN = 64_000
HEAD, TAIL = 16_000, 48_000
VALUE_WINDOW = 400  # characters after a claim phrase in which its value must start and end
MAX_CLAIMS_PARSED = 200  # claims parsed from the end (and, for the loop cut, from the start)
MENTION_WINDOW = 6_000  # the stretch of text scanned for candidate mentions
MAX_MENTION_CANDIDATES = 200  # larger ranges skip mention-based steps (cost grows with the range)
MAX_QUESTION = 20_000


def prepare(llm_output: object, kat: str) -> str:
    text = llm_output if isinstance(llm_output, str) else ("" if llm_output is None else str(llm_output))
    if "<" in text:  # every stop string and the think tag start with "<"
        for stop in STOP_STRINGS:
            cut = text.find(stop)
            if cut >= 0:
                text = text[:cut]
        # Reasoning models: the response proper follows the closing think tag.
        k = text.rfind("</think>")
        if k >= 0 and text[k + 8 :].strip():
            text = text[k + 8 :]
    if len(text) > MAX_SCAN:
        text = text[:HEAD] + "\n\n" + text[-TAIL:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\u200b" in text:
        text = text.replace("\u200b", "")
    # Markdown bold only decorates: "**Answer:** **B**" reads as "Answer: B"; so does LaTeX text
    # around a claim: "\\[ \\text{The answer is } B \\]".
    if "**" in text:
        text = text.replace("**", "")
    low = text.lower()  # for the substring gates below; positions are not used
    if "\\text" in text and ("answer" in low or "option" in low or "choice" in low):
        text = _TEXT_CLAIM.sub(r"\1", text)
    if kat != MATH:
        # Full-width letters and punctuation ("Ｂ", "（B）", "：") read as their ASCII forms.
        text = unicodedata.normalize("NFKC", text)
    elif "<<" in text:
        # GSM8K calculator annotations repeat the step's result: "60*1.25=<<60*1.25=75>>75".
        text = _CALCULATOR.sub("", text)
    # An answer trigger the prompt appended states the format, not an answer: "Therefore, the answer
    # (Yes or No) is", "the answer (arabic numerals) is", "among A through E, the answer is".
    if "answer (" in low or "answer(" in low or "among " in low:
        text = _TRIGGER_FORMAT.sub("", text)
    return text


_TEXT_CLAIM = re.compile(r"\\text(?:bf)?\{([^{}]{0,60}\b(?:answer|option|choice)\b[^{}]{0,40})\}", re.I)
_CALCULATOR = re.compile(r"<<[^<>\n]{0,200}>>")
_TRIGGER_FORMAT = re.compile(
    r"(?<=answer)\s{0,3}\((?:arabic\s{1,3}numerals?|[^()\n]{1,40}?\s(?:or|/)\s[^()\n]{1,40}?"
    r"|[A-Za-z]\s{1,3}(?:through|to|-)\s{1,3}[A-Za-z])\)(?=\s{0,3}(?:is\b|:|=))"
    r"|\bamong\s{1,3}(?:the\s{1,3}options\s{1,3})?\(?[A-Z]\)?\s{1,3}(?:through|to|-)\s{1,3}\(?[A-Z]\)?\s{0,3},?\s{0,3}",
    re.I,
)


def truncated(text: str) -> bool:
    """A response cut off mid-sentence: it ends in a connective punctuation or a dangling clause."""
    t = text.rstrip()
    if not t:
        return True
    last = t[-1]
    if last in ",:;(-–—/、，：；{^_=+*\\":
        return True
    if _open_math(t[-400:]):
        return True
    if last == "$" and t[t.rfind("\n") + 1 :].replace("\\$", "").count("$") % 2 == 1:
        return True  # cut off right after opening a formula: "... we obtain $"
    if last.isalpha():
        line = t[t.rfind("\n") + 1 :]
        words = line.split()
        if len(words) > 1 and words[-1] in _DANGLING:
            return True
        # A long unpunctuated last line is cut off; "Label: World" and "The answer is B" are not.
        return len(words) >= 7 and ":" not in line
    return False


def _open_math(tail: str) -> bool:
    """Cut off inside a formula: more "{" than "}" at the end ("\\sqrt{900-1540+829")."""
    depth = 0
    for ch in tail:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
    return depth > 0


# Words a finished sentence does not end with.
_DANGLING = frozenset(
    "is are was were be been being the a an of to and or that which with for in on at as by from into than "
    "because so but if when while since then also not very more most each every both between through over "
    "under after before during without within like such using about consider need needs has have had will "
    "would can could should must we i you it this these those its their our my your his her let's let us "
    "answer option choice".split()
)
