"""Text preparation for `rules`: stop strings, size cap, markdown, width; truncation and repetition loops."""

from __future__ import annotations

import re
import unicodedata

from xfinder_ray import reasoning
from xfinder_ray.extractors.rules.keywords import find_all
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


def cut_at_stop(llm_output: object) -> str:
    """The response as a string, up to the first stop string (a chat template's end-of-turn token)."""
    text = llm_output if isinstance(llm_output, str) else ("" if llm_output is None else str(llm_output))
    if "<" in text:  # every stop string starts with "<" (thought markers are xfinder_ray.reasoning's)
        cut = _first_stop(text)
        if cut >= 0:
            text = text[:cut]
    return text


# No stop string holds a "<" past its first character, so none can straddle the start of another:
# cutting at each in turn cuts at the earliest of them, which is found where a "<" is.
_STOPS_START_AT_LT = all(s[:1] == "<" and "<" not in s[1:] for s in STOP_STRINGS)


def _first_stop(text: str) -> int:
    """Where `text` is cut at its stop strings (-1: nowhere)."""
    starts = reasoning.marker_starts(text) if _STOPS_START_AT_LT else None
    if starts is not None:
        return next((k for k in starts if text.startswith(STOP_STRINGS, k)), -1)
    cut = -1
    for stop in STOP_STRINGS:
        k = text.find(stop, 0, cut if cut >= 0 else len(text))
        if k >= 0:
            cut = k
    return cut


def prepare(text: str, kat: str) -> str:
    """`text` (already cut at the stop strings: cut_at_stop) made ready for the claim scans."""
    if len(text) > MAX_SCAN:
        text = text[:HEAD] + "\n\n" + text[-TAIL:]
    # "x" in text costs ~0.5 ns a character, a thought runs to 64k: a one-character test (memchr)
    # decides most of these first.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii() and "\u200b" in text:
        text = text.replace("\u200b", "")
    # Markdown bold only decorates: "**Answer:** **B**" reads as "Answer: B"; so does LaTeX text
    # around a claim: "\\[ \\text{The answer is } B \\]".
    if "*" in text and "**" in text:
        text = text.replace("**", "")
    low = text.lower()  # for the substring gates below
    low_of = text  # the text `low` is the lower case of
    if "\\" in text and "\\text" in text and ("answer" in low or "option" in low or "choice" in low):
        text = _TEXT_CLAIM.sub(r"\1", text)
    if kat != MATH:
        if not text.isascii():
            # Full-width letters and punctuation ("Ｂ", "（B）", "：") read as their ASCII forms.
            text = unicodedata.normalize("NFKC", text)
    elif "<" in text and "<<" in text:
        # GSM8K calculator annotations repeat the step's result: "60*1.25=<<60*1.25=75>>75".
        text = _CALCULATOR.sub("", text)
    # An answer trigger the prompt appended states the format, not an answer: "Therefore, the answer
    # (Yes or No) is", "the answer (arabic numerals) is", "among A through E, the answer is".
    if _may_have_trigger_format(low):
        text = _strip_trigger_formats(text, low if text is low_of else text.lower())
    if text is low_of:
        _remember_lower(text, low)
    return text


# The prepared text's lower-case form, which the scans after prepare need again (find_fields,
# find_claims): a 64k-character lower() costs ~90 µs. One entry, looked up by identity: a text is
# the object prepare returned, or it is lowered afresh.
_last_lower: tuple[str, str] = ("", "")


def _remember_lower(text: str, low: str) -> None:
    global _last_lower
    _last_lower = (text, low)


def lowered(text: str) -> str:
    """text.lower()."""
    last = _last_lower  # one read: a tuple another thread may replace, never change
    return last[1] if last[0] is text else text.lower()


def _may_have_trigger_format(low: str) -> bool:
    """`"answer (" in low or "answer(" in low or "among " in low`, with one scan for "answer"."""
    k = low.find("answer")
    while k >= 0:
        if low.startswith(("(", " ("), k + 6):
            return True
        k = low.find("answer", k + 6)
    return "among " in low


def _strip_trigger_formats(text: str, low: str) -> str:
    """_TRIGGER_FORMAT.sub("", text), the pattern tried only where a match can start: right after
    "answer" or at "among" (scanned over a long thought, the pattern cost ~250 µs)."""
    if len(low) != len(text) or not (text.isascii() or ("ſ" not in text and "ı" not in text)):
        return _TRIGGER_FORMAT.sub("", text)  # lower() positions would not be text's
    starts = sorted({k + 6 for k in find_all(low, "answer")} | set(find_all(low, "among")))
    pieces, end = [], 0
    for st in starts:
        if st < end:
            continue
        m = _TRIGGER_FORMAT.match(text, st)
        if m is not None:
            pieces.append(text[end:st])
            end = m.end()
    return "".join(pieces) + text[end:] if pieces else text


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
    if _open_math(t[-400:]) or _open_display(t):
        return True
    if last == "$" and t[t.rfind("\n") + 1 :].replace("\\$", "").count("$") % 2 == 1:
        return True  # cut off right after opening a formula: "... we obtain $"
    if last.isalnum() and _open_paren(t):
        return True  # "... perhaps the intended answer is option G (100": cut off inside the bracket
    if last.isalpha():
        line = t[t.rfind("\n") + 1 :]
        if is_formula_line(line):
            return False  # "dx/dt = kx - a" ends a formula, not a sentence
        words = line.rsplit(None, 7)  # the last word and, up to 8, how many (a line runs to 100k)
        if len(words) > 1 and words[-1] in _DANGLING:
            return True
        if len(t) <= 12 and len(words) == 1 and len(t) >= 2 and t.lower() in _DANGLING:
            return True  # cut off after its first word: "To", "The", "Let"
        if len(words) == 1 and "\n" in t and (words[0].lower() in _DANGLING or words[0].lower() in _OPENERS):
            return True  # cut off after the first word of a new line: "... = 55.\n\nThen", "\n\n**Final"
        # A long unpunctuated last line is cut off; "The answer is B" and a short value after a
        # label ("Label: World", "Answer: The capital of France is Paris") are not.
        return len(words) >= 7 and len(line[line.rfind(":") + 1 :].split(None, 7)) >= 7
    return False


