"""lm-evaluation-harness's RegEx answer extraction, re-implemented from lm-eval v0.4.12.

Followed: https://github.com/EleutherAI/lm-evaluation-harness at tag v0.4.12
(commit 6d642546f4688648fced259eb3302efd36ece5af; ``lm_eval/filters/extraction.py`` is unchanged up to
4e7e0d47, Aug 2026):

- ``lm_eval/filters/extraction.py``: ``RegexFilter`` ("regex") and ``MultiChoiceRegexFilter``
  ("multi_choice_regex");
- ``lm_eval/tasks/gsm8k/gsm8k.yaml`` (strict-match ``#### (\\-?[0-9\\.\\,]+)``, flexible-extract
  ``(-?[$0-9.,]{2,})|(-?[0-9]+)`` with group_select -1, and the exact_match settings) and
  ``gsm8k-cot.yaml`` (``The answer is (\\-?[0-9\\.\\,]+).``);
- ``lm_eval/tasks/mmlu/flan_cot_zeroshot/_mmlu_flan_cot_zeroshot_template_yaml`` (the
  multi_choice_regex settings: ``(\\([A-Z]\\))``, group_select -1, ignore_case, ignore_punctuation);
- ``lm_eval/tasks/hendrycks_math/utils.py``: ``last_boxed_only_string``, ``remove_boxed``,
  ``strip_string``, ``is_equiv``;
- ``lm_eval/api/metrics.py``: ``exact_match_hf_evaluate`` (the GSM8K comparator).

Upstream's no-match value is the filter's fallback ``"[invalid]"``; the registered extractors map it
(and an empty result) to ``[No valid answer]``.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

from xfinder_ray.extractors.baselines import _common, _math
from xfinder_ray.extractors.baselines._common import (
    BASELINES_VERSION,
    is_gsm8k_like,
    last_match,
    nva,
    range_letters,
    range_texts,
)
from xfinder_ray.records import Record

VERSION = "v0.4.12"
COMMIT = "6d642546f4688648fced259eb3302efd36ece5af"
INVALID = "[invalid]"

GSM8K_STRICT = r"#### (\-?[0-9\.\,]+)"
GSM8K_FLEXIBLE = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"
GSM8K_COT = r"The answer is (\-?[0-9\.\,]+)."
MULTI_CHOICE = r"(\([A-Z]\))"


def identity(function: str) -> str:
    return f"lm-eval@{VERSION}+{COMMIT[:8]}:{function}/{BASELINES_VERSION}"


# ---------------------------------------------------------------------------------------------
# RegexFilter


@lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# For the last match of these patterns only a tail of the response is scanned: a character that
# no match can contain restarts the scan (see _common.last_match).
_SEPARATORS = {GSM8K_FLEXIBLE: re.compile(r"[^\-$0-9.,]")}


def _findall_item(m: re.Match[str], ngroups: int) -> str | tuple[str, ...]:
    """What re.findall would list for this match."""
    if ngroups == 0:
        return m.group(0)
    if ngroups == 1:
        return m.group(1) or ""
    return tuple(g or "" for g in m.groups())


def _select(rx: re.Pattern[str], text: str, group_select: int) -> str | tuple[str, ...] | None:
    """``re.findall(rx, text)[group_select]`` without building the list for 0 and -1 (None when
    there is no match; IndexError as upstream for an index past the matches)."""
    if group_select == 0:
        m = rx.search(text)
        return None if m is None else _findall_item(m, rx.groups)
    if group_select == -1:
        separator = _SEPARATORS.get(rx.pattern)
        if separator is not None:
            last = last_match(rx, text, separator)
        else:
            last = None
            for last in rx.finditer(text):  # noqa: B007 - the last one is wanted
                pass
        return None if last is None else _findall_item(last, rx.groups)
    found = rx.findall(text)
    return found[group_select] if found else None


def regex_filter(
    resp: str, regex_pattern: str = GSM8K_STRICT, group_select: int = 0, fallback: str = INVALID
) -> str:
    """``RegexFilter``: the group_select-th findall match; of a tuple, the first non-empty group;
    stripped. No match (or a tuple of empty groups) gives `fallback`."""
    if not isinstance(resp, str):
        resp = ""
    match = _select(_compile(regex_pattern), resp, group_select)
    if match is None:
        return fallback
    if isinstance(match, tuple):
        non_empty = [g for g in match if g]
        match = non_empty[0] if non_empty else fallback
    return match.strip()


def gsm8k_strict(resp: str) -> str:
    """strict-match: the FIRST ``#### <number>``; responses without "#### " are ``[invalid]``."""
    return regex_filter(resp, GSM8K_STRICT, 0)


def gsm8k_flexible(resp: str) -> str:
    """flexible-extract: the LAST number-like run, with "$", "," and "." kept ("$1,000.")."""
    return regex_filter(resp, GSM8K_FLEXIBLE, -1)


