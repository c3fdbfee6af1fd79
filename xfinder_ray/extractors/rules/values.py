"""Claim values resolved against the range: an option, a label or a math answer, with a status."""

from __future__ import annotations

import functools
import re

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.candidates import (
    ALPHA,
    EDGE,
    Index,
    is_article,
    key_of,
    mentions,
    numeric_key,
)
from xfinder_ray.extractors.rules.structured import is_placeholder
from xfinder_ray.extractors.rules.text import VALUE_WINDOW
from xfinder_ray.records import NO_VALID_ANSWER

OK, AMBIG, OUT, JUNK, NEG = "ok", "ambig", "out", "junk", "neg"

# (Same shape as _ADVERBS below: word-list declarations, each its own vocabulary; nothing to share.)
_FILLER = re.compile(
    r"(?:[\s:：=\-–—>*_`\"'“”‘’「」]|(?:is|that|actually|clearly|definitely|most\s{1,3}likely|most\s{1,3}probably|probably|likely|indeed|therefore|"
    r"thus|then|now|still|simply|just|obviously|certainly|surely|undoubtedly|in\s{1,3}fact|of\s{1,3}course|"
    r"going\s{1,3}to\s{1,3}be|it's|it\s{1,3}(?:is|would\s{1,3}be|must\s{1,3}be|should\s{1,3}be)|that's|"
    r"this\s{1,3}is|la|le|el|lo|les|die|der|das|opción|opcion|l')\b,?)*",
    re.I,
)
# Degree adverbs ("mostly negative"): dropped only when the value does not match as it stands, so
# that "very positive" stays a candidate of its own in five-way sentiment.
# (Same shape as _FILLER above: a word-list declaration.)
_ADVERBS = re.compile(
    r"(?:(?:mostly|mainly|overall|largely|predominantly|generally|primarily|very|quite|rather|fairly|somewhat|"
    r"slightly|strongly|extremely|highly|more|most|overwhelmingly|clearly|definitely)\b,?\s{1,3})+",
    re.I,
)
_NEG_START = re.compile(r"(?:not|never|neither|nor|no\s{1,3}longer)\b|n't\b", re.I)
_CONTRAST = re.compile(
    r"\b(?:but|rather|instead|it's|it\s{1,3}is|so|thus|therefore|hence|leaving|which\s{1,3}leaves)\b\s{0,3}"
    r"(?:it's\s{1,3}|it\s{1,3}is\s{1,3}|(?:the\s{1,3})?answer\s{1,3}is\s{1,3})?",
    re.I,
)
_NONE_OF = re.compile(
    r"[(\[\s]{0,3}(?:none\s{1,3}of\s{1,3}(?:the\s{1,3})?(?:[\w-]{1,15}\s{1,3}){0,2}(?:options|choices|answers|above)"
    r"|no\s{1,3}(?:correct|valid|right|matching)\s{1,3}(?:answer|option|choice)"
    r"|not\s{1,3}(?:an?\s{1,3}|one\s{1,3}of\s{1,3}the\s{1,3}|(?:listed\s{1,3})?(?:among|in)\s{1,3}the\s{1,3})"
    r"(?:listed\s{1,3}|given\s{1,3}|provided\s{1,3})?(?:options?|choices?))\b",
    re.I,
)
_EITHER = re.compile(r"either\b\s{0,3}", re.I)
_JOIN = re.compile(
    r"[\s\"'”’)\]]{0,4}(?:,|/|、|\bor\b|\band\b|或|和|\bvs\.?|\bversus\b)\s{0,3}(?:(?:or|and)\s{1,3})?[\"'“‘(\[]{0,2}\s{0,2}",
    re.I,
)
_VALUE_NEG = re.compile(
    r"^[\s\"'”’)\]]{0,4}(?:is|are|was|seems?|looks?)\s{1,3}(?:not\b|incorrect|wrong|false|unlikely|ruled\s{1,3}out)",
    re.I,
)
_LETTER_DECOR = re.compile(r"^(?:[(\[][A-Za-z][)\]]|[A-Za-z][).:])\s{0,3}(?=\S)")
# Several letters in one pair of brackets: "(A, E, I)", "(C,D,I)", "(B and D)".
_LETTER_LIST = re.compile(r"[(\[]\s{0,2}([A-Z])(?:\s{0,2}(?:[,/&]|\band\b)\s{0,2}[A-Z]){1,9}\s{0,2}[)\]]")
_OPT_LETTER = re.compile(
    r"^(?:(?:option|choice|letter|answer)\s{0,3})?"
    # (also "(D" at the very end: cut off, or stopped, before its closing parenthesis)
    r"(?:[(\[](?P<d>[A-Za-z])[)\]]|\((?P<u>(?-i:[A-Z]))$|(?P<b>[A-Za-z])(?=[\s.,:;!?)\]。，：、(]|$))",
    re.I,
)
_OPTION_WORD = re.compile(r"(?i:\b(?:option|choice))\s{0,3}[(\[]?(?P<l>[A-Z])\b")
_CLAUSE_END = re.compile(
    r"[.!?\n;。，,:(]|\s(?:because|since|as|which|even|but|so|though|although|while|given|due)\b", re.I
)
BOXED_AT = re.compile(r"\\(?:boxed|fbox)\s{0,3}\{")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textrm|mbox)\s{0,3}\{([^{}]{0,200})\}")