def _open_paren(t: str) -> bool:
    """The last line opens a parenthesis after its last closing one, with prose before it (not
    "The answer is (D", a letter the rules read as chosen, nor "f(x"; only the last 200 characters)."""
    line = t[max(t.rfind("\n"), len(t) - 200) + 1 :]
    k = line.rfind("(")
    if k < 0 or line.find(")", k) >= 0:
        return False
    inside = line[k + 1 :]
    return len(inside) >= 2 and " " in line[:k].strip() and inside[:1].isalnum()


_FORMULA_LINE = re.compile(
    r"[\s$\\(\[]*[A-Za-z0-9_{}^()/'+\-*., \\]{1,80}=[A-Za-z0-9_{}^()/'+\-*., \\]{1,80}[\s$.)\]]*"
)


def is_formula_line(line: str) -> bool:
    """A line that is one equation and no prose: "dx/dt = kx - a", "$y = 2x + 1$"."""
    line = line.strip()
    if len(line) > 160 or not _FORMULA_LINE.fullmatch(line):
        return False
    return not any(len(w) >= 4 and w.isalpha() for w in re.split(r"[^A-Za-z]+", line.replace("\\frac", "")))


_BRACES = re.compile(r"[{}]")


def _open_display(t: str) -> bool:
    """Cut off inside display math: a "\\[" never closed, or an odd "$$" ("\\[ 327,600 + 2,8")."""
    opened = t.rfind("\\[")
    if opened >= 0 and opened > t.rfind("\\]"):
        return True
    if "$$" not in t or t.count("$$") % 2 == 0:
        return False
    # An odd "$$" opens display math only on a line of its own or at a line's start ("$$\n..."),
    # not a stray "$$10^{-4}$" in a sentence.
    k = t.rfind("$$")
    return t[:k].rstrip(" \t").endswith("\n") or k == 0 or t[k + 2 : k + 3] == "\n"


def _open_math(tail: str) -> bool:
    """Cut off inside a formula: more "{" than "}" at the end ("\\sqrt{900-1540+829")."""
    if "{" not in tail:
        return False  # the common case (prose), decided without walking the characters
    depth = 0
    for ch in _BRACES.findall(tail):
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

# Words that open a sentence and never end a response, alone on its last line.
_OPENERS = frozenset(
    "final finally therefore thus hence now next first second third step adding subtracting multiplying "
    "dividing combining substituting solving calculating simplifying putting overall however wait hmm".split()
)

# A repetition loop: the text ends in a stretch that repeats one unit again and again, typically to
# the token cap ("= 232792560 = 232792560 = ...", "The answer is (A). The answer is (C). The answer
# is (E). The answer is (A). ..."). Periods up to LOOP_MAX_PERIOD characters are looked for in the
# last LOOP_SCAN characters; a loop must repeat its unit at least LOOP_MIN_REPEATS times and cover at
# least LOOP_MIN_CHARS.
LOOP_SCAN = 8_000
LOOP_MAX_PERIOD = 1_500
LOOP_MIN_REPEATS = 4
LOOP_MIN_CHARS = 200
_LOOP_PROBE = 32


def trailing_loop(text: str) -> tuple[int, int]:
    """(start, period) of a repetition loop that runs to the end of text, or (-1, 0) without one."""
    t = text.rstrip()
    if len(t) < LOOP_MIN_CHARS:
        return -1, 0
    base = max(0, len(t) - LOOP_SCAN)
    tail = t[base:]
    probe = tail[-_LOOP_PROBE:]
    n = len(tail)
    # Candidate periods: earlier occurrences of the last characters, nearest first.
    k = tail.rfind(probe, 0, n - 1)
    tried = 0
    while k >= 0 and tried < 40:
        tried += 1
        period = n - _LOOP_PROBE - k
        if period > LOOP_MAX_PERIOD:
            break
        # A loop covering `need` characters repeats each of its last need - period characters one
        # period earlier: one slice comparison rules most candidates out.
        need = max(LOOP_MIN_CHARS, LOOP_MIN_REPEATS * period)
        m = need - period
        if period > 0 and need <= len(t) and t[-m:] == t[-need:-period]:
            start = _periodic_from(t, period)  # over the whole text: a loop may fill all of it
            if len(t) - start >= max(LOOP_MIN_CHARS, LOOP_MIN_REPEATS * period):
                return start, period
        k = tail.rfind(probe, 0, k + _LOOP_PROBE - 1)
    return -1, 0


def _periodic_from(tail: str, period: int) -> int:
    """The first position from which tail repeats with `period` to its end (compared in blocks)."""
    i = len(tail) - period
    block = 256
    while i > 0:
        lo = max(0, i - block)
        if tail[lo:i] == tail[lo + period : i + period]:
            i = lo
            continue
        while i > 0 and tail[i - 1] == tail[i - 1 + period]:
            i -= 1
        break
    return i
