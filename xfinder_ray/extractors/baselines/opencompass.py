"""OpenCompass's RegEx answer extraction, re-implemented from OpenCompass 0.5.3.

Followed: https://github.com/open-compass/opencompass at tag 0.5.3
(commit a25fdd25dbe6a6e1da355332fa52e82dcfc3a1ee; these files are unchanged up to a5acc4bb, Aug 2026):

- ``opencompass/utils/text_postprocessors.py``: ``first_option_postprocess``,
  ``first_capital_postprocess``, ``general_postprocess``;
- ``opencompass/datasets/gsm8k.py``: ``gsm8k_postprocess``, ``Gsm8kEvaluator.is_equal``;
- ``opencompass/datasets/math.py``: ``last_boxed_only_string``, ``remove_boxed``,
  ``extract_boxed_answer``, ``normalize_final_answer``, ``math_postprocess_v2``,
  ``MATHEvaluator.is_equiv`` with ``_strip_string`` (v1) and ``_strip_string_v2`` (v2);
- ``opencompass/openicl/icl_evaluator/icl_em_evaluator.py``: ``EMEvaluator`` (the text route).

Every function returns what the upstream one returns (``''``, ``'NULL'``, ...); the registered
extractors map those no-match values to ``[No valid answer]``. docs/baselines.md lists the quirks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from xfinder_ray.extractors.baselines import _math
from xfinder_ray.extractors.baselines._common import (
    BASELINES_VERSION,
    char_class,
    is_gsm8k_like,
    last_boxed_only_string,
    last_match,
    nva,
    range_letters,
    range_texts,
    remove_boxed,
)
from xfinder_ray.records import Record

VERSION = "0.5.3"
COMMIT = "a25fdd25dbe6a6e1da355332fa52e82dcfc3a1ee"


def identity(function: str) -> str:
    return f"opencompass@{VERSION}+{COMMIT[:8]}:{function}/{BASELINES_VERSION}"


# ---------------------------------------------------------------------------------------------
# first_option_postprocess

# The upstream pattern list, in order; <O> stands for the character class of the options
# ("[ABCD]"). Tried one after the other with re.search(pattern, text, re.DOTALL); the first
# pattern that matches decides.
FIRST_OPTION_PATTERNS: tuple[str, ...] = (
    r"答案是?\s*(<O>)",
    r"答案是?\s*：\s*(<O>)",
    r"答案是?\s*:\s*(<O>)",
    r"答案选项应?该?是\s*(<O>)",
    r"答案选项应?该?为\s*(<O>)",
    r"答案应该?是\s*(<O>)",
    r"答案应该?选\s*(<O>)",
    r"答案选项为?\s*：\s*(<O>)",
    r"答案选项为?\s+\(?\*?\*?(<O>)\*?\*?\)?",
    r"答案选项是?\s*:\s*(<O>)",
    r"答案为\s*(<O>)",
    r"答案选\s*(<O>)",
    r"选择?\s*(<O>)",
    # Upstream lacks the comma after the "故选" pattern, so Python joins it with the next one
    # into a single pattern that needs both phrases.
    r"故选?\s*(<O>)只有选?项?\s?(<O>)\s?是?对",
    r"只有选?项?\s?(<O>)\s?是?错",
    r"只有选?项?\s?(<O>)\s?不?正确",
    r"只有选?项?\s?(<O>)\s?错误",
    r"说法不?对选?项?的?是\s?(<O>)",
    r"说法不?正确选?项?的?是\s?(<O>)",
    r"说法错误选?项?的?是\s?(<O>)",
    r"(<O>)\s?是正确的",
    r"(<O>)\s?是正确答案",
    r"选项\s?(<O>)\s?正确",
    r"所以答\s?(<O>)",
    r"所以\s?(<O>[.。$]?$)",
    r"所有\s?(<O>[.。$]?$)",
    r"[\s，：:,](<O>)[。，,\.]?$",
    r"[\s，,：:][故即](<O>)[。\.]?$",
    r"[\s，,：:]因此(<O>)[。\.]?$",
    r"[是为。]\s?(<O>)[。\.]?$",
    r"因此\s?(<O>)[。\.]?$",
    r"显然\s?(<O>)[。\.]?$",
    r"答案是\s?(\S+)(?:。|$)",
    r"答案应该是\s?(\S+)(?:。|$)",
    r"答案为\s?(\S+)(?:。|$)",
    r"(?i)ANSWER\s*:\s*(<O>)",
    r"[Tt]he answer is:?\s+\(?(<O>)\)?",
    r"[Tt]he answer is:?\s+\(?\*?\*?(<O>)\*?\*?\)?",
    r"[Tt]he answer is option:?\s+\(?(<O>)\)?",
    r"[Tt]he correct answer is:?\s+\(?(<O>)\)?",
    r"[Tt]he correct answer is option:?\s+\(?(<O>)\)?",
    r"[Tt]he correct answer is:?.*?boxed\{(<O>)\}",
    r"[Tt]he correct option is:?.*?boxed\{(<O>)\}",
    r"[Tt]he correct answer option is:?.*?boxed\{(<O>)\}",
    r"[Tt]he answer to the question is:?\s+\(?(<O>)\)?",
    r"^选项\s?(<O>)",
    r"^(<O>)\s?选?项",
    r"(\s|^)<O>[\s。，,：:\.$]",
    r"1.\s?(.*?)$",
    r"1.\s?(<O>)[.。$]?$",
)
# Appended when cushion=True (the default, and what every dataset config uses).
FIRST_OPTION_CUSHION: tuple[str, ...] = (r"(<O>):", r"(<O>)")

Groups = tuple[str, str | None]
Matcher = Callable[[str], Groups | None]

# Patterns whose backtracking is quadratic on adversarial text get an exact linear matcher.
_RUN_PATTERNS = {
    r"答案是\s?(\S+)(?:。|$)": "答案是",
    r"答案应该是\s?(\S+)(?:。|$)": "答案应该是",
    r"答案为\s?(\S+)(?:。|$)": "答案为",
}
_BOXED_PATTERNS = {
    r"[Tt]he correct answer is:?.*?boxed\{(<O>)\}": r"[Tt]he correct answer is",
    r"[Tt]he correct option is:?.*?boxed\{(<O>)\}": r"[Tt]he correct option is",
    r"[Tt]he correct answer option is:?.*?boxed\{(<O>)\}": r"[Tt]he correct answer option is",
}
_NON_SPACE = re.compile(r"\S*")


def _run_matcher(phrase: str) -> Matcher:
    """``re.search(phrase + r'\\s?(\\S+)(?:。|$)', text)`` in linear time.

    At an occurrence, ``\\S+`` takes the whole run of non-space characters after the phrase (and
    one optional whitespace); the match ends at the run's end when that is the end of the text
    (``$`` also before a final newline), else at the run's last "。" (group 1 non-empty).
    """

    def match(text: str) -> Groups | None:
        n = len(text)
        pos = 0
        while True:
            i = text.find(phrase, pos)
            if i < 0:
                return None
            j = i + len(phrase)
            q = j + 1 if j < n and text[j].isspace() else j
            if q >= n or text[q].isspace():
                pos = i + 1
                continue
            r = _NON_SPACE.match(text, q).end()  # type: ignore[union-attr]
            if r == n or (r == n - 1 and text[r] == "\n"):
                return text[i:r], text[q:r]
            e = text.rfind("。", q + 1, r)
            if e >= 0:
                return text[i : e + 1], text[q:e]
            # A later occurrence that ends inside this run has the same run end and fewer "。".
            pos = max(i + 1, r - len(phrase))

    return match


def _boxed_matcher(lead: str, options_class: str) -> Matcher:
    """``re.search(lead + r':?.*?boxed\\{(O)\\}', text, re.DOTALL)`` in linear time: only the first
    occurrence of the lead can match (a later one sees a subset of the same text)."""
    lead_re = re.compile(lead)
    box_re = re.compile(r"boxed\{(" + options_class + r")\}")

    def match(text: str) -> Groups | None:
        m = lead_re.search(text)
        if not m:
            return None
        b = box_re.search(text, m.end())
        if not b:
            return None
        return text[m.start() : b.end()], b.group(1)

    return match


def _regex_matcher(pattern: str) -> Matcher:
    rx = re.compile(pattern, re.DOTALL)

    def match(text: str) -> Groups | None:
        m = rx.search(text)
        if not m:
            return None
        return m.group(0), (m.group(1) if rx.groups else None)

    return match


# Substrings every match of a pattern contains: a pattern whose substring is absent is skipped
# without running it (the same outcome as running it, in a fraction of the time on long text).
# Keyed by the pattern text of FIRST_OPTION_PATTERNS (as _RUN_PATTERNS, _BOXED_PATTERNS and
# _TAIL_PATTERNS are): a lookup table written out, whose entries repeat the list's lines by design.
_NEEDS: dict[str, tuple[str, ...]] = {
    r"答案是?\s*(<O>)": ("答案",),
    r"答案是?\s*：\s*(<O>)": ("答案", "："),
    r"答案是?\s*:\s*(<O>)": ("答案", ":"),
    r"答案选项应?该?是\s*(<O>)": ("答案选项",),
    r"答案选项应?该?为\s*(<O>)": ("答案选项",),
    r"答案应该?是\s*(<O>)": ("答案应",),
    r"答案应该?选\s*(<O>)": ("答案应",),
    r"答案选项为?\s*：\s*(<O>)": ("答案选项", "："),
    r"答案选项为?\s+\(?\*?\*?(<O>)\*?\*?\)?": ("答案选项",),
    r"答案选项是?\s*:\s*(<O>)": ("答案选项", ":"),
    r"答案为\s*(<O>)": ("答案为",),
    r"答案选\s*(<O>)": ("答案选",),
    r"选择?\s*(<O>)": ("选",),
    r"故选?\s*(<O>)只有选?项?\s?(<O>)\s?是?对": ("故", "只有", "对"),
    r"只有选?项?\s?(<O>)\s?是?错": ("只有", "错"),
    r"只有选?项?\s?(<O>)\s?不?正确": ("只有", "正确"),
    r"只有选?项?\s?(<O>)\s?错误": ("只有", "错误"),
    r"说法不?对选?项?的?是\s?(<O>)": ("说法", "对"),
    r"说法不?正确选?项?的?是\s?(<O>)": ("说法", "正确"),
    r"说法错误选?项?的?是\s?(<O>)": ("说法错误",),
    r"(<O>)\s?是正确的": ("是正确的",),
    r"(<O>)\s?是正确答案": ("是正确答案",),
    r"选项\s?(<O>)\s?正确": ("选项", "正确"),
    r"所以答\s?(<O>)": ("所以答",),
    r"答案是\s?(\S+)(?:。|$)": ("答案是",),
    r"答案应该是\s?(\S+)(?:。|$)": ("答案应该是",),
    r"答案为\s?(\S+)(?:。|$)": ("答案为",),
    r"(?i)ANSWER\s*:\s*(<O>)": (":",),
    r"[Tt]he answer is:?\s+\(?(<O>)\)?": ("he answer is",),
    r"[Tt]he answer is:?\s+\(?\*?\*?(<O>)\*?\*?\)?": ("he answer is",),
    r"[Tt]he answer is option:?\s+\(?(<O>)\)?": ("he answer is option",),
    r"[Tt]he correct answer is:?\s+\(?(<O>)\)?": ("he correct answer is",),
    r"[Tt]he correct answer is option:?\s+\(?(<O>)\)?": ("he correct answer is option",),
    r"[Tt]he correct answer is:?.*?boxed\{(<O>)\}": ("he correct answer is", "boxed{"),
    r"[Tt]he correct option is:?.*?boxed\{(<O>)\}": ("he correct option is", "boxed{"),
    r"[Tt]he correct answer option is:?.*?boxed\{(<O>)\}": ("he correct answer option is", "boxed{"),
    r"[Tt]he answer to the question is:?\s+\(?(<O>)\)?": ("he answer to the question is",),
    r"^选项\s?(<O>)": ("选项",),
    r"^(<O>)\s?选?项": ("项",),
    r"1.\s?(.*?)$": ("1",),
    r"(<O>):": (":",),
}
# Patterns anchored at the end ("$" without MULTILINE) whose matches are at most 5 characters long:
# only the last few characters can hold a match, so the search starts there.
_TAIL_PATTERNS = frozenset(
    {
        r"所以\s?(<O>[.。$]?$)",
        r"所有\s?(<O>[.。$]?$)",
        r"[\s，：:,](<O>)[。，,\.]?$",
        r"[\s，,：:][故即](<O>)[。\.]?$",
        r"[\s，,：:]因此(<O>)[。\.]?$",
        r"[是为。]\s?(<O>)[。\.]?$",
        r"因此\s?(<O>)[。\.]?$",
        r"显然\s?(<O>)[。\.]?$",
        r"1.\s?(<O>)[.。$]?$",
    }
)
_TAIL = 16
# Group 1 of this pattern is the whitespace before the option, or "" at the very start; only the
# latter yields an option (a whitespace capture holds none), so only a match at position 0 counts.
_START_ONLY = r"(\s|^)<O>[\s。，,：:\.$]"


def _needs(matcher: Matcher, needs: tuple[str, ...]) -> Matcher:
    def match(text: str) -> Groups | None:
        for literal in needs:
            if literal not in text:
                return None
        return matcher(text)

    return match


def _tail_matcher(pattern: str) -> Matcher:
    rx = re.compile(pattern, re.DOTALL)

    def match(text: str) -> Groups | None:
        m = rx.search(text, max(0, len(text) - _TAIL))
        return None if m is None else (m.group(0), m.group(1))

    return match


def _start_matcher(pattern: str) -> Matcher:
    rx = re.compile(pattern, re.DOTALL)

    def match(text: str) -> Groups | None:
        m = rx.match(text)
        return None if m is None else (m.group(0), m.group(1))

    return match


@lru_cache(maxsize=256)
def first_option_matchers(options: str, cushion: bool = True) -> tuple[Matcher, ...]:
    """One matcher per upstream pattern, for `options` (a string of option characters): each
    returns (group 0, group 1) of ``re.search(pattern, text, re.DOTALL)`` where that decides the
    outcome, else None."""
    cls = "[" + char_class(options) + "]"
    has_space = any(ch.isspace() for ch in options)
    matchers: list[Matcher] = []
    for template in FIRST_OPTION_PATTERNS + (FIRST_OPTION_CUSHION if cushion else ()):
        pattern = template.replace("<O>", cls)
        if template in _RUN_PATTERNS:
            matcher = _run_matcher(_RUN_PATTERNS[template])
        elif template in _BOXED_PATTERNS:
            matcher = _boxed_matcher(_BOXED_PATTERNS[template], cls)
        elif template in _TAIL_PATTERNS:
            matcher = _tail_matcher(pattern)
        elif template == _START_ONLY and not has_space:
            matcher = _start_matcher(pattern)
        else:
            matcher = _regex_matcher(pattern)
        needs = _NEEDS.get(template)
        matchers.append(_needs(matcher, needs) if needs else matcher)
    return tuple(matchers)


def first_option_postprocess(text: str, options: str, cushion: bool = True) -> str:
    """The first option (in `options` order) found in what the first matching pattern captured.

    Upstream quirks kept: patterns are tried in list order and the FIRST match of the first
    matching pattern decides (not the last answer in the response); the captured text is group 1
    when non-empty, else the whole match, and the answer is the first character of `options`
    that occurs anywhere in it; a pattern whose capture holds no option falls through to the
    next; ``1.\\s?(.*?)$`` makes any "1" followed by a character capture the rest of the response;
    the "cushion" patterns finally take the first option letter anywhere, even inside a word.
    Returns ``''`` when nothing matches.
    """
    if not options:
        return ""
    text = text.strip()
    for match in first_option_matchers(options, cushion):
        found = match(text)
        if found is None:
            continue
        whole, group = found
        captured = group if group else whole
        for ch in options:
            if ch in captured:
                return ch
    return ""


def first_capital_postprocess(text: str) -> str:
    """The first uppercase character anywhere in the text (not only option letters), or ``''``."""
    for ch in text:
        if ch.isupper():
            return ch
    return ""


# ---------------------------------------------------------------------------------------------
# GSM8K

_GSM8K_NUMBER = re.compile(r"\-?\d+\.\d+|\-?\d+")
_GSM8K_SEPARATOR = re.compile(r"[^\d.\-]")  # a character no number match can contain


def gsm8k_postprocess(text: str) -> str:
    """The last number before the first "Question:" (a hallucinated next turn), or ``'NULL'``.

    Decimals keep their point, thousands separators split a number ("1,234" -> "234").
    """
    text = text.split("Question:", 1)[0]
    last = last_match(_GSM8K_NUMBER, text, _GSM8K_SEPARATOR)
    return last.group(0) if last is not None else "NULL"


def gsm8k_is_equal(pred: str, refer: str) -> bool:
    """``Gsm8kEvaluator.is_equal``: equal strings, or float(pred) within 1e-6 of int(refer)."""
    try:
        return pred == refer or abs(float(pred) - int(refer)) < 1e-6
    except (ValueError, TypeError, OverflowError):
        return False


# ---------------------------------------------------------------------------------------------
# MATH

_DOUBLE_BRACE = re.compile(r"^\{(.*)\}$")
_FINAL_ANSWER = re.compile("final answer|answer is")


def extract_boxed_answer(text: str, strip_double_curly_brace: bool = False) -> str | None:
    answer = remove_boxed(last_boxed_only_string(text))
    if answer is None:
        return None
    if strip_double_curly_brace:
        m = _DOUBLE_BRACE.match(answer)
        if m:
            answer = m.group(1)
    return answer


def normalize_final_answer(text: str) -> str:
    return _math.normalize_final_answer(text, _math.OPENCOMPASS)


def math_postprocess_v2(text: str) -> str:
    """The content of the LAST ``\\boxed{}`` (not normalised), else the normalised first
    "."-separated piece containing "final answer" or "answer is", else the normalised first piece.

    ``\\fbox{}`` is found by the brace scan but rejected by ``remove_boxed`` (not ``\\boxed{``), so
    it falls through to the sentence search. Splitting on "." cuts decimals ("answer is 3.5" ->
    "3"). Never a no-match: at worst the normalised first sentence, possibly ``''``.
    """
    boxed = extract_boxed_answer(text, strip_double_curly_brace=True)
    if boxed:
        return boxed
    # Upstream loops over every piece; the cue never spans a ".", so the piece is the one holding
    # the first cue occurrence of the lower-cased text (lower-casing keeps every "." in place).
    low = text.lower()
    m = _FINAL_ANSWER.search(low)
    if m is not None:
        k = low.count(".", 0, m.start())
        return normalize_final_answer(text.split(".", k + 1)[k])
    return normalize_final_answer(text.split(".", 1)[0])


def strip_string(text: str) -> str:
    """``MATHEvaluator._strip_string`` (version v1)."""
    return _math.strip_string(text, _math.OPENCOMPASS)


def strip_string_v2(text: str) -> str:
    """``MATHEvaluator._strip_string_v2`` (version v2, used with math_postprocess_v2)."""
    return _math.strip_string_v2(text)


# Same shape as judging/xfinder_compat.py:compat_math_equal (the xfinder package's copy of this):
# each mirrors its own upstream (docs/baselines.md), so they are not shared.
def is_equiv(pred: str | None, gold: str | None, version: str = "v2") -> bool:
    """``MATHEvaluator(version).is_equiv``: equal after strip_string, or after strip_string and
    normalize_final_answer, or after normalize_final_answer alone, or equal as given.

    The math_postprocess_v2 dataset configs use version='v2' (the default here).
    """
    if version not in ("v1", "v2"):
        raise ValueError(f"unknown MATHEvaluator version {version!r}")
    if pred is None and gold is None:
        return True
    if pred is None or gold is None:
        return False
    strip = strip_string_v2 if version == "v2" else strip_string
    try:  # upstream catches every exception in both blocks
        s1, s2 = strip(pred), strip(gold)
        if s1 == s2:
            return True
        if normalize_final_answer(s1) == normalize_final_answer(s2):
            return True
    except Exception:
        pass
    try:
        if normalize_final_answer(pred) == normalize_final_answer(gold):
            return True
    except Exception:
        pass
    return pred == gold


# ---------------------------------------------------------------------------------------------
# Text answers: general_postprocess + EMEvaluator

_FIRST_CLAUSE = re.compile(r"[\n.,]")
_PUNCT = re.compile(r"[^\w\s]+")  # upstream removes one character per match: same result
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.I)
_SPACES = re.compile(r"\s+")


def general_postprocess(text: str) -> str:
    """Up to the first newline, period or comma; punctuation, articles and extra spaces removed."""
    text = _FIRST_CLAUSE.split(text, maxsplit=1)[0]
    text = _PUNCT.sub("", text)
    text = _ARTICLES.sub("", text)
    return _SPACES.sub(" ", text).strip()


def em_match(text: str, candidates: list[str]) -> str:
    """EMEvaluator as an extractor: general_postprocess(response), returned as the candidate it
    equals (EMEvaluator compares to the processed and the original reference, case-sensitively),
    else as it is (an out-of-range answer)."""
    pred = general_postprocess(text)
    for c in candidates:
        if pred == c or pred == general_postprocess(c):
            return c
    return pred


# ---------------------------------------------------------------------------------------------
# Record extractors (registered in xfinder_ray.extractors.baselines)


def extract_first_option(rec: Record) -> str:
    if rec.key_answer_type != "alphabet_option":
        return nva("")
    return nva(first_option_postprocess(rec.llm_output, "".join(range_letters(rec.answer_range))))


def extract_first_capital(rec: Record) -> str:
    return nva(first_capital_postprocess(rec.llm_output))


def extract_gsm8k(rec: Record) -> str:
    return nva(gsm8k_postprocess(rec.llm_output), "NULL")


def extract_math_v2(rec: Record) -> str:
    return nva(math_postprocess_v2(rec.llm_output))


def extract_general(rec: Record) -> str:
    return nva(em_match(rec.llm_output, range_texts(rec.answer_range)))


def extract(rec: Record) -> str:
    """The `opencompass` dispatcher: what an OpenCompass dataset config of that kind would run.

    alphabet_option -> first_option_postprocess(options = the range's letters); math ->
    gsm8k_postprocess for GSM8K-like tasks (see _common.GSM8K_LIKE), else math_postprocess_v2;
    short_text / categorical_label -> general_postprocess + EMEvaluator's match.
    """
    kat = rec.key_answer_type
    if kat == "alphabet_option":
        return extract_first_option(rec)
    if kat == "math":
        return extract_gsm8k(rec) if is_gsm8k_like(rec.task) else extract_math_v2(rec)
    return extract_general(rec)
