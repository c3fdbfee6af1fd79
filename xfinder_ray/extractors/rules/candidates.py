"""The answer range as an index (candidates' texts and letters) and candidate mentions in free text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.text import MAX_MENTION_CANDIDATES
from xfinder_ray.parsing import normalize_text
from xfinder_ray.records import AnswerRange

ALPHA, MATH = "alphabet_option", "math"
EDGE = " .,;:!?。，；：！？" + "\"'`“”‘’「」" + "*_"


# Case and separators folded without changing the length, so that positions in the folded text are
# positions in the original: whitespace and the joiners "/", "&", "-" all read as one space each.
_FOLDS_TO_SPACE = "\t\n\r\f\v\u00a0\u2009\u202f/&-"
_FOLD = str.maketrans(dict.fromkeys(_FOLDS_TO_SPACE, " "))
MAX_GAP = 5  # spaces allowed between two words of a candidate ("Sci - Tech", "stay  home")


def fold(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two ("İ"): keep those as they are
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.translate(_FOLD)


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


@dataclass(frozen=True)
class Hit:
    """A candidate's text found in a string (the interface of a regex match that callers use)."""

    begin: int
    finish: int
    answer: str
    text: str

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish

    def group(self, _: int = 0) -> str:
        return self.text[self.begin : self.finish]


class CandidateTexts:
    """Candidate texts matched by plain string search over folded text: built once per answer range
    in microseconds, where a regex alternation of the texts took milliseconds to compile per range."""

    def __init__(self, forms: list[tuple[list[str], str]]):
        """forms: (words, answer), the candidate text folded and split (words not empty)."""
        # Longest first, so "O(n log n)" wins over "O(n)" and "a horse" over "horse".
        lengths = [len(" ".join(w)) for w, _ in forms]
        order = sorted(range(len(forms)), key=lambda i: -lengths[i])  # stable
        self.forms = [forms[i] for i in order]
        self.longest = max(lengths, default=0)

    def __bool__(self) -> bool:
        return bool(self.forms)

    @staticmethod
    def _walk(folded: str, pos: int, words: list[str]) -> int:
        """End of `words` matched at folded[pos:], or -1."""
        for n, w in enumerate(words):
            if n:
                gap = 0
                while gap < MAX_GAP and pos < len(folded) and folded[pos] == " ":
                    pos += 1
                    gap += 1
                if gap == 0:
                    return -1
            if not folded.startswith(w, pos):
                return -1
            pos += len(w)
        return pos

    def match(self, s: str) -> Hit | None:
        """The longest candidate text at the start of s, ending at a word boundary."""
        folded = fold(s[: self.longest * 2 + 8])
        for words, answer in self.forms:
            end = self._walk(folded, 0, words)
            if end >= 0 and not (end < len(s) and _ascii_alnum(s[end])):
                return Hit(0, end, answer, s)
        return None

    def finditer(self, text: str, lo: int, hi: int) -> list[Hit]:
        """Non-overlapping candidate texts in text[lo:hi] between word boundaries, in order."""
        folded = fold(text[lo:hi])
        hits: list[tuple[int, int, str]] = []
        for words, answer in self.forms:
            first = words[0]
            k = folded.find(first)
            while k >= 0:
                end = self._walk(folded, k, words)
                if (
                    end >= 0
                    and not (k > 0 and _ascii_alnum(text[lo + k - 1]))
                    and not (end < len(folded) and _ascii_alnum(text[lo + end]))
                    and not (k == 0 and lo > 0 and _ascii_alnum(text[lo - 1]))
                ):
                    hits.append((k, -end, answer))
                k = folded.find(first, k + 1)
        hits.sort()
        out: list[Hit] = []
        last_end = -1
        for k, neg_end, answer in hits:
            if k >= last_end:
                out.append(Hit(lo + k, lo - neg_end, answer, text))
                last_end = -neg_end
        return out


class Index:
    """The answer range, indexed. Letters and values are read at once; the text matchers are built on
    first use, because most real responses (a clean JSON letter) never need them."""

    def __init__(self, kat: str, items: tuple[tuple[str, str], ...]):
        self.kat = kat
        self.items = items
        self.values = tuple(a for a, _ in items)  # letters for alphabet_option, else candidates
        self.letters = {a.upper(): a for a, _ in items} if kat == ALPHA else {}  # upper -> range's letter

    # The option texts' forms and matchers are built on first use, each on its own: most responses
    # name a letter, which needs at most the prefix matcher (is "B. <text>" another option's text?),
    # and building all of them for every row of a multiple-choice set cost more than reading it.
    @cached_property
    def _aliases(self) -> list[tuple[str, str]]:  # (text, answer)
        return _aliases(self.kat, self.items)

    @cached_property
    def own_key(self) -> dict[str, str]:  # answer -> key_of(its text)
        own: dict[str, str] = {}
        for core, answer in self._aliases:
            if answer not in own:
                own[answer] = key_of(core)
        return own

    @cached_property
    def _prefix_forms(self) -> list[tuple[list[str], str, int]]:  # (folded words, answer, len(text))
        folded = ((fold(core).split(), answer, len(core)) for core, answer in self._aliases)
        return [f for f in folded if f[0]]

    @cached_property
    def prefix_re(self) -> CandidateTexts | None:  # a candidate text at the start of a string
        texts = CandidateTexts([(w, a) for w, a, _ in self._prefix_forms])
        return texts if texts else None

    @cached_property
    def _first_chars(self) -> frozenset[str]:
        """The folded first character of each candidate text (as prefix_re's forms start)."""
        firsts = (fold(core.lstrip(_FOLDS_TO_SPACE + " ")[:1]) for core, _ in self._aliases)
        return frozenset(c for c in firsts if c)

    def match_prefix(self, s: str) -> Hit | None:
        """prefix_re.match(s) (None without candidate texts). A string whose first character starts
        no candidate text is decided without building the matcher: a claimed "(B)" rarely needs it."""
        if not s or fold(s[:1]) not in self._first_chars:
            return None
        return self.prefix_re.match(s) if self.prefix_re is not None else None

    @cached_property
    def mention_re(self) -> CandidateTexts | None:  # candidate texts anywhere (3+ characters)
        if len(self.items) > MAX_MENTION_CANDIDATES:
            return None
        texts = CandidateTexts([(w, a) for w, a, n in self._prefix_forms if n >= 3])
        return texts if texts else None

    @cached_property
    def numeric(self) -> dict[str, tuple[str, ...]]:  # numeric_key(text) -> the options with it
        keys: dict[str, tuple[str, ...]] = {}
        for answer, text in self.items:
            key = numeric_key(text)
            if key:
                keys[key] = (*keys.get(key, ()), answer)
        return keys


