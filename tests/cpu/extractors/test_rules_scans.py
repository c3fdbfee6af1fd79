"""The faster scans of `rules` find exactly what the plain scans they replace find: the one-pass keyword
search (keywords.py) against `str.find` loops, the anchored trigger-format strip against `re.sub`, the
guarded turn-header search, the "<"-head marker lookups of reasoning.segment, and the backward-claim
filter. Each was a speed change that must not change one answer; these tests are what says so when a
pattern or a word list is edited without its fast path."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from xfinder_ray import reasoning
from xfinder_ray.extractors.rules import claims as C
from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules import text as T
from xfinder_ray.extractors.rules.keywords import Keywords

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
REAL = [DATA / "reasoning_dev" / "reasoning_dev.jsonl", DATA / "mc_cot_dev" / "mc_cot_dev.jsonl",
        DATA / "think_dev" / "think_dev.jsonl"]  # fmt: skip
PIECES = [" ", "  ", "\n", "\t", "\xa0", ".", ",", ":", "(", ")", "#", "##", "*", "<", "</", "<|", "|>",
          "ſ", "ı", "İ", "K", "ß", "é", "答案", "1", "42"]  # fmt: skip


def _real_texts() -> list[str]:
    return [row["llm_output"][-12_000:] for p in REAL for row in map(json.loads, p.read_text().splitlines())]


def _generated(rnd: random.Random, words: list[str], n: int) -> list[str]:
    """Texts made of `words` (in any case) and of spaces, punctuation and odd letters."""
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rnd.randint(1, 50)):
            if rnd.random() < 0.6:
                w = rnd.choice(words)
                parts.append(rnd.choice([w, w, w.upper(), w.capitalize()]))
            else:
                parts.append(rnd.choice(PIECES))
        out.append("".join(parts))
    return out


def _phrases(rnd: random.Random, vocab: list[str], seps: list[str], n: int) -> list[str]:
    """Texts of words from `vocab` (in any case), each followed by one of `seps`."""
    out = []
    for _ in range(n):
        ws = [rnd.choice(vocab) for _ in range(rnd.randint(1, 20))]
        out.append("".join(rnd.choice([w, w.capitalize(), w.upper()]) + rnd.choice(seps) for w in ws))
    return out


def _find_loop(low: str, word: str) -> list[int]:
    """What the str.find loops in claims.py visited before keywords.py."""
    out, k = [], low.find(word, 1)
    while k > 0:
        out.append(k)
        k = low.find(word, k + len(word))
    return out


def test_keyword_occurrences_are_the_find_loops_positions():
    rnd = random.Random(0)
    words = list(C._KEYWORDS.words)
    texts = _real_texts() + _generated(rnd, words, 1500) + ["", " ", "aaaa", "ababab", "########"]
    texts += [t[: len(t) // 2] + "\ud800" + t[len(t) // 2 :] for t in texts[:300]]  # no UTF-8 form
    for text in texts:
        low = " " + text.lower()
        occ = C._KEYWORDS.scan(low)
        for w in words:
            assert occ.starts(w) == _find_loop(low, w), (w, text[:120])
            assert occ.has_any((w,)) == (w in low)


def test_self_overlapping_keywords_are_thinned_like_find():
    kw = Keywords(["aba", "aa", "so"])
    low = " ababa aaaa so"
    occ = kw.scan(low)
    assert occ.starts("aba") == _find_loop(low, "aba") == [1]
    assert occ.starts("aa") == _find_loop(low, "aa") == [7, 9]
    with pytest.raises(KeyError):
        occ.starts("never-scanned")  # a typo in a word list fails loudly, not as "not found"


def test_keyword_positions_are_characters_not_bytes():
    kw = Keywords(["answer", "ответ"])
    low = " 答案 ответ: b. the answer"
    occ = kw.scan(low)
    assert [low[k : k + 5] for k in occ.starts("ответ")] == ["ответ"]
    assert [low[k : k + 6] for k in occ.starts("answer")] == ["answer"]


def test_trigger_format_strip_equals_re_sub():
    rnd = random.Random(1)
    words = ["answer", "Answer", "ANSWER", "among", "Among", "(", "arabic numerals", " or ", "A", "E",
             " through ", " to ", "-", "the options", " is", ":", "=", "(Yes or No)"]  # fmt: skip
    triggers = ["answer (Yes or No) is", "answer(arabic numerals):", "Answer (A to E) =", "ANSWER (a/b) is",
                "among A through E, ", "Among (A) - (D) ", "among the options B to C,", "answer (x or"]  # fmt: skip
    texts = _generated(rnd, words, 3000) + _real_texts()
    texts += [" ".join(rnd.choice(triggers + words) for _ in range(rnd.randint(1, 12))) for _ in range(1500)]
    changed = 0
    for text in texts:
        want = T._TRIGGER_FORMAT.sub("", text)
        assert T._strip_trigger_formats(text, text.lower()) == want, text[:200]
        changed += want != text
    assert changed > 200, changed  # the texts exercise the pattern, not only its misses


def test_prepare_with_its_shortcuts_equals_the_plain_steps():
    """prepare's one-character pre-tests and its lower-case memo change nothing it returns."""
    rnd = random.Random(2)
    words = ["**Answer:**", "\\text{The answer is }", "answer (Yes or No) is", "among A through E,",
             "<<3*4=12>>12", "\r\n", "\u200b", "Ｂ", "（C）", "x"]  # fmt: skip
    for text in _generated(rnd, words, 1500) + _real_texts()[:200]:
        for kat in ("math", "alphabet_option"):
            got = T.prepare(text, kat)
            assert got == _prepare_plain(text, kat), text[:200]
            assert T.lowered(got) == got.lower()


