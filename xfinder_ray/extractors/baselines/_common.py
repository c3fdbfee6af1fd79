"""Shared pieces of the RegEx baselines: bounded stand-ins for upstream regexes, brace scanning,
task routing, and the mapping of each framework's "no match" value to ``[No valid answer]``.

Upstream code runs Python ``re`` patterns such as ``(\\\\text\\{)(.*?)(\\})`` or
``答案是\\s?(\\S+)(?:。|$)`` over whole responses. Those are quadratic (or worse) on adversarial text:
every occurrence of the opening literal rescans the rest of the line. The helpers here return
exactly what ``re`` returns for those patterns (tests/cpu/extractors/test_baselines.py checks them against
``re`` on random strings) in one linear pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from xfinder_ray.records import NO_VALID_ANSWER, AnswerRange

BASELINES_VERSION = "baselines-1"

# Task names whose math answers are GSM8K-style numbers (the dispatchers route them to each
# framework's GSM8K post-processor); every other math task takes the MATH route.
GSM8K_LIKE = re.compile(r"gsm|svamp|asdiv|mawps|multiarith|addsub|singleeq|singleop|aqua", re.I)


def is_gsm8k_like(task: str) -> bool:
    return bool(GSM8K_LIKE.search(task or ""))


def nva(value: str, *no_match: str) -> str:
    """`value`, or [No valid answer] where it is empty or one of the framework's no-match values."""
    if value == "" or value in no_match:
        return NO_VALID_ANSWER
    return value


def range_letters(answer_range: AnswerRange) -> list[str]:
    return [str(letter).strip() for letter, _ in answer_range]  # type: ignore[misc]


def range_texts(answer_range: AnswerRange) -> list[str]:
    if isinstance(answer_range, str):
        return []
    return [str(item[1]) if isinstance(item, tuple | list) else str(item) for item in answer_range]


def char_class(chars: Iterable[str]) -> str:
    """The body of a regex character class matching exactly `chars` (each escaped)."""
    return "".join(re.escape(c) for c in dict.fromkeys(chars))


def correct_index(kat: str, answer_range: AnswerRange, correct: str) -> int | None:
    """Position of the correct answer in the range (by letter or text for alphabet_option)."""
    target = " ".join(correct.split()).casefold().rstrip(".")
    if kat == "alphabet_option":
        for i, (letter, text) in enumerate(answer_range):  # type: ignore[misc]
            if target in (str(letter).strip().casefold(), " ".join(str(text).split()).casefold()):
                return i
        return None
    for i, c in enumerate(range_texts(answer_range)):
        if " ".join(c.split()).casefold().rstrip(".") == target:
            return i
    return None


# ---------------------------------------------------------------------------------------------
# Linear stand-ins for lazy / greedy ".*" regexes between two literals.


