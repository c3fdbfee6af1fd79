"""`rules`: a model-free key-answer extractor, following the xFinder annotation rules.

It is the embedded default where no model can be loaded, the router's cheap path and the baseline
in ablations. Given an LLM response it returns the key answer the response commits to -- the option
letter (alphabet_option), the candidate as written in the range (short_text, categorical_label), the
math answer as the response wrote it (math), or ``[No valid answer]`` -- and how sure that is:

    certain  the response is exactly the requested format with one clean value (the router
             settles these without the model)
    likely   an explicit answer: a JSON answer field, "the answer is ...", \\boxed{...}
    unsure   inferred: a weak conclusion, a lone candidate, a fallback, a withdrawn answer

The stages (docs/rules.md has the details and examples), one module each:
1. ``text``: prepare the text (stop strings, ``</think>``, markdown bold, width, size cap);
2. ``structured``: find the answer fields of JSON objects the prompt asked for, leniently;
3. ``claims``: find prose answer claims ("the answer is", "Answer:", "#### ", ``\\boxed{}``, ...);
4. ``values`` / ``candidates``: resolve each claim's value to a candidate of the range;
5. ``decide``: the commitment -- a structured answer unless prose after it corrects it; else the
   last prose claim of the highest tier, withdrawn by hedging, retraction or ambiguity; else the
   fallbacks (a bare answer, a lone answer line, the one candidate mentioned).

Every regex is bounded, every scan is over a capped slice, no pattern is compiled per record, and
nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xfinder_ray import reasoning
from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules import structured
from xfinder_ray.extractors.rules.candidates import ALPHA, MATH, index_for
from xfinder_ray.extractors.rules.claims import find_claims, known_below, parse_claim
from xfinder_ray.extractors.rules.decide import (
    CERTAIN,
    FINAL_STATEMENT_WINDOW,
    LIKELY,
    UNSURE,
    claim_values,
    decide_final_statement,
    decide_prose,
    has_turn_header,
    restricted_answer,
)
from xfinder_ray.extractors.rules.text import MAX_QUESTION, cut_at_stop, prepare, trailing_loop, truncated
from xfinder_ray.extractors.rules.values import OK, resolve_value
from xfinder_ray.parsing import is_no_valid_answer, normalize_text
from xfinder_ray.records import NO_VALID_ANSWER, AnswerRange

RULES_VERSION = "rules-3"
CONFIDENCE_TIERS = (CERTAIN, LIKELY, UNSURE)

__all__ = [
    "CERTAIN",
    "CONFIDENCE_TIERS",
    "LIKELY",
    "NO_ANSWER_REASONS",
    "UNSURE",
    "Extraction",
    "RULES_VERSION",
    "extract",
    "extract_scored",
]


# Why a response gives no key answer: every [No valid answer] carries one of these.
NO_ANSWER_REASONS = (
    "truncated",  # cut off before any commitment (inside an open thought, mid-sentence at the token cap)
    "loop",  # a repetition loop running to the end with no single committed answer
    "multi_part",  # answers to several parts of the question, no overall choice
    "several",  # several answers at once ("(A, E, I)", a list of different answer lines)
    "hedged",  # alternatives or hedging with no final choice ("\\boxed{9} (or \\boxed{7})")
    "refusal",  # declines to answer, or says the question cannot be answered
    "out_of_range",  # answers outside the candidates ("Not an option, but ...")
    "none_found",  # nothing in the response states an answer
)


# slots, not frozen: made for every record, and a frozen dataclass's __init__ costs ~4x (0.37 µs).
@dataclass(slots=True)
class Extraction:
    answer: str  # the key answer, or [No valid answer]
    confidence: str  # certain | likely | unsure
    reason: str = ""  # "" for an answer; for [No valid answer] one of NO_ANSWER_REASONS

    @property
    def no_answer_reason(self) -> str | None:
        """The reason as written to judgments/: None for an answer (extract_scored sets one for every
        [No valid answer])."""
        return self.reason or None


def extract_scored(
    key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange
) -> Extraction:
    """The key answer `llm_output` commits to, with its confidence tier (and, for [No valid answer],
    the reason: one of NO_ANSWER_REASONS).

    `answer_range` is as parsed by xfinder_ray.records.parse_answer_range.
    """
    e = _extract(key_answer_type, question, llm_output, answer_range)
    if e.answer == NO_VALID_ANSWER and not e.reason:
        return Extraction(e.answer, e.confidence, "none_found")
    return e


def _extract(key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange) -> Extraction:
    kat = (key_answer_type or "").strip()
    raw = cut_at_stop(llm_output)
    question = (question or "")[:MAX_QUESTION]
    # Segment first, then prepare only the part that is read: a long thought is never scanned whole.
    seg = reasoning.segment(raw)
    if seg.state == reasoning.NONE:
        text = prepare(raw, kat)
        stripped = text.strip()
        # (is_no_valid_answer's pattern starts with "[" or "no": other responses skip it)
        if not stripped or (stripped[0] in "[nN" and is_no_valid_answer(stripped)):
            return Extraction(NO_VALID_ANSWER, LIKELY, "none_found")
        if _reads_as_thought(text):
            # A thought whose opening tag was in the prompt, never closed: cut off or looping to the
            # token cap, it committed to nothing (as an open thought with markers).
            if trailing_loop(text)[0] >= 0:
                return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
            if truncated(text):
                return Extraction(NO_VALID_ANSWER, LIKELY, "truncated")
        if _deliberating_when_cut_off(text):
            return Extraction(NO_VALID_ANSWER, LIKELY, "truncated")
        if kat == MATH and _echoes_question(stripped, question):
            return Extraction(NO_VALID_ANSWER, LIKELY, "none_found")
        return _extract_part(text, kat, question, _index(kat, answer_range))
    ix = _index(kat, answer_range)
    if seg.state == reasoning.OPEN:
        return _open_thought(_thought_tail(seg, kat), len(seg.thought), question, ix)
    final_text = prepare(seg.final, kat)
    final = _extract_part(final_text, kat, question, ix)
    if _guessed(final, final_text, question, ix):
        # The final part only explains ("Evelyn has the greatest average speed ... - Angela: 1.4 / 6.8
        # = 0.21"): its last number is a guess; the explicit answer that ends the thought ("So
        # answer: Evelyn."), which the final part names, is not.
        end = _thought_tail(seg, kat, FINAL_STATEMENT_WINDOW)
        stated = decide_final_statement(end, question, ix, explicit=True)
        if stated is not None and stated != final.answer and _names(final_text, stated):
            return Extraction(stated, UNSURE)
    if final.answer != NO_VALID_ANSWER or final.reason not in ("none_found", "truncated"):
        return _settled(final, final_text, question, ix)
    # The final part is empty or cut off before committing: the thought's last stated answer.
    thought = _extract_part(_thought_tail(seg, kat), kat, question, ix)
    if thought.answer == NO_VALID_ANSWER:
        return final
    return Extraction(thought.answer, UNSURE)


def _guessed(e: Extraction, text: str, question: str, ix) -> bool:
    """e, read from text, is a guess: an unsure answer that is not all of text and that no claim in
    text states (the fallback's last number of an explanation)."""
    if e.confidence != UNSURE or e.answer == NO_VALID_ANSWER or _without_bare_decor(text) == e.answer:
        return False
    for c in find_claims(text, math=ix is None)[-MAX_STATED_CLAIMS:]:
        parse_claim(text, c, ix, question)
        if c.status == OK:
            return False
    return True


MAX_STATED_CLAIMS = 50


def _names(text: str, answer: str) -> bool:
    """The answer occurs in text as written (a word, "Evelyn", a number; an option letter as "(B)" or "B)")."""
    if len(answer) == 1 and answer.isupper():
        return f"({answer})" in text or f"{answer})" in text
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(answer)}(?![A-Za-z0-9])", text, re.I) is not None