def _prepare_plain(text: str, kat: str) -> str:
    import unicodedata

    if len(text) > T.MAX_SCAN:
        text = text[: T.HEAD] + "\n\n" + text[-T.TAIL :]
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u200b", "").replace("**", "")
    low = text.lower()
    if "\\text" in text and ("answer" in low or "option" in low or "choice" in low):
        text = T._TEXT_CLAIM.sub(r"\1", text)
    if kat != "math":
        text = unicodedata.normalize("NFKC", text)
    elif "<<" in text:
        text = T._CALCULATOR.sub("", text)
    if "answer (" in low or "answer(" in low or "among " in low:
        text = T._TRIGGER_FORMAT.sub("", text)
    return text


def test_turn_header_guard_finds_what_the_plain_search_finds():
    plain = re.compile(r"\n(?=" + P._TURN_HEADER_BODY + ")", re.I)
    rnd = random.Random(3)
    words = ["Question", "Q1", "Problem 2", "User", "Human", "Options", "Answer Choices", "问题", "> ", "## ",
             "Step", "The", "So", "input", "ſentence", "İnput", "claim", ":", ".", "："]  # fmt: skip
    for text in _generated(rnd, words, 3000) + _real_texts():
        a, b = plain.search(text), P.TURN_HEADER_AFTER_NEWLINE.search(text)
        assert (a and a.start()) == (b and b.start()), text[:200]


@pytest.mark.skipif(sys.maxunicode < 0x10FFFF, reason="needs a full Unicode build")
def test_turn_header_first_letters_cover_every_case_insensitive_match():
    """Every character re.I lets start a header word is one the guard's class accepts."""
    body = re.sub(r"\\.", "", P._TURN_HEADER_BODY)  # without its escapes (\\d, \\s)
    firsts = {w[0] for w in re.findall(r"[A-Za-z]+|[\u4e00-\u9fff]+", body)}
    assert {"Q", "P", "H", "U", "问", "题"} <= firsts
    guard = re.compile("[" + P.TURN_HEADER_FIRST_LETTERS + "]", re.I)
    word_start = re.compile("|".join(sorted(firsts)), re.I)
    for cp in range(0x110000):
        ch = chr(cp)
        if word_start.fullmatch(ch):
            assert guard.fullmatch(ch), hex(cp)


MARKERS = [m for family in reasoning._PAIRED for m in family[1:] if m] + [
    *reasoning._HARMONY_FINAL,
    *reasoning._HARMONY_ANALYSIS,
    "<answer>",
    "</answer>",
]


def test_marker_lookups_equal_str_find():
    rnd = random.Random(4)
    words = [*MARKERS, "<", "< 3", "<=", "x<y", "</s>", "<|im_end|>", "think", "◁", "answer", "\n"]
    for text in _generated(rnd, words, 3000) + _real_texts()[:300]:
        m = reasoning._Markers(text)
        for marker in MARKERS:
            assert m.rfind(marker) == text.rfind(marker), (marker, text[:200])
            start = rnd.randint(0, len(text))
            assert m.find(marker, start) == text.find(marker, start), (marker, start, text[:200])


def test_backward_claim_filter_drops_no_match():
    rnd = random.Random(5)
    words = sorted(set(re.findall(r"[A-Za-z]+", P.BWD.pattern)) - {"s"}) + [
        "done",
        "someone",
        "an",
        "C",
        "is",
    ]
    seps = [" ", " ", " ", "  ", "\n", "\t", "\xa0", "", ", "]
    texts = _generated(rnd, words, 1000) + _real_texts() + _phrases(rnd, words, seps, 3000)
    matched = 0
    for text in texts:
        low = " " + text.lower()
        occ = C._KEYWORDS.scan(low)
        args = (P.BWD, text, low, occ, C._BWD_NOUNS, C._BWD_LEAD, 90)
        fast = C._anchored_back(*args, after_word=P.BWD_NOUN_AFTER)
        assert [m.span() for m in fast] == [m.span() for m in C._anchored_back(*args)], text[:200]
        matched += bool(fast)
    assert matched > 100, matched


