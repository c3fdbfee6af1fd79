"""The Hendrycks-MATH string normalisation family, as each framework copied it.

OpenCompass (``opencompass/datasets/math.py``), lm-evaluation-harness
(``lm_eval/tasks/hendrycks_math/utils.py``) and UltraEval (``tasks/postprocess.py``) all carry a copy of
the MATH paper's ``strip_string`` and of Minerva's ``normalize_final_answer``, with small differences
that change results (and where an exception is raised, which changes the caller's fallback):

=====================  ==============================  ===============================  ===========
piece                  OpenCompass 0.5.3               lm-eval v0.4.12                  UltraEval
=====================  ==============================  ===============================  ===========
fix_fracs on "\\frac"   returns the input unchanged     IndexError                       IndexError
 at the end
fix_a_slash_b "a/b"    ValueError (int("a"))           ValueError                       unchanged
normalize_final_answer ``\\text{(x)}`` -> x and          (not used)                       neither step
                       "answer is" -> what follows
=====================  ==============================  ===============================  ===========

The regex steps are replaced by the linear helpers of ``_common`` (same results, bounded time).
"""

from __future__ import annotations

import re

from xfinder_ray.extractors.baselines._common import (
    last_lazy,
    sub_greedy,
    sub_lazy,
    sub_lazy_to_end,
)

OPENCOMPASS, LM_EVAL, ULTRAEVAL = "opencompass", "lm-eval", "ultraeval"


# ---------------------------------------------------------------------------------------------
# strip_string (MATH paper) and its helpers.


def fix_fracs(s: str, flavor: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{72}`` -> ``\\frac{1}{72}``."""
    pieces = s.split("\\frac")
    out = [pieces[0]]
    for piece in pieces[1:]:
        out.append("\\frac")
        if not piece:
            if flavor == OPENCOMPASS:
                return s  # OpenCompass checks the length first and gives up
            raise IndexError("\\frac at the end")  # the others index piece[0]
        if piece[0] == "{":
            out.append(piece)
            continue
        if len(piece) < 2:
            return s
        a, b = piece[0], piece[1]
        if b != "{":
            out.append("{" + a + "}{" + b + "}" + piece[2:])
        else:
            out.append("{" + a + "}" + b + piece[2:])
    return "".join(out)


def fix_a_slash_b(s: str, flavor: str) -> str:
    """``3/4`` -> ``\\frac{3}{4}`` when both sides are integers written plainly."""
    parts = s.split("/")
    if len(parts) != 2:
        return s
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        if flavor == ULTRAEVAL:
            return s  # UltraEval catches everything here
        raise  # OpenCompass and lm-eval catch only the AssertionError below
    if s != f"{a}/{b}":
        return s
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


def remove_right_units(s: str) -> str:
    if "\\text{ " in s:
        parts = s.split("\\text{ ")
        if len(parts) != 2:
            raise AssertionError("more than one \\text{ unit")
        return parts[0]
    return s


def fix_sqrt(s: str) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}`` (IndexError on a trailing ``\\sqrt``, as upstream)."""
    if "\\sqrt" not in s:
        return s
    pieces = s.split("\\sqrt")
    out = [pieces[0]]
    for piece in pieces[1:]:
        if piece[0] != "{":
            out.append("\\sqrt{" + piece[0] + "}" + piece[1:])
        else:
            out.append("\\sqrt" + piece)
    return "".join(out)


def strip_string(s: str, flavor: str) -> str:
    """The MATH paper's ``strip_string`` (OpenCompass ``_strip_string``, i.e. MATHEvaluator v1)."""
    s = s.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "")
    s = remove_right_units(s)
    s = s.replace("\\%", "")
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        s = sides[1]  # "k = 3" -> "3"
    s = fix_sqrt(s)
    s = s.replace(" ", "")
    s = fix_fracs(s, flavor)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return fix_a_slash_b(s, flavor)


# Bounded forms of "(\d+)\.0+([^\d])" and "(\d+)\.0+$": a match can only start where a run of
# digits starts (any later start inside the run would have been preceded by a match from the
# run's start), so the look-behind changes no result and removes the quadratic backtracking.
_TRAILING_ZEROS_MID = re.compile(r"(?<!\d)(\d+)\.0+([^\d])")
_TRAILING_ZEROS_END = re.compile(r"(?<!\d)(\d+)\.0+$")
_SQRT_WORD = re.compile(r"\\sqrt(\w+)")