def _thought_tail(seg: reasoning.Segments, kat: str, chars: int | None = None) -> str:
    """The end of the thought (its last `chars` characters, THOUGHT_TAIL by default), prepared: read
    only when the final part does not commit."""
    return prepare(reasoning.tail(seg.thought, THOUGHT_TAIL if chars is None else chars), kat)


def _index(kat: str, answer_range: AnswerRange):
    return None if kat == MATH else index_for(kat, answer_range)


def _settled(e: Extraction, final: str, question: str, ix) -> Extraction:
    """A closed thought's final part that states one answer, whole, and nothing else: certain."""
    if e.answer == NO_VALID_ANSWER or len(final) > MAX_SETTLED_FINAL:
        return e
    if _without_bare_decor(final) == e.answer:  # "</think> Yes.", "<answer>8</answer>", "\\boxed{8}"
        return Extraction(e.answer, CERTAIN)
    if e.confidence != LIKELY:
        return e
    if truncated(final) or claim_values(final, question, ix) != {e.answer}:
        return e
    if len(final) > 300 and "\\boxed" not in final and "final answer" not in final.lower():
        return e  # a long final part without a box or a "final answer" statement explains, too
    return Extraction(e.answer, CERTAIN)


MAX_SETTLED_FINAL = 4_000  # a final part longer than this is a solution write-up, not a statement
_LEAD_DECOR = re.compile(r"[\s$*(]*(?:\\boxed\{)?")
_TRAIL_DECOR = "$*.)"  # and whitespace