def gsm8k_cot(resp: str) -> str:
    """gsm8k-cot strict-match: the first "The answer is <number>" followed by any one character
    (the pattern's final "." is a wildcard: "The answer is 18" at the very end gives "1")."""
    return regex_filter(resp, GSM8K_COT, 0)


_IGNORE_END_PERIOD = re.compile(r"\.$")


def _gsm8k_em_norm(s: str) -> str:
    s = s.replace(",", "").replace("$", "")
    k = s.rfind("#### ")
    if k >= 0:
        s = s[k + 5 :]  # re.sub("(?s).*#### ", "", s): everything up to the last "#### "
    return _IGNORE_END_PERIOD.sub("", s).lower()


def gsm8k_exact_match(pred: str, gold: str) -> bool:
    """gsm8k's exact_match: regexes_to_ignore ``,`` ``\\$`` ``(?s).*#### `` ``\\.$``, ignore_case."""
    return _gsm8k_em_norm(pred) == _gsm8k_em_norm(gold)


# ---------------------------------------------------------------------------------------------
# MultiChoiceRegexFilter


# Upstream scans every code point below sys.maxunicode. Punctuation (category P*) lives in planes
# 0 and 1 only (planes 2-3 are CJK ideographs, 14 tags and variation selectors, 15-16 private use),
# so the scan stops at the end of plane 3: the same table in a quarter of the time.
_PUNCT_SCAN_END = min(0x40000, sys.maxunicode)


@lru_cache(maxsize=1)
def _punct_table() -> dict[int, None]:
    """Every code point whose Unicode category starts with "P" (upstream's translate table)."""
    return dict.fromkeys(i for i in range(_PUNCT_SCAN_END) if unicodedata.category(chr(i)).startswith("P"))


def filter_ignores(
    st: str, ignore_case: bool, ignore_punctuation: bool, regexes_to_ignore: tuple[str, ...] = ()
) -> str:
    """``regexes_to_ignore`` come from a task config (trusted), never from the data."""
    for rx in regexes_to_ignore:
        st = re.sub(rx, "", st)
    if ignore_case:
        st = st.lower()
    if ignore_punctuation:
        st = st.translate(_punct_table())
    return st


@lru_cache(maxsize=256)
def _alternation(branches: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(b) for b in branches))


def _choice_text_match(text: str, choices: list[str], group_select: int) -> str | None:
    """``re.findall('|'.join(map(re.escape, choices)), text)[group_select]``.

    Branches that occur nowhere in the text are dropped first (they cannot match anywhere), which
    keeps the alternation small. An empty choice matches everywhere, so the last findall item is
    then the empty match at the end of the text.
    """
    if "" in choices:
        if group_select == -1:
            return ""
        return _select(_alternation(tuple(choices)), text, group_select)  # type: ignore[return-value]
    present = tuple(dict.fromkeys(c for c in choices if c in text))
    if not present:
        return None
    return _select(_alternation(present), text, group_select)  # type: ignore[return-value]


def multi_choice_regex(
    resp: str,
    choices: list[str],
    regex_pattern: str = MULTI_CHOICE,
    group_select: int = -1,
    fallback: str = INVALID,
    ignore_case: bool = True,
    ignore_punctuation: bool = True,
    regexes_to_ignore: tuple[str, ...] = (),
) -> str:
    """``MultiChoiceRegexFilter`` (defaults: the MMLU flan_cot_zeroshot / GPQA / BBH settings).

    1. `regex_pattern` on the response: with ``(\\([A-Z]\\))`` and group_select -1, the LAST
       parenthesised capital anywhere, in range or not ("(E)" with four options).
    2. Else the choices' TEXTS (lower-cased, punctuation removed) as an alternation over the
       equally filtered response: the last one mentioned, as "(A)", "(B)", ... by position; a
       choice's text inside a longer word counts ("no" in "not"), and of two choices matching at
       the same place the earlier one wins.
    3. Else ``:\\s*(A|B|...)`` on the raw response: the last "A" after a colon (": B").
    4. Else `fallback` ("[invalid]").

    Letters beyond "Z" (more than 26 choices) are escaped here; upstream builds an invalid regex.
    """
    if not isinstance(resp, str):
        resp = ""
    match = _select(_compile(regex_pattern), resp, group_select)
    result = _pick(match)
    if result:
        return result
    filtered = [
        filter_ignores(c.strip(), ignore_case, ignore_punctuation, regexes_to_ignore) for c in choices
    ]
    to_alpha: dict[str, str] = {}
    letters: list[str] = []
    for k, m in enumerate(filtered):
        letter = chr(ord("A") + k)
        to_alpha[m] = f"({letter})"
        letters.append(letter)
    text = filter_ignores(resp, ignore_case, ignore_punctuation, regexes_to_ignore)
    result = _pick(_choice_text_match(text, filtered, group_select), to_alpha)
    if result:
        return result
    colon = _compile(r":[\s]*(" + "|".join(re.escape(x) for x in letters) + ")") if letters else None
    if colon is not None:
        result = _pick(_select(colon, resp, group_select), {x: f"({x})" for x in letters})
        if result:
            return result
    return fallback