def test_truncated_reads_only_the_last_words_of_a_long_line():
    line = "word " * 50_000 + "and"
    assert T.truncated(line)  # a dangling last word
    assert T.truncated("x " * 10 + "word")  # a long unpunctuated last line
    assert not T.truncated("The answer is B")
    # A ":" spares a line only where a short value follows it: "Answer: <six words>" is finished,
    # "Bob: Yes, there are good options ... during sales" (a turn cut off mid-sentence) is not.
    assert not T.truncated("Answer: The capital of France is Paris")
    assert not T.truncated("Label: World")
    assert T.truncated("Bob: Yes, there are some good options but you can find good deals during sales")
    assert T.truncated("Step 1: Calculate the total pressure of the gas using the ideal gas")


def test_heading_claims_are_the_plain_scans_matches():
    rnd = random.Random(6)
    words = ["#", "##", "### ", "Final", "final ", "Answer", "answer", "Conclusion", "Label", "the ",
             "classification", "prediction", "claſſification", "\n", "\n  ", "\t", ":"]  # fmt: skip
    heads = ["## Final Answer", "# answer:", "  ### The correct answer", "\t#Conclusion", "# the\nanswer",
             "x ## Answer", "#### 42", "         # Answer"]  # fmt: skip
    texts = _generated(rnd, words, 3000) + _real_texts()
    texts += ["\n".join(rnd.choice(heads + words) for _ in range(rnd.randint(1, 8))) for _ in range(1000)]
    matched = 0
    for text in texts:
        want = [m.span() for m in P.HEADING.finditer(text)]
        assert [m.span() for m in C._heading_claims(text)] == want, text[:200]
        low = " " + text.lower()
        occ = C._KEYWORDS.scan(low)
        if not ("#" in text and (occ.has_any(C._HEADING_NOUNS) or not C._finds_every_match(text, low))):
            assert not want, text[:200]  # the gate before it skips no heading either
        matched += bool(want)
    assert matched > 100, matched


def test_marker_presence_test_equals_looking_for_each_marker():
    assert set(MARKERS) <= set(reasoning._ALL_MARKERS)  # every marker segment() looks for is tested
    rnd = random.Random(7)
    words = [*MARKERS, "<", "< 3", "<=", "</s>", "<|im_end|>", "analysis", "<|message|>", "◁", "think▷"]
    for text in _generated(rnd, words, 3000) + _real_texts()[:300]:
        want = any(marker in text for marker in reasoning._ALL_MARKERS)
        m = reasoning._Markers(text)
        assert m.any_present() == want or (m.starts is None and m.any_present()), text[:200]
        if not want:
            assert reasoning.segment(text) == reasoning.Segments("", text, reasoning.NONE, "")


def test_strict_object_test_equals_json_loads():
    from xfinder_ray.extractors.rules.structured import is_strict_object

    def plain(t: str) -> bool:
        try:
            return isinstance(json.loads(t), dict)
        except ValueError:
            return False

    rnd = random.Random(8)
    pieces = ['{', '}', '"a"', ':', '1', ',', '"answer": "B"', '[', ']', 'null', ' ', '\n', '\\"', '"x\\u00e9"',
              'tru', 'true', '1e5', '-', '.5', '{"k": {"j": [1, 2]}}', '"unclosed', "'single'", 'NaN']  # fmt: skip
    strict = 0
    for _ in range(5000):
        body = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        t = "{" + body + "}"
        assert is_strict_object(t) == plain(t), t
        strict += plain(t)
    assert strict > 50, strict


def test_trigger_format_gate_equals_its_substring_tests():
    rnd = random.Random(9)
    words = ["answer", "answers", "answer (", "answer(", " (", "(", "among", "among ", "x", " "]
    for text in _generated(rnd, [w.lower() for w in words], 3000):
        low = text.lower()
        want = "answer (" in low or "answer(" in low or "among " in low
        assert T._may_have_trigger_format(low) == want, text