def _without_bare_decor(final: str) -> str:
    """`final` without its leading "$", "*", "(" and "\\boxed{" and its trailing "}", "$", "*", ".",
    ")" (whitespace too, either side). The same as removing the matches of "^[\\s$*(]*(?:\\\\boxed\\{)?"
    and "\\}?[\\s$*.)]*$" with re.sub, but read from the two ends: re.sub tried the second at every
    position of the text."""
    begin = _LEAD_DECOR.match(final).end()
    end = len(final)
    while end > 0 and (final[end - 1] in _TRAIL_DECOR or final[end - 1].isspace()):
        end -= 1
    if end > 0 and final[end - 1] == "}":
        end -= 1
    return final[begin : max(begin, end)]


LONG_OPEN_THOUGHT = 8_000  # characters
# How a reasoning model's thought opens ("Okay, so I need to figure out ...", "Alright, I need to ...");
# with its "Wait" / "Hmm" turns, a text without markers that reads like this is the thought itself.
_THOUGHT_OPENER = re.compile(
    r"\s{0,3}(?:okay|alright|all\s{1,3}right|hmm+)\b,?\s{1,3}(?:so\b|I\b|let\b|let's\b)", re.I
)
MIN_THOUGHT_TURNS = 3


def _reads_as_thought(text: str) -> bool:
    """Opens like a reasoning model's thought and turns on itself at least MIN_THOUGHT_TURNS times."""
    if not _THOUGHT_OPENER.match(text):
        return False
    return text.count("Wait") + text.count("Hmm") + text.count("wait,") >= MIN_THOUGHT_TURNS


# A sentence that weighs the answer again: "But wait, ...", "Alternatively, maybe C.", "Hmm, ..."
_RECONSIDERS = re.compile(
    r"(?:^|[.!?]\s|\n)\s{0,3}(?:but|wait|alternatively|however|hmm+|or\s{1,3}(?:maybe|perhaps)|hold\s{1,3}on)\b",
    re.I,
)
LAST_PARAGRAPH = 3_000  # characters read for the paragraph the response was cut off in
_SENTENCE_END = re.compile(r"[.!?。\n]")
_MARKUP = re.compile(r"<[^<>\n]{0,30}>")
# Doubt about the answer just named: "but I'm not sure", "I don't think so", "perhaps I'm wrong",
# "perhaps the correct answer is both B and D".
_DOUBT = re.compile(
    r"\b(?:perhaps|maybe)\s{1,3}(?:the\s{1,3}(?:correct\s{1,3}|intended\s{1,3}|right\s{1,3})?answer|it's|it\s{1,3}is|I'm)\b"
    r"|\b(?:not\s{1,3}(?:sure|certain|confident)|(?:don't|do\s{1,3}not)\s{1,3}think\s{1,3}so|I'm\s{1,3}wrong"
    r"|I\s{1,3}am\s{1,3}wrong|that's\s{1,3}not\s{1,3}(?:right|correct)|I'm\s{1,3}stuck|not\s{1,3}correct)\b",
    re.I,
)


