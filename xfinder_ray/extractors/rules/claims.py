"""Answer claims: phrases that commit to an answer, each with a tier, parsed lazily against the range."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.candidates import Index, mentions
from xfinder_ray.extractors.rules.keywords import Keywords, Occurrences
from xfinder_ray.extractors.rules.text import VALUE_WINDOW, lowered
from xfinder_ray.extractors.rules.values import (
    JUNK,
    NEG,
    OK,
    OUT,
    boxed_answer,
    clean_math,
    looks_math,
    parse_choice,
    parse_math,
    word_answer,
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


def known_below(c: Claim, tier: int) -> bool:
    """The claim's tier is known without parsing it, and below `tier`: a reader that only counts
    claims of `tier` and above need not parse it (claims are parsed lazily, each value costs µs)."""
    return c.tier != _CONTEXT and c.tier < tier


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
# A keyword that holds another ("am going", "m going") is left out: the shorter one is tested.
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
        "m going",  # and "am going"
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
    "closest": ("closest", "nearest"),
    "latin": ("respuesta", "réponse", "reponse", "risposta", "resposta", "antwort", "ответ"),
    # "one" counts only qualified ("the correct one"): a bare "is the one" is skipped below anyway.
    "bwd": (
        "answer",
        "option",
        "choice",
        "label",
        "correct one",
        "right one",
        "best one",
        "final one",
        "true one",
        "only one",
        "valid one",
        "possible one",
        "likely one",
        "appropriate one",
        "suitable one",
        "plausible one",
        "reasonable one",
        "logical one",
        "fitting one",
        "accurate one",
    ),
    "conclude_tail": (
        " is",  # and "it is", "that is"
        "it's",
        "it must",
        "we get",
        "we have",
        "that's",
        "that gives",
        "that makes",
    ),
    "correct": ("correct", "right", "best"),
    "bwd_weak": ("fits", "matches", "suits", "describes", "most"),
}


# The words FWD_ANSWER starts with (its answer nouns): it is matched where they occur, not scanned
# over the whole text -- a case-insensitive alternation scan costs ~50 ns a character in Python.
_ANSWER_NOUNS = ("answer", "label", "classif", "categor", "predict", "verdict", "sentiment", "output")
_MATH_ANSWER_NOUNS = ("answer", "predict")  # of _ANSWER_NOUNS, the ones a math answer is stated with
_VERB_STARTS = (
    "i ",
    "i'",
    "we ",
    "we'",
    "classify",
    "label",
    "categori",
    "tag ",
    "mark ",
    "that leaves",
    "is classified",
    "be classified",
)
_VERB_STARTS_MATH = tuple(w for w in _VERB_STARTS if not w.startswith("we"))
_CONCLUDE_STARTS = ("so", "thus", "therefore", "hence", "then")


def _anchored(
    pattern: re.Pattern[str], text: str, low: str, occ: Occurrences, words: tuple[str, ...]
) -> list[re.Match[str]]:
    """pattern's matches that start where one of `words` occurs in text (low: " " + text.lower(),
    occ: its keywords).
    Every alternative of the patterns anchored here starts with \\b and a letter, so a word inside
    another word ("so" in "also") is passed over without trying the pattern."""
    if len(low) != len(text) + 1:  # lower() changed the length: positions would not line up
        return list(pattern.finditer(text))
    found: dict[int, re.Match[str]] = {}
    for positions in occ.each(words):
        for k in positions:
            if low[k - 1] not in _ASCII_WORD:  # low[k - 1] is text[k - 2], or the " " before the text
                m = pattern.match(text, k - 1)
                if m is not None:
                    found.setdefault(m.start(), m)
    return [found[k] for k in sorted(found)]


# Characters \\w matches whatever the case (lower-casing keeps them word characters).
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


# Patterns that start a few words before their keyword: matched at the starts `lead` finds in the
# `back` characters before each keyword occurrence.
_SO_WORDS = (
    "so",
    "thus",
    "therefore",
    "hence",
    "ergo",
    "overall",
    "in conclusion",
    "in summary",
    "to sum up",
)
_SO_LEAD = re.compile(r"(?:^|(?<=[.!?\n]))[ \t]{0,3}\Z")


def _sentence_start(text: str, at: int) -> bool:
    """Whether _SO_LEAD matches right before text[at]: the text's start or a sentence end, then at
    most 3 spaces or tabs."""
    j, spaces = at, 0
    while spaces < 3 and j > 0 and text[j - 1] in " \t":
        j -= 1
        spaces += 1
    return j == 0 or text[j - 1] in ".!?\n"


def _after_space(text: str, at: int) -> bool:
    """What _WEAK_LEAD needs right before the word: whitespace."""
    return at > 0 and text[at - 1].isspace()


_WEAK_NOUNS = ("result", "solution", "response", "root", "zero", "answers")
_WEAK_LEAD = re.compile(r"\b(?:the|my|final|its|their)\s{1,3}\Z", re.I)
_BWD_NOUNS = ("answer", "option", "choice", "label", "one")
_QA_HINT = re.compile(r"A\d{0,3}\s{0,3}[:：]")  # case-sensitive literal start: a fast pre-check for QA_A
_BWD_LEAD = re.compile(r"\b(?:is|must|would|should|seems|has)\b", re.I)


def _anchored_back(
    pattern: re.Pattern[str],
    text: str,
    low: str,
    occ: Occurrences,
    words: tuple[str, ...],
    lead: re.Pattern[str],
    back: int,
    before: Callable[[str, int], bool] | None = None,
    after_word: tuple[str, ...] = (),
) -> list[re.Match[str]]:
    """pattern's matches that cover an occurrence of one of `words`, found from the starts `lead`
    matches within `back` characters before it -- instead of scanning pattern over all of text.
    `before(text, at)`: whether a lead can end right before the word at text[at] at all;
    `after_word`: the words (lower case) one of which a match has
    right before the occurrence, whitespace aside. An occurrence failing either is passed over
    without the regex."""
    if len(low) != len(text) + 1:
        return list(pattern.finditer(text))
    if after_word and not _finds_every_match(text, low):
        after_word = ()  # (a word re.I matches may not be in low as written)
    found: dict[int, re.Match[str]] = {}
    for positions in occ.each(words):
        for k in positions:
            at = k - 1  # the word's position in text
            if before is not None and not before(text, at):
                continue
            if after_word:
                j = k  # low[:j] is text[:at] and the " " before it
                while j > 1 and low[j - 1].isspace():
                    j -= 1
                if not low.endswith(after_word, 1, j):
                    continue
            lo = max(0, at - back)
            if lead.pattern.endswith("\\Z"):  # the start right before the word
                m0 = lead.search(text, lo, at)
                starts = [m0.start()] if m0 else []
            else:
                starts = [m0.start() for m0 in lead.finditer(text, lo, at + 1)]
            for st in starts:
                if st in found:
                    continue
                m = pattern.match(text, st)
                if m is not None and m.end() > at:
                    found[st] = m
    return [found[k] for k in sorted(found)]


_HEADING_NOUNS = ("answer", "conclusion", "label", "classif", "predict")  # one of which P.HEADING needs


def find_claims(text: str, math: bool = False) -> list[Claim]:
    """Every claim phrase in text, in order (values are parsed lazily, see parse_claim)."""
    claims: dict[int, Claim] = {}
    low = " " + lowered(text)
    occ = _KEYWORDS.scan(low)

    def needs(name: str) -> bool:
        return occ.has_any(_NEEDS[name])

    def add(c: Claim) -> None:
        claims.setdefault(c.start, c)  # the first pattern below to claim a position keeps it

    if "box" in low:
        for m in P.BOXED.finditer(text):
            add(Claim(m.start(), m.start(), P.STRONG))
    if "####" in text:
        for m in P.HASHES.finditer(text):
            add(Claim(m.start(), m.end(), P.STRONG))
    if needs("strong_verb"):
        for m in finditer_anchored(P.FWD_STRONG_VERB, text, P.FWD_STRONG_VERB_ANCHORS, low=low, occ=occ):
            add(Claim(m.start(), m.end(), P.STRONG))
    for m in _anchored(P.FWD_ANSWER, text, low, occ, _ANSWER_NOUNS):
        if (
            math
            and not text.startswith(_MATH_ANSWER_NOUNS, m.start())
            and not low.startswith(_MATH_ANSWER_NOUNS, m.start() + 1)
        ):
            continue  # "the output: v = v", "label: x" name no math answer
        add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("option"):
        for m in _option_claims(text, low, occ):
            # "the best option is B", "My choice: B"; not "this choice is a common distractor", nor
            # a list's heading ("Now, consider each choice:\n(A) means ...").
            if m.group("colon") and _EACH_BEFORE.search(text, max(0, m.start() - 12), m.start()):
                continue
            if (
                m.group("colon")
                or m.group("best")
                or P.QUALIFIER_BEFORE.search(text, max(0, m.start() - 40), m.start())
            ):
                add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else _CONTEXT))
    if needs("weak_noun"):
        for m in _anchored_back(P.FWD_WEAK_NOUN, text, low, occ, _WEAK_NOUNS, _WEAK_LEAD, 12, _after_space):
            add(Claim(m.start(), m.end(), P.HEDGED if m.group("hedge") else P.WEAK, counts_out=False))
    if needs("verb"):
        for m in _anchored(P.FWD_VERB, text, low, occ, _VERB_STARTS_MATH if math else _VERB_STARTS):
            if low.startswith("we", m.start() + 1):
                # "Therefore, we choose (C).": an option that ends its sentence. Not a step of the
                # working ("we choose the position of the cut", "If we choose a threshold of 6"); in
                # math never looked for ("we choose n = 5").
                add(Claim(m.start(), m.end(), _CONTEXT, counts_out=False, tight=True))
                continue
            add(Claim(m.start(), m.end(), _CONTEXT))
    if needs("superlative"):
        for m in finditer_anchored(P.FWD_SUPERLATIVE, text, P.FWD_SUPERLATIVE_ANCHORS, low=low, occ=occ):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    closest: list[tuple[int, int]] = []
    if not math and needs("closest"):
        for m in finditer_anchored(P.FWD_CLOSEST, text, P.FWD_CLOSEST_ANCHORS, low=low, occ=occ):
            add(_closest_claim(text, m))
            closest.append((m.start(), m.end()))
    if needs("conclude"):
        for m in _anchored_back(P.FWD_SO, text, low, occ, _SO_WORDS, _SO_LEAD, 4, _sentence_start):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False, tight=True))
        for m in (
            _anchored(P.FWD_CONCLUDE, text, low, occ, _CONCLUDE_STARTS) if needs("conclude_tail") else ()
        ):
            add(Claim(m.start(), m.end(), P.WEAK, counts_out=False))
    if needs("latin"):
        for m in P.FWD_MULTI_LATIN.finditer(text):
            add(Claim(m.start(), m.end(), _CONTEXT))
    if not text.isascii() and P.HAS_CJK.search(text):
        for m in P.FWD_MULTI_CJK.finditer(text):
            add(Claim(m.start(), m.end(), _CONTEXT))
        for m in P.BWD_WEAK_CJK.finditer(text):
            add(Claim(m.start(), m.start(), P.WEAK, backward=True))
    if "#" in text and (occ.has_any(_HEADING_NOUNS) or not _finds_every_match(text, low)):
        for m in _heading_claims(text):
            add(Claim(m.start(), m.end(), P.NORMAL))
    # "A: 75" at a line start answers when the response uses Q:/A: turns, or for math (a number).
    if _QA_HINT.search(text) and (math or P.QA_Q.search(text)):
        for m in P.QA_A.finditer(text):
            add(Claim(m.start(), m.end(), P.NORMAL))
    if needs("bwd"):
        for m in _anchored_back(
            P.BWD, text, low, occ, _BWD_NOUNS, _BWD_LEAD, 90, after_word=P.BWD_NOUN_AFTER
        ):
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
        for m in _backward_correct(text, low, occ):
            add(Claim(m.start(), m.start(), P.NORMAL, backward=True))
    if needs("bwd_weak"):
        for m in _backward_weak(text, low, occ):
            add(Claim(m.start(), m.start(), P.WEAK, backward=True))
    for lo, hi in closest:  # "the closest answer is": one claim, the closest one, not also "answer is"
        for k in [k for k in claims if lo < k < hi]:
            del claims[k]
    return [claims[k] for k in sorted(claims)]


# BWD_CORRECT and BWD_WEAK as pattern.finditer(text) gives them, but tried only where they can start:
# "is"/"are" just before "correct", "right", "best"; "fits", "matches", "suits", "describes"; "is"
# just before "most" (a case-insensitive alternation costs ~50 ns a character when scanned).
_IS_ARE = re.compile(r"\b(?:is|are)\b", re.I)
_IS = re.compile(r"\bis\b", re.I)
_BWD_WEAK_VERBS = ("fits", "matches", "suits", "describes")


def _backward_correct(text: str, low: str, occ: Occurrences) -> list[re.Match[str]]:
    if not _finds_every_match(text, low):
        return list(P.BWD_CORRECT.finditer(text))
    return finditer_from(P.BWD_CORRECT, text, _lead_starts(text, occ, _NEEDS["correct"], _IS_ARE, 12))


def _backward_weak(text: str, low: str, occ: Occurrences) -> list[re.Match[str]]:
    if not _finds_every_match(text, low):
        return list(P.BWD_WEAK.finditer(text))
    starts = _word_starts(low, occ, _BWD_WEAK_VERBS) + _lead_starts(text, occ, ("most",), _IS, 11)
    return finditer_from(P.BWD_WEAK, text, starts)


def _heading_claims(text: str) -> list[re.Match[str]]:
    """P.HEADING.finditer(text), tried only at the starts of lines that begin with up to 8 spaces or
    tabs and a "#" (where every match starts)."""
    starts = []
    k = text.find("#")
    while k >= 0:
        line = text.rfind("\n", 0, k) + 1
        if k - line <= 8 and not text[line:k].strip(" \t"):
            starts.append(line)
        end = text.find("\n", k)
        k = text.find("#", end) if end >= 0 else -1
    return finditer_from(P.HEADING, text, starts)


def _closest_claim(text: str, m: re.Match[str]) -> Claim:
    """A closest-option claim; disowned in its line ("..., but it is not the correct answer") it
    answers outside the options, cut off in a "but" clause there ("(H) with 0.800 atm, but since
    the") it is withdrawn (hedged)."""
    end = m.end()
    nl = text.find("\n", end, end + P.CLOSEST_LINE)
    stop = nl if nl >= 0 else min(len(text), end + P.CLOSEST_LINE)
    if P.CLOSEST_DISOWNED.search(text, end, stop):
        return Claim(m.start(), end, P.NORMAL, status=OUT)
    # Stricter than truncated(): the claim's own line ends the response without a closing mark,
    # however short ("The closest is J, but maybe": truncated() spares a line under seven words).
    if not text[stop:].strip() and _BUT.search(text, end, stop) and text.rstrip()[-1:] not in _CLOSING_MARKS:
        return Claim(m.start(), end, P.HEDGED)
    return Claim(m.start(), end, P.NORMAL)


_CLOSING_MARKS = tuple(".!?)]\"'*`$")
_BUT = re.compile(r",\s{0,3}(?:but|however|although|though)\b", re.I)


_EACH_BEFORE = re.compile(r"\b(?:each|every|any|another|other)\s{1,3}$", re.I)


def _option_claims(text: str, low: str, occ: Occurrences) -> list[re.Match[str]]:
    """FWD_OPTION.finditer(text), tried where its nouns (the "option" keywords) start a word: every
    match starts at one."""
    if not _finds_every_match(text, low):
        return list(P.FWD_OPTION.finditer(text))
    return finditer_from(P.FWD_OPTION, text, _word_starts(low, occ, _NEEDS["option"]))


def _finds_every_match(text: str, low: str) -> bool:
    """Whether searching low (" " + text.lower()) for an ASCII word finds every place a re.I pattern
    matches it in text: lower() kept the length, and text holds no "ſ" or dotless "ı" (which re.I
    matches as "s" and "i" but lower() keeps)."""
    return len(low) == len(text) + 1 and (text.isascii() or ("ſ" not in text and "ı" not in text))


def _word_starts(low: str, occ: Occurrences, words: tuple[str, ...]) -> list[int]:
    """Where one of `words` starts in text, other than inside a word (low: " " + text.lower())."""
    return [k - 1 for positions in occ.each(words) for k in positions if low[k - 1] not in _ASCII_WORD]


def _lead_starts(
    text: str, occ: Occurrences, words: tuple[str, ...], lead: re.Pattern[str], back: int
) -> list[int]:
    """Where `lead` matches within `back` characters before an occurrence of one of `words`."""
    starts = []
    for positions in occ.each(words):
        for k in positions:
            at = k - 1
            starts.extend(m.start() for m in lead.finditer(text, max(0, at - back), at + 1))
    return starts


def finditer_from(
    pattern: re.Pattern[str], text: str, starts: list[int], endpos: int | None = None
) -> list[re.Match[str]]:
    """pattern.finditer(text, 0, endpos) when every match of pattern starts at one of `starts`: the
    matches there, each one only where the one before it has ended (as finditer takes them)."""
    found: list[re.Match[str]] = []
    end = 0
    endpos = len(text) if endpos is None else endpos
    for st in sorted(set(starts)):
        if st >= end:
            m = pattern.match(text, st, endpos)
            if m is not None:
                found.append(m)
                end = m.end()
    return found


def finditer_anchored(
    pattern: re.Pattern[str],
    text: str,
    anchors: tuple[P.Anchor, ...],
    pos: int = 0,
    low: str | None = None,
    occ: Occurrences | None = None,
) -> list[re.Match[str]]:
    """list(pattern.finditer(text, pos)), trying pattern only where `anchors` (see patterns.Anchor)
    say one of its matches can start (low: " " + text.lower() and occ: its keywords, where the
    caller has them)."""
    if pos:
        low = occ = None
    starts = _anchor_starts(text, anchors, pos, len(text), low, occ)
    if starts is None:
        return list(pattern.finditer(text, pos))
    return finditer_from(pattern, text, starts)


def search_anchored(
    pattern: re.Pattern[str], text: str, anchors: tuple[P.Anchor, ...], pos: int, endpos: int
) -> re.Match[str] | None:
    """pattern.search(text, pos, endpos), trying pattern only where `anchors` say a match can start:
    search takes the first position where pattern.match(text, position, endpos) succeeds."""
    starts = _anchor_starts(text, anchors, pos, endpos)
    if starts is None:
        return pattern.search(text, pos, endpos)
    for st in starts:
        m = pattern.match(text, st, endpos)
        if m is not None:
            return m
    return None


def _anchor_starts(
    text: str,
    anchors: tuple[P.Anchor, ...],
    pos: int,
    endpos: int,
    low: str | None = None,
    occ: Occurrences | None = None,
) -> list[int] | None:
    """The positions in text[pos:endpos] where `anchors` allow a match to start, in order (None: lower()
    does not line up with what re.I matches there, so every position must be tried). A match lies
    inside text[pos:endpos], so its first word and keyword are found in that stretch lower-cased."""
    region = text[pos:endpos]
    if low is None or len(region) != len(text):
        low = " " + region.lower()  # low[k] is text[pos + k - 1]; the " " stands for whatever is before
        occ = None
    if not _finds_every_match(region, low):
        return None
    starts: set[int] = set()
    for firsts, keywords, near, far, word in anchors:
        for w in keywords:
            for k in occ.starts(w) if occ is not None else _find_loop(low, w):
                if not word or low[k - 1] not in _ASCII_WORD:
                    for f in firsts:  # a start `near`..`far` characters before the keyword
                        end = k - near + len(f)
                        q = low.find(f, max(1, k - far), end)
                        while q > 0:
                            starts.add(pos + q - 1)
                            q = low.find(f, q + 1, end)
    return sorted(starts)


def _find_loop(low: str, w: str) -> Iterator[int]:
    """Where w occurs in low from index 1, each occurrence after the previous one's end."""
    k = low.find(w, 1)
    while k > 0:
        yield k
        k = low.find(w, k + len(w))


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


FINAL_SENTENCE = 300  # characters: a claim this close to the end is the final statement


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
        # the last line, or the line before a short sign-off ("I think that's the answer.")
        final = len(text) - c.pos <= FINAL_SENTENCE and text.count("\n", c.pos) <= 2
        c.status, c.value, rest = parse_math(head, question, final=final)
        if c.status == JUNK and c.tier >= P.STRONG:
            word = boxed_answer(head, question) or word_answer(head)
            if word is not None:
                c.status, c.value, rest = OK, word, ""
        elif c.status == JUNK and c.tier >= P.NORMAL:
            # "So answer: Evelyn." to "Which student has the greatest average speed?" (her name is in
            # the question's figure): a word the question names answers after any explicit claim.
            word = word_answer(head)
            if word is not None and _named_in(word, question):
                c.status, c.value, rest = OK, word, ""
    else:
        c.status, c.value, rest = parse_choice(head, ix)
    if c.tight and c.status == OK:
        after = rest.lstrip(" \t\"'”’)]*_")
        if after and after[0] not in ".!;\n":
            c.status, c.value = JUNK, ""


def _named_in(word: str, question: str) -> bool:
    """`word` (one to three words) occurs in the question as whole words, case aside."""
    return re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", question, re.I) is not None


# Every keyword find_claims tests or walks, found in one pass (keywords.py): a word list walked with
# Occurrences.each or tested with has_any is one of these (a list left out would never be found).
_KEYWORDS = Keywords(
    w
    for words in (
        *_NEEDS.values(),
        _HEADING_NOUNS,
        _ANSWER_NOUNS,
        _VERB_STARTS,
        _CONCLUDE_STARTS,
        _SO_WORDS,
        _WEAK_NOUNS,
        _BWD_NOUNS,
        _BWD_WEAK_VERBS,
        *(a[1] for a in (*P.FWD_STRONG_VERB_ANCHORS, *P.FWD_SUPERLATIVE_ANCHORS)),
    )
    for w in words
)
