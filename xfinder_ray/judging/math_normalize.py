"""Normalization of math answers, and exact comparison of plain numbers, in pure Python.

Everything here is linear (or bounded-quadratic on capped input) string work plus integer
arithmetic with capped sizes: no eval, no sympify. Answers longer than MAX_MATH_CHARS are not
normalized at all (the caller compares them as plain strings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

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
        "\u00b2": "^{2}",
        "\u00b3": "^{3}",
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

_WRAPPERS = ("\\boxed", "\\fbox", "\\text", "\\textbf", "\\textrm", "\\mathrm", "\\mathbf", "\\mbox")
_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))

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
# Spaces matter only between letters ("\pi r", "x y"); elsewhere they are layout.
_LAYOUT_SPACE = re.compile(r" (?![A-Za-z])|(?<![A-Za-z]) ")

_VAR_PREFIX = re.compile(r"([A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?)\s*=\s*(.+)")
_DEC = r"(?:\d+(?:\.\d*)?|\.\d+)"
_SIGN = re.compile(r"([+-])\s*")
_CURRENCY = re.compile(r"(?:[\u20ac\u00a3\u00a5\u20b9]|US\$|USD\s|Rs\.?\s?)\s*")
_NUM_SCI = re.compile(
    rf"(?P<m>{_DEC})(?:[eE](?P<e1>[+-]?\d+)"
    rf"|\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*(?:\{{\s*(?P<e2>[+-]?\d+)\s*\}}|(?P<e3>[+-]?\d)))"
)
_NUM_FRAC = re.compile(rf"\\frac\s*\{{\s*(?P<a>[+-]?{_DEC})\s*\}}\s*\{{\s*(?P<b>[+-]?{_DEC})\s*\}}")
_NUM_FRAC_SHORT = re.compile(r"\\frac\s*(?P<a>\d)\s*(?P<b>\d)(?!\d)")
_NUM_SLASH = re.compile(rf"(?P<a>{_DEC})\s*/\s*(?P<b>[+-]?{_DEC})")
_NUM_GROUPED = re.compile(r"(?P<g>\d{1,3}(?:,\d{3})+)(?P<f>\.\d*)?(?![\d,])")
_NUM_DEC = re.compile(_DEC)
_BASE_NUM = re.compile(
    r"(?P<d>[0-9A-Z]{1,200}|[0-9a-z]{1,200})_(?:\{\s*(?P<b1>\d{1,2})\s*\}|(?P<b2>\d{1,2}))"
)

_UNIT_TOKEN = re.compile(
    r"\s+|\\(?:text|mbox|mathrm|textrm|textit|rm)\s*\{(?P<t>[^{}]{0,80})\}|(?P<w>[A-Za-z][A-Za-z.'\-]*)"
    r"|\^\s*\{?\s*[23]\s*\}?|/"
)
_UNIT_WORD = re.compile(r"[A-Za-z][A-Za-z.'\-]*")
# Words that look like units but carry mathematical meaning: never dropped as a unit.
_NOT_UNITS = frozenset(
    "pi e i j and or x y z n k t sqrt infty infinity inf sin cos tan cot sec csc log ln exp mod pmod "
    "times cdot div frac dfrac over plus minus le ge lt gt ne neq or and to i.e ie".split()
)
# Single-letter units accepted after a number written with a space ("5 m"); other letters are variables.
_SINGLE_LETTER_UNITS = frozenset("m g s h l L K N J W V A C F".split())


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


def _unwrap(s: str) -> str:
    """Strip math delimiters and whole-answer wrappers like \\boxed{...} / \\text{...}."""
    for _ in range(8):
        before = s
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
        s = s.rstrip(".").strip()
        if s == before:
            break
    return s


def clean(raw: str) -> str:
    """Linear LaTeX clean-up shared by the fast path and the worker input."""
    s = raw.translate(_UNICODE)
    s = _SPACE.sub(" ", s).strip()
    s = _unwrap(s)
    s = s.replace("\\$", "").replace("$", "")
    s = _unwrap(s.strip())
    s = _FRAC_VARIANTS.sub("\\\\frac", s)
    s = _LEFT_RIGHT.sub("", s)
    s = _BRACE_COMMA.sub(",", s)
    s = _THIN_THOUSANDS.sub("", s)
    s = _SPACING.sub(" ", s)
    s = _DEGREES.sub(" ", s)  # a space, so that "5^{\circ}C" still reads as number + unit
    s = s.replace("**", "^")
    s = _SQRT_PAREN.sub(lambda m: "\\sqrt{" + (m.group(1) or m.group(2)) + "}", s)
    s = _BARE_PI.sub(r"\\pi", s)
    s = _BARE_INF.sub(r"\\infty", s)
    s = _SPACE.sub(" ", s).strip().rstrip(".").strip()
    return s


def _is_unit_tail(rest: str) -> bool:
    """Whether `rest` (what follows a number) is only units/words like ' cm', '\\text{ apples}', ' km/h'."""
    if rest.lstrip()[:1] in ("^", "/"):
        return False  # "10^2 cm", "3/4 cup" (handled as a fraction before): an operator, not a unit
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
        pos = m.end()
    if not words and rest.strip():
        return False  # only "^2" or "/" left: not a unit
    if any(w.lower().rstrip(".") in _NOT_UNITS for w in words):
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


def _number_core(s: str) -> tuple[NumberReading | None, int]:
    """Read an unsigned plain number at the start of s: (reading, end) or (None, 0)."""
    m = _NUM_SCI.match(s)
    if m:
        exp = int(m.group("e1") or m.group("e2") or m.group("e3"))
        mant = _decimal(m.group("m"))
        if mant is None or abs(exp) > MAX_EXPONENT:
            return None, 0
        value = mant * Fraction(10) ** exp
        return NumberReading(value, f"{m.group('m')}\\times 10^{{{exp}}}"), m.end()
    for rx in (_NUM_FRAC, _NUM_FRAC_SHORT, _NUM_SLASH):
        m = rx.match(s)
        if m:
            a, b = _signed_decimal(m.group("a")), _signed_decimal(m.group("b"))
            if a is None or b is None or b == 0:
                return None, 0
            return NumberReading(a / b, f"\\frac{{{m.group('a')}}}{{{m.group('b')}}}"), m.end()
    m = _NUM_GROUPED.match(s)
    if m:
        text = m.group("g").replace(",", "") + (m.group("f") or "")
        v = _decimal(text)
        return (None, 0) if v is None else (NumberReading(v, text), m.end())
    m = _NUM_DEC.match(s)
    if m:
        v = _decimal(m.group())
        return (None, 0) if v is None else (NumberReading(v, m.group()), m.end())
    return None, 0


def read_number(s: str) -> NumberReading | None:
    """The exact value of an answer that is one plain number (with optional sign, currency, units)."""
    s = _CURRENCY.sub("", s, count=1) if _CURRENCY.match(s) else s
    sign = 1
    m = _SIGN.match(s)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        s = s[m.end() :]
        s = _CURRENCY.sub("", s, count=1) if _CURRENCY.match(s) else s
    reading, end = _number_core(s)
    if reading is None:
        return None
    if end != len(s) and not _is_unit_tail(s[end:]):
        return None
    if sign < 0:
        return NumberReading(-reading.value, "-" + reading.latex)
    return reading


@dataclass(frozen=True)
class BaseReading:
    value: int
    digits: str
    base: int


def read_base_number(s: str) -> BaseReading | None:
    """`1010_2` / `22_{6}` / `FF_{16}`: a numeral with its base as a subscript."""
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

    def worker_candidates(self, other: MathAnswer) -> list[str]:
        """The LaTeX readings of this answer that math-verify should try."""
        pct = "\\%" if self.pct else ""
        prefix = f"{self.var}=" if self.var else ""
        if self.base is not None:
            out = [str(self.base.value)]
            if other.base is None and self.base.digits.isdigit():
                out.append(self.base.digits)  # the subscript may be dropped on the other side
            return out
        if self.number is not None:
            return [prefix + self.number.latex + pct]
        return [self.text]


def prepare(raw: str) -> MathAnswer:
    if len(raw) > MAX_MATH_CHARS:
        return MathAnswer(raw=raw, text="", canon="", over_cap=True)
    text = clean(raw)
    pct = False
    m = _PERCENT_TAIL.search(text)
    if m and m.start() > 0:
        pct = True
        body = text[: m.start()].strip()
    else:
        body = text
    canon = _LAYOUT_SPACE.sub("", _SPACE.sub(" ", body))
    var = None
    value_part = body
    vm = _VAR_PREFIX.fullmatch(body)
    if vm and "=" not in vm.group(2):
        var, value_part = vm.group(1).replace("{", "").replace("}", ""), vm.group(2)
    base = read_base_number(value_part.replace(" ", ""))
    number = None if base is not None else read_number(value_part)
    if number is None and base is None:
        var = None  # "x = y + 1" stays whole for math-verify
    text_out = text if (pct or number is None) else body
    return MathAnswer(
        raw=raw, text=text_out, canon=canon, number=number, base=base, pct=pct and number is not None, var=var
    )


def _is_explicit_set(s: str) -> bool:
    return s.startswith("\\{") and s.endswith("\\}") and "|" not in s and "\\mid" not in s and ":" not in s


def _is_bracketed(s: str) -> bool:
    return len(s) >= 2 and s[0] in "([" and s[-1] in ")]" and "," in s


def compare_fast(a: MathAnswer, b: MathAnswer) -> bool | None:
    """A definite verdict when pure-Python reasoning suffices, else None (ask math-verify)."""
    if a.over_cap or b.over_cap:
        return a.raw.strip() == b.raw.strip()
    if not a.canon or not b.canon:
        return False
    if a.canon == b.canon:
        return True
    if a.base is not None or b.base is not None:
        return _compare_base(a, b)
    if a.number is not None and b.number is not None:
        if a.var and b.var and a.var != b.var:
            return False
        x, y = a.number.value, b.number.value
        if a.pct == b.pct:
            return x == y
        p, q = (x, y) if a.pct else (y, x)
        # "50%" answers both "50" and "0.5"; see docs/judging.md.
        return q == p or q == p / 100
    # An explicit set {1, 2} is never a tuple or an interval (math-verify's parser may say so).
    if (_is_explicit_set(a.canon) and _is_bracketed(b.canon)) or (
        _is_explicit_set(b.canon) and _is_bracketed(a.canon)
    ):
        return False
    return _compare_compound(a, b)


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
