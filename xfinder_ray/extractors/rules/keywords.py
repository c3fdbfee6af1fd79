"""Where the claim keywords occur in a text: every keyword found in one pass.

The claim scans (claims.py) test ~100 keywords per text and walk the occurrences of ~50 of them.
One `str.find` pass per keyword costs ~0.5 ns a character, so a long final part paid ~60 µs in
keyword scans alone; one Aho-Corasick pass over all of them (ahocorasick_rs, Rust) finds the same
occurrences in ~4 µs. The positions are exactly those of the `str.find` loops they replace.
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick_rs


class Keywords:
    """A fixed set of lower-case keywords, searched for together."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(sorted(set(words)))
        self.vocabulary = frozenset(self.words)
        self._automaton = ahocorasick_rs.AhoCorasick(self.words)
        # Words that can overlap themselves ("aba" in "ababa"): only their occurrences need thinning.
        self.self_overlapping = frozenset(
            w for w in self.words if any(w[i:] == w[: len(w) - i] for i in range(1, len(w)))
        )

    def scan(self, low: str) -> Occurrences:
        """Every occurrence of every keyword in `low`, overlapping ones included."""
        at: dict[str, list[int]] = {}
        words = self.words
        try:
            matches = self._automaton.find_matches_as_indexes(low, overlapping=True)
        except UnicodeEncodeError:  # a lone surrogate ("\ud800"), which UTF-8 cannot hold
            return Occurrences({w: found for w in words if (found := find_all(low, w))}, self)
        for i, start, _end in matches:
            at.setdefault(words[i], []).append(start)
        return Occurrences(at, self)


class Occurrences:
    """The keyword positions in one text (a character index, as `str.find` gives it)."""

    def __init__(self, at: dict[str, list[int]], keywords: Keywords) -> None:
        self._at = at
        self._keywords = keywords

    def has_any(self, words: tuple[str, ...]) -> bool:
        """`any(w in low for w in words)`."""
        return not self._at.keys().isdisjoint(words)

    def each(self, words: tuple[str, ...]) -> list[list[int]]:
        """starts(word) for each of `words` that occurs, in order (a word absent costs one dict test:
        most are absent from most texts). `words` must be among the scanned keywords."""
        at = self._at
        return [self.starts(w) for w in words if w in at]

    def starts(self, word: str) -> list[int]:
        """The positions the loop `k = low.find(word, 1); while k > 0: ...; k = low.find(word, k +
        len(word))` visits: from index 1, each occurrence that starts after the previous one ends."""
        found = self._at.get(word)
        if found is None:
            if word not in self._keywords.vocabulary:  # never "found" because never looked for
                raise KeyError(f"{word!r} is not one of the scanned keywords")
            return []
        if word not in self._keywords.self_overlapping:
            return found[1:] if found[0] == 0 else found
        out: list[int] = []
        nxt = 1
        for k in found:
            if k >= nxt:
                out.append(k)
                nxt = k + len(word)
        return out


def find_all(text: str, word: str) -> list[int]:
    """Every position of `word` in text, overlapping occurrences included (str.find)."""
    out, k = [], text.find(word)
    while k >= 0:
        out.append(k)
        k = text.find(word, k + 1)
    return out
