"""The anchored scans of `rules` (patterns.*_ANCHORS, claims.finditer_anchored / search_anchored) find
exactly what the plain regex scans find. They try a pattern only near its keywords, so a pattern edited
without its anchor list would lose matches silently: this test is what catches that."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from xfinder_ray.extractors.rules import decide
from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.claims import finditer_anchored, search_anchored

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
REAL = [DATA / "reasoning_dev" / "reasoning_dev.jsonl", DATA / "mc_cot_dev" / "mc_cot_dev.jsonl",
        DATA / "think_dev" / "think_dev.jsonl"]  # fmt: skip
ANCHORED = {
    "FWD_STRONG_VERB": (P.FWD_STRONG_VERB, P.FWD_STRONG_VERB_ANCHORS),
    "HEDGE": (P.HEDGE, P.HEDGE_ANCHORS),
    "REFUSAL": (P.REFUSAL, P.REFUSAL_ANCHORS),
    "FWD_SUPERLATIVE": (P.FWD_SUPERLATIVE, P.FWD_SUPERLATIVE_ANCHORS),
    "RECAP": (decide._RECAP, decide.RECAP_ANCHORS),
}
# Phrases of the kinds the patterns are written for, rare in the real sets (self-corrections).
SEEDS = [
    "Let me change my answer to B.", "Wait, actually, it's 12.", "Hmmmm... actually it should be C.",
    "That is actually wrong; correct myself: 7.", "Sorry, actually it is 5.", "this must be actually true",
    "I'm sorry, but as an AI I cannot answer.", "It could also be D, or perhaps E.", "the most likely option",
    "Now, let's recap:", "To summarize the above answers:", "\n## The answers are:\n1. B",
    "\n  =*the  answers   are :", "For the other questions,", "to each of the questions", "for all the question",
    "so we cannot compute the answer.", "We are unable to determine the exact value", "I don't know the answer.",
    "I do not know how to solve it", "I cannot find a valid value.", "It cannot be solved.",
    "I'm not able to determine it", "I'm unable to solve this", "so we cannot proceed as intended",
    "which lies  beyond the data given", "It is beyond information provided",
    "This question requires additional information", "the problem   needs more context", "Insufficient data.",
    "There is not   enough information to decide", "not enough context is given",
]  # fmt: skip
SPACES = [" ", " ", " ", "  ", "   ", "    ", "\t", "\n", "\xa0", ""]
PUNCT = [",", ".", "!", ":", "：", "'", "%", "?", "-", "(", ")", "_", "é", "1"]
ODD = ["ſ", "ı", "İ", "K", "ß", "x", "a", "n", "s", "i"]  # letters whose case folding is unusual


def _words(pattern: re.Pattern[str]) -> list[str]:
    """The pattern's own words (and a few contractions): generated texts then match it often."""
    words = set(re.findall(r"[A-Za-z']+", pattern.pattern)) | set(
        re.findall(r"[\u3040-\u9fff]+", pattern.pattern)
    )
    words |= {
        "hmmm",
        "hmmmmmmmmmmmmmmm",
        "I'm",
        "can't",
        "won't",
        "don't",
        "it's",
        "AI",
        "an",
        "a",
        "or",
        "both",
    }
    return sorted(w for w in words if w not in ("s", "z"))


def _text(rnd: random.Random, words: list[str]) -> str:
    out = []
    for _ in range(rnd.randint(1, 60)):
        r = rnd.random()
        if r < 0.55:
            w = rnd.choice(words)
            out.append(rnd.choice([w, w, w, w.upper(), w.capitalize()]))
        elif r < 0.85:
            out.append(rnd.choice(SPACES))
        elif r < 0.95:
            out.append(rnd.choice(PUNCT))
        else:
            out.append(rnd.choice(ODD))
    return "".join(out)


def _same(pattern: re.Pattern[str], anchors, text: str, pos: int, endpos: int) -> None:
    spans = [m.span() for m in finditer_anchored(pattern, text, anchors, pos)]
    assert spans == [m.span() for m in pattern.finditer(text, pos)], (text[:200], pos)
    found, want = search_anchored(pattern, text, anchors, pos, endpos), pattern.search(text, pos, endpos)
    assert (found and found.span()) == (want and want.span()), (text[:200], pos, endpos)


def _real_texts() -> list[str]:
    return [
        row["llm_output"][-20_000:] for path in REAL for row in map(json.loads, path.read_text().splitlines())
    ]


def _perturbed(rnd: random.Random, text: str) -> str:
    """A window of `text` with its letters' case, spaces and a few odd letters changed at random."""
    out = []
    for ch in text:
        r = rnd.random()
        if r < 0.1:
            out.append(ch.swapcase())
        elif r < 0.13 and ch == " ":
            out.append(rnd.choice(SPACES))
        elif r < 0.14:
            out.append(rnd.choice(ODD + PUNCT))
        else:
            out.append(ch)
    return "".join(out)


@pytest.mark.parametrize("name", list(ANCHORED))
def test_anchored_scan_equals_the_plain_scan_on_generated_text(name):
    pattern, anchors = ANCHORED[name]
    rnd, words, matched = random.Random(name), _words(pattern), 0
    # Windows around the real matches, perturbed, and texts made of the pattern's own words.
    windows = [t[max(0, m.start() - 60) : m.end() + 60] for t in _real_texts() for m in pattern.finditer(t)]
    windows += [f"{a} {b} {c}" for a in SEEDS for b in SEEDS for c in ("", "Then.", "\n")]
    texts = [_perturbed(rnd, w) for w in windows[:2000] for _ in range(2)]
    texts += [_text(rnd, words) for _ in range(3000)]
    for text in texts:
        pos = rnd.choice([0, 0, rnd.randint(0, len(text))])
        _same(pattern, anchors, text, pos, rnd.choice([len(text), rnd.randint(pos, len(text))]))
        matched += pattern.search(text) is not None
    assert matched > 100, matched  # the texts exercise the pattern, not only its misses


@pytest.mark.parametrize("name", list(ANCHORED))
def test_anchored_scan_equals_the_plain_scan_on_real_responses(name):
    pattern, anchors = ANCHORED[name]
    for text in _real_texts():
        _same(pattern, anchors, text, 0, len(text))
