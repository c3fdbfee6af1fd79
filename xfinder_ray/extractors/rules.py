"""`rules`: a model-free key-answer extractor, following the xFinder annotation rules.

It is the embedded default where no model can be loaded and the cheap baseline in ablations. Given
an LLM response it returns the key answer the response commits to: the option letter
(alphabet_option), the candidate as written in the range (short_text, categorical_label), the math
answer as the response wrote it (math), or ``[No valid answer]``.

How (docs/rules.md has the details and examples):
1. prepare the text (stop strings, ``</think>``, markdown bold, NFKC for non-math, size cap);
2. find *claims*: phrases that commit to an answer ("the answer is", "Answer:", "#### ", ``\\boxed{}``,
   "答案是", "I would choose", "... which must be the answer", ...), each with a tier
   (initial < weak < normal/strong) and its value parsed against the range;
3. cut a hallucinated few-shot continuation ("Question: ... Answer: ...") after the first answer;
4. the last claim of the highest tier wins (a later answer corrects an earlier one); a later
   out-of-range or "X or Y" claim, or hedging between two answers, gives ``[No valid answer]``;
5. without any claim: refusals and cut-off responses get ``[No valid answer]``; otherwise a response
   that is just an answer, a lone answer line, or the one candidate it mentions without negation.

Every regex is bounded, every scan is over a capped slice, and nothing is ever evaluated.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from xfinder_ray.extractors import rules_patterns as P
from xfinder_ray.parsing import STOP_STRINGS, is_no_valid_answer, normalize_text
from xfinder_ray.records import NO_VALID_ANSWER, AnswerRange

RULES_VERSION = "rules-1"

ALPHA, MATH = "alphabet_option", "math"

# Size bounds. A response longer than MAX_SCAN is reduced to its head and tail: the answer to the
# actual question is near the start (repetition loops) or near the end (chain of thought).
MAX_SCAN = 64_000
HEAD, TAIL = 16_000, 48_000
VALUE_WINDOW = 400  # characters after a claim phrase in which its value must start and end
MAX_CLAIMS_PARSED = 200  # claims parsed from the end (and, for the loop cut, from the start)
MENTION_WINDOW = 6_000  # the stretch of text scanned for candidate mentions
MAX_MENTION_CANDIDATES = 200  # larger ranges skip mention-based steps (cost grows with the range)
MAX_QUESTION = 20_000

OK, AMBIG, OUT, JUNK, NEG = "ok", "ambig", "out", "junk", "neg"
_EDGE = " .,;:!?。，；：！？" + "\"'`“”‘’「」" + "*_"


# ---------------------------------------------------------------------------------------------
# The answer range as an index: prefix and mention regexes over the candidates' texts.


@dataclass(frozen=True)
class _Index:
    kat: str
    values: tuple[str, ...]  # answers in range order: letters for alphabet_option, else candidates
    letters: dict[str, str]  # upper-cased letter -> the range's letter (alphabet_option only)
    by_key: dict[str, str]  # _key(candidate text) -> answer
    own_key: dict[str, str]  # answer -> _key(its text)
    prefix_re: re.Pattern[str] | None  # a candidate text at the start of a string, longest first
    mention_re: re.Pattern[str] | None  # candidate texts anywhere (those of 3+ characters)


_JOINER = re.compile(r"(?<=[^\W\d_])\s{0,2}[/&\-]\s{0,2}(?=[^\W\d_])")


def _key(text: str) -> str:
    """The lookup form of a candidate: normalize_text, and "Sci/Tech" == "Sci-Tech" == "sci tech"."""
    return _JOINER.sub(" ", normalize_text(text))


def _index(kat: str, answer_range: AnswerRange) -> _Index:
    if kat == ALPHA:
        items = tuple((str(letter).strip(), str(text)) for letter, text in answer_range)
    else:
        items = tuple((str(c), str(c)) for c in answer_range)
    return _build_index(kat, items)


@lru_cache(maxsize=512)
def _build_index(kat: str, items: tuple[tuple[str, str], ...]) -> _Index:
    by_key: dict[str, str] = {}
    own_key: dict[str, str] = {}
    prefix_pats: list[str] = []
    mention_pats: list[str] = []
    aliases: list[tuple[str, str]] = []
    for answer, text in items:
        core = " ".join(unicodedata.normalize("NFKC", text).split()).strip(_EDGE)
        key = _key(core)
        if not key:
            continue
        by_key.setdefault(key, answer)
        own_key.setdefault(answer, key)
        aliases.append((core, answer))
        if kat != ALPHA and core.lower().startswith("to ") and len(core) > 5:
            # SIQA-style "to stay home" is also answered as "stay home" (and vice versa, in _parse_label).
            aliases.append((core[3:], answer))
    for form, answer in aliases:
        by_key.setdefault(_key(form), answer)  # exact texts first, so an alias never shadows one
        words = _JOINER.sub(" ", form).split(" ")
        pat = r"(?:\s{1,3}|\s{0,2}[/&\-]\s{0,2})".join(re.escape(w) for w in words)
        prefix_pats.append(pat)
        if len(form) >= 3 and len(items) <= MAX_MENTION_CANDIDATES:
            mention_pats.append(pat)
    # Longest first, so "O(n log n)" wins over "O(n)" and "a horse" over "horse".
    prefix_pats.sort(key=len, reverse=True)
    mention_pats.sort(key=len, reverse=True)
    prefix_re = (
        re.compile(r"(?:" + "|".join(prefix_pats) + r")(?![A-Za-z0-9])", re.I) if prefix_pats else None
    )
    mention_re = (
        re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(mention_pats) + r")(?![A-Za-z0-9])", re.I)
        if mention_pats
        else None
    )
    letters = {a.upper(): a for a, _ in items} if kat == ALPHA else {}
    return _Index(kat, tuple(a for a, _ in items), letters, by_key, own_key, prefix_re, mention_re)


def _lookup(ix: _Index, matched: str) -> str | None:
    return ix.by_key.get(_key(matched))


# ---------------------------------------------------------------------------------------------
# Text preparation.


def _prepare(llm_output: object, kat: str) -> str:
    text = llm_output if isinstance(llm_output, str) else ("" if llm_output is None else str(llm_output))
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
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u200b", "")
    # Markdown bold only decorates: "**Answer:** **B**" reads as "Answer: B".
    text = text.replace("**", "")
    if kat != MATH:
        # Full-width letters and punctuation ("Ｂ", "（B）", "：") read as their ASCII forms.
        text = unicodedata.normalize("NFKC", text)
    return text


def _truncated(text: str) -> bool:
    """A response cut off mid-sentence: it ends in a connective punctuation or a dangling clause."""
    t = text.rstrip()
    if not t:
        return True
    last = t[-1]
    if last in ",:;(-–—/、，：；":
        return True
    if last.isalpha():
        line = t[t.rfind("\n") + 1 :]
        words = line.split()
        if len(words) > 1 and words[-1] in _DANGLING:
            return True
        # A long unpunctuated last line is cut off; "Label: World" and "The answer is B" are not.
        return len(words) >= 7 and ":" not in line
    return False


# Words a finished sentence does not end with.
_DANGLING = frozenset(
    "is are was were be been being the a an of to and or that which with for in on at as by from into than "
    "because so but if when while since then also not very more most each every both between through over "
    "under after before during without within like such using about consider need needs has have had will "
    "would can could should must we i you it this these those its their our my your his her let's let us "
    "answer option choice".split()
)


# ---------------------------------------------------------------------------------------------
# Claims.


@dataclass
class _Claim:
    start: int  # where the phrase starts
    pos: int  # forward: where the value starts; backward: where the phrase starts
    tier: int  # CONTEXT: decided lazily from the sentence (initial / strong / normal)
    backward: bool = False
    counts_out: bool = True  # an out-of-range value here means "answered outside the range"
    tight: bool = False  # the value must end its sentence ("So C." but not "So C is wrong")
    status: str = ""
    value: str = ""


_CONTEXT = -1  # a tier decided from the claim's sentence when (and only if) the claim is looked at


def _tier_from_context(text: str, start: int, end: int) -> int:
    lo = max(0, start - 40)
    ctx = text[lo:end]
    # Only the claim's own sentence qualifies it.
    cut = max(ctx.rfind(ch, 0, start - lo) for ch in ".!?\n。")
    if cut >= 0:
        ctx = ctx[cut + 1 :]
    low = ctx.lower()
    if any(w in low for w in _INITIAL_WORDS) and P.INITIAL_CTX.search(ctx):
        return P.INITIAL
    if any(w in low for w in _STRONG_WORDS) and P.STRONG_CTX.search(ctx):
        return P.STRONG
    return P.NORMAL


_INITIAL_WORDS = ("initial", "first", "original", "previous", "earlier", "old", "最初", "一开始", "起初")
_STRONG_WORDS = (
    "final",
    "correct",
    "revised",
    "updated",
    "actual",
    "definitive",
    "right",
    "true",
    "最终",
    "正确",
    "综上",
)


# Keywords one of which a pattern needs: a plain substring test skips patterns that cannot match,
# which keeps long responses fast (Python's regex engine scans alternations position by position).
_NEEDS = {
    "strong_verb": ("chang", "actually", "myself"),
    "option": ("option", "choice", "pick", "selection", "guess"),
    "weak_noun": ("result", "solution", "response", "root", "zero", "answers"),
    "verb": (
        "choose",
        "pick",
        "select",
        "go with",
        "go for",
        "opt for",
        "settle",
        "classif",
        "label",
        "categori",
        "tag",
        "mark",
        "m going",
        "am going",
        "say",
        "leaves",
    ),
    "conclude": (
        "so ",
        "so,",
        "thus",
        "therefore",
        "hence",
        "then",
        "ergo",
        "overall",
        "conclusion",
        "summary",
        "sum up",
    ),
    "superlative": ("best", "most", "likeliest"),
    "latin": ("respuesta", "réponse", "reponse", "risposta", "resposta", "antwort", "ответ"),
    "bwd": ("answer", "option", "choice", "label", "one"),
    "correct": ("correct", "right", "best"),
    "bwd_weak": ("fits", "matches", "suits", "describes", "most"),
}


def _find_claims(text: str) -> list[_Claim]:
    """Every claim phrase in text, in order (values are parsed lazily, see _parse_claim)."""
    claims: dict[int, _Claim] = {}
    low = " " + text.lower()

    def needs(name: str) -> bool:
        return any(w in low for w in _NEEDS[name])

    def add(c: _Claim) -> None:
        claims.setdefault(c.start, c)  # the first pattern below to claim a position keeps it

    if "box" in low:
        for m in P.BOXED.finditer(text):
            add(_Claim(m.start(), m.start(), P.STRONG))
    if "####" in text:
        for m in P.HASHES.finditer(text):
            add(_Claim(m.start(), m.end(), P.STRONG))
    if needs("strong_verb"):
        for m in P.FWD_STRONG_VERB.finditer(text):
            add(_Claim(m.start(), m.end(), P.STRONG))
    for m in P.FWD_ANSWER.finditer(text):
        add(_Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("option"):
        for m in P.FWD_OPTION.finditer(text):
            # "the best option is B", "My choice: B"; not "this choice is a common distractor".
            if m.group("colon") or P.QUALIFIER_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                add(_Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("weak_noun"):
        for m in P.FWD_WEAK_NOUN.finditer(text):
            add(_Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else P.WEAK, counts_out=False))
    if needs("verb"):
        for m in P.FWD_VERB.finditer(text):
            add(_Claim(m.start(), m.end(), _CONTEXT))
    if needs("superlative"):
        for m in P.FWD_SUPERLATIVE.finditer(text):
            add(_Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    if needs("conclude"):
        for m in P.FWD_SO.finditer(text):
            add(_Claim(m.start(), m.end(), P.WEAK, counts_out=False, tight=True))
        for m in P.FWD_CONCLUDE.finditer(text):
            add(_Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    if needs("latin"):
        for m in P.FWD_MULTI_LATIN.finditer(text):
            add(_Claim(m.start(), m.end(), _CONTEXT))
    if P.HAS_CJK.search(text):
        for m in P.FWD_MULTI_CJK.finditer(text):
            add(_Claim(m.start(), m.end(), _CONTEXT))
        for m in P.BWD_WEAK_CJK.finditer(text):
            add(_Claim(m.start(), m.start(), P.WEAK, backward=True))
    if "#" in text:
        for m in P.HEADING.finditer(text):
            add(_Claim(m.start(), m.end(), P.NORMAL))
    if P.QA_Q.search(text):
        for m in P.QA_A.finditer(text):
            add(_Claim(m.start(), m.end(), P.NORMAL))
    if needs("bwd"):
        for m in P.BWD.finditer(text):
            q = (m.group("q") or "").lower()
            noun = m.group("noun").lower()
            if q.startswith(("correct", "right", "final", "true", "only")):
                tier = P.STRONG
            elif q or noun == "answer":
                tier = P.NORMAL
            elif noun == "one":
                continue
            else:
                tier = P.WEAK
            lead = P.BWD_LEAD.search(text, max(0, m.start() - 30), m.start())
            start = lead.start() if lead else m.start()
            add(_Claim(start, start, tier, backward=True))
    if needs("correct"):
        for m in P.BWD_CORRECT.finditer(text):
            add(_Claim(m.start(), m.start(), P.NORMAL, backward=True))
    if needs("bwd_weak"):
        for m in P.BWD_WEAK.finditer(text):
            add(_Claim(m.start(), m.start(), P.WEAK, backward=True))
    return [claims[k] for k in sorted(claims)]


# ---------------------------------------------------------------------------------------------
# Value parsing: non-math.

_FILLER = re.compile(
    r"(?:[\s:：=\-–—>*_`\"'“”‘’「」]|(?:is|that|actually|clearly|definitely|probably|likely|indeed|therefore|"
    r"thus|then|now|still|simply|just|obviously|certainly|surely|undoubtedly|in\s{1,3}fact|of\s{1,3}course|"
    r"going\s{1,3}to\s{1,3}be|it's|it\s{1,3}(?:is|would\s{1,3}be|must\s{1,3}be|should\s{1,3}be)|that's|"
    r"this\s{1,3}is|la|le|el|lo|les|die|der|das|opción|opcion|l')\b,?)*",
    re.I,
)
# Degree adverbs ("mostly negative"): dropped only when the value does not match as it stands, so
# that "very positive" stays a candidate of its own in five-way sentiment.
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
_OPT_LETTER = re.compile(
    r"^(?:(?:option|choice|letter|answer)\s{0,3})?"
    r"(?:[(\[](?P<d>[A-Za-z])[)\]]|(?P<b>[A-Za-z])(?=[\s.,:;!?)\]。，：、(]|$))",
    re.I,
)
_OPTION_WORD = re.compile(r"(?i:\b(?:option|choice))\s{0,3}[(\[]?(?P<l>[A-Z])\b")
_LETTER_MENTION = re.compile(
    r"\((?P<a>[A-Za-z])\)"
    r"|(?i:\b(?:option|choice|answer|letter))\s{0,3}[(\[]?(?P<b>[A-Z])\b[)\]]?"
    r"|(?<![A-Za-z0-9'’])(?P<c>[A-Z])(?![A-Za-z0-9'’])"
)
_CLAUSE_END = re.compile(
    r"[.!?\n;。，,:(]|\s(?:because|since|as|which|even|but|so|though|although|while|given|due)\b", re.I
)
_NEXT_WORD = re.compile(r"\s{1,3}([a-z][a-z']{0,20})")
_BOXED_AT = re.compile(r"\\(?:boxed|fbox)\s{0,3}\{")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textrm|mbox)\s{0,3}\{([^{}]{0,200})\}")


def _braced(s: str, open_at: int) -> str | None:
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


def _article(s: str, end: int) -> bool:
    """'A'/'I' followed by a lowercase word that is not a verb or conjunction: the article/pronoun."""
    m = _NEXT_WORD.match(s, end)
    return bool(m) and m.group(1) not in P.VERBISH


def _out_or_junk(s: str, ix: _Index) -> str:
    """A value not in the range: a definite out-of-range answer (OUT) or mere commentary (JUNK)."""
    m = _CLAUSE_END.search(s)
    clause = (s[: m.start()] if m else s).strip(_EDGE + "()[]")
    if _mentions(clause, 0, len(clause), ix):
        return JUNK  # it names a candidate, just not in a form parsed here ("it's B"): not out of range
    words = clause.split()
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    if not words or len(words) > 6 or not any(ch.isalnum() for ch in clause):
        return JUNK
    return JUNK if words[0].lower().strip(_EDGE) in P.NOT_AN_ANSWER_START else OUT


def _another(rest: str, ix: _Index, value: str) -> bool:
    """Whether `rest` (what follows an answer) joins a different candidate: "B or C", "x, y or z"."""
    j = _JOIN.match(rest)
    if not j:
        return False
    tail = rest[j.end() :]
    if ix.prefix_re is not None:
        m = ix.prefix_re.match(tail)
        if m:
            other = _lookup(ix, m.group(0))
            if other is not None and other != value:
                return True
    if ix.kat == ALPHA:
        m = _OPT_LETTER.match(tail)
        if m:
            letter = (m.group("d") or m.group("b") or "").upper()
            if (
                letter in ix.letters
                and ix.letters[letter] != value
                and not (m.group("b") and _article(tail, m.end()))
            ):
                return True
    return False


_ARTICLE = re.compile(r"(?:the|an?)\s{1,3}(?=\S)", re.I)


def _strip_article(s: str, ix: _Index) -> str:
    """ "the library" answers "library", unless a candidate itself starts with the article."""
    m = _ARTICLE.match(s)
    if not m or ix.prefix_re is None or ix.prefix_re.match(s):
        return s
    rest = s[m.end() :]
    return rest if ix.prefix_re.match(rest) else s


def _parse_option(s: str, ix: _Index) -> tuple[str, str, str]:
    s = _strip_article(s, ix)
    m = P.ORDINAL.match(s)
    if m:
        idx = P.ORDINALS[m.group(1).lower()]
        if -len(ix.values) <= idx < len(ix.values):
            return OK, ix.values[idx], s[m.end() :]
    # An option's text first: "A steel spoon" is option "a steel spoon", not letter A (but a bare
    # "B" is the letter B even where some option's text is "B", as in blood types).
    if ix.prefix_re is not None:
        m = ix.prefix_re.match(s)
        if m and not (len(m.group(0)) == 1 and m.group(0).upper() in ix.letters):
            value = _lookup(ix, m.group(0))
            if value is not None:
                rest = s[m.end() :]
                if _VALUE_NEG.match(rest):
                    return NEG, "", rest
                return (AMBIG if _another(rest, ix, value) else OK), value, rest
    m = _OPT_LETTER.match(s)
    if m:
        raw = m.group("d") or m.group("b")
        bare = m.group("b") is not None
        article = bare and (raw.islower() or raw in "AI") and _article(s, m.end())
        if raw.upper() in ix.letters and not article:
            value = ix.letters[raw.upper()]
            rest = s[m.end() :]
            if _VALUE_NEG.match(rest):
                return NEG, "", rest
            if _another(rest, ix, value):
                return AMBIG, value, rest
            # "B. <text of another option>" contradicts itself (as in parsing.match_candidate).
            after = rest.lstrip(" .):：、-–—(\"'")
            if ix.prefix_re is not None:
                mm = ix.prefix_re.match(after)
                if mm:
                    other = _lookup(ix, mm.group(0))
                    if other is not None and other != value and ix.own_key.get(value) != _key(mm.group(0)):
                        return AMBIG, value, rest
                    if other == value:
                        rest = after[mm.end() :]
            return OK, value, rest
    # "improve his skills (option D)": the letter named later in the same line.
    m = _OPTION_WORD.search(s[:200])
    if m and m.group("l") in ix.letters:
        return OK, ix.letters[m.group("l")], s[m.end() :]
    return _out_or_junk(s, ix), "", s


def _parse_label(s: str, ix: _Index) -> tuple[str, str, str]:
    s = _strip_article(s, ix)
    tries = [s]
    undecorated = _LETTER_DECOR.sub("", s, count=1)
    if undecorated != s:
        tries.append(undecorated)  # "(B) thrilled": the letter decorates the candidate
    if re.match(r"to\s", s, re.I):
        tries.append(s[3:].lstrip())  # "to stay home" for the candidate "stay home"
    for t in tries:
        if ix.prefix_re is None:
            break
        m = ix.prefix_re.match(t)
        if not m:
            continue
        value = _lookup(ix, m.group(0))
        if value is None:
            continue
        rest = t[m.end() :]
        if _VALUE_NEG.match(rest):
            return NEG, "", rest
        return (AMBIG if _another(rest, ix, value) else OK), value, rest
    return _out_or_junk(s, ix), "", s


def _parse_choice(head: str, ix: _Index) -> tuple[str, str, str]:
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
    if _NEG_START.match(s) and not (ix.prefix_re is not None and ix.prefix_re.match(s)):
        # "not A, but C" names the answer after the contrast; "not A" alone names none.
        m = _CONTRAST.search(s)
        if not m:
            return NEG, "", s
        s = s[m.end() :].lstrip(_EDGE)
    either = _EITHER.match(s)
    if either:
        s = s[either.end() :]
    b = _BOXED_AT.match(s)
    if b:
        inner = _braced(s, b.end() - 1)
        if inner is not None:
            s = inner
    s = _TEXT_CMD.sub(r"\1", s).replace("$", "").strip()
    s = s.lstrip(_EDGE.replace(".", "").replace(":", ""))
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
    r"\n|。|；|;|!(?=\s|$)|\?(?=\s|$)|\.(?=\s|$)|,\s{0,3}(?=[A-Za-z]{2,})"
    r"|\s(?:because|since|as|which|so|but|if|when|where|for|from|by|after|meaning|per|i\.e\.|"
    r"and\s(?:so|thus|hence|therefore|the|that|this|it|we|I))\b|\s(?:≈|\\approx)|\s\((?=\s{0,2}[=≈]|[A-Za-z]{2,})",
    re.I,
)
_CURRENCY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?(?![\d$])")
_TRAIL_UNIT_CMD = re.compile(
    r"(?<=[\d}])\s{0,3}\\(?:text|mbox|mathrm|textrm)\s{0,3}\{\s{0,3}[A-Za-z][A-Za-z .]{0,30}\}$"
)
_VAR_EQ = re.compile(r"^([A-Za-z](?:_\{?\w{1,3}\}?)?)\s{0,3}=\s{0,3}(.+)$", re.S)
_ARITHMETIC = re.compile(
    r"[\d\s.,+\-−*/×÷^()]{1,200}|[\d\s.,+\-−*/×÷^(){}]*(?:\\(?:times|cdot|div|frac)[\d\s.,+\-−*/×÷^(){}]*){1,20}"
)
_EQUATION_ASKED = re.compile(r"\b(?:equation|line|plane|circle|parabola|curve|ellipse|hyperbola)\b", re.I)
_NUM_UNITS = re.compile(
    r"^([-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s{0,3}/\s{0,3}\d+)?\s{0,2}%?)\s{0,3}"
    r"((?:[A-Za-z][A-Za-z.'’-]{0,20}(?:\^\d)?)(?:\s{1,3}[A-Za-z][A-Za-z.'’-]{0,20}(?:\^\d)?){0,3})$"
)
_NUM = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")
# A math value inside prose: a \frac, a $...$ span, or a number (with a fraction bar or a percent).
_MATH_TOKEN = re.compile(
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


def _clean_math(v: str, question: str) -> str:
    v = v.strip()
    b = _BOXED_AT.search(v)
    if b:
        inner = _braced(v, b.end() - 1)
        if inner is not None:
            v = inner
    v = v.strip()
    for left, right in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if v.startswith(left) and v.endswith(right) and len(v) >= len(left) + len(right):
            v = v[len(left) : len(v) - len(right)]
    v = v.replace("\\$", "").replace("$", "").strip()  # LaTeX delimiters and currency signs alike
    v = v.rstrip(".,;:。，；：").strip().strip('*`"“”').strip()
    v = v.lstrip("= ").strip()
    v = _TRAIL_UNIT_CMD.sub("", v).strip()
    m = _VAR_EQ.match(v)
    if m and v.count("=") == 1 and not _EQUATION_ASKED.search(question):
        v = m.group(2).strip()  # "x = 12" answers "what is x": 12
    elif "=" in v and v.count("=") <= 4:
        parts = [x.strip() for x in v.split("=")]
        if len(parts) == 2 and _MATH_TOKEN.fullmatch(parts[0]) and _MATH_TOKEN.fullmatch(parts[1]):
            v = parts[0]  # "1/2 = 0.5": the same number twice; keep the first as written
        elif _MATH_TOKEN.fullmatch(parts[-1]) and all(_ARITHMETIC.fullmatch(x) for x in parts[:-1]):
            v = parts[-1]  # "2 * 42 = 84": the computation and its result
    m = _NUM_UNITS.match(v)
    if m and not re.search(r"\b(?:or|and|to|plus|minus|times|over|divided|per)\b", m.group(2), re.I):
        v = m.group(1).strip()  # "22 cookies" -> "22"
    return v


def _looks_math(v: str) -> bool:
    if not v or len(v) > 300:
        return False
    low = v.lower().strip()
    if low in _MATH_WORD_ANSWERS:
        return True
    words = [w for w in re.findall(r"(?<![\\A-Za-z])[A-Za-z]{3,}", v) if w.lower() not in _MATH_WORDS]
    if words:
        return False  # prose, not a math answer ("Probability: 1/6" is parsed after its label)
    if any(ch.isdigit() for ch in v) or "\\" in v or "∞" in v or "π" in v:
        return True
    return bool(re.fullmatch(r"[A-Za-z]{1,3}|[A-Za-z0-9+\-*/^()\[\]{}<>=., ]{1,60}", v)) and not words


def _math_span(s: str) -> str:
    """The math value at the start of s: a \\boxed{}, a $...$ span, a currency amount, or a clause."""
    b = _BOXED_AT.match(s)
    if b:
        inner = _braced(s, b.end() - 1)
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


def _parse_math(head: str, question: str) -> tuple[str, str, str]:
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
    value = _clean_math(span, question)
    if not _looks_math(value):
        return JUNK, "", rest
    return OK, value, rest


# ---------------------------------------------------------------------------------------------
# Mentions of candidates in free text (backward claims, hedging, fallback).


def _is_negated(text: str, s: int, e: int) -> bool:
    before = text[max(0, s - 40) : s]
    cut = max(before.rfind(ch) for ch in ".!?\n;。")
    if cut >= 0:
        before = before[cut + 1 :]
    return bool(P.NEG_BEFORE.search(before) or P.NEG_AFTER.match(text, e, min(len(text), e + 80)))


def _mentions(text: str, lo: int, hi: int, ix: _Index) -> list[tuple[int, int, str, bool]]:
    """Candidate mentions in text[lo:hi]: (start, end, answer, negated), in order."""
    found: list[tuple[int, int, str]] = []
    if ix.mention_re is not None:
        for m in ix.mention_re.finditer(text, lo, hi):
            value = _lookup(ix, m.group(0))
            if value is not None:
                found.append((m.start(), m.end(), value))
    if ix.kat == ALPHA:
        spans = [(s, e) for s, e, _ in found]
        for m in _LETTER_MENTION.finditer(text, lo, hi):
            raw = m.group("a") or m.group("b") or m.group("c")
            if raw.upper() not in ix.letters:
                continue
            if (
                m.group("c")
                and raw in "AI"
                and (_article(text, m.end()) or text[m.end() : m.end() + 1] == "'")
            ):
                continue
            if any(s < m.end() and m.start() < e for s, e in spans):
                continue  # a capital inside an option's own text ("Vitamin C")
            found.append((m.start(), m.end(), ix.letters[raw.upper()]))
    found.sort()
    out: list[tuple[int, int, str, bool]] = []
    for s, e, v in found:
        neg = _is_negated(text, s, e)
        if out and out[-1][2] == v and s - out[-1][1] <= 3 and not text[out[-1][1] : s].strip(" ).:-"):
            # "(D) a paper straw is incorrect": a letter and its own text are one mention.
            ps, _, _, pneg = out.pop()
            out.append((ps, e, v, pneg or neg))
            continue
        out.append((s, e, v, neg))
    return out


_MATH_TAIL = re.compile(
    r"(\$[^$\n]{1,200}\$|[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s{0,3}/\s{0,3}\d+)?)\W{0,4}$"
)


def _parse_backward(text: str, c: _Claim, ix: _Index | None, question: str) -> tuple[str, str]:
    lo = max(0, c.start - 300)
    seg_start = lo
    for ch in ".!?\n;:。；：，,":
        k = text.rfind(ch, lo, c.start)
        if k >= 0:
            seg_start = max(seg_start, k + 1)
    if ix is None:
        m = _MATH_TAIL.search(text, seg_start, c.start)
        if not m:
            return JUNK, ""
        value = _clean_math(m.group(1), question)
        return (OK, value) if _looks_math(value) else (JUNK, "")
    tail_end = c.start
    while tail_end > seg_start and text[tail_end - 1] in " \t\"'“”‘’)]*_":
        tail_end -= 1
    ments = _mentions(text, seg_start, c.start, ix)
    if not ments:
        return JUNK, ""
    s, e, value, negated = ments[-1]
    if e < tail_end:
        return JUNK, ""  # the claim is about something said after the last candidate
    if negated:
        return NEG, ""
    return OK, value


def _parse_claim(text: str, c: _Claim, ix: _Index | None, question: str) -> None:
    if c.status:
        return
    if c.tier == _CONTEXT:
        c.tier = _tier_from_context(text, c.start, c.pos)
    if c.backward:
        c.status, c.value = _parse_backward(text, c, ix, question)
        return
    head = text[c.pos : c.pos + VALUE_WINDOW]
    if ix is None:
        c.status, c.value, rest = _parse_math(head, question)
    else:
        c.status, c.value, rest = _parse_choice(head, ix)
    if c.tight and c.status == OK:
        after = rest.lstrip(" \t\"'”’)]*_")
        if after and after[0] not in ".!;\n":
            c.status, c.value = JUNK, ""


# ---------------------------------------------------------------------------------------------
# Repetition loops, fluctuation, fallback.


def _cut_continuation(
    text: str, claims: list[_Claim], question: str, ix: _Index | None
) -> tuple[str, list[_Claim]]:
    """Cut a hallucinated continuation: a new "Question: ..." turn after the response has answered."""
    if not P.TURN_HEADER.search(text):
        return text, claims
    first_ok = None
    for c in claims[:MAX_CLAIMS_PARSED]:
        _parse_claim(text, c, ix, question)
        if c.status == OK and c.tier >= P.WEAK:
            first_ok = c
            break
    qn = normalize_text(question[:MAX_QUESTION])
    for n, h in enumerate(P.TURN_HEADER.finditer(text)):
        # A bare answer ("A", "84") and then a new turn: the answer is everything before that turn.
        if n >= 200 or (first_ok is not None and h.start() >= first_ok.start):
            break
        head = text[: h.start()].strip()
        if not head:
            continue
        if len(head) <= 200 and "\n" not in head:
            parsed = _parse_math(head, question) if ix is None else _parse_choice(head, ix)
            if parsed[0] == OK and not parsed[2].strip(_EDGE + "()[]"):
                return text[: h.start()], [c for c in claims if c.start < h.start()]
        break
    if first_ok is None:
        return text, claims
    for n, h in enumerate(P.TURN_HEADER.finditer(text, first_ok.pos)):
        if n >= 200:
            break
        nl = text.find("\n", h.end(), h.end() + 200)
        snippet = normalize_text(text[h.end() : nl if nl >= 0 else h.end() + 80])
        if len(snippet) >= 8 and snippet in qn:
            continue  # the response quoting the actual question
        cut = h.start()
        kept = []
        for c in claims:
            if c.start < cut:
                if c.pos + VALUE_WINDOW > cut:
                    c.status = ""  # re-parse against the cut text
                kept.append(c)
        return text[:cut], kept
    return text, claims


def _norm_value(v: str) -> str:
    return v.replace(",", "").replace(" ", "").removesuffix(".0")


def _fluctuates(text: str, start: int, chosen: str | None, ix: _Index | None, committed: bool) -> bool:
    """Hedging between two or more answers after `start` ("it could be B, but it could also be C")."""
    region_end = min(len(text), start + MENTION_WINDOW)
    hedged = P.HEDGE.search(text, start, region_end) or (
        not committed and P.HEDGE_QUESTION.search(text, start, region_end)
    )
    if not hedged:
        return False
    values: set[str] = set()
    if chosen is not None:
        values.add(_norm_value(chosen) if ix is None else chosen)
    if ix is None:
        # Math: the numbers in the hedging sentences.
        for sent in P.SENT_SPLIT.split(text[start:region_end]):
            if P.HEDGE.search(sent) or (not committed and P.HEDGE_QUESTION.search(sent)):
                values.update(_norm_value(n) for n in _NUM.findall(sent))
    else:
        values.update(v for _, _, v, neg in _mentions(text, start, region_end, ix) if not neg)
    return len(values) >= 2


_BULLET = re.compile(r"^[\s>*\-•·#]{0,8}(?:\d{1,2}[.)]\s{1,3})?")


def _after_refusal(text: str) -> int:
    """Where the text after the last refusal sentence starts (0 without one; len(text): nothing after)."""
    lo = max(0, len(text) - MENTION_WINDOW)
    last = None
    for n, m in enumerate(P.REFUSAL.finditer(text, lo)):
        if n >= 100:
            break
        last = m
    if last is None:
        return 0
    ends = [k for k in (text.find(ch, last.end()) for ch in ".!?\n。") if k >= 0]
    end = min(ends) + 1 if ends else len(text)
    # "As an AI, I have no feelings, but the review is positive": the same sentence goes on.
    turn = re.search(r"\b(?:but|however|that said|nonetheless)\b", text[last.end() : end], re.I)
    if turn:
        return last.end() + turn.end()
    return end if text[end:].strip() else len(text)


def _fallback_choice(text: str, question: str, ix: _Index) -> str:
    stripped = text.strip()
    # The whole response is the answer: "Sports.", "(C)", "B. α2γ2", "begins whisking them ...".
    if "\n" not in stripped and len(stripped) <= 300:
        status, value, rest = _parse_choice(stripped, ix)
        after = rest.lstrip(" \t")
        # "Paris." / "Paris, because ..." answer; "A wooden spoon is a poor conductor" only mentions.
        if (
            status == OK
            and (not after or after[0] in ".,;:!?)]-–—\"'”’(")
            and (not rest.strip(_EDGE + "()[]") or not _truncated(text))
        ):
            return value
    if _truncated(text):
        return NO_VALID_ANSWER
    # After a refusal ("As an AI, I have no feelings, but ..."), only what follows it can answer.
    lo = _after_refusal(text)
    if lo >= len(text):
        return NO_VALID_ANSWER
    # Lines that are nothing but an answer ("A) grateful"); several different ones list the options.
    lines_vals: set[str] = set()
    for n, line in enumerate(text[lo:].strip().split("\n")):
        if n >= 400:
            break
        line = line[:300]
        body = line[_BULLET.match(line).end() :].strip()
        if not body:
            continue
        status, value, rest = _parse_choice(body, ix)
        if status == OK and not rest.strip(_EDGE + "()[]"):
            lines_vals.add(value)
    if len(lines_vals) == 1:
        return lines_vals.pop()
    if len(lines_vals) > 1:
        return NO_VALID_ANSWER
    # The one candidate mentioned without negation ("Not lungs. gills."), if there is exactly one.
    lo = max(lo, len(text) - MENTION_WINDOW)
    qn = normalize_text(question[:MAX_QUESTION])
    values = set()
    for s, e, v, neg in _mentions(text, lo, len(text), ix):
        if neg:
            continue
        ls, le = text.rfind("\n", 0, s) + 1, text.find("\n", e)
        line = normalize_text(text[ls : le if le >= 0 else len(text)])
        if len(line) >= 20 and line in qn:
            continue  # a line quoting the question (its list of options)
        values.add(v)
    if len(values) == 1:
        return values.pop()
    return NO_VALID_ANSWER


def _fallback_math(text: str, question: str) -> str:
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) <= 200:
        status, value, rest = _parse_math(stripped, question)
        if status == OK and not rest.strip(_EDGE):
            return value
    if _truncated(text):
        return NO_VALID_ANSWER
    lo = _after_refusal(text)
    if lo >= len(text):
        return NO_VALID_ANSWER
    stripped = text[lo:].strip()
    # The last line with a number: its value after a label ("In total: 15,000 bottles"), after the
    # last "=", or its last number.
    lines = stripped[-MENTION_WINDOW:].split("\n")
    for line in reversed(lines[-50:]):
        if not any(ch.isdigit() for ch in line):
            continue
        line = line.strip()
        for sep in (":", "="):
            k = line.rfind(sep)
            if k >= 0 and any(ch.isdigit() for ch in line[k + 1 :]):
                status, value, _ = _parse_math(line[k + 1 :], question)
                if status == OK:
                    return value
        # "... = 72 clips in 2 months": the result of the last "=", else the line's last number.
        k = line.rfind("=")
        first_after = _MATH_TOKEN.search(line, k + 1) if k >= 0 else None
        tokens = [first_after] if first_after else list(_MATH_TOKEN.finditer(line))
        if tokens:
            value = _clean_math(tokens[-1].group(0), question)
            if _looks_math(value):
                return value
        break
    return NO_VALID_ANSWER


# ---------------------------------------------------------------------------------------------
# The extractor.


def extract(key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange) -> str:
    """The key answer `llm_output` commits to, or [No valid answer].

    `answer_range` is as parsed by xfinder_ray.records.parse_answer_range.
    """
    kat = (key_answer_type or "").strip()
    text = _prepare(llm_output, kat)
    if not text.strip() or is_no_valid_answer(text):
        return NO_VALID_ANSWER
    question = (question or "")[:MAX_QUESTION]
    ix = None if kat == MATH else _index(kat, answer_range)
    claims = _find_claims(text)
    text, claims = _cut_continuation(text, claims, question, ix)

    chosen: _Claim | None = None
    bad_after = False  # an "X or Y" or out-of-range answer after the chosen one
    weak_after: _Claim | None = None
    best_weak: _Claim | None = None
    best_initial: _Claim | None = None
    for n, c in enumerate(reversed(claims)):
        if n >= MAX_CLAIMS_PARSED:
            break
        _parse_claim(text, c, ix, question)
        if c.status == OK and c.tier >= P.NORMAL:
            chosen = c
            break
        if c.tier >= P.NORMAL and (c.status == AMBIG or (c.status == OUT and c.counts_out)):
            bad_after = True
        if c.status == OK and c.tier == P.WEAK and best_weak is None:
            best_weak = weak_after = c
        if c.status == OK and c.tier == P.INITIAL and best_initial is None:
            best_initial = c
    if bad_after:
        return NO_VALID_ANSWER
    if chosen is not None and weak_after is not None:
        # A weaker claim after a correction marker replaces the earlier answer.
        if P.CORRECTION.search(text, chosen.pos, weak_after.start):
            chosen = weak_after
    if chosen is None:
        if best_weak is not None:
            chosen = best_weak
        elif best_initial is not None:
            # "My first answer was 11, but let me check..." and then nothing: withdrawn.
            if _truncated(text) or P.CORRECTION.search(text, best_initial.pos):
                return NO_VALID_ANSWER
            chosen = best_initial
    if chosen is not None:
        retraction = None
        for n, r in enumerate(P.RETRACTION.finditer(text, chosen.pos, chosen.pos + MENTION_WINDOW)):
            if n >= 50:
                break
            retraction = r
        if retraction is not None:
            # "The answer is 78. Wait, I made an error. ... 3 * 32 = 96 miles." The withdrawn answer
            # is replaced by what follows, or by nothing.
            rest = text[retraction.end() :]
            return _fallback_math(rest, question) if ix is None else _fallback_choice(rest, question, ix)
        if _fluctuates(text, chosen.start, chosen.value, ix, committed=True):
            return NO_VALID_ANSWER
        return chosen.value
    answer = _fallback_math(text, question) if ix is None else _fallback_choice(text, question, ix)
    if answer != NO_VALID_ANSWER and _fluctuates(
        text, max(0, len(text) - MENTION_WINDOW), answer, ix, committed=False
    ):
        return NO_VALID_ANSWER
    return answer
