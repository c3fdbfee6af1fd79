"""Answer claims: phrases that commit to an answer, each with a tier, parsed lazily against the range."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.candidates import Index, mentions
from xfinder_ray.extractors.rules.text import VALUE_WINDOW
from xfinder_ray.extractors.rules.values import (
    JUNK,
    NEG,
    OK,
    clean_math,
    looks_math,
    parse_choice,
    parse_math,
)


@dataclass
class Claim:
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


def find_claims(text: str, math: bool = False) -> list[Claim]:
    """Every claim phrase in text, in order (values are parsed lazily, see parse_claim)."""
    claims: dict[int, Claim] = {}
    low = " " + text.lower()

    def needs(name: str) -> bool:
        return any(w in low for w in _NEEDS[name])

    def add(c: Claim) -> None:
        claims.setdefault(c.start, c)  # the first pattern below to claim a position keeps it

    if "box" in low:
        for m in P.BOXED.finditer(text):
            add(Claim(m.start(), m.start(), P.STRONG))
    if "####" in text:
        for m in P.HASHES.finditer(text):
            add(Claim(m.start(), m.end(), P.STRONG))
    if needs("strong_verb"):
        for m in P.FWD_STRONG_VERB.finditer(text):
            add(Claim(m.start(), m.end(), P.STRONG))
    for m in P.FWD_ANSWER.finditer(text):
        add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("option"):
        for m in P.FWD_OPTION.finditer(text):
            # "the best option is B", "My choice: B"; not "this choice is a common distractor".
            if m.group("colon") or P.QUALIFIER_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("weak_noun"):
        for m in P.FWD_WEAK_NOUN.finditer(text):
            add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else P.WEAK, counts_out=False))
    if needs("verb"):
        for m in P.FWD_VERB.finditer(text):
            add(Claim(m.start(), m.end(), _CONTEXT))
    if needs("superlative"):
        for m in P.FWD_SUPERLATIVE.finditer(text):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    if needs("conclude"):
        for m in P.FWD_SO.finditer(text):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False, tight=True))
        for m in P.FWD_CONCLUDE.finditer(text):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    if needs("latin"):
        for m in P.FWD_MULTI_LATIN.finditer(text):
            add(Claim(m.start(), m.end(), _CONTEXT))
    if P.HAS_CJK.search(text):
        for m in P.FWD_MULTI_CJK.finditer(text):
            add(Claim(m.start(), m.end(), _CONTEXT))
        for m in P.BWD_WEAK_CJK.finditer(text):
            add(Claim(m.start(), m.start(), P.WEAK, backward=True))
    if "#" in text:
        for m in P.HEADING.finditer(text):
            add(Claim(m.start(), m.end(), P.NORMAL))
    # "A: 75" at a line start answers when the response uses Q:/A: turns, or for math (a number).
    if math or P.QA_Q.search(text):
        for m in P.QA_A.finditer(text):
            add(Claim(m.start(), m.end(), P.NORMAL))
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
            add(Claim(start, start, tier, backward=True))
    if needs("correct"):
        for m in P.BWD_CORRECT.finditer(text):
            add(Claim(m.start(), m.start(), P.NORMAL, backward=True))
    if needs("bwd_weak"):
        for m in P.BWD_WEAK.finditer(text):
            add(Claim(m.start(), m.start(), P.WEAK, backward=True))
    return [claims[k] for k in sorted(claims)]


_MATH_TAIL = re.compile(
    r"(\$[^$\n]{1,200}\$|[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s{0,3}/\s{0,3}\d+)?)\W{0,4}$"
)


def _parse_backward(text: str, c: Claim, ix: Index | None, question: str) -> tuple[str, str]:
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
        value = clean_math(m.group(1), question)
        return (OK, value) if looks_math(value) else (JUNK, "")
    tail_end = c.start
    while tail_end > seg_start and text[tail_end - 1] in " \t\"'“”‘’)]*_":
        tail_end -= 1
    ments = mentions(text, seg_start, c.start, ix)
    if not ments:
        return JUNK, ""
    s, e, value, negated = ments[-1]
    if e < tail_end:
        return JUNK, ""  # the claim is about something said after the last candidate
    if negated:
        return NEG, ""
    return OK, value


def parse_claim(text: str, c: Claim, ix: Index | None, question: str) -> None:
    if c.status:
        return
    if c.tier == _CONTEXT:
        c.tier = _tier_from_context(text, c.start, c.pos)
    if c.backward:
        c.status, c.value = _parse_backward(text, c, ix, question)
        return
    head = text[c.pos : c.pos + VALUE_WINDOW]
    if ix is None:
        c.status, c.value, rest = parse_math(head, question)
    else:
        c.status, c.value, rest = parse_choice(head, ix)
    if c.tight and c.status == OK:
        after = rest.lstrip(" \t\"'”’)]*_")
        if after and after[0] not in ".!;\n":
            c.status, c.value = JUNK, ""
