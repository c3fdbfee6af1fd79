"""Normalization of math answers, and exact comparison of plain numbers, in pure Python.

Everything here is linear (or bounded-quadratic on capped input) string work plus integer
arithmetic with capped sizes: no eval, no sympify. Answers longer than MAX_MATH_CHARS are not
normalized at all (the caller compares them as plain strings).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from math import gcd

MAX_MATH_CHARS = 2_000
# Plain numbers with more digits than this, or exponents beyond MAX_EXPONENT, are not converted
# exactly here (they go to the bounded worker instead).
MAX_NUMBER_DIGITS = 1_000
MAX_EXPONENT = 1_000
MAX_BASE_DIGITS = 200

# Unicode forms models emit, mapped to the LaTeX math-verify understands.
_UNICODE = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash used as minus
        "\u00d7": "\\times ",
        "\u00f7": "\\div ",
        "\u00b7": "\\cdot ",
        "\u22c5": "\\cdot ",
        "\u221a": "\\sqrt",
        "\u03c0": "\\pi ",
        "\u221e": "\\infty ",
        "\u2264": "\\le ",
        "\u2265": "\\ge ",
        "\u2260": "\\ne ",
        "\u00b0": "^\\circ ",
        "\uff0c": ",",
        "\uff1a": ":",
        "\uff08": "(",
        "\uff09": ")",
        "\uff05": "%",
        "\uff04": "$",
        "\u2009": " ",
        "\u202f": " ",
        "\u00a0": " ",
        "\u2007": " ",
        "\u200b": "",
    }
)

# Unicode super- and subscripts come in runs ("10⁻³", "1112112₃"): each run becomes one ^{...} / _{...}.
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-", strict=True))
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋", "0123456789+-", strict=True))
_SUPER_RUN = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")
_SUB_RUN = re.compile("[" + "".join(_SUBSCRIPTS) + "]+")
_VULGAR = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5),
    "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8),
    "⅞": (7, 8),
}  # fmt: skip
_VULGAR_RX = re.compile("[" + "".join(_VULGAR) + "]")

# LaTeX commands whose backslash escape was eaten by JSON decoding ("\frac" written unescaped in a
# JSON string arrives as form feed + "rac"). Control characters never occur in a real answer; tab,
# CR and newline only count when the rest of a command name follows ("5<TAB>cm" stays a space).
_JSON_CONTROL = re.compile(
    "[\x07\x08\x0b\x0c]"
    r"|\t(?=(?:imes|ext|extbf|extrm|frac|heta|an|au|ilde|riangle|o)(?![A-Za-z]))"
    r"|\r(?=(?:ight|ho|angle|m|ceil|floor)(?![A-Za-z]))"
    r"|\n(?=(?:eq|eg|u|abla|ot|e)(?![A-Za-z]))"
)
_JSON_CONTROL_MAP = {
    "\x07": "\\a",
    "\x08": "\\b",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\t": "\\t",
    "\r": "\\r",
    "\n": "\\n",
}
# A doubly escaped command ("\\frac" from a JSON string escaped twice). Without an environment a
# LaTeX line break means nothing in an answer, so "\\" before a command name or delimiter is "\".
_DOUBLE_BACKSLASH = re.compile(r"(?<!\\)\\\\(?=[A-Za-z(){}\[\]%$,!])")
_BACKSLASH_RUN = re.compile(r"\\+")

# The MATH dataset's thousands separator: 11,\! 111,\! 100.
_BANG_THOUSANDS = re.compile(r"(?<=\d),\s*\\!\s*(?=\d{3}(?!\d))")
# A decimal followed by an ellipsis: "0.1666...", "0.142857142857…".
_ELLIPSIS_DECIMAL = re.compile(r"(?<![\d.])(\d*)\.(\d{1,1000})\s*(?:\.{3,}|…|\\[lc]?dots(?![A-Za-z]))")
_MAX_REPEAT_BLOCK = 12
_QUOTE_PAIRS = (('"', '"'), ("`", "`"), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"))
_EMPHASIS = ("***", "___", "**", "__")
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>[0-5]\d)(?:\s*(?:[ap]\.?\s?m\.?))?", re.IGNORECASE)

_WRAPPERS = ("\\boxed", "\\fbox", "\\text", "\\textbf", "\\textrm", "\\mathrm", "\\mathbf", "\\mbox")
_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))

# The declarations below share a shape (one compiled regex each, named groups) with each other and with
# judging/xfinder_compat.py's _NFA_* ones; each reads its own form of answer, so there is nothing to share.
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_FRAC_VARIANTS = re.compile(r"\\[dtc]frac(?![A-Za-z])")
# Thousands separators written as LaTeX spacing or {,} between digit groups: 1\,000, 1{,}000.
_THIN_THOUSANDS = re.compile(r"(?<=\d)(?:\\,|\\ |~|\\!)(?=\d{3}(?!\d))")
_BRACE_COMMA = re.compile(r"(?<=\d)\{,\}(?=\d)")
# (?<!\\): a "\\ " after a matrix row separator "\\\\" is not a spacing command.
_SPACING = re.compile(r"(?<!\\)\\[,;:! ]|\\q?quad(?![A-Za-z])|~|\\displaystyle(?![A-Za-z])")
_DEGREES = re.compile(
    r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![A-Za-z])|\\circ(?![A-Za-z])\s*$|\\degree(?![A-Za-z])"
)
_PERCENT_TAIL = re.compile(
    r"\s*(?:\\%|%|\\text\{\s*\\?%\s*\}|(?<![A-Za-z])(?:percent|per\s+cent|pct))\s*$", re.IGNORECASE
)
_SQRT_PAREN = re.compile(r"(?<!\\)\bsqrt\s*\(([^()]{1,200})\)|\\sqrt\s*\(([^()]{1,200})\)")
_BARE_PI = re.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])")
_BARE_INF = re.compile(r"(?<![\\A-Za-z])(?:infinity|inf)(?![A-Za-z])")
_SPACE = re.compile(r"\s+")
# A word set in a text or roman font is the word: "\\text{SRMC} = \\text{LRMC}" reads as "SRMC=LRMC".
_FONT_WORD = re.compile(r"\\(?:text|textrm|mathrm|textbf|mathbf|operatorname)\s*\{([A-Za-z]+)\}")
# Spaces matter only between letters ("\pi r", "x y"); elsewhere they are layout.
_LAYOUT_SPACE = re.compile(r" (?![A-Za-z])|(?<![A-Za-z]) ")

_VAR_PREFIX = re.compile(r"([A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?)\s*=\s*(.+)")
_DEC = r"(?:\d+(?:\.\d*)?|\.\d+)"
_SIGN = re.compile(r"([+-])\s*")
# Currency written before the number: symbols, ISO codes, LaTeX currency commands ("$" and "\$" are
# removed earlier, with the other math delimiters).
_CURRENCY = re.compile(
    r"(?:[\u20ac\u00a3\u00a5\u20b9\u20a9]|US\$|(?:USD|EUR|GBP|INR|JPY|CAD|AUD|Rs\.?)(?![A-Za-z])"
    r"|\\(?:euro|pounds|yen|texteuro|textsterling|textdollar)(?![A-Za-z]))\s*"
)
# Number forms, one pattern each (alike in shape only; see the note at _LEFT_RIGHT).
_NUM_SCI = re.compile(
    rf"(?P<m>{_DEC})(?:[eE](?P<e1>[+-]?\d+)"
    rf"|\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*(?:\{{\s*(?P<e2>[+-]?\d+)\s*\}}|(?P<e3>[+-]?\d{{1,3}}(?!\d))))"
)
_NUM_POW10 = re.compile(r"10\s*\^\s*(?:\{\s*(?P<e1>[+-]?\d+)\s*\}|(?P<e2>\d)(?![\d.]))")
_NUM_FRAC = re.compile(rf"\\frac\s*\{{\s*(?P<a>[+-]?{_DEC})\s*\}}\s*\{{\s*(?P<b>[+-]?{_DEC})\s*\}}")
_NUM_FRAC_SHORT = re.compile(r"\\frac\s*(?P<a>\d)\s*(?P<b>\d)(?!\d)")
_NUM_SLASH = re.compile(rf"(?P<a>{_DEC})\s*/\s*(?P<b>[+-]?{_DEC})")
# A mixed number: 2\frac{1}{2}, 2 \frac12, "2 1/2" (the slash form needs the space).
_NUM_MIXED = re.compile(
    r"(?P<w>\d+)(?:\s*\\frac\s*(?:\{\s*(?P<a1>\d+)\s*\}\s*\{\s*(?P<b1>\d+)\s*\}|(?P<a2>\d)\s*(?P<b2>\d)(?!\d))"
    r"|\s+(?P<a3>\d+)\s*/\s*(?P<b3>\d+)(?![\d.]))"
)
# Repeating decimals: 0.\overline{3}, 0.1\overline{6}, 0.\bar{3}, 0.\dot{3}, 0.(3), 0.1(6).
_NUM_REPEAT = re.compile(
    r"(?P<i>\d*)\.(?P<n>\d*)(?:\\(?:overline|bar|dot)\s*(?:\{\s*(?P<r1>\d+)\s*\}|(?P<r2>\d))"
    r"|\((?P<r3>\d+)\))"
)
# Thousands groups: a nonzero leading group (so "0,111" is not 111), one separator kind throughout.
_NUM_GROUPED = re.compile(
    r"(?P<g>[1-9]\d{0,2}(?:(?P<sep>[, ])\d{3})(?:(?P=sep)\d{3})*)(?P<f>\.\d*)?(?![\d,])"
)
_NUM_DEC = re.compile(_DEC)
# Decimal-comma readings (see docs/judging.md): "0,111", "1,5", "12,75", "1.000,99"; never a
# 3-digit group after a nonzero leading group ("1,000" stays a thousands separator).
_COMMA_DECIMAL = re.compile(r"(?P<i>\d+),(?P<f>\d+)(?![\d,.])")
_EURO_GROUPED = re.compile(r"(?P<g>[1-9]\d{0,2}(?:\.\d{3})+),(?P<f>\d+)(?![\d,.])")
_SCALE = re.compile(
    r"\s*(?:\\(?:text|mbox|mathrm|textrm)\s*\{\s*(?P<t>thousand|million|billion|trillion)s?\s*\}"
    r"|(?P<w>thousand|million|billion|trillion)s?(?![A-Za-z]))",
    re.IGNORECASE,
)
_SCALE_EXP = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
_BASE_NUM = re.compile(
    r"(?P<s>-?)(?P<d>[0-9A-Z]{1,200}|[0-9a-z]{1,200})_(?:\{\s*(?P<b1>\d{1,2})\s*\}|(?P<b2>\d{1,2}))"
)
_MAX_CHAIN_SIDES = 16
# A comma that is not a thousands separator, or words/operators joining several answers: such a
# text is a list, not a computation chain "a + b = c".
_NOT_A_CHAIN = re.compile(
    r",(?!\d{3}(?!\d))|;|(?<![A-Za-z])(?:or|and)(?![A-Za-z])|\\(?:lor|vee|pm|mp|le|ge|lt|gt|ne|neq|approx|in)"
    r"(?![A-Za-z])|[<>±≈]"
)

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_CHAIN_LETTER = re.compile(r"[A-Za-z]")
_VAR_NAME = re.compile(r"[A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?")

# "x < -2 or x > 3" (one variable, simple bounds) for inequality_union.
_OR_SPLIT = re.compile(
    r"\s*(?:\\text\s*\{\s*or\s*\}|\\lor(?![A-Za-z])|\\vee(?![A-Za-z])|(?<![A-Za-z])or(?![A-Za-z]))\s*"
)
_ONE_SIDED = re.compile(
    r"(?P<v>[A-Za-z])\s*(?P<op><=|>=|<|>|\\leq?(?![A-Za-z])|\\geq?(?![A-Za-z]))\s*(?P<a>[^<>=,]{1,60})"
)

# What may follow a number as its unit: spaces (also LaTeX's "\\," "\\;" "\\ "), \\text{...} words,
# bare words, currency signs, powers of a unit ("^2", "^{-1}", "²", "⁻¹": "kcal m^{-2} yr^{-1}"), "/".
_UNIT_TOKEN = re.compile(
    r"\s+|\\[,;: !]|\\(?:text|mbox|mathrm|textrm|textit|rm)\s*\{(?P<t>(?:[^{}]|\{-?[123]\}){0,80})\}"
    r"|(?P<w>[A-Za-zÅµμΩ][A-Za-zÅµμΩ.'\-]*)"
    r"|(?P<c>[\u20ac\u00a3\u00a5\u20b9\u20a9\u00a2])|\^\s*\{?\s*-?\s*[123]\s*\}?|[⁻¹²³]{1,3}|/"
)
_UNIT_POWER = re.compile(r"(?:[⁻¹²³]{1,3}|\^\{?-?[123]\}?)$")
_UNIT_WORD = re.compile(r"[A-Za-zÅµμΩ][A-Za-zÅµμΩ.'\-]*(?:[⁻¹²³]{1,3}|\^\{?-?[123]\}?)?")
# Words that look like units but carry mathematical meaning: never dropped as a unit. Scale words
# ("million") change the value: read by read_number, never dropped.
_NOT_UNITS = frozenset(
    "pi e i j and or x y z n k t sqrt infty infinity inf sin cos tan cot sec csc log ln exp mod pmod "
    "times cdot div frac dfrac over plus minus le ge lt gt ne neq or and to i.e ie "
    "thousand million billion trillion hundred".split()
)
# Single-letter units accepted after a number written with a space ("5 m"); other letters are variables.
_SINGLE_LETTER_UNITS = frozenset("m g s h l L K N J W V A C F".split())
# Square or cubic metres written against the number: "12m^2", "1,000.99m²" (other letters with a
# power, "5s^2", read as a variable).
_GLUED_AREA_UNIT = re.compile(r"(?P<u>[A-Za-z])\s*\^\s*\{?\s*[23]\s*\}?")


def find_closing_brace(s: str, open_index: int) -> int:
    """Index of the brace closing s[open_index] == '{', or -1."""
    depth = 0
    i = open_index
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2  # an escaped character (\{ or \}) does not count
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _strip_pair(s: str) -> str:
    """Remove one pair of surrounding quotes, backticks or markdown emphasis (**5**, __5__)."""
    for op, cl in _QUOTE_PAIRS:
        if len(s) > 2 and s.startswith(op) and s.endswith(cl) and op not in s[1:-1]:
            return s[1:-1].strip()
    for mark in _EMPHASIS:
        k = len(mark)
        if len(s) > 2 * k and s.startswith(mark) and s.endswith(mark) and mark not in s[k:-k]:
            return s[k:-k].strip()
    return s


def _unwrap(s: str) -> str:
    """Strip math delimiters and whole-answer wrappers like \\boxed{...} / \\text{...}."""
    for _ in range(8):
        before = s
        s = _strip_pair(s)
        for op, cl in _DELIMS:
            if len(s) >= len(op) + len(cl) and s.startswith(op) and s.endswith(cl):
                s = s[len(op) : len(s) - len(cl)].strip()
        # A \boxed{...} anywhere holds the answer: keep the last one's content.
        k = s.rfind("\\boxed")
        if k >= 0:
            j = k + len("\\boxed")
            while j < len(s) and s[j] == " ":
                j += 1
            if j < len(s) and s[j] == "{":
                end = find_closing_brace(s, j)
                if end > 0:
                    s = s[j + 1 : end].strip()
        for w in _WRAPPERS:
            if s.startswith(w):
                j = len(w)
                while j < len(s) and s[j] == " ":
                    j += 1
                if j < len(s) and s[j] == "{" and find_closing_brace(s, j) == len(s) - 1:
                    s = s[j + 1 : -1].strip()
                    break
        # A lone trailing backslash ("67\") is a stray escape, not a command.
        if s.endswith("\\") and (len(s) - len(s.rstrip("\\"))) % 2 == 1:
            s = s[:-1].strip()
        s = s.rstrip(".").strip()
        if s == before:
            break
    return s


def _repair_escapes(s: str) -> str:
    """Undo JSON escaping damage: control characters that were commands, doubled backslashes."""
    s = _JSON_CONTROL.sub(lambda m: _JSON_CONTROL_MAP[m.group()], s)
    if "\\\\" not in s:
        return s
    if "begin{" not in s:
        return _DOUBLE_BACKSLASH.sub(r"\\", s)
    # An environment: only a text escaped twice throughout (every backslash run even) is halved.
    runs = _BACKSLASH_RUN.findall(s)
    if all(len(r) % 2 == 0 for r in runs):
        return _BACKSLASH_RUN.sub(lambda m: "\\" * (len(m.group()) // 2), s)
    return s


def _scripts(s: str) -> str:
    """Unicode super/subscript runs and vulgar fractions to LaTeX."""
    s = _SUPER_RUN.sub(lambda m: "^{" + "".join(_SUPERSCRIPTS[c] for c in m.group()) + "}", s)
    s = _SUB_RUN.sub(lambda m: "_{" + "".join(_SUBSCRIPTS[c] for c in m.group()) + "}", s)
    return _VULGAR_RX.sub(lambda m: "\\frac{{{}}}{{{}}}".format(*_VULGAR[m.group()]), s)


def _repeat_block(frac: str) -> tuple[str, str] | None:
    """(prefix, block) when `frac` ends in a repeated block: "1666" -> ("1", "6"), "1212" -> ("", "12")."""
    for size in range(1, min(_MAX_REPEAT_BLOCK, len(frac) // 2) + 1):
        block = frac[-size:]
        # Two copies before the ellipsis say which block repeats: "0.166..." and "0.1212...".
        if len(frac) >= 2 * size and frac[-2 * size :] == block * 2:
            prefix = frac[: -2 * size]
            # Drop further copies of the block from the prefix: 0.(3)(3)(3)... -> 0.\overline{3}.
            while prefix.endswith(block):
                prefix = prefix[: -len(block)]
            return prefix, block
    return None


def _ellipsis(m: re.Match) -> str:
    """'0.1666...' -> '0.1\\overline{6}'; a decimal with no visible period keeps its digits."""
    whole, frac = m.group(1), m.group(2)
    rep = _repeat_block(frac)
    if rep is None:
        return f"{whole}.{frac}"
    return f"{whole}.{rep[0]}\\overline{{{rep[1]}}}"


def clean(raw: str) -> str:
    """Linear LaTeX clean-up shared by the fast path and the worker input."""
    s = _repair_escapes(raw)
    s = s.translate(_UNICODE)
    s = _scripts(s)
    s = _SPACE.sub(" ", s).strip()
    # Before _unwrap, which drops trailing periods (and with them an ellipsis).
    s = _ELLIPSIS_DECIMAL.sub(_ellipsis, s)
    s = _unwrap(s)
    s = s.replace("\\$", "").replace("$", "")
    s = _unwrap(s.strip())
    s = _FRAC_VARIANTS.sub("\\\\frac", s)
    s = _LEFT_RIGHT.sub("", s)
    s = _BRACE_COMMA.sub(",", s)
    s = _BANG_THOUSANDS.sub(",", s)
    s = _THIN_THOUSANDS.sub("", s)
    s = _SPACING.sub(" ", s)
    s = _DEGREES.sub(" ", s)  # a space, so that "5^{\circ}C" still reads as number + unit
    s = s.replace("**", "^")
    s = _SQRT_PAREN.sub(lambda m: "\\sqrt{" + (m.group(1) or m.group(2)) + "}", s)
    s = _BARE_PI.sub(r"\\pi", s)
    s = _BARE_INF.sub(r"\\infty", s)
    s = _ORDINAL_SCRIPT.sub(r"\1", s)  # "12^{\text{th}}": the 12th is 12
    s = _ONE_CHAR_SUB.sub(r"_\1", s)  # "E_{1}" is "E_1"
    s = _SYMBOL_SUB.sub(
        lambda m: "_{" + (m.group(1) or m.group(2)) + "}", s
    )  # "L_{\odot}": the sun's luminosity, a name, not an operator
    s = _SPACE.sub(" ", s).strip().rstrip(".").strip()
    return s


_ORDINAL_SCRIPT = re.compile(
    r"(\d)\s{0,2}\^\s{0,2}(?:\{\s{0,2}(?:\\(?:text|mathrm|textrm|rm)\s{0,2})?\{?\s{0,2}(?:st|nd|rd|th)\s{0,2}\}?\s{0,2}\}"
    r"|\\(?:text|mathrm|textrm)\s{0,2}\{\s{0,2}(?:st|nd|rd|th)\s{0,2}\})"
)
_ONE_CHAR_SUB = re.compile(r"_\{\s{0,2}([A-Za-z0-9])\s{0,2}\}")
# A subscript that is one symbol command (astronomy's L_{\odot}, M_\oplus, x_{\star}): the parser reads
# the command as an operator and fails, so it becomes the command's name.
_SYMBOL_SUB = re.compile(
    r"_\s{0,2}(?:\{\s{0,2}\\(odot|oplus|star|ast|bullet|circ)\s{0,2}\}|\\(odot|oplus|star|ast|bullet|circ)\b)"
)


def _is_unit_tail(rest: str) -> bool:
    """Whether `rest` (what follows a number) is only units/words like ' cm', '\\text{ apples}', ' km/h'."""
    if rest.lstrip()[:1] in ("^", "/"):
        return False  # "10^2 cm", "3/4 cup" (handled as a fraction before): an operator, not a unit
    glued = _GLUED_AREA_UNIT.match(rest)
    if glued and glued.group("u") == "m":
        # "12m^2": a unit letter with a power, written against the number; the rest is checked as usual.
        rest = rest[glued.end() :]
        if not rest.strip():
            return True
        if not rest.startswith(" "):
            return False
    pos = 0
    words: list[str] = []
    bare_single: list[str] = []
    while pos < len(rest):
        m = _UNIT_TOKEN.match(rest, pos)
        if m is None or m.end() == pos:
            return False
        if m.group("t") is not None:
            inner = m.group("t").strip()
            if inner and not all(_UNIT_WORD.fullmatch(w) for w in inner.replace("/", " ").split()):
                return False
            words.extend(inner.replace("/", " ").split())
        elif m.group("w") is not None:
            w = m.group("w")
            words.append(w)
            if len(w) == 1:
                bare_single.append(w)
        elif m.group("c") is not None:
            words.append(m.group("c"))  # a currency symbol after the number: "1,000.99€", "50¢"
        pos = m.end()
    if not words and rest.strip():
        return False  # only "^2" or "/" left: not a unit
    if any(_UNIT_POWER.sub("", w).lower().rstrip(".") in _NOT_UNITS for w in words):
        return False
    return all(w in _SINGLE_LETTER_UNITS for w in bare_single) and (not bare_single or rest.startswith(" "))


def _decimal(text: str) -> Fraction | None:
    ip, _, fp = text.partition(".")
    if len(ip) + len(fp) > MAX_NUMBER_DIGITS:
        return None
    return Fraction(int(ip or "0") * 10 ** len(fp) + int(fp or "0"), 10 ** len(fp))


def _signed_decimal(text: str) -> Fraction | None:
    sign = -1 if text.startswith("-") else 1
    v = _decimal(text.lstrip("+-"))
    return None if v is None else sign * v


@dataclass(frozen=True)
class NumberReading:
    value: Fraction
    latex: str  # the number alone, as LaTeX math-verify parses (no commas, no e-notation)
    # For a finite decimal with printed fractional digits ("0.0833", "8.33e-2"): the place value of
    # its last digit and its count of significant digits; the decimal may round a longer number.
    unit: Fraction | None = None
    sig: int = 0

    def scaled(self, factor: Fraction) -> NumberReading:
        """The value times `factor` (for comparison only: `latex` is kept as written)."""
        unit = None if self.unit is None else self.unit * abs(factor)
        return NumberReading(self.value * factor, self.latex, unit, self.sig)


def _decimal_precision(text: str, exp: int = 0) -> tuple[Fraction | None, int]:
    """(unit of the last printed digit, significant digits) of a decimal mantissa; (None, 0) if integral."""
    ip, dot, fp = text.partition(".")
    if not dot or not fp:
        return None, 0
    return Fraction(10) ** (exp - len(fp)), len((ip + fp).lstrip("0"))


def _repeating(m: re.Match) -> NumberReading | None:
    whole, lead = m.group("i") or "0", m.group("n")
    block = m.group("r1") or m.group("r2") or m.group("r3")
    if len(whole) + len(lead) + len(block) > MAX_NUMBER_DIGITS:
        return None
    # x = whole.lead(block)(block)...: x * 10^len(lead) * (10^len(block) - 1) is an integer.
    num = int(whole + lead + block) - int(whole + lead)
    den = 10 ** len(lead) * (10 ** len(block) - 1)
    value = Fraction(num, den)
    return NumberReading(value, f"\\frac{{{value.numerator}}}{{{value.denominator}}}")


def _number_core(s: str) -> tuple[NumberReading | None, int]:
    """Read an unsigned plain number at the start of s: (reading, end) or (None, 0)."""
    m = _NUM_REPEAT.match(s)
    if m:
        reading = _repeating(m)
        return (None, 0) if reading is None else (reading, m.end())
    m = _NUM_SCI.match(s)
    if m:
        exp = int(m.group("e1") or m.group("e2") or m.group("e3"))
        mant = _decimal(m.group("m"))
        if mant is None or abs(exp) > MAX_EXPONENT:
            return None, 0
        value = mant * Fraction(10) ** exp
        unit, sig = _decimal_precision(m.group("m"), exp)
        return NumberReading(value, f"{m.group('m')}\\times 10^{{{exp}}}", unit, sig), m.end()
    m = _NUM_POW10.match(s)
    if m:
        exp = int(m.group("e1") or m.group("e2"))
        if abs(exp) > MAX_EXPONENT:
            return None, 0
        return NumberReading(Fraction(10) ** exp, f"10^{{{exp}}}"), m.end()
    m = _NUM_MIXED.match(s)
    if m:
        w = int(m.group("w")) if len(m.group("w")) <= MAX_NUMBER_DIGITS else None
        a = m.group("a1") or m.group("a2") or m.group("a3")
        b = m.group("b1") or m.group("b2") or m.group("b3")
        # Only a proper fraction makes a mixed number (2\frac{3}{2} is left to math-verify).
        if w is not None and len(a) + len(b) <= MAX_NUMBER_DIGITS and 0 < int(a) < int(b):
            value = w + Fraction(int(a), int(b))
            return NumberReading(value, f"\\frac{{{value.numerator}}}{{{value.denominator}}}"), m.end()
        if m.group("a3") is None:
            return None, 0
    for rx in (_NUM_FRAC, _NUM_FRAC_SHORT, _NUM_SLASH):
        m = rx.match(s)
        if m:
            a, b = _signed_decimal(m.group("a")), _signed_decimal(m.group("b"))
            if a is None or b is None or b == 0:
                return None, 0
            return NumberReading(a / b, f"\\frac{{{m.group('a')}}}{{{m.group('b')}}}"), m.end()
    m = _NUM_GROUPED.match(s)
    if m:
        text = m.group("g").replace(m.group("sep"), "") + (m.group("f") or "")
        v = _decimal(text)
        return (None, 0) if v is None else (NumberReading(v, text, *_decimal_precision(text)), m.end())
    m = _NUM_DEC.match(s)
    if m:
        v = _decimal(m.group())
        return (
            (None, 0) if v is None else (NumberReading(v, m.group(), *_decimal_precision(m.group())), m.end())
        )
    return None, 0


def _strip_currency(s: str) -> str:
    m = _CURRENCY.match(s)
    return s[m.end() :] if m else s


def read_number(s: str) -> NumberReading | None:
    """The exact value of an answer that is one plain number (with optional sign, currency, units)."""
    s = _strip_currency(s)
    sign = 1
    m = _SIGN.match(s)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        s = _strip_currency(s[m.end() :])
    reading, end = _number_core(s)
    if reading is None:
        return None
    scale = _SCALE.match(s, end)
    if scale:
        # "1.2 million" is 1200000, never 1.2 with a unit word.
        exp = _SCALE_EXP[(scale.group("w") or scale.group("t")).lower()]
        reading = NumberReading(
            reading.value * 10**exp,
            f"{reading.latex}\\times 10^{{{exp}}}",
            None if reading.unit is None else reading.unit * 10**exp,
            reading.sig,
        )
        end = scale.end()
    if end != len(s) and not _is_unit_tail(s[end:]):
        return None
    if sign < 0:
        return NumberReading(-reading.value, "-" + reading.latex, reading.unit, reading.sig)
    return reading


def read_comma_decimal(s: str) -> NumberReading | None:
    """The decimal-comma reading of "0,111" / "1,5" / "12,75 €" / "1.000,99", or None.

    A comma followed by 1-2 or 4+ digits, or after a zero leading group, is a decimal comma; a
    3-digit group after a nonzero leading group ("1,000") is a thousands separator (read_number).
    """
    m = _EURO_GROUPED.search(s)
    if m:
        swapped = s[: m.start()] + m.group("g").replace(".", "") + "." + m.group("f") + s[m.end() :]
    else:
        m = _COMMA_DECIMAL.search(s)
        if m is None or s.count(",") != 1:
            return None
        i, f = m.group("i"), m.group("f")
        if len(f) == 3 and i.strip("0"):
            return None
        swapped = s[: m.start()] + i + "." + f + s[m.end() :]
    if "," in swapped or any(c.isdigit() for c in s[: m.start()]):
        return None  # another comma, or digits before the number: a list, not one decimal
    return read_number(swapped)


def read_clock(s: str) -> tuple[NumberReading | None, str] | None:
    """'2:00 pm' -> (2, '2:00'); '2:30' -> (None, '2:30'): a time of day, read as its hour on the hour."""
    m = _CLOCK.fullmatch(s)
    if not m:
        return None
    hour, minute = int(m.group("h")), m.group("m")
    if hour > 24:
        return None
    canon = f"{hour}:{minute}"
    return (NumberReading(Fraction(hour), str(hour)) if minute == "00" else None), canon


def read_chain_number(s: str) -> tuple[NumberReading | None, NumberReading | None] | None:
    """(first side, last side) readings of a computation chain 'a + b = c' whose sides are plain numbers.

    None when the text has no '=' or reads as a list or relation (commas, "or", <, \\pm...).
    """
    if "=" not in s or _NOT_A_CHAIN.search(s):
        return None
    sides = [side.strip() for side in s.split("=")]
    if len(sides) > _MAX_CHAIN_SIDES or not all(sides):
        return None
    first, last = read_number(sides[0]), read_number(sides[-1])
    if first is None and last is None:
        return None
    # Arithmetic only: with a variable ("x^2 + y^2 = 25") the equation is the answer, not its 25. A
    # bare variable may stand at either end ("x = 2 + 3 = 5", "3 = x").
    ends = [side for side, r in ((sides[0], first), (sides[-1], last)) if r is None]
    for side in sides[1:-1] + ends:
        if _CHAIN_LETTER.search(_LATEX_COMMAND.sub(" ", side)) and (
            side not in ends or not _VAR_NAME.fullmatch(side)
        ):
            return None
    return first, last


def _bound(op: str, side: str) -> tuple[str, str]:
    """The interval piece of 'x op side': ('(-\\infty', 'side)') etc."""
    closed = op in ("\\le", "\\leq", "<=")
    if op.startswith(">") or op in ("\\ge", "\\geq", ">="):
        return ("[" if op in ("\\ge", "\\geq", ">=") else "(") + side, "\\infty)"
    return "(-\\infty", side + ("]" if closed else ")")


def inequality_union(text: str) -> str | None:
    """'x < -2 or x > 3' -> '(-\\infty,-2)\\cup(3,\\infty)': math-verify compares a union of intervals
    with another, not with a disjunction of inequalities. One variable, at most 4 pieces."""
    pieces = _OR_SPLIT.split(text)
    if not 2 <= len(pieces) <= 4:
        return None
    out: list[str] = []
    var = None
    for piece in pieces:
        m = _ONE_SIDED.fullmatch(piece.strip())
        if m is None:
            return None
        if var is not None and m.group("v") != var:
            return None
        var = m.group("v")
        lo, hi = _bound(m.group("op"), m.group("a").strip())
        out.append(f"{lo},{hi}")
    return "\\cup".join(out)


_LETTER_BASE_NUM = re.compile(r"(-?\d{1,64})_\{?([a-z])\}?")


@dataclass(frozen=True)
class BaseReading:
    value: int
    digits: str
    base: int


def read_base_number(s: str) -> BaseReading | None:
    """`1010_2` / `22_{6}` / `FF_{16}` / `-221_3`: a numeral with its base as a subscript."""
    m = _BASE_NUM.fullmatch(s)
    if not m:
        return None
    digits = m.group("d")
    base = int(m.group("b1") or m.group("b2"))
    if not 2 <= base <= 36:
        return None
    if base > 10 and not (any(c.isdigit() for c in digits) or digits.isupper()):
        return None  # a_{12} is a sequence term, not a base-12 numeral
    try:
        value = int(digits, base)
    except ValueError:
        return None
    if m.group("s"):
        return BaseReading(-value, "-" + digits, base)
    return BaseReading(value, digits, base)


@dataclass(frozen=True)
class MathAnswer:
    """A math answer after normalization. `text` goes to math-verify, `canon` to string equality."""

    raw: str
    text: str
    canon: str
    number: NumberReading | None = None
    base: BaseReading | None = None
    pct: bool = False
    var: str | None = None
    over_cap: bool = False
    # The decimal-comma reading ("1,5" -> 1.5) of an answer that is otherwise a list.
    alt: NumberReading | None = None
    # A computation chain "a + b = c": `number` is its last plain side, `first` its first.
    chain: bool = False
    first: NumberReading | None = None

    def readings(self) -> list[NumberReading]:
        out = [self.number] if self.number is not None else []
        return out + ([self.first] if self.first is not None else [])

    def worker_candidates(self, other: MathAnswer) -> list[str]:
        """The LaTeX readings of this answer that math-verify should try."""
        pct = "\\%" if self.pct else ""
        prefix = f"{self.var}=" if self.var else ""
        if self.base is not None:
            out = [str(self.base.value)]
            if other.base is None and self.base.digits.lstrip("-").isdigit():
                out.append(self.base.digits)  # the subscript may be dropped on the other side
            return out
        if self.chain:
            return [r.latex for r in self.readings()] + [self.text]
        if self.number is not None:
            return [prefix + self.number.latex + pct]
        union = inequality_union(self.text)
        return [self.text] if union is None else [self.text, union]


@lru_cache(maxsize=16_384)  # a gold answer recurs for every model scored on its question
def prepare(raw: str) -> MathAnswer:
    if len(raw) > MAX_MATH_CHARS:
        return MathAnswer(raw=raw, text="", canon="", over_cap=True)
    text = clean(raw)
    letter_base = _LETTER_BASE_NUM.fullmatch(text)
    if letter_base:
        # "100100_b" answers "written in base b" as the numeral 100100: the subscript names the
        # question's base, which only the digits can be compared in.
        text = letter_base.group(1)
    pct = False
    m = _PERCENT_TAIL.search(text)
    if m and m.start() > 0:
        pct = True
        body = text[: m.start()].strip()
    else:
        body = text
    canon = _LAYOUT_SPACE.sub("", _SPACE.sub(" ", _FONT_WORD.sub(r"\1", body)))
    var = None
    value_part = body
    vm = _VAR_PREFIX.fullmatch(body)
    if vm and "=" not in vm.group(2):
        var, value_part = vm.group(1).replace("{", "").replace("}", ""), vm.group(2)
    base = read_base_number(value_part.replace(" ", ""))
    number = None if base is not None else read_number(value_part)
    alt = first = None
    chain = False
    if number is None and base is None:
        var = None  # "x = y + 1" stays whole for math-verify
        clock = read_clock(value_part)
        if clock is not None:
            number, canon = clock
        else:
            alt = read_comma_decimal(value_part)
        if number is None and alt is None and clock is None and not pct:
            sides = read_chain_number(body)
            if sides is not None:
                first, number = sides
                if number is None:
                    first, number = None, first
                chain = True
    text_out = text if (pct or number is None or chain) else body
    return MathAnswer(
        raw=raw,
        text=text_out,
        canon=canon,
        number=number,
        base=base,
        pct=pct and (number is not None or alt is not None),
        var=var,
        alt=alt,
        chain=chain,
        first=first,
    )


def _terminates(v: Fraction) -> bool:
    """Whether v has a finite decimal expansion (its reduced denominator is 2^a 5^b)."""
    q = v.denominator
    while (g := gcd(q, 10)) > 1:
        q //= g
    return q == 1


_REL_TOLERANCE = Fraction(1, 10**6)
MIN_APPROX_DIGITS = 6


def _approximates(d: NumberReading, exact: NumberReading) -> bool:
    """Whether the printed decimal d is a rounding/truncation of an exact value with no finite decimal.

    "0.0833333333333333" for 1/12: at least MIN_APPROX_DIGITS significant digits, and within one unit
    of its last printed digit (or a relative error under 1e-6). See docs/judging.md.
    """
    if d.unit is None or exact.unit is not None or d.sig < MIN_APPROX_DIGITS or _terminates(exact.value):
        return False
    err = abs(d.value - exact.value)
    return err <= d.unit or err < _REL_TOLERANCE * abs(exact.value)


def _close(x: NumberReading, y: NumberReading) -> bool:
    return x.value == y.value or _approximates(x, y) or _approximates(y, x)


def _reading_match(x: NumberReading, x_pct: bool, y: NumberReading, y_pct: bool) -> bool:
    if x_pct == y_pct:
        return _close(x, y)
    p, q = (x, y) if x_pct else (y, x)
    # "50%" answers both "50" and "0.5"; see docs/judging.md.
    return _close(p, q) or _close(p.scaled(Fraction(1, 100)), q)


def _numbers_match(a: MathAnswer, b: MathAnswer) -> bool:
    if a.var and b.var and a.var != b.var:
        return False
    return any(_reading_match(x, a.pct, y, b.pct) for x in a.readings() for y in b.readings())


def _is_explicit_set(s: str) -> bool:
    return s.startswith("\\{") and s.endswith("\\}") and "|" not in s and "\\mid" not in s and ":" not in s


def _is_bracketed(s: str) -> bool:
    return len(s) >= 2 and s[0] in "([" and s[-1] in ")]" and "," in s


def compare_fast(a: MathAnswer, b: MathAnswer) -> bool | None:
    """A definite verdict when pure-Python reasoning suffices, else None (ask math-verify).

    `a` is the extracted answer, `b` the gold; only the decimal-comma reading is one-sided.
    """
    if a.over_cap or b.over_cap:
        return a.raw.strip() == b.raw.strip()
    if not a.canon or not b.canon:
        return False
    if a.number is not None and b.number is not None and a.base is None and b.base is None:
        # Values first: canon drops spaces between digits, so "2 1/2" and "21/2" share one.
        return _numbers_match(a, b)
    if a.canon == b.canon:
        return True
    if _WORDS.fullmatch(a.canon) and _WORDS.fullmatch(b.canon):
        # Word answers ("east" / "\\text{East}", "Monday"): one word, whatever its case. Not capitals
        # ("ABC", "AB": points, segments) and not single letters (variables), which keep their case.
        return a.canon.casefold() == b.canon.casefold()
    if a.base is not None or b.base is not None:
        return _compare_base(a, b)
    # An extracted "0,111" read as a decimal against a plain-number gold. Only the extracted side:
    # dataset golds write decimals with a point, so a comma there is a list or a thousands separator.
    if a.number is None and a.alt is not None and b.number is not None:
        return _numbers_match(replace(a, number=a.alt), b)
    if b.number is not None and a.number is None and a.base is None:
        if _symbolic_or_wordy(a.canon):
            return False  # a plain-number gold never equals words or an expression with a free variable
        value = numeric_value(a.canon)
        gold = float(b.number.value) if abs(b.number.value) < 10**300 else None
        if value is not None and gold is not None and abs(value - gold) > 1e-6 * max(1.0, abs(gold)):
            return False  # "6\\sqrt2" vs 6: plainly different numbers (equal ones still go to math-verify)
    # An explicit set {1, 2} is never a tuple or an interval (math-verify's parser may say so).
    if (_is_explicit_set(a.canon) and _is_bracketed(b.canon)) or (
        _is_explicit_set(b.canon) and _is_bracketed(a.canon)
    ):
        return False
    return _compare_compound(a, b)


_LETTERS = re.compile(r"(?<![A-Za-z\\\\])[A-Za-z]+")
_WORDS = re.compile(r"[A-Za-z][a-z]{2,30}(?:[ -][A-Za-z][a-z]{1,30}){0,5}")  # natural-language words
_CONSTANTS = frozenset(
    {
        "pi",
        "e",
        "i",
        "sqrt",
        "log",
        "ln",
        "lg",
        "exp",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "arcsin",
        "arccos",
        "arctan",
        "mod",
        "pmod",
        "bmod",
        "frac",
        "dfrac",
        "tfrac",
    }
)


MAX_NUMERIC = 120  # characters of an expression the numeric reader evaluates
_NUM_TOKEN = re.compile(
    r"\d+(?:\.\d+)?|\\(?:sqrt|frac|dfrac|tfrac|cdot|times|div|pi|left|right)|[-+*/^(){}×÷√π]"
)
_NUM_OPEN = ("(", "{")
_NUM_CLOSE = (")", "}")
_NUM_SQRT = ("\\sqrt", "√")
_NUM_FRACS = ("\\frac", "\\dfrac", "\\tfrac")
_NUM_PI = ("\\pi", "π")
_NUM_TIMES = ("*", "×", "\\cdot", "\\times")
_NUM_DIVIDE = ("/", "÷", "\\div")
# Tokens that start an atom right after another one: an implicit product (6\\sqrt2, 2(3+1)).
_NUM_IMPLICIT = _NUM_OPEN + _NUM_SQRT + _NUM_FRACS + _NUM_PI
# A power with a bigger exponent or base gives None (a float overflow gives None as well).
_MAX_POWER_EXPONENT = 64
_MAX_POWER_BASE = 1e6
_MAX_NUMBER_TOKEN = 30


def _numeric_tokens(canon: str) -> list[str] | None:
    """The tokens of `canon` for numeric_value, or None when it is too long or has any other token."""
    text = canon.replace(" ", "").replace("sqrt(", "\\sqrt(")
    if not text or len(text) > MAX_NUMERIC:
        return None
    tokens = _NUM_TOKEN.findall(text)
    if "".join(tokens) != text:
        return None
    return [t for t in tokens if t not in ("\\left", "\\right")]


class _NumericParser:
    """Recursive descent over numeric_value's tokens: expr > term > unary > power > atom.

    Every failure raises (ValueError, or IndexError past the end); numeric_value turns it into None.
    One call frame per grammar level, as many as nesting needs: MAX_NUMERIC bounds the depth.
    """

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def atom(self) -> float:
        t = self.take() if self.peek() is not None else ""
        if t in _NUM_OPEN:
            v = self.expr()
            if self.take() not in _NUM_CLOSE:
                raise ValueError
            return v
        if t in _NUM_SQRT:
            v = self.atom()
            if isinstance(v, complex) or v < 0:  # a negative base to a fractional power is complex
                raise ValueError
            return math.sqrt(v)
        if t in _NUM_FRACS:
            num, den = self.atom(), self.atom()
            return num / den
        if t in _NUM_PI:
            return math.pi
        if t and t[0].isdigit():
            if t.count(".") <= 1 and len(t) <= _MAX_NUMBER_TOKEN:
                return float(t)
        raise ValueError

    def power(self) -> float:
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exp = self.unary()
            if abs(exp) > _MAX_POWER_EXPONENT or abs(base) > _MAX_POWER_BASE:
                raise ValueError
            value = base**exp
            if isinstance(value, complex):  # (-8)^0.5: no real value; comparisons on it would raise
                raise ValueError
            return value
        return base

    def unary(self) -> float:
        if self.peek() in ("-", "+"):
            return -self.unary() if self.take() == "-" else self.unary()
        return self.power()

    def term(self) -> float:
        v = self.unary()
        while self.peek() is not None:
            op = self.peek()
            if op in _NUM_TIMES:
                self.take()
                v *= self.unary()
            elif op in _NUM_DIVIDE:
                self.take()
                v /= self.unary()
            elif op in _NUM_IMPLICIT:
                v *= self.unary()  # implicit product: 6\\sqrt2, 2(3+1)
            else:
                break
        return v

    def expr(self) -> float:
        v = self.term()
        while self.peek() in ("+", "-"):
            v = v + self.term() if self.take() == "+" else v - self.term()
        return v


def numeric_value(canon: str) -> float | None:
    """The value of a constant arithmetic expression -- digits, + - * / ^, parentheses and braces,
    \\sqrt, \\frac, \\pi, implicit products ("6\\sqrt2") -- or None. A hand-written bounded parser:
    nothing is evaluated as code, exponents are capped, and any other token gives None."""
    tokens = _numeric_tokens(canon)
    if tokens is None:
        return None
    parser = _NumericParser(tokens)
    try:
        value = parser.expr()
    except (ValueError, ZeroDivisionError, OverflowError, IndexError):
        return None
    if parser.pos != len(tokens) or isinstance(value, complex) or value != value:
        return None
    return float(value)


def _symbolic_or_wordy(canon: str) -> bool:
    """Prose ("infinitely many", "No solution") or an expression in a free variable ("12-10d",
    "1+b+c"): no finite number equals these, so math-verify need not be asked (it takes milliseconds
    a call, and such answers are a large share of the comparisons that reach it on real output)."""
    if canon.lstrip("+-") == "\\infty":
        return True
    if "=" in canon or "π" in canon or len(canon) > 200:
        return False
    words = _LETTERS.findall(canon)
    if not words:
        return False
    if not any(ch.isdigit() for ch in canon) and "\\" not in canon:
        return not any(w.lower() in _CONSTANTS for w in words)
    return any(w.lower() not in _CONSTANTS for w in words)


_INF = {"\\infty": "inf", "+\\infty": "inf", "-\\infty": "-inf", "\\infinity": "inf"}
MAX_COMPOUND_ITEMS = 64


def _plain_items(body: str) -> list[Fraction | str] | None:
    """Comma-separated plain numbers (or +-infinity); None if any item is something else."""
    items = body.split(",")
    if not 2 <= len(items) <= MAX_COMPOUND_ITEMS:
        return None
    out: list[Fraction | str] = []
    for item in items:
        if item in _INF:
            out.append(_INF[item])
            continue
        reading = read_number(item) if item else None
        if reading is None or "," in item:
            return None
        out.append(reading.value)
    return out


def _compound(ans: MathAnswer) -> tuple[str, list[Fraction | str]] | None:
    """('(]', items) for a bracketed tuple/interval, ('', items) for a bare list, of plain numbers only."""
    c = ans.canon
    if ans.number is not None or ans.base is not None or ans.pct:
        return None
    if len(c) >= 2 and c[0] in "([" and c[-1] in ")]" and c.count("(") + c.count("[") == 1:
        items = _plain_items(c[1:-1])
        return (c[0] + c[-1], items) if items is not None else None
    if not any(ch in c for ch in "()[]{}"):
        items = _plain_items(c)
        return ("", items) if items is not None else None
    return None


def _compare_compound(a: MathAnswer, b: MathAnswer) -> bool | None:
    """Tuples, intervals and bare lists of plain numbers, decided without sympy (the common MATH shapes).

    Same brackets: equal iff item by item equal (true for both the tuple and the interval reading).
    Bare lists are sets: equal iff the same members. A compound never equals a single number.
    Anything else (mixed bracket kinds, bracketed vs bare) is left to math-verify.
    """
    ca, cb = _compound(a), _compound(b)
    if ca is None and cb is None:
        return None
    if ca is None or cb is None:
        single = b if ca is not None else a
        return False if single.number is not None and not single.pct else None
    (ka, ia), (kb, ib) = ca, cb
    if ka == kb == "":
        return set(ia) == set(ib)
    if ka and kb:
        if len(ia) != len(ib):
            return False
        if ka == kb:
            return ia == ib
    return None


def _compare_base(a: MathAnswer, b: MathAnswer) -> bool | None:
    if a.base is not None and b.base is not None:
        return a.base.value == b.base.value
    based, other = (a, b) if a.base is not None else (b, a)
    assert based.base is not None
    if other.number is not None and not other.pct:
        if other.number.value == based.base.value:
            return True
        # "1010" for "1010_2": the same numeral with the subscript dropped.
        return other.canon == based.base.digits
    return None