def _deliberating_when_cut_off(text: str) -> bool:
    """A long response without thought markers, cut off mid-sentence while it still weighs the answer:
    a thought whose opening tag was in the prompt ran into the token cap ("... So D is correct. But
    why would the problem expect Btu/lb? ... typical bituminous coal has a heating value"). It never
    committed, like a cut-off open thought; a short chat answer cut off in its explanation did."""
    if len(text) < LONG_OPEN_THOUGHT or not truncated(text):
        return False
    tail = text[-LAST_PARAGRAPH:].rstrip()  # (a text cut off after "... are:\n\n" ends in that paragraph)
    paragraph = tail[tail.rfind("\n\n") + 2 :] if "\n\n" in tail else tail
    # A loop is a loop (its own reason); checked last, it is the one scan of the whole text here.
    return _RECONSIDERS.search(paragraph) is not None and trailing_loop(text)[0] < 0


MIN_ECHO = 20  # characters: a shorter response ("x = 5") may well be in its question


def _echoes_question(text: str, question: str) -> bool:
    """The response is a piece of its own question, restated (a base model copying the prompt): the
    numbers in it are the question's, not an answer. Math only: a choice's text is in its question."""
    if len(text) < MIN_ECHO or len(text) > 2 * len(question) + 100:
        return False
    # A copy starts verbatim: one substring test spares the two normalisations nearly every record.
    return text[:12] in question and normalize_text(text) in normalize_text(question)


# How much of a thought's end is read for its last stated answer.
THOUGHT_TAIL = 6_000


def _open_thought(tail: str, length: int, question: str, ix) -> Extraction:
    """Cut off inside an open thought: no commitment -- unless the thought ends, whole, on a final
    answer (a model that never wrote its closing tag: "... **Final Answer** \\boxed{5}")."""
    # tail: the thought's last THOUGHT_TAIL characters, prepared; length: the whole thought's.
    cut = truncated(tail)
    if trailing_loop(tail)[0] >= 0:  # a loop that ran into the token cap: the loop is why
        return Extraction(NO_VALID_ANSWER, CERTAIN if cut else LIKELY, "loop")
    if cut:
        return Extraction(NO_VALID_ANSWER, CERTAIN, "truncated")
    last = decide_final_statement(tail, question, ix)
    if last is None:
        # A long thought that never closed ran into the token cap.
        return Extraction(NO_VALID_ANSWER, CERTAIN if length >= LONG_OPEN_THOUGHT else LIKELY, "truncated")
    return Extraction(last, UNSURE)


def _extract_part(text: str, kat: str, question: str, ix, loops: bool = True) -> Extraction:
    """The commitment of a response without thought markers, or of a reasoning response's final part."""
    if not text.strip():
        return Extraction(NO_VALID_ANSWER, LIKELY, "none_found")
    loop_start, period = trailing_loop(text) if loops else (-1, 0)
    if loop_start >= 0:
        looped = _looping(text, loop_start, period, kat, question, ix)
        if looped is not None:
            return looped
    if ix is not None and _alternates_to_the_end(text):
        return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
    fields = structured.keep_answered_question(text, structured.find_fields(text))
    if fields:
        last = fields[-1]
        status, answer = resolve_value(last.value, question, ix)
        after = text[structured.block_end(text, last) :]
        correction = _correction_after(after, question, ix, answer)
        if correction is not None:
            return Extraction(correction, LIKELY)
        if status != "ok":
            if status == "none":
                return Extraction(NO_VALID_ANSWER, LIKELY, "none_found")
            return Extraction(NO_VALID_ANSWER, UNSURE, "several" if status == "ambig" else "none_found")
        clean = len(fields) == 1 and last.closed and not after.strip(" \n`")
        if clean and _is_clean_value(last.value or "", answer, kat) and structured.is_strict_object(text):
            return Extraction(answer, CERTAIN)
        return Extraction(answer, LIKELY)

    opened = structured.unanswered_object(text)
    if opened >= 0:
        # Cut off inside the requested object, before its answer field: only prose before the
        # object can have answered ("... $50 - $35 = $15." and then a truncated JSON).
        before = text[:opened].rstrip().removesuffix("```json").removesuffix("```")
        if len(before.strip()) < 20:
            return Extraction(NO_VALID_ANSWER, LIKELY, "truncated")
        text = before
    answer, confidence, reason = decide_prose(text, question, ix)
    if confidence == LIKELY and (restricted_answer(text, kat, ix) == answer or _ends_on_one_box(text)):
        confidence = CERTAIN
    return Extraction(answer, confidence, reason)