@pytest.mark.parametrize(
    ("name", "pattern", "words", "lead", "back", "before"),
    [
        pytest.param("so", P.FWD_SO, C._SO_WORDS, C._SO_LEAD, 4, C._sentence_start, id="so"),
        pytest.param("weak", P.FWD_WEAK_NOUN, C._WEAK_NOUNS, C._WEAK_LEAD, 12, C._after_space, id="weak"),
    ],
)
def test_lead_filters_pass_every_occurrence_a_lead_can_end_at(name, pattern, words, lead, back, before):
    """before(text, at) is True wherever `lead` ends right before the word, so it drops no match."""
    rnd = random.Random(name)
    vocab = sorted(set(re.findall(r"[a-z]{2,}", pattern.pattern.lower()))) + list(words) + ["also", "C"]
    vocab += ["the result is", "my answers:", "the roots are", "its solution =", "So, in conclusion,"] * 5
    seps = [" ", "  ", "   ", "    ", "\t", "\n", ".", ". ", ".\t  ", "!", "?", ", ", "", "\xa0"]
    texts = _real_texts()[:300] + _phrases(rnd, vocab, seps, 3000)
    matched = 0
    for text in texts:
        low = " " + text.lower()
        occ = C._KEYWORDS.scan(low)
        fast = C._anchored_back(pattern, text, low, occ, words, lead, back, before)
        plain = C._anchored_back(pattern, text, low, occ, words, lead, back)
        assert [m.span() for m in fast] == [m.span() for m in plain], text[:200]
        matched += bool(fast)
    assert matched > 100, matched


@pytest.mark.parametrize(
    ("scan", "pattern"),
    [
        pytest.param(C._backward_correct, P.BWD_CORRECT, id="correct"),
        pytest.param(C._backward_weak, P.BWD_WEAK, id="weak"),
        pytest.param(C._option_claims, P.FWD_OPTION, id="option"),
    ],
)
def test_keyword_anchored_scans_equal_finditer(scan, pattern):
    rnd = random.Random(pattern.pattern)
    vocab = sorted(set(re.findall(r"[a-z]{2,}", pattern.pattern.lower()))) + ["B", "C", "also", "mostly"]
    seps = [" ", " ", "  ", "\n", "\t", ". ", ", ", ":", ")", "", "\xa0", "ſ"]
    texts = _real_texts()[:300] + _phrases(rnd, vocab, seps, 3000)
    matched = 0
    for text in texts:
        low = " " + text.lower()
        want = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in scan(text, low, C._KEYWORDS.scan(low))] == want, text[:200]
        matched += bool(want)
    assert matched > 100, matched


def test_prefix_gate_decides_as_the_matcher():
    """Index.match_prefix skips building the candidate matcher where no text can start: it must
    return what the matcher itself returns, for real answer ranges and for odd ones."""
    from xfinder_ray.extractors.rules.candidates import index_for
    from xfinder_ray.records import parse_answer_range

    rows = [row for p in REAL for row in map(json.loads, p.read_text().splitlines())]
    ranges = [
        (r["key_answer_type"], r["standard_answer_range"]) for r in rows if r["key_answer_type"] != "math"
    ]
    rnd = random.Random(9)
    odd = ["- x", "/&-Paris", "  Berlin", "İstanbul", "Σigma", "ßeta", "(B) twice", "", "...", "-", "é clair"]
    for _ in range(200):
        ranges.append(
            ("alphabet_option", [[chr(65 + i), rnd.choice(odd + PIECES)] for i in range(rnd.randint(1, 6))])
        )
        ranges.append(("categorical_label", rnd.sample(odd + ["Sci/Tech", "to stay home", "World"], 3)))
    matched = 0
    for kat, answer_range in ranges:
        ix = index_for(kat, parse_answer_range(answer_range, kat))
        texts = [t for _, t in ix.items]
        probes = ["(B).", "B. " + rnd.choice(texts), " x"] + [
            rnd.choice([t, t.upper(), t.lower()]) + " is it" for t in texts
        ]
        probes += [rnd.choice(PIECES) + t for t in texts[:3]]
        probes += [" ".join(words).upper() + "." for words, _ in (ix.prefix_re.forms if ix.prefix_re else [])]
        for s in probes:
            want = ix.prefix_re.match(s) if ix.prefix_re is not None else None
            assert _hit(ix.match_prefix(s)) == _hit(want), (answer_range, s)
            matched += want is not None
    assert matched > 500, matched


def _hit(h) -> tuple | None:
    return None if h is None else (h.start(), h.end(), h.answer)


def test_part_marks_are_the_patterns_matches():
    from xfinder_ray.extractors.rules import decide as D

    rnd = random.Random(11)
    words = ["a)", "(b)", "ii)", "(iv)", "1.", "12)", "part", "Part 2", "statement", "for", "the", "first",
             "second", "question", "scenario", "one", "x", ".", "!", "?", ". ", "? ", "\n", "\n ", "\t", "> ", "**"]  # fmt: skip
    texts = _generated(rnd, words, 3000) + _real_texts()
    matched = 0
    for text in texts:
        for end in (len(text), rnd.randint(0, len(text)), 0, 1):
            want = [m.start() for m in D._PART_MARK.finditer(text, 0, end)]
            assert D._part_marks(text, end) == want, (text[:200], end)
            matched += bool(want)
    assert matched > 500, matched