# Same steps as judging/xfinder_compat.py:_strip_v2 (the xfinder package copied this code): the judge
# mirrors xfinder 0.2.6, this OpenCompass 0.5.3 (docs/baselines.md), so they are not shared. Its tail
# repeats strip_string's above: upstream's v1 and v2 are two functions, each kept step for step.
def strip_string_v2(s: str) -> str:
    """OpenCompass ``MATHEvaluator._strip_string_v2`` (version='v2', the math_postprocess_v2 configs)."""
    s = str(s).strip().replace("\n", "").rstrip(".")
    s = s.replace("\\!", "").replace("\\ ", "")
    s = s.replace("\\\\", "\\").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    without_unit = sub_lazy_to_end(s, "\\text{", "}").strip()  # re.sub(r'\\text{.*?}$', '', s)
    if without_unit != "" and without_unit != s:
        s = without_unit
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
    s = sub_lazy(s, "\\mbox{", "}", repl_keep=False)  # re.sub(r'\\mbox{.*?}', '', s)
    # (upstream's quote removal discards its result: quotes stay)
    if "j" in s and "i" not in s:
        s = s.replace("j", "i")
    s = _TRAILING_ZEROS_MID.sub(r"\1\2", s)
    s = _TRAILING_ZEROS_END.sub(r"\1", s)
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        s = sides[1]
    s = _SQRT_WORD.sub(r"\\sqrt{\1}", s)
    s = s.replace(" ", "")
    s = fix_fracs(s, OPENCOMPASS)
    return fix_a_slash_b(s, OPENCOMPASS)


# ---------------------------------------------------------------------------------------------
# normalize_final_answer (Minerva, via OpenCompass and UltraEval). Same tables and steps as
# judging/xfinder_compat.py:_normalize_final_answer: kept apart for the reason at strip_string_v2.

_SUBSTITUTIONS = (
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
_REMOVED = (
    "square",
    "ways",
    "integers",
    "dollars",
    "mph",
    "inches",
    "ft",
    "hours",
    "km",
    "units",
    "\\ldots",
    "sue",
    "points",
    "feet",
    "minutes",
    "digits",
    "cents",
    "degrees",
    "cm",
    "gm",
    "pounds",
    "meters",
    "meals",
    "edges",
    "students",
    "childrentickets",
    "multiples",
    "\\text{s}",
    "\\text{.}",
    "\\text{\ns}",
    "\\text{}^2",
    "\\text{}^3",
    "\\text{\n}",
    "\\text{}",
    "\\mathrm{th}",
    "^\\circ",
    "^{\\circ}",
    "\\;",
    ",\\!",
    "{,}",
    '"',
    "\\dots",
    "\n",
    "\r",
    "\f",
)
_ANSWER_IS = re.compile(r"answer?is:?(.*)")
_FRAC_SHORT = re.compile(r"(frac)([^{])(.)")
_SQRT_SHORT = re.compile(r"(sqrt)([^{])")


def normalize_final_answer(s: str, flavor: str) -> str:
    """Minerva's answer normalisation; `flavor` OPENCOMPASS adds its two extra steps."""
    for before, after in _SUBSTITUTIONS:
        s = s.replace(before, after)
    for expr in _REMOVED:
        s = s.replace(expr, "")
    # From here on there is no newline, so "." in the upstream regexes matches every character.
    if flavor == OPENCOMPASS:
        s = sub_lazy(s, "\\text{(", ")}")  # (\\text\{)\((.*?)\)(\}) -> \2
    s = sub_lazy(s, "\\text{", "}")
    s = sub_lazy(s, "\\textbf{", "}")
    s = sub_lazy(s, "\\overline{", "}")
    s = sub_greedy(s, "\\boxed{", "}")  # (\\boxed\{)(.*)(\}) -> \2
    k = s.find("finalansweris")
    if k >= 0:
        s = s[k + len("finalansweris") :]  # findall(r'finalansweris(.*)')[-1]: the first one eats the rest
    if flavor == OPENCOMPASS:
        m = _ANSWER_IS.search(s)
        if m:
            s = m.group(1)
    boxed = last_lazy(s, "oxed{", "}")  # findall(r'oxed\{(.*?)\}')[-1]
    if boxed is not None:
        s = boxed
    dollars = last_lazy(s, "$", "$")  # findall(r'\$(.*?)\$')[-1]
    if dollars is not None:
        s = dollars
    s = s.strip()
    if "rac" in s and "\\frac" not in s:
        s = s.replace("rac", "\\frac")
    s = _FRAC_SHORT.sub("frac{\\2}{\\3}", s)
    s = _SQRT_SHORT.sub("sqrt{\\2}", s)
    s = s.replace("$", "")
    if s.replace(",", "").isdigit():
        s = s.replace(",", "")
    return s