def _ends_on_one_box(text: str) -> bool:
    """A worked solution that ends on its box, whole, and boxes nothing else: "... = 12.\n\n\\boxed{12}"."""
    tail = text[-MAX_ONE_BOX_TAIL:]
    k = tail.rfind("\\boxed{")
    if k < 0 or truncated(text):
        return False
    boxes = set(_BOX_CONTENT.findall(tail))
    end = tail.find("}", k)
    after = tail[end + 1 :] if end >= 0 else "x"
    return (
        len(boxes) == 1
        and len(after.strip(" \t\n$.*)]}\\")) <= 2
        and text.count("\\boxed{") == tail.count("\\boxed{")
    )


MAX_ONE_BOX_TAIL = 3_000
_BOX_CONTENT = re.compile(r"\\boxed\{([^{}]{0,80}(?:\{[^{}]{0,40}\}[^{}]{0,40}){0,4})\}")


# One bare answer sentence: "The answer is (B).", "Answer: B" (an alternating run's unit).
_BARE_ANSWER = re.compile(
    r"\s*(?:so,?\s{1,3})?(?:the\s{1,3})?(?:(?:correct|final|best)\s{1,3})?answer(?:\s{1,3}is)?\s{0,3}:?\s{0,3}"
    r"\(?([A-Za-z])\)?\s{0,3}[.!]?\s*",
    re.I,
)
ALTERNATING_RUN = 3  # bare answer sentences in a row at the end, naming two or more letters
ALTERNATING_TAIL = 600  # characters at the end where such a run is looked for


def _alternates_to_the_end(text: str) -> bool:
    """The response ends on a run of bare answer sentences that name different letters ("The answer
    is (B).\n\nThe answer is (H).\n\nThe answer is (E).\n\n..." -- also cut off inside its last
    one): it commits to none of them. A run of one letter is a loop (trailing_loop) or a restatement."""
    tail = text[-ALTERNATING_TAIL:]
    if tail.lower().count("answer") < ALTERNATING_RUN:
        return False  # the common case, decided without splitting the tail
    parts = [p for p in P.SENT_SPLIT.split(tail.strip()) if p.strip()]
    if (
        parts
        and not _BARE_ANSWER.fullmatch(parts[-1])
        and len(parts[-1]) < 20
        and "answer" in parts[-1].lower()
    ):
        parts.pop()  # the cut-off start of one more: "The answer is"
    letters = []  # (letters outside the range count too: few-shot examples' answers, "(E)" of A-D)
    for part in reversed(parts):
        m = _BARE_ANSWER.fullmatch(part)
        if m is None:
            # A header before the run ("Now, considering all the questions and answers:") makes it a
            # recap after the real answer: decide_prose's cut_trailing_recap reads it.
            if part.rstrip(" *").endswith(":"):
                return False
            break
        letters.append(m.group(1).upper())
    return len(letters) >= ALTERNATING_RUN and len(set(letters)) >= 2


