"""`xfinder-compat`: the comparator of the `xfinder` package 0.2.6, re-implemented.

Reference: IAAR-Shanghai/xFinder, src/xfinder/modules/answer_comparator.py (`Comparator.compare`)
and src/xfinder/helpers/math_evaluator.py (`MathEvaluator(version="v2").is_equiv`,
`normalize_final_answer`). This module reproduces their behaviour step by step, quirks included,
so that the paper's numbers can be reproduced:

- math is pure string rewriting, no mathematics: `0.5` vs `\\frac{1}{2}` is False, set order
  matters, `2\\sqrt{2}` vs `\\sqrt{8}` is False, and `1,2` equals `12` (all commas of a
  digits-and-commas answer are dropped);
- "a "/"an " and the substring "and" are deleted anywhere, `j` becomes `i` when there is no `i`,
  a one-or-two-character left side of a single `=` is dropped;
- non-math answers: equal after strip / rstrip(".") / lower(); an alphabet_option answer may also
  be the exact text of the option whose letter equals the correct answer.

Deviations, all outside what the original can be said to do sensibly: inputs longer than
MAX_COMPAT_CHARS are compared with `==` only (the original runs regexes that are quadratic on them);
"[No valid answer]" is never correct (the judge enforces this for every comparator). The original
never evaluates or sympifies text, so neither does this.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_COMPAT_CHARS = 2_000

# normalize_final_answer's literal rewrites, in the original order. These tables and the steps below
# match extractors/baselines/_math.py (OpenCompass, which the xfinder package copied): this module
# mirrors xfinder 0.2.6 and that one OpenCompass 0.5.3 (docs/baselines.md), so they are not shared.
# The other regex declarations here share only their shape with judging/math_normalize.py's.
_NFA_SUBSTITUTIONS = (
    ("an ", ""),
    ("a ", ""),
    (".$", "$"),
    ("\\$", ""),
    ("\\ ", ""),
    (" ", ""),
    ("mbox", "text"),
    (",\\text{and}", ","),
    ("\\text{and}", ","),
    ("\\text{m}", "\\text{}"),
    ("\\le", "<"),
)
_NFA_REMOVED = (
    "square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units", "\\ldots", "sue",
    "points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds", "meters", "meals", "edges",
    "students", "childrentickets", "multiples", "\\text{s}", "\\text{.}", "\\text{\ns}", "\\text{}^2",
    "\\text{}^3", "\\text{\n}", "\\text{}", "\\mathrm{th}", "^\\circ", "^{\\circ}", "\\;", ",\\!", "{,}", '"',
    "\\dots", "\n", "\r", "\f",
)  # fmt: skip
# Wrappers whose content replaces them, in order (the boxed one is greedy, the others lazy).
_NFA_UNWRAP = (
    re.compile(r"(\\text\{)\((.*?)\)(\})"),
    re.compile(r"(\\text\{)(.*?)(\})"),
    re.compile(r"(\\textbf\{)(.*?)(\})"),
    re.compile(r"(\\overline\{)(.*?)(\})"),
    re.compile(r"(\\boxed\{)(.*)(\})"),
)
_NFA_FINAL_ANSWER = re.compile(r"finalansweris(.*)")
_NFA_ANSWER_IS = re.compile(r"answer?is:?(.*)")
_NFA_BOXED = re.compile(r"oxed\{(.*?)\}")
_NFA_DOLLARS = re.compile(r"\$(.*?)\$")
_NFA_FRAC_SHORT = re.compile(r"(frac)([^{])(.)")
_NFA_SQRT_SHORT = re.compile(r"(sqrt)([^{])")
_V2_SQRT = re.compile(r"\\sqrt(\w+)")


def _normalize_final_answer(s: str) -> str:
    for old, new in _NFA_SUBSTITUTIONS:
        s = s.replace(old, new)
    for old in _NFA_REMOVED:
        s = s.replace(old, "")
    for rx in _NFA_UNWRAP:
        s = rx.sub(r"\2", s)
    # findall(...)[-1] of these patterns: the first two consume to the end, so there is one match.
    m = _NFA_FINAL_ANSWER.search(s)
    if m:
        s = m.group(1)
    m = _NFA_ANSWER_IS.search(s)
    if m:
        s = m.group(1)
    found = _NFA_BOXED.findall(s)
    if found:
        s = found[-1]
    found = _NFA_DOLLARS.findall(s)
    if found:
        s = found[-1]
    s = s.strip()
    if "rac" in s and "\\frac" not in s:
        s = s.replace("rac", "\\frac")
    s = _NFA_FRAC_SHORT.sub(r"frac{\2}{\3}", s)
    s = _NFA_SQRT_SHORT.sub(r"sqrt{\2}", s)
    s = s.replace("$", "")
    if s.replace(",", "").isdigit():
        s = s.replace(",", "")  # "1,2" -> "12": the original's quirk, kept
    return s


def _drop_trailing_text(s: str) -> str:
    """re.sub(r'\\text{.*?}$', '', s) without the regex: from the first \\text{ to a final '}'."""
    k = s.find("\\text{")
    if k >= 0 and s.endswith("}") and k + len("\\text{") < len(s):
        return s[:k]
    return s


def _drop_mbox(s: str) -> str:
    """re.sub(r'\\mbox{.*?}', '', s): each \\mbox{ up to the next '}'."""
    out: list[str] = []
    pos = 0
    while True:
        k = s.find("\\mbox{", pos)
        if k < 0:
            break
        end = s.find("}", k + len("\\mbox{"))
        if end < 0:
            break
        out.append(s[pos:k])
        pos = end + 1
    out.append(s[pos:])
    return "".join(out)


def _drop_zero_decimals(s: str) -> str:
    """re.sub(r'(\\d+)\\.0+([^\\d])', r'\\1\\2', s) then re.sub(r'(\\d+)\\.0+$', r'\\1', s), in linear time."""
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        if not s[i].isdecimal():
            out.append(s[i])
            i += 1
            continue
        j = i
        while j < n and s[j].isdecimal():
            j += 1
        k = j + 1
        if j < n and s[j] == ".":
            while k < n and s[k] == "0":
                k += 1
            if k > j + 1 and k < n and not s[k].isdecimal():
                out.append(s[i:j])
                out.append(s[k])  # the non-digit is consumed by the match
                i = k + 1
                continue
        out.append(s[i:j])
        i = j
    s = "".join(out)
    body = s.rstrip("0")
    if len(body) < len(s) and body.endswith(".") and len(body) >= 2 and body[-2].isdecimal():
        return body[:-1]
    return s


def _fix_fracs(s: str) -> str:
    """\\frac12 -> \\frac{1}{2}, \\frac1{72} -> \\frac{1}{72}; the whole input back on a bare \\frac."""
    pieces = s.split("\\frac")
    if len(pieces) == 1:
        return s
    out = pieces[0]
    for piece in pieces[1:]:
        out += "\\frac"
        if piece.startswith("{"):
            out += piece
            continue
        if len(piece) < 2:
            return s
        a, b, rest = piece[0], piece[1], piece[2:]
        out += "{" + a + "}" + (b + rest if b == "{" else "{" + b + "}" + rest)
    return out


def _fix_a_slash_b(s: str) -> str:
    """`3/4` -> `\\frac{3}{4}`. Raises ValueError when a side is not an integer, as the original
    does (its caller's `except Exception` then skips the rest of that comparison branch)."""
    parts = s.split("/")
    if len(parts) != 2:
        return s
    a, b = int(parts[0]), int(parts[1])
    if s != f"{a}/{b}":
        return s
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


# Same steps as extractors/baselines/_math.py:strip_string_v2: not shared (see the top of this module).
def _strip_v2(s: str) -> str:
    s = str(s).strip()
    s = s.replace("\n", "").rstrip(".")
    s = s.replace("\\!", "").replace("\\ ", "")
    s = s.replace("\\\\", "\\").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    unitless = _drop_trailing_text(s).strip()
    if unitless and unitless != s:
        s = unitless
    s = s.replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "").replace("$", "")
    s = s.replace("\\text", "").replace("x\\in", "")
    s = s.replace("\\%", "").replace("%", "")
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    s = s.replace("\\cdot", "")
    s = s.replace("infinity", "\\infty")
    if "\\infty" not in s:
        s = s.replace("inf", "\\infty")
    s = s.replace("+\\inity", "\\infty")
    s = s.replace("and", "").replace("\\mathbf", "")
    s = _drop_mbox(s)
    # (The original's quote removal discards its result: quotes stay.)
    if "j" in s and "i" not in s:
        s = s.replace("j", "i")
    s = _drop_zero_decimals(s)
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        s = sides[1]
    s = _V2_SQRT.sub(r"\\sqrt{\1}", s)
    s = s.replace(" ", "")
    s = _fix_fracs(s)
    return _fix_a_slash_b(s)


# Same shape as extractors/baselines/opencompass.py:is_equiv (MATHEvaluator.is_equiv, which the
# xfinder package copied): each mirrors its own upstream (docs/baselines.md), so they are not shared.
def compat_math_equal(extracted: str, correct: str) -> bool:
    """MathEvaluator('v2').is_equiv(extracted, correct), re-implemented."""
    if len(extracted) > MAX_COMPAT_CHARS or len(correct) > MAX_COMPAT_CHARS:
        return extracted == correct
    try:
        a, b = _strip_v2(extracted), _strip_v2(correct)
        if a == b:
            return True
        if _normalize_final_answer(a) == _normalize_final_answer(b):
            return True
    except Exception:  # the original swallows everything here (ValueError from a/b parsing)
        pass
    try:
        if _normalize_final_answer(extracted) == _normalize_final_answer(correct):
            return True
    except Exception:
        pass
    return extracted == correct


def _plain(s: str) -> str:
    return s.strip().rstrip(".").lower()


def compat_equal(
    key_answer_type: str,
    options: Sequence[tuple[str, str]] | Sequence[str] | str,
    extracted: str,
    correct: str,
) -> bool:
    """Comparator.compare's verdict for one pair."""
    if key_answer_type == "math":
        return compat_math_equal(extracted, correct)
    if _plain(extracted) == _plain(correct):
        return True
    if key_answer_type == "alphabet_option":
        for option in options:
            if option[0] == correct and _plain(extracted) == _plain(option[1]):
                return True
    return False