class _LineEnds:
    """End of the line containing a position, with the last answer cached (the scanners below move
    forward only, so each newline is searched for once)."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.start = -1  # self.end is the line end for positions in [self.start, self.end]
        self.end = -1

    def __call__(self, pos: int) -> int:
        if not (self.start <= pos <= self.end):
            k = self.s.find("\n", pos)
            self.start, self.end = pos, (len(self.s) if k < 0 else k)
        return self.end


def _spans(s: str, opener: str, closer: str, greedy: bool = False) -> Iterator[tuple[int, int, int]]:
    """(opener start, content start, closer start) of each match of ``esc(opener) + '(.*?)' + esc(closer)``
    (``'(.*)'`` when greedy), left to right, as re.finditer finds them; ``.`` does not cross a newline.
    Linear: each line is searched for a closer once per opener that gets a match."""
    scan = 0  # next position to look for an opener
    n = len(s)
    line_end = _LineEnds(s)
    find_closer = s.rfind if greedy else s.find
    while scan <= n:
        i = s.find(opener, scan)
        if i < 0:
            return
        start = i + len(opener)
        end_of_line = line_end(start)
        k = find_closer(closer, start, end_of_line)
        if k < 0:
            # No later opener on this line can find a closer either.
            scan = end_of_line + 1
            continue
        yield i, start, k
        scan = k + len(closer)


def _substitute(s: str, opener: str, closer: str, keep: bool, greedy: bool) -> str:
    out: list[str] = []
    pos = 0  # copied up to here
    for i, start, k in _spans(s, opener, closer, greedy):
        out.append(s[pos:i])
        if keep:
            out.append(s[start:k])
        pos = k + len(closer)
    out.append(s[pos:])
    return "".join(out)


def sub_lazy(s: str, opener: str, closer: str, repl_keep: bool = True) -> str:
    """``re.sub(esc(opener) + '(.*?)' + esc(closer), r'\\1' if repl_keep else '', s)``.

    ``.`` does not cross a newline: an opener without a closer later on its line does not match.
    """
    return _substitute(s, opener, closer, keep=repl_keep, greedy=False)


def findall_lazy(s: str, opener: str, closer: str) -> list[str]:
    """``re.findall(esc(opener) + '(.*?)' + esc(closer), s)`` (``.`` does not cross a newline)."""
    return [s[start:k] for _, start, k in _spans(s, opener, closer)]


def last_lazy(s: str, opener: str, closer: str) -> str | None:
    """The last item of findall_lazy(s, opener, closer), or None.

    For one delimiter character used on both sides (the ``$...$`` pattern) in text without a newline, the
    matches pair the occurrences in order (1st-2nd, 3rd-4th, ...), so the last pair follows from
    the count alone; otherwise the scan runs.
    """
    if opener == closer and len(opener) == 1 and "\n" not in s:
        count = s.count(opener)
        if count < 2:
            return None
        last = s.rfind(opener)
        second = s.rfind(opener, 0, last)
        if count % 2 == 0:
            return s[second + 1 : last]
        third = s.rfind(opener, 0, second)
        return s[third + 1 : second]
    found = findall_lazy(s, opener, closer)
    return found[-1] if found else None


def sub_greedy(s: str, opener: str, closer: str) -> str:
    """``re.sub(esc(opener) + '(.*)' + esc(closer), r'\\1', s)`` (``.`` does not cross a newline)."""
    return _substitute(s, opener, closer, keep=True, greedy=True)


def sub_lazy_to_end(s: str, opener: str, closer: str) -> str:
    """``re.sub(esc(opener) + '.*?' + esc(closer) + '$', '', s)``: the leftmost opener on the last
    line (``$`` also matches before a final newline) whose line ends with the closer."""
    n = len(s)
    ends = [n]
    if s.endswith("\n"):
        ends.insert(0, n - 1)  # "$" before the final newline is tried first (it is further left)
    best: tuple[int, int] | None = None
    for end in ends:
        line_start = s.rfind("\n", 0, end) + 1
        if not s.endswith(closer, line_start, end):
            continue
        i = s.find(opener, line_start, end)
        if i >= 0 and i + len(opener) <= end - len(closer):
            if best is None or i < best[0]:
                best = (i, end)
    if best is None:
        return s
    i, end = best
    return s[:i] + s[end:]


# ---------------------------------------------------------------------------------------------
# \boxed{...}: the brace scan of Hendrycks' MATH code, shared by all three frameworks.

_BRACE = re.compile(r"[{}]")


def brace_span_end(s: str, idx: int) -> int | None:
    """Index of the ``}`` that brings the brace count (counted from `idx`) back to zero, or None.

    Upstream walks character by character and only checks for zero on a ``}``; so does this.
    """
    depth = 0
    for m in _BRACE.finditer(s, idx):
        if m.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def last_boxed_only_string(s: str) -> str | None:
    """Hendrycks' ``last_boxed_only_string`` (OpenCompass and UltraEval copies; lm-eval's copy,
    lmeval.py:last_boxed_only_string, adds one branch before it): the last ``\\boxed`` (else the last
    ``\\fbox``) up to its balancing brace, or None."""
    idx = s.rfind("\\boxed")
    if idx < 0:
        idx = s.rfind("\\fbox")
        if idx < 0:
            return None
    end = brace_span_end(s, idx)
    return None if end is None else s[idx : end + 1]


def remove_boxed(s: str | None) -> str | None:
    """``\\boxed{X}`` -> X; anything else (``\\fbox{X}``, ``\\boxed X``, None) -> None."""
    left = "\\boxed{"
    if s is None or not s.startswith(left) or not s.endswith("}"):
        return None
    return s[len(left) : -1]


def last_match(rx: re.Pattern[str], text: str, separator: re.Pattern[str]) -> re.Match[str] | None:
    """The last item of ``rx.finditer(text)``, scanning only a tail of the text where possible.

    `separator` matches one character that no match of `rx` can contain (and `rx` has no
    look-behind, ``^`` or ``\\b``): the left-to-right scan is fresh after such a character, so
    scanning from there gives the same matches as the full scan. The tail grows geometrically
    until it holds a match, so the cost stays linear while a response with a million numbers is
    not walked match by match.
    """
    n = len(text)
    width = 4096
    while True:
        start = 0
        if n - width > 0:
            sep = separator.search(text, n - width)
            if sep is None:
                width *= 4
                continue
            start = sep.end()
        last = None
        for last in rx.finditer(text, start):  # noqa: B007 - the last one is wanted
            pass
        if last is not None or start == 0:
            return last
        width *= 4