def braced(s: str, open_at: int) -> str | None:
    """The content of the balanced {...} whose '{' is at open_at (bounded by VALUE_WINDOW)."""
    depth = 0
    for i in range(open_at, min(len(s), open_at + 2 * VALUE_WINDOW)):
        ch = s[i]
        if ch == "{" and (i == 0 or s[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and s[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return s[open_at + 1 : i]
    return None


def _out_or_junk(s: str, ix: Index) -> str:
    """A value not in the range: a definite out-of-range answer (OUT) or mere commentary (JUNK)."""
    m = _CLAUSE_END.search(s)
    clause = (s[: m.start()] if m else s).strip(EDGE + "()[]")
    if mentions(clause, 0, len(clause), ix):
        return JUNK  # it names a candidate, just not in a form parsed here ("it's B"): not out of range
    words = clause.split()
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    if not words or len(words) > 6 or not any(ch.isalnum() for ch in clause):
        return JUNK
    return JUNK if words[0].lower().strip(EDGE) in P.NOT_AN_ANSWER_START else OUT


def _another(rest: str, ix: Index, value: str) -> bool:
    """Whether `rest` (what follows an answer) joins a different candidate: "B or C", "x, y or z"."""
    j = _JOIN.match(rest)
    if not j:
        return False
    tail = rest[j.end() :]
    m = ix.match_prefix(tail)
    if m and m.answer != value:
        return True
    if ix.kat == ALPHA:
        m = _OPT_LETTER.match(tail)
        if m:
            letter = (m.group("d") or m.group("b") or "").upper()
            if (
                letter in ix.letters
                and ix.letters[letter] != value
                and not (m.group("b") and is_article(tail, m.end()))
            ):
                return True
    return False


_ARTICLE = re.compile(r"(?:the|an?)\s{1,3}(?=\S)", re.I)


def _strip_article(s: str, ix: Index) -> str:
    """ "the library" answers "library", unless a candidate itself starts with the article."""
    m = _ARTICLE.match(s)
    if not m or ix.match_prefix(s):
        return s
    rest = s[m.end() :]
    return rest if ix.match_prefix(rest) else s


def _parse_option(s: str, ix: Index) -> tuple[str, str, str]:
    s = _strip_article(s, ix)
    m = P.ORDINAL.match(s)
    if m:
        idx = P.ORDINALS[m.group(1).lower()]
        if -len(ix.values) <= idx < len(ix.values):
            return OK, ix.values[idx], s[m.end() :]
    # An option's text first: "A steel spoon" is option "a steel spoon", not letter A (but a bare
    # "B" is the letter B even where some option's text is "B", as in blood types).
    m = ix.match_prefix(s)
    if m and not (len(m.group(0)) == 1 and m.group(0).upper() in ix.letters):
        value, rest = m.answer, s[m.end() :]
        if _VALUE_NEG.match(rest):
            return NEG, "", rest
        return (AMBIG if _another(rest, ix, value) else OK), value, rest
    several = _LETTER_LIST.match(s)
    if several and several.group(1) in ix.letters:
        return AMBIG, ix.letters[several.group(1)], s[several.end() :]
    m = _OPT_LETTER.match(s)
    if m:
        raw = m.group("d") or m.group("u") or m.group("b")
        bare = m.group("b") is not None
        article = bare and (raw.islower() or raw in "AI") and is_article(s, m.end())
        if raw.upper() in ix.letters and not article:
            value = ix.letters[raw.upper()]
            rest = s[m.end() :]
            if _VALUE_NEG.match(rest):
                return NEG, "", rest
            if _another(rest, ix, value):
                return AMBIG, value, rest
            # "B. <text of another option>" contradicts itself (as in parsing.match_candidate).
            after = rest.lstrip(" .):：、-–—(\"'")
            mm = ix.match_prefix(after)
            if mm:
                other = mm.answer
                if other != value and ix.own_key.get(value) != key_of(mm.group(0)):
                    return AMBIG, value, rest
                if other == value:
                    rest = after[mm.end() :]
            return OK, value, rest
    # "improve his skills (option D)": the letter named later in the same line.
    m = _OPTION_WORD.search(s[:200])
    if m and m.group("l") in ix.letters:
        return OK, ix.letters[m.group("l")], s[m.end() :]
    numeric = _numeric_option(s, ix)
    if numeric is not None:
        return OK, numeric[0], numeric[1]
    return _out_or_junk(s, ix), "", s


# Where a number-and-unit value ends: "$1775.32.", "3.82g)", "$138,889, which is (B)".
_NUMERIC_END = re.compile(
    r"\s{0,3}(?:[,;:]\s|\.(?:\s|$)|\)|\s\(|\s(?:which|but|and|or|because|since|as|so|for|is|from|with|that)\b)|\n"
)
_ABOUT = re.compile(r"(?:approximately|about|around|roughly|nearly|≈|~)\s{0,3}", re.I)
# A unit after the number: a letter, "°", "µ" or "%" first (not "\\times 10^3", "^2").
_UNIT_AFTER = re.compile(r"[a-zµμ°%]")


def _numeric_option(s: str, ix: Index) -> tuple[str, str] | None:
    """The one option whose text is the number (and unit) s starts with, written another way:
    "$1775.32" for "$1775.32" read without its "$", "15.42 psia" for "15.42psia", "50.7 atm" for
    "50.7$\\mathrm{atm}$"; a bare number also names the one option that is that number with a unit.
    (answer, rest) or None."""
    about = _ABOUT.match(s)
    if about:
        s = s[about.end() :]
    if not s[:1].isdigit() and not (s[:1] in "-−" and s[1:2].isdigit()):
        return None
    m = _NUMERIC_END.search(s, 0, 120)
    end = m.start() if m else min(len(s), 120)
    key = numeric_key(s[:end])
    if key is None:
        return None
    same = ix.numeric.get(key, ())
    if not same and _PLAIN_NUMBER.fullmatch(key):
        same = tuple(
            a
            for k, answers in ix.numeric.items()
            if k.startswith(key) and _UNIT_AFTER.match(k, len(key))
            for a in answers
        )
    return (same[0], s[end:]) if len(same) == 1 else None


def _parse_label(s: str, ix: Index) -> tuple[str, str, str]:
    s = _strip_article(s, ix)
    tries = [s]
    undecorated = _LETTER_DECOR.sub("", s, count=1)
    if undecorated != s:
        tries.append(undecorated)  # "(B) thrilled": the letter decorates the candidate
    if re.match(r"to\s", s, re.I):
        tries.append(s[3:].lstrip())  # "to stay home" for the candidate "stay home"
    for t in tries:
        m = ix.match_prefix(t)
        if not m:
            continue
        value, rest = m.answer, t[m.end() :]
        if _VALUE_NEG.match(rest):
            return NEG, "", rest
        return (AMBIG if _another(rest, ix, value) else OK), value, rest
    return _out_or_junk(s, ix), "", s


def _without_inline_delimiters(s: str) -> str:
    """s without "$" and without the inline "\\(" it starts with and its "\\)" (not display math:
    "\\[ C(t) = ... \\]" is a formula, not the letter C)."""
    s = s.replace("$", "")
    if s.startswith("\\("):
        close = s.find("\\)", 2, 60)
        if close > 0:
            s = s[2:close].strip() + s[close + 2 :]
    return s


def parse_choice(head: str, ix: Index) -> tuple[str, str, str]:
    """Parse a claim's value (the text right after the phrase) against the range.

    Returns (status, answer, rest): OK with the answer, AMBIG ("B or C"), NEG ("not B"), OUT (a
    definite answer not in the range) or JUNK (commentary), and the text after the answer.
    """
    s = _FILLER.match(head)
    s = head[s.end() :] if s else head
    nl = s.find("\n")
    if nl >= 0:
        s = s[:nl]
    s = s.strip()
    if not s:
        return JUNK, "", ""
    if _NONE_OF.match(s) and not ix.match_prefix(s):
        return OUT, "", s  # "the answer is (None of the provided options are correct)": a definite non-answer
    if _NEG_START.match(s) and not ix.match_prefix(s):
        # "not A, but C" names the answer after the contrast; "not A" alone names none.
        m = _CONTRAST.search(s)
        if not m:
            return NEG, "", s
        s = s[m.end() :].lstrip(EDGE)
    either = _EITHER.match(s)
    if either:
        s = s[either.end() :]
    s = _without_inline_delimiters(s)  # "\\( F \\)", "$\\boxed{F}$": the letter inside
    b = BOXED_AT.match(s)
    if b:
        inner = braced(s, b.end() - 1)
        if inner is not None:
            s = inner
    s = _TEXT_CMD.sub(r"\1", s).strip()
    s = s.lstrip(EDGE.replace(".", "").replace(":", ""))
    parse = _parse_option if ix.kat == ALPHA else _parse_label
    status, value, rest = parse(s, ix)
    if status in (OUT, JUNK):
        adv = _ADVERBS.match(s)
        if adv:
            again = parse(s[adv.end() :], ix)
            if again[0] in (OK, AMBIG, NEG):
                status, value, rest = again
    if either and status == OK and re.search(r"\bor\b", rest, re.I):
        return AMBIG, value, rest
    return status, value, rest


# ---------------------------------------------------------------------------------------------
# Value parsing: math.

_MATH_FILLER = re.compile(
    r"(?:[\s:：=>*`\"“”]|(?:is|that|actually|clearly|definitely|probably|indeed|therefore|thus|then|now|"
    r"simply|just|exactly|equal\s{1,3}to|equals|approximately|about|around|roughly)\b,?)*",
    re.I,
)
_MATH_END = re.compile(
    r"\n|。|；|;|(?<!\d)!(?=\s|$)|\?(?=\s|$)|\.(?=\s|$)|,\s{0,3}(?=[A-Za-z]{2,})"
    r"|\s(?:because|since|as|which|so|but|if|when|where|for|from|by|after|meaning|per|i\.e\.|"
    r"and\s(?:so|thus|hence|therefore|the|that|this|it|we|I))\b|\s(?:≈|\\approx)|\s\((?=\s{0,2}[=≈]|[A-Za-z]{2,})",
    re.I,
)
_CURRENCY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?(?![\d$])")
_TRAIL_UNIT_CMD = re.compile(
    r"(?<=[\d}])\s{0,3}\\(?:text|mbox|mathrm|textrm)\s{0,3}\{\s{0,3}[A-Za-z][A-Za-z ./]{0,30}\}$"
)
# "x = 12", "x_1 = 3", "f(t) = ...", "MRS(X, Y) = ...": a name (a function's, with its arguments) and its value.
_DOMAIN_QUALIFIER = re.compile(r"\s{0,3},?\s{0,3}\\q?quad\b.{0,80}$", re.S)
_VAR_EQ = re.compile(
    r"^([A-Za-z](?:_\{?\w{1,3}\}?)?(?:\([^()=]{1,12}\))?|[A-Za-z]{2,4}(?:_\{?\w{1,3}\}?)?\([^()=]{1,12}\))"
    r"\s{0,3}=\s{0,3}(.+)$",
    re.S,
)
_ARITHMETIC = re.compile(
    r"[\d\s.,+\-−*/×÷^()!]{1,200}|[\d\s.,+\-−*/×÷^(){}!]*(?:\\(?:times|cdot|div|frac)[\d\s.,+\-−*/×÷^(){}!]*){1,20}"
)
_EQUATION_ASKED = re.compile(r"\b(?:equation|line|plane|circle|parabola|curve|ellipse|hyperbola)\b", re.I)


@functools.lru_cache(maxsize=256)
def equation_asked(question: str) -> bool:
    """The question asks for an equation (a record's claims ask this of its question again and again)."""
    return _EQUATION_ASKED.search(question) is not None


_NUM_UNITS = re.compile(
    r"^([-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s{0,3}/\s{0,3}\d+)?\s{0,2}%?)\s{0,3}"
    r"((?:[A-Za-z][A-Za-z.'’-]{0,20}(?:/[A-Za-z]{1,6})?(?:\^\d)?)(?:\s{1,3}[A-Za-z][A-Za-z.'’-]{0,20}(?:\^\d)?){0,3})$"
)
NUM = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")
# A math value inside prose: a \frac, a $...$ span, or a number (with a fraction bar or a percent).
MATH_TOKEN = re.compile(
    r"\\d?frac\{[^{}\n]{1,50}\}\{[^{}\n]{1,50}\}|\$[^$\n]{1,100}\$"
    r"|[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s{0,2}/\s{0,2}\d+(?:\.\d+)?)?%?"
)
_MATH_WORDS = frozenset(
    "sqrt frac dfrac tfrac infty infinity sin cos tan cot sec csc log exp and or undefined none dne pmatrix "
    "bmatrix begin end cdot times pi left right cup cap emptyset".split()
)
_MATH_WORD_ANSWERS = frozenset(
    [
        "undefined",
        "infinity",
        "no solution",
        "none",
        "dne",
        "all real numbers",
        "empty set",
        "true",
        "false",
        "yes",
        "no",
    ]
)


def clean_math(v: str, question: str) -> str:
    v = v.strip()
    b = BOXED_AT.search(v)
    if b:
        inner = braced(v, b.end() - 1)
        if inner is not None:
            v = inner
    v = v.strip()
    for left, right in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if v.startswith(left) and v.endswith(right) and len(v) >= len(left) + len(right):
            v = v[len(left) : len(v) - len(right)]
    v = v.replace("\\$", "").replace("$", "").strip()  # LaTeX delimiters and currency signs alike
    v = v.rstrip(".,;:。，；：").strip().strip('*`"“”').strip()
    v = v.lstrip("= ").strip()
    # "10 - 7 = 3 \\]": a display's closing bracket, cut from its opening
    for left, right in (("\\[", "\\]"), ("\\(", "\\)")):
        if v.endswith(right) and left not in v:
            v = v[: -len(right)].strip()
    if v.endswith("}"):  # (v is stripped: what _TRAIL_UNIT_CMD's "}$" needs)
        v = _TRAIL_UNIT_CMD.sub("", v).strip()
    if "quad" in v:  # "b + 1 - e^{-a t}, \\quad t > 0": the value, not its domain
        v = _DOMAIN_QUALIFIER.sub("", v).strip()
    m = _VAR_EQ.match(v)
    several = _assigned_values(v) if v.count("=") >= 2 and not equation_asked(question) else None
    if several is not None:
        v = several  # "T(10) = 1, T(11) = 2, T(12) = 2" answers "T(10), T(11) and T(12)": 1, 2, 2
    elif m and v.count("=") == 1 and not equation_asked(question):
        v = m.group(2).strip()  # "x = 12" answers "what is x": 12
    elif "=" in v and v.count("=") <= 4:
        parts = [x.strip() for x in v.split("=")]
        if len(parts) == 2 and MATH_TOKEN.fullmatch(parts[0]) and MATH_TOKEN.fullmatch(parts[1]):
            v = parts[0]  # "1/2 = 0.5": the same number twice; keep the first as written
        elif MATH_TOKEN.fullmatch(parts[-1]) and all(_ARITHMETIC.fullmatch(x) for x in parts[:-1]):
            v = parts[-1]  # "2 * 42 = 84": the computation and its result
    m = _NUM_UNITS.match(v)
    if (
        m
        and not re.search(r"\b(?:or|and|to|plus|minus|times|over|divided|per)\b", m.group(2), re.I)
        and not _is_variable_term(m, question)
    ):
        v = m.group(1).strip()  # "22 cookies" -> "22"
    return v


_SINGLE_LETTER = re.compile(r"([A-Za-z])(?:\^\d)?")
_QUESTION_MATH = re.compile(r"\$\$?[^$]{1,400}\$\$?|\\\(.{1,400}?\\\)|\\\[.{1,400}?\\\]", re.S)


@functools.lru_cache(maxsize=256)
def _question_variables(question: str) -> frozenset[str]:
    """The single letters the question's math ($...$, \\(...\\)) names: "in terms of $k$" -> {"k"}."""
    found = set()
    for span in _QUESTION_MATH.findall(question[:20_000]):
        found.update(re.findall(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])", span))
    return frozenset(found)


def _is_variable_term(m: re.Match, question: str) -> bool:
    """ "2k", "3n", "5r^5" where the question's math has k, n, r: a coefficient and its variable, not
    a number and its unit (a unit comes after a space or is a word: "22 cookies", "5 m", "12cm")."""
    if m.group(1) != m.group(1).rstrip() or m.group(1).endswith("%"):
        return False
    letter = _SINGLE_LETTER.fullmatch(m.group(2))
    return letter is not None and letter.group(1) in _question_variables(question)


_FUNCTION_WORDS = frozenset(
    "to the an of and or is are was be in on at as by for from if so but then we it this that let "
    "i'm it's let's first step okay ok well hmm yes".split()
)


MAX_ASSIGNMENTS = 8


def _assigned_values(v: str) -> str | None:
    """The values of several assignments in one statement, in order ("x = 2, y = 3" -> "2, 3"), or
    None: each part must name a different quantity ("x", "T(10)", "a_1") = one number."""
    parts = [p for p in re.split(r",|;|\\quad|\\qquad|\band\b", v, maxsplit=MAX_ASSIGNMENTS) if p.strip()]
    if not 2 <= len(parts) <= MAX_ASSIGNMENTS:
        return None
    names, values = set(), []
    for part in parts:
        m = _VAR_EQ.match(part.strip())
        if m is None or "=" in m.group(2):
            return None
        value = m.group(2).strip()
        if not MATH_TOKEN.fullmatch(value):
            return None
        names.add(m.group(1).replace(" ", ""))
        values.append(value)
    # One name twice ("x = 4 and x = -4") is a solution set, kept as written.
    return ", ".join(values) if len(names) == len(values) else None


def looks_math(v: str) -> bool:
    if not v or len(v) > 300:
        return False
    low = v.lower().strip()
    if low in _MATH_WORD_ANSWERS:
        return True
    if low in _FUNCTION_WORDS:
        return False  # "To" (a response cut off after one word) is no variable
    # Capitalised abbreviations are symbols (MRS, SRMC, LRAC), not prose.
    words = [
        w
        for w in re.findall(r"(?<![\\A-Za-z])[A-Za-z]{3,}", v)
        if w.lower() not in _MATH_WORDS and not (w.isupper() and len(w) <= 5)
    ]
    if words:
        return False  # prose, not a math answer ("Probability: 1/6" is parsed after its label)
    if any(ch.isdigit() for ch in v) or "\\" in v or "∞" in v or "π" in v:
        return True
    return bool(re.fullmatch(r"[A-Za-z]{1,3}|[A-Za-z0-9+\-*/^()\[\]{}<>=., ]{1,60}", v)) and not words


def _math_span(s: str) -> str:
    """The math value at the start of s: a \\boxed{}, a $...$ span, a currency amount, or a clause."""
    b = BOXED_AT.match(s)
    if b:
        inner = braced(s, b.end() - 1)
        if inner is not None:
            return inner
    if s.startswith("$$"):
        j = s.find("$$", 2)
        if j > 2:
            return s[2:j]
    elif s.startswith("$") and not _CURRENCY.match(s):
        j = s.find("$", 1)
        if j > 1 and "\n" not in s[1:j]:
            return s[1:j]
    elif s.startswith(("\\(", "\\[")):
        j = s.find("\\)" if s[1] == "(" else "\\]", 2)
        if j > 2:
            return s[2:j]
    m = _MATH_END.search(s)
    return s[: m.start()] if m else s


def parse_math(head: str, question: str, final: bool = False) -> tuple[str, str, str]:
    """(status, value, the rest of head) of the math value `head` starts with. `final`: head is the
    response's last sentence, whose "<named quantity> is <value>" states the result even when the
    name holds numbers ("the number of divisors of 196 is 9")."""
    m = _MATH_FILLER.match(head)
    s = head[m.end() :] if m else head
    if _NEG_START.match(s):
        return NEG, "", s
    either = _EITHER.match(s)
    if either:
        s = s[either.end() :]
    span = _math_span(s)
    rest = s[len(span) :]
    if either and re.search(r"\bor\b", span + rest[:80], re.I):
        return AMBIG, "", rest
    # Only after a symbol in math delimiters that a naming verb follows: not "7, which is the
    # y-coordinate of the point whose x is 20", not "$7$ and the remainder is $3$".
    if final and s.startswith(("\\(", "$")) and _NAMING_VERB.match(rest):
        # A final "\\(\\frac{9}{2}\\) expressed as a decimal is 4.5.": the value after the copula,
        # not the symbol the sentence starts with.
        whole = _final_copula(s, question)
        if whole is not None:
            return whole
    value = clean_math(span, question)
    if not looks_math(value):
        words = _number_words(value)
        if words is not None:  # "The answer is twelve."
            return OK, words, rest
        # A sentence that states exactly one number answers with it: "Answer: 55 oranges were
        # picked in all." (the sentence was cut at its first clause break by _math_span).
        tokens = MATH_TOKEN.findall(span) if len(span.split()) <= 25 else []
        if len(tokens) > 1:
            # "the product $abc$ is $-120$": a symbol named, then its value after the last copula
            # (not "the frequency is \\(4.4 \\times 10^{14}\\)", whose numbers are all one value).
            # Only a symbol may come before it: "the LCM of 20 and 27 is 540" is a step, not a result.
            cop = _LAST_COPULA.search(span)
            before = MATH_TOKEN.findall(span, 0, cop.start()) if cop else []
            if before and (final or not any(ch.isdigit() for t in before for ch in t)):
                tokens = [_copula_text(cop)]
        if final:
            # The final statement read whole, past the clause break that cut it ("the only possible
            # length for the third side is 3 units.").
            whole = _final_copula(s, question)
            if whole is not None:
                return whole
        if len(tokens) == 1 and not _NEG_WORDS.search(span):
            value = clean_math(tokens[0], question)
            if looks_math(value):
                return OK, value, rest
        return JUNK, "", rest
    return OK, value, rest


def _final_copula(s: str, question: str) -> tuple[str, str, str] | None:
    """(OK, value, rest) of s's first sentence read as "<named quantity> is <value>.", or None; the
    sentence must be finished (".", "!") and not negated."""
    end = SENTENCE_END.search(s)
    if end is None or end.group() not in ".!":
        return None
    sentence = s[: end.start()]
    whole = copula_value(sentence, question) if not _NEG_WORDS.search(sentence) else None
    return (OK, whole, s[len(sentence) :]) if whole is not None else None


# After a symbol, words that name it rather than join another clause ("\\(\\frac92\\) expressed as a
# decimal is 4.5"; not "$7$ and the remainder is $3$").
_NAMING_VERB = re.compile(r"\s{1,3}(?!(?:and|or|but|which|so|while|with|since|because|if)\b)[a-z]{2,20}\b")
SENTENCE_END = re.compile(r"\.(?=\s|$)|\n|[!?](?=\s|$)")


_LAST_COPULA = re.compile(
    r"\s(?:is\s{1,3}equal\s{1,3}to|is|equals|are|was)\s{1,3}(?:(?:about|approximately|roughly|around)\s{1,3})?"
    r"(?:((?:\\\((?:(?!\\[()]).){1,100}?\\\))|\$[^$\n]{1,100}\$|[-+−]?\d[\d,]*(?:\.\d+)?"
    r"(?:\s{1,2}[A-Za-z]{1,12}){0,2})"  # a number may carry its unit: "is 3 units"
    # a value in math delimiters may be followed by its unit, outside them ("\\( 3 \\times 10^{8} \\) m/s")
    r"(?:(?:(?<=\\\))|(?<=\$))(?:\s{1,2}[A-Za-z/]{1,12}){1,3})?"
    # a power of ten in plain text, and its unit: "4.569 x 10^-24 meters"
    r"|([-+−]?\d[\d,]*(?:\.\d+)?\s{0,2}(?:x|×|\\times)\s{0,2}10\^\{?[-+−]?\d{1,3}\}?)(?:\s{1,2}[A-Za-z/]{1,12}){0,3})"
    r"\s{0,3}$"
)


def _copula_text(m: re.Match[str]) -> str:
    return m.group(1) or m.group(2)


def copula_value(sentence: str, question: str) -> str | None:
    """The value a final "<named quantity> is <value>." states, or None."""
    cop = _LAST_COPULA.search(sentence.rstrip().rstrip(".!").rstrip())
    if cop is None:
        return None
    value = clean_math(_copula_text(cop), question)
    return value if looks_math(value) and "=" not in value else None  # a chain: the caller's "=" split


_INLINE_MATH = re.compile(r"\\\((.{1,200}?)\\\)|\$([^$]{1,200})\$")
_NEG_WORDS = re.compile(r"\b(?:not|no|never|cannot|can't|isn't|wasn't|without)\b", re.I)
_WORD_ANSWER = re.compile(r"[A-Za-z][A-Za-z'’-]{0,24}(?:\s[A-Za-z][A-Za-z'’-]{0,24}){0,2}")


def boxed_answer(head: str, question: str) -> str | None:
    """What a box holds, as written, when it is not a number or formula: "\\boxed{\\text{east}}",
    "\\boxed{\\text{No real solutions}}" (a box states its answer by construction)."""
    b = BOXED_AT.match(head)
    inner = braced(head, b.end() - 1) if b else None
    if inner is None:
        return None
    v = clean_math(inner, question)
    return v if 0 < len(v) <= 200 and "\n" not in v else None


def word_answer(head: str) -> str | None:
    """A word answer after a strong claim: "\\boxed{\\text{east}}", "the final answer is east." (one to
    three words, none of them commentary: "the answer is clear" is not an answer)."""
    m = _MATH_FILLER.match(head)
    s = head[m.end() :] if m else head
    span = _math_span(s)
    if s[len(span) :].strip()[:1] not in ("", ".", "!", "\n"):
        return None  # "the final answer is encapsulated as follows: ..." goes on: not a word answer
    v = _TEXT_CMD.sub(r"\1", span).replace("$", "").strip().strip(".,;:!*`\"'“”").strip()
    v = re.sub(r"^(?:the|an?)\s", "", v, flags=re.I).strip()
    if not _WORD_ANSWER.fullmatch(v) or v.split()[0].lower() in P.NOT_AN_ANSWER_START:
        return None
    return v


_UNITS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * (n + 2) for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6}


def _number_words(value: str) -> str | None:
    """ "twelve" -> "12", "two hundred and five" -> "205"; None unless the whole value is number words
    (at most 8 words, an optional unit word after them)."""
    words = value.lower().replace("-", " ").replace(",", " ").split()
    if not words or len(words) > 9 or words[0] not in _UNITS and words[0] not in _TENS:
        return None
    total = current = 0
    used = 0
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALES:
            total += max(current, 1) * _SCALES[w]
            current = 0
        elif w == "and":
            pass
        elif w == "point" and used and all(x in _UNITS and _UNITS[x] < 10 for x in words[used + 1 :][:6]):
            digits = words[used + 1 :]
            if not digits or len(digits) > 6:
                return None
            return f"{total + current}." + "".join(str(_UNITS[d]) for d in digits)
        else:
            break
        used += 1
    if len(words) - used > 1:  # one unit word may follow ("twelve apples")
        return None
    return str(total + current)


# ---------------------------------------------------------------------------------------------
# Structured values: the content of a JSON answer field is the answer as a whole.

_BARE_CAPITAL = re.compile(r"(?<![A-Za-z0-9'’])([A-Z])(?![A-Za-z0-9'’])")
_LAST_RESULT = re.compile(
    r"(?:≈|\\approx|=)\s{0,3}([-+−]?\$?\d[\d,]*(?:\.\d+)?%?)(?:\s{1,3}[A-Za-z]{1,15}){0,3}\s{0,3}\.?$"
)
MAX_FIELD_VALUE = 600
_PLAIN_NUMBER = re.compile(r"-?\d{1,15}(?:\.\d{1,10})?")


def _other_letter(rest: str, ix: Index, answer: str) -> bool:
    """Another option's letter after the answer inside one field value: "B (or D, both are correct)"."""
    for m in _BARE_CAPITAL.finditer(rest[:300]):
        letter = m.group(1)
        if letter in ix.letters and ix.letters[letter] != answer and not is_article(rest, m.end()):
            return True
    return False


def resolve_value(value: str | None, question: str, ix: Index | None) -> tuple[str, str]:
    """Resolve a structured answer field: ("ok", answer), ("none", ...) for a value that commits to
    no answer (a placeholder, null, "none of the options", "not B"), or ("ambig"/"junk", ...)."""
    if value is None:
        return "none", NO_VALID_ANSWER
    v = " ".join(value.split())[:MAX_FIELD_VALUE].strip().strip("*_`\"'").strip()
    # The common clean values first: "C", "(C)", "42" (most requested-format answers are these).
    if ix is None:
        if _PLAIN_NUMBER.fullmatch(v):
            return "ok", v
    elif ix.kat == ALPHA:
        letter = v[1:-1] if len(v) == 3 and v[0] == "(" and v[2] == ")" else v
        if len(letter) == 1 and letter.upper() in ix.letters:
            return "ok", ix.letters[letter.upper()]
    if v.startswith("{"):
        return "junk", NO_VALID_ANSWER
    if ix is None:
        if is_placeholder(v):
            return "none", NO_VALID_ANSWER
        last = _LAST_RESULT.search(v)
        if last:  # "20 * 1.8 ≈ 36.12": the computation and its result
            v = last.group(1)
        status, answer, _ = parse_math(v, question, final=True)  # an answer field states the result
        if status == OK:
            return "ok", answer
        spans = [m.group(1) or m.group(2) for m in _INLINE_MATH.finditer(v)]
        if status == JUNK and len(spans) == 1:  # "The length ... is \\(\\dfrac{32\\sqrt{3}}{3}\\) cm."
            status, answer, _ = parse_math(spans[0], question)
            if status == OK:
                return "ok", answer
        if status == NEG:
            return "none", NO_VALID_ANSWER
        # A word answer in the answer field ("infinite", "no solution") is the answer as written.
        word = clean_math(v, question)
        if word and len(word) <= 60 and len(word.split()) <= 4 and not any(ch.isdigit() for ch in word):
            return "ok", word
        return "junk", NO_VALID_ANSWER
    status, answer, rest = parse_choice(v, ix)
    if status == OK:
        if ix.kat == ALPHA and _other_letter(rest, ix, answer):
            return "ambig", NO_VALID_ANSWER
        return "ok", answer
    if status in (NEG, OUT) or is_placeholder(v):
        return "none", NO_VALID_ANSWER
    return status, NO_VALID_ANSWER