def _looping(text: str, start: int, period: int, kat: str, question: str, ix) -> Extraction | None:
    """A repetition loop to the end: the loop's one repeated answer, or the explicit answer the text
    committed to before the loop began; else no commitment. None: a hallucinated continuation of
    few-shot turns ("Question: ... Answer: ..." again and again), which the prose rules cut."""
    unit = text[start : start + period]
    if has_turn_header(unit):
        return None
    # Two turns of the loop: the loop's start may cut a claim in two ("). The answer is (A). The
    # answer is (B"), and every claim of the loop is whole somewhere in two consecutive turns.
    values = claim_values(text[start : start + 2 * period], question, ix)
    if len(values) > 1:
        return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
    if len(values) == 1:
        if _RECONSIDERS.search(unit) and (P.DISOWNED.search(unit) or _DOUBT.search(unit)):
            # A thought that deliberates in circles ("... the correct answer is likely option G, but
            # I'm not sure. Wait, perhaps I'm wrong. ...") to the token cap commits to nothing.
            return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
        return Extraction(values.pop(), UNSURE)
    if not _SENTENCE_END.search(unit) and any(ch.isalpha() for ch in _MARKUP.sub("", unit)):
        # Words repeated to the end without a claim ("and II is option I and II is option I ..."):
        # the text degenerated; what it said before the loop is not its answer either. (Not digits
        # running on, "0.6666...", nor end-of-text padding, "</s></s></s>...", after a whole answer.)
        return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
    # The text up to and through one turn of the loop (which may hold a JSON answer, or be all of it).
    once = _extract_part(text[: start + period], kat, question, ix, loops=False)
    if once.answer == NO_VALID_ANSWER or once.confidence == UNSURE:
        return Extraction(NO_VALID_ANSWER, LIKELY, "loop")
    return Extraction(once.answer, UNSURE)


def extract(key_answer_type: str, question: str, llm_output: str, answer_range: AnswerRange) -> str:
    """The key answer `llm_output` commits to, or [No valid answer]."""
    return extract_scored(key_answer_type, question, llm_output, answer_range).answer


def _correction_after(after: str, question: str, ix, answer: str) -> str | None:
    """A strong prose claim after the last JSON block that names another answer: "the correct answer
    is 35, not 38", "Corrected answer: C". Commentary that agrees, or names nothing, changes nothing."""
    after = after[:4000]
    if len(after.strip()) < 4:
        return None
    low = after.lower()
    if not any(w in low for w in _CORRECTION_WORDS):
        return None  # no answer phrase at all: the common case, decided without the claim patterns
    m = (_NOT_NUMBER if ix is None else _NOT_LETTER).search(after) if "not" in after else None
    if m and _same(m.group(2), answer, ix) and not _same(m.group(1), answer, ix):
        return m.group(1).lstrip("$") if ix is None else ix.letters.get(m.group(1), None)
    for c in reversed(find_claims(after, math=ix is None)[-20:]):
        if c.backward or known_below(c, P.NORMAL):
            continue
        parse_claim(after, c, ix, question)
        if c.status == "ok" and c.tier >= P.NORMAL:
            return c.value if c.value != answer else None
    return None


# A later answer needs one of these (the forward claim phrases of tier normal and above, and "not").
_CORRECTION_WORDS = (
    "answer",
    "box",
    "####",
    "option",
    "choice",
    "choose",
    "select",
    "pick",
    "correct",
    "final",
    "label",
    "classif",
    "categor",
    "verdict",
    "go with",
    "say",
    " not ",
    "result",
)

# "35, not 38" / "(C), not (D)": a correction of the answer given before.
_NOT_NUMBER = re.compile(
    r"(\$?-?\d(?:[\d,]*\d)?(?:\.\d+)?)\s{0,3},?\s{0,3}(?:and\s{1,3})?not\s{1,3}\$?(-?\d[\d,]*(?:\.\d+)?)"
)
_NOT_LETTER = re.compile(r"\(?\b([A-Z])\b\)?\s{0,3},?\s{0,3}(?:and\s{1,3})?not\s{1,3}\(?\b([A-Z])\b\)?")


def _same(raw: str, answer: str, ix) -> bool:
    if ix is None:
        return raw.lstrip("$").replace(",", "").rstrip(".") == answer.lstrip("$").replace(",", "")
    return ix.letters.get(raw) == answer


def _is_clean_value(raw: str, answer: str, kat: str) -> bool:
    """The field holds exactly the answer: "C", "(C)", "42", "positive" -- nothing to interpret."""
    v = raw.strip()
    if kat == ALPHA:
        return v.strip("()") == answer
    if kat == MATH:
        return v == answer and v.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()
    return v.casefold() == answer.casefold()