def _pick(match: str | tuple[str, ...] | None, convert: dict[str, str] | None = None) -> str:
    """``find_match``'s post-processing: first non-empty group, stripped, converted."""
    if match is None:
        return ""
    if isinstance(match, tuple):
        non_empty = [g for g in match if g]
        if not non_empty:
            return ""
        match = non_empty[0]
    match = match.strip()
    if match and convert and match in convert:
        match = convert[match]
    return match


_PAREN_LETTER = re.compile(r"\((.)\)")


def paren_to_answer(result: str, answers: list[str], letters_mode: bool) -> str:
    """Map "(B)" to the range's second answer (its letter, or its text for short_text/categorical)."""
    m = _PAREN_LETTER.fullmatch(result)
    if not m:
        return result
    k = ord(m.group(1)) - ord("A")
    if 0 <= k < len(answers):
        return answers[k]
    return m.group(1) if letters_mode else result


# ---------------------------------------------------------------------------------------------
# MATH: hendrycks_math/utils.py


def last_boxed_only_string(s: str) -> str | None:
    """lm-eval's copy: if "\\boxed " (with a space) occurs ANYWHERE, the text after the last one up
    to the next "$" (even when a later ``\\boxed{}`` exists); else the last ``\\boxed`` / ``\\fbox``
    up to its balancing brace."""
    if "\\boxed " in s:
        return "\\boxed " + s.split("\\boxed ")[-1].split("$")[0]
    return _common.last_boxed_only_string(s)  # past that branch, lm-eval's copy is the original


def remove_boxed(s: str) -> str:
    """Raises AssertionError (as upstream) for anything but ``\\boxed X`` / ``\\boxed{X}``."""
    if "\\boxed " in s:
        if not s.startswith("\\boxed "):
            raise AssertionError("not a \\boxed answer")
        return s[len("\\boxed ") :]
    if not s.startswith("\\boxed{") or not s.endswith("}"):
        raise AssertionError("not a \\boxed{} answer")
    return s[len("\\boxed{") : -1]


def math_boxed(resp: str) -> str | None:
    """remove_boxed(last_boxed_only_string(response)); None where upstream has None or raises."""
    boxed = last_boxed_only_string(resp)
    if boxed is None:
        return None
    try:
        return remove_boxed(boxed)
    except AssertionError:
        return None


def strip_string(s: str) -> str:
    return _math.strip_string(s, _math.LM_EVAL)


def is_equiv(pred: str | None, gold: str | None) -> bool:
    """hendrycks_math ``is_equiv``: equal after strip_string; if that raises, equal as given."""
    if pred is None and gold is None:
        return True
    if pred is None or gold is None:
        return False
    try:
        return strip_string(pred) == strip_string(gold)
    except Exception:
        return pred == gold


# ---------------------------------------------------------------------------------------------
# Record extractors


def extract_gsm8k_strict(rec: Record) -> str:
    return nva(gsm8k_strict(rec.llm_output), INVALID)


def extract_gsm8k_flexible(rec: Record) -> str:
    return nva(gsm8k_flexible(rec.llm_output), INVALID)


def extract_gsm8k_cot(rec: Record) -> str:
    return nva(gsm8k_cot(rec.llm_output), INVALID)


def extract_multi_choice(rec: Record) -> str:
    """multi_choice_regex with the range as doc["choices"]: option texts for alphabet_option
    (answer: the letter), candidates for short_text / categorical_label (answer: the candidate)."""
    kat = rec.key_answer_type
    if kat == "math":
        return nva("")
    letters_mode = kat == "alphabet_option"
    choices = range_texts(rec.answer_range)
    answers = range_letters(rec.answer_range) if letters_mode else choices
    result = multi_choice_regex(rec.llm_output, choices)
    if result == INVALID:
        return nva("")
    return nva(paren_to_answer(result, answers, letters_mode))


def extract_math_boxed(rec: Record) -> str:
    return nva(math_boxed(rec.llm_output) or "")


def extract(rec: Record) -> str:
    """The `lm-eval` dispatcher: alphabet_option, short_text, categorical_label ->
    multi_choice_regex (MMLU flan CoT settings); math -> gsm8k flexible-extract for GSM8K-like
    tasks, else the last ``\\boxed`` (MATH)."""
    if rec.key_answer_type == "math":
        return extract_gsm8k_flexible(rec) if is_gsm8k_like(rec.task) else extract_math_boxed(rec)
    return extract_multi_choice(rec)