_NUMERIC_START = re.compile(r"\s*[-−]?\s?\$?\s?\d")
# What a number's written form varies in: LaTeX upright-text commands and spacing, "$", braces,
# "~", spaces, thousands separators.
_KEY_NOISE = re.compile(r"\\(?:mathrm|text|rm|mbox)\b|\\[,;:! ]|[\s${}~]|(?<=\d),(?=\d{3}\b)")


def numeric_key(text: str) -> str | None:
    """The comparison form of a value that starts with a number ("$1,775.32" -> "1775.32", "15.42
    psia" and "15.42psia" -> "15.42psia", "50.7$\\mathrm{atm}$" -> "50.7atm"); None otherwise."""
    if len(text) > 120 or not _NUMERIC_START.match(text):
        return None
    return _KEY_NOISE.sub("", text).replace("−", "-").lower().rstrip(".") or None


_JOINER = re.compile(r"(?<=[^\W\d_])\s{0,2}[/&\-]\s{0,2}(?=[^\W\d_])")


def key_of(text: str) -> str:
    """The lookup form of a candidate: normalize_text, and "Sci/Tech" == "Sci-Tech" == "sci tech"."""
    return _JOINER.sub(" ", normalize_text(text))


def index_for(kat: str, answer_range: AnswerRange) -> Index:
    if kat == ALPHA:
        items = tuple((str(letter).strip(), str(text)) for letter, text in answer_range)
    else:
        items = tuple((str(c), str(c)) for c in answer_range)
    return _build_index(kat, items)


@lru_cache(maxsize=4096)
def _build_index(kat: str, items: tuple[tuple[str, str], ...]) -> Index:
    return Index(kat, items)


def _aliases(kat: str, items: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """(text, answer) for each candidate text a response may name an answer by: the texts whose
    key_of is not empty."""
    aliases: list[tuple[str, str]] = []
    for answer, text in items:
        core = " ".join(unicodedata.normalize("NFKC", text).split()).strip(EDGE)
        # key_of strips what EDGE strips: an ASCII text left non-empty has a key (no need to build it)
        if not core or (not core.isascii() and not key_of(core)):
            continue
        aliases.append((core, answer))
        if kat != ALPHA and core.lower().startswith("to ") and len(core) > 5:
            # SIQA-style "to stay home" is also answered as "stay home" (and vice versa, in _parse_label).
            aliases.append((core[3:], answer))
    return aliases


_LETTER_MENTION = re.compile(
    r"\((?P<a>[A-Za-z])\)"
    r"|(?i:\b(?:option|choice|answer|letter))\s{0,3}[(\[]?(?P<b>[A-Z])\b[)\]]?"
    r"|(?<![A-Za-z0-9'’])(?P<c>[A-Z])(?![A-Za-z0-9'’])"
)
_NEXT_WORD = re.compile(r"\s{1,3}([a-z][a-z']{0,20})")


def is_article(s: str, end: int) -> bool:
    """'A'/'I' followed by a lowercase word that is not a verb or conjunction: the article/pronoun."""
    m = _NEXT_WORD.match(s, end)
    return bool(m) and m.group(1) not in P.VERBISH


def _is_negated(text: str, s: int, e: int) -> bool:
    before = text[max(0, s - 40) : s]
    cut = max(before.rfind(ch) for ch in ".!?\n;。")
    if cut >= 0:
        before = before[cut + 1 :]
    return bool(P.NEG_BEFORE.search(before) or P.NEG_AFTER.match(text, e, min(len(text), e + 80)))


def mentions(
    text: str, lo: int, hi: int, ix: Index, bare_letters: bool = True
) -> list[tuple[int, int, str, bool]]:
    """Candidate mentions in text[lo:hi]: (start, end, answer, negated), in order. Without
    `bare_letters`, an option letter counts only decorated: "(B)", "option B"."""
    found: list[tuple[int, int, str]] = []
    if ix.mention_re is not None:
        found.extend((m.start(), m.end(), m.answer) for m in ix.mention_re.finditer(text, lo, hi))
    if ix.kat == ALPHA:
        spans = [(s, e) for s, e, _ in found]
        for m in _LETTER_MENTION.finditer(text, lo, hi):
            raw = m.group("a") or m.group("b") or m.group("c")
            if raw.upper() not in ix.letters or (m.group("c") and not bare_letters):
                continue
            if raw.islower() and ix.letters[raw.upper()] != raw:
                continue  # "(i)", "(a)" in working: labels, roman numerals, symbols -- the options are capitals
            if (
                m.group("c")
                and raw in "AI"
                and (is_article(text, m.end()) or text[m.end() : m.end() + 1] == "'")
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
