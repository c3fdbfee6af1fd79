"""Deciding the commitment: the last claim of the highest tier, corrections, hedging, fallbacks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.candidates import ALPHA, EDGE, Index, key_of, mentions
from xfinder_ray.extractors.rules.claims import (
    Claim,
    find_claims,
    finditer_anchored,
    finditer_from,
    known_below,
    parse_claim,
    search_anchored,
)
from xfinder_ray.extractors.rules.text import (
    MAX_CLAIMS_PARSED,
    MAX_QUESTION,
    MENTION_WINDOW,
    VALUE_WINDOW,
    is_formula_line,
    trailing_loop,
    truncated,
)
from xfinder_ray.extractors.rules.values import (
    AMBIG,
    JUNK,
    MATH_TOKEN,
    NUM,
    OK,
    OUT,
    SENTENCE_END,
    braced,
    clean_math,
    copula_value,
    equation_asked,
    looks_math,
    parse_choice,
    parse_math,
)
from xfinder_ray.parsing import normalize_text
from xfinder_ray.records import NO_VALID_ANSWER

# Confidence tiers of an extraction (see the package docstring).
CERTAIN, LIKELY, UNSURE = "certain", "likely", "unsure"


def _cut_continuation(
    text: str, claims: list[Claim], question: str, ix: Index | None
) -> tuple[str, list[Claim]]:
    """Cut a hallucinated continuation: a new "Question: ..." turn after the response has answered."""
    if not has_turn_header(text):
        return text, claims
    first_ok = None
    for c in claims[:MAX_CLAIMS_PARSED]:
        if known_below(c, P.WEAK):
            continue
        parse_claim(text, c, ix, question)
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
            parsed = parse_math(head, question) if ix is None else parse_choice(head, ix)
            if parsed[0] == OK and not parsed[2].strip(EDGE + "()[]"):
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
        return _cut_at(text, claims, h.start())
    return text, claims


# A new problem posed without a header after the answer, and its solution begun: "\\boxed{16}\n\nGiven
# the function $f(x)=...$.\n1. Find the smallest positive period ...\nLet's solve the problem
# step-by-step ..." (Qwen2.5-Math-7B, a base model, goes on to invent and solve problems).
_INVENTED_PROBLEM = re.compile(
    r"\n\n(?=(?:Given|Let|Suppose|Consider|If|In|A|An|The|There|Find|Determine|Calculate|Compute|What|How)\b)"
    r"(?P<problem>[^\n]{15,600}(?:\n[^\n]{0,400}){0,4}?)"
    r"\n+(?=(?:Let's|Let\s{1,3}us|To\s{1,3}solve|We)\b[^\n]{0,40}\b(?:solve|step|break|approach))"
)
_TASK_WORD = re.compile(r"\b(?:find|determine|calculate|compute|what|how\s{1,3}many|prove|show)\b", re.I)


def _cut_invented_problem(text: str, claims: list[Claim], question: str) -> tuple[str, list[Claim]]:
    """Cut an invented follow-up problem (see _INVENTED_PROBLEM) after the response's first box."""
    first_box = next((c for c in claims if c.tier == P.STRONG and text.startswith("\\boxed", c.start)), None)
    if first_box is None:
        return text, claims
    m = _INVENTED_PROBLEM.search(text, first_box.start)
    if m is None or not _TASK_WORD.search(m.group("problem")):
        return text, claims
    snippet = normalize_text(m.group("problem")[:80])
    if snippet in normalize_text(question[:MAX_QUESTION]):
        return text, claims  # the actual question, restated before its solution
    return _cut_at(text, claims, m.start())


def _cut_at(text: str, claims: list[Claim], cut: int) -> tuple[str, list[Claim]]:
    """text up to `cut` and the claims that start before it; a claim whose value window reached past
    the cut is parsed again against the cut text."""
    kept = []
    for c in claims:
        if c.start < cut:
            if c.pos + VALUE_WINDOW > cut:
                c.status = ""
            kept.append(c)
    return text[:cut], kept


def has_turn_header(text: str) -> bool:
    """P.TURN_HEADER.search(text) is not None, found by a faster scan (see TURN_HEADER_AFTER_NEWLINE)."""
    return P.TURN_HEADER.match(text) is not None or P.TURN_HEADER_AFTER_NEWLINE.search(text) is not None


def _norm_value(v: str) -> str:
    return v.replace(",", "").replace(" ", "").removesuffix(".0")


def _fluctuates(text: str, start: int, chosen: str | None, ix: Index | None, committed: bool) -> bool:
    """Hedging between two or more answers after `start` ("it could be B, but it could also be C")."""
    region_end = min(len(text), start + MENTION_WINDOW)
    hedged = search_anchored(P.HEDGE, text, P.HEDGE_ANCHORS, start, region_end) or (
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
                values.update(_norm_value(n) for n in NUM.findall(sent))
    else:
        values.update(v for _, _, v, neg in mentions(text, start, region_end, ix) if not neg)
    return len(values) >= 2


_BULLET = re.compile(r"^[\s>*\-•·#]{0,8}(?:\d{1,2}[.)]\s{1,3})?")


def _after_refusal(text: str) -> int:
    """Where the text after the last refusal sentence starts (0 without one; len(text): nothing after)."""
    lo = max(0, len(text) - MENTION_WINDOW)
    last = None
    for n, m in enumerate(finditer_anchored(P.REFUSAL, text, P.REFUSAL_ANCHORS, lo)):
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
    if _HYPOTHETICAL.match(text, end):
        # "I cannot solve this without the figure. If x were 3, we'd get 9.": a value under an
        # assumption the response itself disavowed commits to nothing.
        return len(text)
    return end if text[end:].strip() else len(text)


_HYPOTHETICAL = re.compile(
    r"\s{0,3}(?:if|assuming|suppose|supposing|hypothetically|for\s{1,3}(?:example|instance)"
    r"|let(?:'s|\s{1,3}us)\s{1,3}(?:assume|suppose|say)|were)\b",
    re.I,
)


def _answerable_from(text: str) -> tuple[int, str]:
    """Where a fallback may look for the answer: (-1, reason) for a cut-off response or one that ends
    in a refusal; else after the last refusal ("As an AI, I have no feelings, but ..."), or 0."""
    if truncated(text):
        return -1, "truncated"
    lo = _after_refusal(text)
    return (-1, "refusal") if lo >= len(text) else (lo, "")


def _list_marker(after: str, value: str, ix: Index) -> bool:
    """ "a) The sense strand is read 5' to 3'...": a letter that opens a sentence other than its
    option's text marks a list item; "A) Paris" and "B, because ..." answer."""
    if ix.kat != ALPHA or not after.startswith((")", ".")):
        return False
    body = after[1:].strip()
    if len(body.split()) <= 4:
        return False
    m = ix.match_prefix(body)
    return not (m and m.answer == value)


# An item label alone ("(J", "(J)", "J.", "J") after two or more items of a list of the options.
_OPEN_ITEM = re.compile(r"\(\s{0,2}[A-Z]\)?|[A-Z][.)]?")
_ITEM_LINE = re.compile(r"^[ \t]{0,3}(?:\([A-Z]\)|[A-Z][.)])[ \t]", re.M)
MAX_ITEM_SCAN = 20_000


def _fallback_choice(text: str, question: str, ix: Index) -> tuple[str, str]:
    """The answer without any claim phrase, or (no answer, the reason)."""
    stripped = text.strip()
    # The whole response is the answer: "Sports.", "(C)", "B. α2γ2", "begins whisking them ...".
    if "\n" not in stripped and len(stripped) <= 300:
        status, value, rest = parse_choice(stripped, ix)
        after = rest.lstrip(" \t")
        # "Paris." / "Paris, because ..." answer; "A wooden spoon is a poor conductor" only mentions.
        if (
            status == OK
            and (not after or after[0] in ".,;:!?)]-–—\"'”’(")
            and (not rest.strip(EDGE + "()[]") or not truncated(text))
            and not _list_marker(after, value, ix)
        ):
            return value, ""
    if ix.kat != ALPHA:
        # A verdict that opens the response stands even when the explanation after it is cut off:
        # "No, the Pacific is not the largest ocean. The Pacific Ocean is the second".
        status, value, rest = parse_choice(stripped[:300], ix)
        if status == OK and rest[:1] in (",", ".", "!", ";", ":", "\n"):
            return value, ""
    if parse_choice(stripped[:300], ix)[0] == AMBIG:
        return NO_VALID_ANSWER, "hedged"  # opens on two answers at once: "Yes and no.", "B or C."
    lo, why = _answerable_from(text)
    if lo < 0:
        return NO_VALID_ANSWER, why
    # Cut off at the start of the next item of a list of the options ("(I) means ...\n(J", "I. Direct
    # selling - ...\nJ"): the letter opens an item, it answers nothing.
    last_line = stripped[stripped.rfind("\n") + 1 :].strip()
    if _OPEN_ITEM.fullmatch(last_line) and len(_ITEM_LINE.findall(stripped, 0, MAX_ITEM_SCAN)) >= 2:
        return NO_VALID_ANSWER, "truncated"
    # Lines that are nothing but an answer ("A) grateful"); several different ones list the options.
    lines_vals: set[str] = set()
    for n, line in enumerate(text[lo:].strip().split("\n")):
        if n >= 400:
            break
        line = line[:300]
        body = line[_BULLET.match(line).end() :].strip()
        if not body:
            continue
        status, value, rest = parse_choice(body, ix)
        if status == OK and not rest.strip(EDGE + "()[]"):
            lines_vals.add(value)
    if len(lines_vals) == 1:
        return lines_vals.pop(), ""
    if len(lines_vals) > 1:
        return NO_VALID_ANSWER, "several"
    # The one candidate mentioned without negation ("Not lungs. gills."), if there is exactly one.
    lo = max(lo, len(text) - MENTION_WINDOW)
    qn = normalize_text(question[:MAX_QUESTION])
    values = set()
    # Bare capitals do not count in longer text: outside an answer construction they are variables,
    # pronouns and list markers ("$G$ is the gravitational constant", "I cannot", "a) The sense strand").
    short = len(stripped) <= 200  # "I think B." -- a one-liner has no room for variables
    for s, e, v, neg in mentions(text, lo, len(text), ix, bare_letters=short):
        if neg:
            continue
        ls, le = text.rfind("\n", 0, s) + 1, text.find("\n", e)
        line = normalize_text(text[ls : le if le >= 0 else len(text)])
        if len(line) >= 20 and line in qn:
            continue  # a line quoting the question (its list of options)
        values.add(v)
    if len(values) == 1:
        return values.pop(), ""
    if values:
        return NO_VALID_ANSWER, "several"
    lo = max(0, len(text) - MENTION_WINDOW)
    # "None of the options is correct; the value should be 17.": an answer outside the options.
    return NO_VALID_ANSWER, "out_of_range" if P.NONE_CORRECT.search(text, lo) else _why_none(text)


def _fallback_math(text: str, question: str) -> tuple[str, str]:
    """The answer without any claim phrase, or (no answer, the reason)."""
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) <= 200:
        status, value, rest = parse_math(stripped, question)
        if status == OK and not rest.strip(EDGE):
            return value, ""
    lo, why = _answerable_from(text)
    if lo < 0:
        return NO_VALID_ANSWER, why
    if len(text) > MAX_FALLBACK_MATH:
        # A long chain of reasoning that never states an answer commits to none: its last line
        # is an intermediate step, not a result.
        return NO_VALID_ANSWER, _why_none(text)
    stripped = text[lo:].strip()
    # The last line with a number: its value after a label ("In total: 15,000 bottles"), after the
    # last "=", or its last number.
    lines = stripped[-MENTION_WINDOW:].split("\n")
    equation = _equation_answer(lines, question) or _stated_equation(stripped, question)
    if equation is not None:
        return equation, ""
    for line in reversed(lines[-50:]):
        if not any(ch.isdigit() for ch in line):
            continue
        # The line's last sentence with a number: "First, 3/4 = 0.75 and 1/8 = 0.125. Adding them gives 0.875."
        sentences = [x for x in P.SENT_SPLIT.split(line.strip()) if any(ch.isdigit() for ch in x)]
        line = sentences[-1].strip() if sentences else line.strip()
        low = line.lower()
        if "but" in low or "however" in low:
            disowned = P.DISOWNED.search(line)
            # "A first guess would be 7, but this is incorrect." (not "5 is wrong, but that is 4")
            if disowned is not None and not any(ch.isdigit() for ch in line[disowned.end() :]):
                return NO_VALID_ANSWER, _why_none(text)
        # The response's last statement "<named quantity> is <value>": the value ("The value of
        # \\( r \\) in the polar form of \\( z = 1 + \\sqrt{3}i \\) is 2.").
        value = copula_value(line, question)
        if value is not None:
            return value, ""
        for sep in (":", "="):
            k = line.rfind(sep)
            if k >= 0 and any(ch.isdigit() for ch in line[k + 1 :]):
                status, value, _ = parse_math(line[k + 1 :], question)
                if status == OK:
                    return value, ""
        # "... = 72 clips in 2 months": the result of the last "=", else the line's last number.
        k = line.rfind("=")
        first_after = MATH_TOKEN.search(line, k + 1) if k >= 0 else None
        tokens = [first_after] if first_after else list(MATH_TOKEN.finditer(line))
        if tokens and not first_after:
            # Without "=", only a number that ends the line ("... is 150 students.") is a result;
            # an exponent or index in the middle of a formula ("a^2 - b^2") is not.
            last = tokens[-1]
            if line[max(0, last.start() - 1) : last.start()] in ("^", "_"):
                break
        if tokens:
            value = clean_math(tokens[-1].group(0), question)
            if looks_math(value):
                return value, ""
        break
    return NO_VALID_ANSWER, _why_none(text)


_EQUATION_WORD = re.compile(r"\b(?:equation|ODE|differential\s{1,3}equation|model|relation|law)\b", re.I)


# "Thus, the complete equation of motion is:\n\n\\[\n\\dot{v} = -\\frac{b}{m} v + \\frac{1}{m} f\n\\]": an
# equation named, stated ("is", "given by") and displayed; "we plug it into the equation:\n\\[...\\]" is a
# step. Singular: "the equations are" displays several, one display is a part.
_NAMED_DISPLAY = re.compile(
    r"\b(?:equation|ODE|law)\b[^.:=\n$\\]{0,80}?\s(?:(?:is|becomes|reads)(?:\s{1,3}given\s{1,3}by)?|given\s{1,3}by)"
    r"\s{0,3}:?\s{0,3}(?:\\\[|\$\$)(?P<eq>[^$]{3,200}?)(?:\\\]|\$\$)",
    re.I,
)
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# The question asks for an equation ("Formulate the state-determined equation of motion", "Find the
# equation of the tangent line"), not only mentions one ("The real root of the equation ... Find a+b+c").
_ASKS_FOR_EQUATION = re.compile(
    r"\b(?:find|formulate|write|derive|determine|give|state|obtain|set\s{1,3}up|what\s{1,3}is)\b"
    r"[^.?;$]{0,60}?\bequations?\b",
    re.I,
)
STATED_EQUATION_WINDOW = 3_000  # characters before the end: a statement of the result, not a step


def _stated_equation(text: str, question: str) -> str | None:
    """The last equation the response names and displays, where the question asks for an equation and
    no claim phrase answered: the working after it (the matrices of its state-space form, a check)
    explains it."""
    if not _ASKS_FOR_EQUATION.search(question[:MAX_QUESTION]):
        return None
    lo = max(0, len(text) - STATED_EQUATION_WINDOW)
    if text.find("\\[", lo) < 0 and text.find("$$", lo) < 0:
        return None
    last = None
    for m in _NAMED_DISPLAY.finditer(text, lo):
        last = m
    if last is None:
        return None
    eq = " ".join(last.group("eq").split())
    prose = _LATEX_COMMAND.sub(" ", eq)
    if "=" not in eq or any(len(w) >= 4 and w.isalpha() for w in re.split(r"[^A-Za-z]+", prose)):
        return None
    return eq


def _equation_answer(lines: list[str], question: str) -> str | None:
    """A response that ends on a standalone equation it introduced as the result ("... we obtain
    the equation\n\ndx/dt = kx - a"), or that the question asks for, answers with the equation; so
    does a last sentence that names it ("Thus the differential equation is dy/dt = -ry + b.")."""
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return None
    if not is_formula_line(body[-1]):
        return _named_equation(body[-1], question)
    before = " ".join(body[-3:-1])[-200:]
    if not (_EQUATION_WORD.search(before) or _EQUATION_WORD.search(question[:MAX_QUESTION])):
        return None
    eq = body[-1].strip().strip("$").rstrip(".").strip()
    if eq.startswith("\\[") and eq.endswith("\\]"):
        eq = eq[2:-2].strip()
    return eq


# A last sentence that names an equation and states it: "the (differential) equation (of the line)
# is ...", "the governing equation: ...". The head holds no "=": "x = 5 is the relation" is not one.
_NAMED_EQUATION = re.compile(
    r"\b(?:equation|ODE|relation|law)s?\b[^.:=\n]{0,80}?"
    r"(?:\s(?:is|becomes|reads)(?:\s{1,3}given\s{1,3}by)?\s{0,3}:?|:)\s{0,3}(?P<eq>[^:\n]{3,160}?)\s{0,3}$",
    re.I,
)
# "x = 5", "2x = 10": an equation solved for a number, whose value the rules after this one read,
# unless the question asks for an equation ("... the equation of the circle is (x-1)^2 + y^2 = 9").
_NUMBER_VALUE = re.compile(r"=\s{0,3}[-+]?\d[\d,]*(?:\.\d+)?[$\s).]*$")


def _named_equation(line: str, question: str) -> str | None:
    sentences = [x for x in P.SENT_SPLIT.split(line.strip()) if x.strip()]
    if not sentences or "=" not in sentences[-1]:
        return None
    m = _NAMED_EQUATION.search(sentences[-1].rstrip().rstrip("."))
    if m is None or not is_formula_line(m.group("eq")):
        return None
    if _NUMBER_VALUE.search(m.group("eq")) and not equation_asked(question):
        return None
    eq = m.group("eq").strip().strip("$").strip()
    if eq.startswith(("\\(", "\\[")) and eq.endswith(("\\)", "\\]")):
        eq = eq[2:-2].strip()
    return eq


# The last-line fallback reads responses up to this long (a short worked answer); longer reasoning
# must state its answer.
MAX_FALLBACK_MATH = 6_000


def _why_none(text: str) -> str:
    """The reason a response without any answer gives none: a refusal, else none found."""
    lo = max(0, len(text) - MENTION_WINDOW)
    return "refusal" if search_anchored(P.REFUSAL, text, P.REFUSAL_ANCHORS, lo, len(text)) else "none_found"


def _value_sentence(text: str, c: Claim) -> str:
    """The claim's value up to its sentence's end (at most VALUE_SPAN characters)."""
    span = text[c.pos : c.pos + VALUE_SPAN]
    end = SENTENCE_END.search(span)
    return span[: end.start()] if end else span


def _ambiguity(text: str, c: Claim) -> str:
    """Why a claim of several values answers nothing: alternatives ("either (B) or (G)", "9 or 7")
    are a hedge, a list ("(A, E, I)", "B and D") several answers."""
    return "hedged" if _ALTERNATIVE.search(_value_sentence(text, c)) else "several"


def _refused_in(text: str, c: Claim) -> bool:
    """The claim's value is a refusal ("The answer is (This question requires additional information ...")."""
    span = _value_sentence(text, c)
    return search_anchored(P.REFUSAL, span, P.REFUSAL_ANCHORS, 0, len(span)) is not None


VALUE_SPAN = 120  # characters of a claim's value read for "or" or a refusal
_ALTERNATIVE = re.compile(r"\b(?:either|or)\b", re.I)


def _last_claims(text: str, claims: list[Claim], question: str, ix: Index | None) -> _Scan:
    """The last claim of tier normal or above, and what stands after it (read from the end)."""
    scan = _Scan()
    for n, c in enumerate(reversed(claims)):
        if n >= MAX_CLAIMS_PARSED:
            break
        if known_below(c, P.INITIAL):
            continue  # a hedged claim counts for nothing below
        if (c.tier == P.WEAK and scan.best_weak is not None) or (
            c.tier == P.INITIAL and scan.best_initial is not None
        ):
            continue  # only the last weak (initial) claim is read: a step-by-step chain has dozens
        parse_claim(text, c, ix, question)
        if c.status == OK and c.tier >= P.NORMAL:
            scan.chosen = c
            break
        if c.tier >= P.NORMAL and (c.status == AMBIG or (c.status == OUT and c.counts_out)):
            scan.bad_after = _ambiguity(text, c) if c.status == AMBIG else "out_of_range"
        elif c.tier >= P.NORMAL and c.status == JUNK and _refused_in(text, c):
            scan.bad_after = "refusal"  # "The answer is (This question requires additional information ...)"
        if c.status == OK and c.tier == P.WEAK and scan.best_weak is None:
            scan.best_weak = scan.weak_after = c
        if c.status == OK and c.tier == P.INITIAL and scan.best_initial is None:
            scan.best_initial = c
    return scan


@dataclass
class _Scan:
    chosen: Claim | None = None
    bad_after: str = ""  # the reason an "X or Y" or out-of-range answer after the chosen one gives
    weak_after: Claim | None = None
    best_weak: Claim | None = None
    best_initial: Claim | None = None


def decide_prose(text: str, question: str, ix: Index | None) -> tuple[str, str, str]:
    """The key answer the prose `text` commits to, how sure that is (LIKELY or UNSURE), and for
    [No valid answer] why (a NO_ANSWER_REASONS code).

    The last claim of the highest tier wins; a later ambiguous or out-of-range claim, a retraction
    or hedging withdraws it; without any claim, the fallbacks read a bare or lone answer.
    """
    claims = find_claims(text, math=ix is None)
    text, claims = _cut_continuation(text, claims, question, ix)
    answered_len = len(text)
    if ix is None:
        text, claims = _cut_invented_problem(text, claims, question)
    went_on = len(text) < answered_len  # a response that went on to invent a problem: never certain
    text, claims = _cut_recap(text, claims, question, ix)
    recap_at = cut_trailing_recap(text, question, ix)
    if recap_at is not None:
        text, claims = _cut_at(text, claims, recap_at)
    scan = _last_claims(text, claims, question, ix)
    if scan.bad_after:
        return NO_VALID_ANSWER, UNSURE, scan.bad_after
    chosen = scan.chosen
    if chosen is not None and scan.weak_after is not None:
        # A weaker claim after a correction marker replaces the earlier answer.
        if P.CORRECTION.search(text, chosen.pos, scan.weak_after.start):
            chosen = scan.weak_after
    if chosen is not None and chosen.tier >= P.NORMAL:
        several = _several_answers(text, claims, chosen, question, ix)
        if several is not None:
            return several
        if _rejects_every_option(text, chosen, ix):
            return NO_VALID_ANSWER, UNSURE, "out_of_range"
        if ix is not None and _cannot_select(text, chosen.pos):
            return NO_VALID_ANSWER, UNSURE, "refusal"
    if chosen is None:
        last_line = _last_line_over_far_weak(text, scan.best_weak, question) if ix is None else None
        if last_line is not None:
            return last_line, UNSURE, ""
        if scan.best_weak is not None:
            chosen = scan.best_weak
        elif scan.best_initial is not None:
            # "My first answer was 11, but let me check..." and then nothing: withdrawn.
            if truncated(text) or P.CORRECTION.search(text, scan.best_initial.pos):
                return NO_VALID_ANSWER, UNSURE, "truncated" if truncated(text) else "hedged"
            chosen = scan.best_initial
    if chosen is not None:
        answer, confidence, why = _committed(text, chosen, question, ix)
        if (
            confidence == LIKELY
            and recap_at is None
            and not went_on
            and _concludes(text, claims, chosen, question, ix)
        ):
            confidence = CERTAIN  # (a cut recap contradicted the answer: never certain)
        if confidence == UNSURE and answer != NO_VALID_ANSWER:
            undone = _left_undone(text)
            if undone:
                return NO_VALID_ANSWER, UNSURE, undone
            if chosen.tier <= P.WEAK and _long_and_cut_off(text):
                return NO_VALID_ANSWER, UNSURE, "truncated"
        return answer, confidence, why
    undone = _left_undone(text)
    if undone:
        return NO_VALID_ANSWER, UNSURE, undone
    answer, why = _fallback_math(text, question) if ix is None else _fallback_choice(text, question, ix)
    if answer != NO_VALID_ANSWER and _fallback_hedged(text, answer, question, ix):
        return NO_VALID_ANSWER, UNSURE, "hedged"
    return answer, UNSURE, why


def _fallback_hedged(text: str, answer: str, question: str, ix: Index | None) -> bool:
    """The fallback's answer is one of several the end of the response weighs (and not its final
    statement's)."""
    return not (ix is None and answer == _final_statement(text, question)) and _fluctuates(
        text, max(0, len(text) - MENTION_WINDOW), answer, ix, committed=False
    )


WEAK_REACH = 1_000  # characters of working after a weak claim that make it a step


def _last_line_over_far_weak(text: str, weak: Claim | None, question: str) -> str | None:
    """The last line's result instead of a weak claim long before the end (math): "So, each set of
    three cookies costs $1." and then 1,500 characters of working that end "Profit: $93 - $15 = $78.
    ... I think that's the right answer." The claim is a step. None where the weak claim stays: it is
    near the end, the text is cut off (its last line is mid-working), it defers the work, or the
    fallback finds nothing or hedges."""
    if weak is None or len(text) - weak.pos <= WEAK_REACH or truncated(text) or _left_undone(text):
        return None
    answer, _ = _fallback_math(text, question)
    if answer == NO_VALID_ANSWER or _fallback_hedged(text, answer, question, None):
        return None
    return answer


def _left_undone(text: str) -> str:
    """The reason an inferred answer (a weak claim, the last number of a step) is none, from the end
    of the response: "none_found" where it leaves the work undone ("Let me know if you'd like me to
    work through the detailed calculations.", "After solving the equation, you'll find n."),
    "refusal" where it says the answer cannot be had ("We cannot determine f(4) with the information
    provided."); "" otherwise. A stated answer ("The answer is 5.") is not read against these."""
    lo = max(0, len(text) - P.DEFERRAL_WINDOW)
    if P.DEFERRAL.search(text, lo):
        return "none_found"
    return "refusal" if P.UNDETERMINED.search(text, lo) else ""


# characters (~1,000 tokens): a chain this long that stops mid-sentence ran into a token cap
LONG_CHAIN = 4_000


def _long_and_cut_off(text: str) -> bool:
    """A long chain of reasoning cut off mid-sentence (not in a loop): its weak claims ("So, a =
    sqrt(0.51) * c.") are steps of a derivation that never reached its result."""
    return len(text) >= LONG_CHAIN and truncated(text) and trailing_loop(text)[0] < 0


def _final_statement(text: str, question: str) -> str | None:
    """The value the response's last sentence states ("The last nonzero digit ... is 4."): it settles
    the deliberation before it ("Wait, maybe ..."), which therefore hedges nothing."""
    t = text.rstrip()
    # An unfinished last sentence ("So, for each vertex, there are 5 vertices") states nothing.
    if not t.endswith((".", "!")):
        return None
    line = t[t.rfind("\n") + 1 :]
    sentences = [x for x in P.SENT_SPLIT.split(line) if x.strip()]
    return copula_value(sentences[-1], question) if sentences else None


def _committed(text: str, chosen: Claim, question: str, ix: Index | None) -> tuple[str, str, str]:
    """The chosen claim's answer, unless a retraction or hedging after it withdraws it."""
    retraction = None
    for n, r in enumerate(P.RETRACTION.finditer(text, chosen.pos, chosen.pos + MENTION_WINDOW)):
        if n >= 50:
            break
        retraction = r
    if retraction is None:
        # "\\boxed{7}, but that is wrong; ...": disowned in its own sentence.
        sentence = SENTENCE_END.search(text, chosen.pos, chosen.pos + MAX_DISOWNED_SENTENCE)
        retraction = P.DISOWNED.search(
            text, chosen.pos, sentence.start() if sentence else chosen.pos + MAX_DISOWNED_SENTENCE
        )
    if retraction is not None:
        # "The answer is 78. Wait, I made an error. ... 3 * 32 = 96 miles." The withdrawn answer
        # is replaced by what follows, or by nothing.
        rest = text[retraction.end() :]
        answer, why = _fallback_math(rest, question) if ix is None else _fallback_choice(rest, question, ix)
        return answer, UNSURE, why
    if _fluctuates(text, chosen.start, chosen.value, ix, committed=True) and not (
        ix is None and _final_statement(text, question) == chosen.value
    ):
        return NO_VALID_ANSWER, UNSURE, "hedged"
    return chosen.value, (LIKELY if chosen.tier >= P.NORMAL else UNSURE), ""


MAX_DISOWNED_SENTENCE = 300  # characters from a claim's value to the end of its sentence, at most
MAX_CONCLUSION_TAIL = 200  # characters after the concluding claim's value
MAX_CONSISTENT_CLAIMS = 50
# Doubt around the concluding claim keeps it `likely`: "The answer is probably C", "... C, I think."
_DOUBT = re.compile(
    r"\b(?:probably|likely|maybe|perhaps|possibly|presumably|I\s{1,3}(?:think|guess|believe|suppose)|not\s{1,3}(?:sure|certain)"
    r"|unsure|could|might|seems?)\b|\?",
    re.I,
)


def _concludes(text: str, claims: list[Claim], chosen: Claim, question: str, ix: Index | None) -> bool:
    """The chosen claim ends the response and every explicit claim in it names the same answer: a
    chain of thought that concludes "The answer is (C)." once, or repeats it, and nothing else."""
    if chosen.backward or chosen.tier < P.NORMAL or len(text) - chosen.pos > MAX_CONCLUSION_TAIL:
        return False
    if len(claims) > MAX_CONSISTENT_CLAIMS:
        return False  # decided before any claim is parsed (the claims are not read after this)
    if truncated(text) or _DOUBT.search(text, max(0, chosen.start - 60)):
        return False
    if ix is None and (len(chosen.value) > 40 or " " in chosen.value.strip()):
        return False  # a long or spaced formula: the model reads its form better
    for c in claims:
        if known_below(c, P.NORMAL):
            continue
        parse_claim(text, c, ix, question)
        if c.tier < P.NORMAL:
            continue
        if c.status in (AMBIG, OUT) or (c.status == OK and c.value != chosen.value):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Several answers at once: boxes of several requested values, alternatives, per-part answers.

MAX_BOX_GAP = 160  # characters between two boxes of one final statement
MAX_BOXES = 8  # boxes of one final statement


def _several_answers(
    text: str, claims: list[Claim], chosen: Claim, question: str, ix: Index | None
) -> tuple[str, str, str] | None:
    """The final statement gives several answers: math boxes of several values ("\\boxed{7} goats
    and \\boxed{4} helicopters" -> "7, 4"), alternatives ("\\boxed{9} (or \\boxed{7})" -> hedged;
    one quantity in two units -> the asked unit), or per-part choices (multi_part). None: one answer."""
    if ix is None:
        return _math_boxes(text, claims, chosen, question)
    return _choice_boxes(text, claims, chosen, question, ix) or _per_part(text, claims, chosen, question, ix)


def _box_chain(text: str, claims: list[Claim], chosen: Claim, question: str, ix: Index | None) -> list[Claim]:
    """The boxes of the chosen box's statement: those just before it (at most MAX_BOX_GAP characters
    apart, same paragraph), parsed, with a value."""
    if not text.startswith(("\\boxed", "\\fbox"), chosen.start):
        return []
    boxes = [c for c in claims if c.start <= chosen.start and text.startswith(("\\boxed", "\\fbox"), c.start)]
    chain = [chosen]
    for c in reversed(boxes[-MAX_BOXES:-1]):
        gap = text[c.start : chain[0].start]
        if len(gap) - _box_len(text, c) > MAX_BOX_GAP or "\n\n" in gap:
            break
        chain.insert(0, c)
    for c in chain:
        parse_claim(text, c, ix, question)
    return [c for c in chain if c.status == OK]


def _box_joins(text: str, chain: list[Claim]) -> list[str]:
    return [text[a.start + _box_len(text, a) : b.start] for a, b in zip(chain, chain[1:], strict=False)]


def _math_boxes(text: str, claims: list[Claim], chosen: Claim, question: str) -> tuple[str, str, str] | None:
    chain = _box_chain(text, claims, chosen, question, None)
    values = list(dict.fromkeys(c.value for c in chain))
    if len(values) < 2:
        return None
    if any(_OR.search(j) for j in _box_joins(text, chain)):
        unit = _asked_unit(chain, text, question)
        if unit is not None:
            return unit, UNSURE, ""
        return NO_VALID_ANSWER, UNSURE, "hedged"
    return _in_question_order(chain, text, question), UNSURE, ""


def _choice_boxes(
    text: str, claims: list[Claim], chosen: Claim, question: str, ix: Index
) -> tuple[str, str, str] | None:
    """Several options boxed in one sentence ("\\boxed{C} and \\boxed{D}"): several answers, or
    alternatives when joined by "or". A box in a sentence of its own picks one ("the roots are
    \\boxed{-1} and \\boxed{1}. ... hence the real root we seek is \\boxed{-1}.")."""
    chain = _box_chain(text, claims, chosen, question, ix)
    joins = _box_joins(text, chain)
    k = len(chain) - 1  # the chosen box and those before it in its sentence
    while k > 0 and not SENTENCE_END.search(joins[k - 1]):
        k -= 1
    chain, joins = chain[k:], joins[k:]
    if len({c.value for c in chain}) < 2:
        return None
    hedged = any(_OR.search(j) for j in joins)
    return NO_VALID_ANSWER, UNSURE, "hedged" if hedged else "several"


_LABEL_WORD = re.compile(r"[A-Za-z]{3,}(?:\s{1,3}\d{1,2})?")
_LABEL_STOP = frozenset(
    "the and that this which are for with its final answer answers boxed text thus".split()
)


def _in_question_order(chain: list[Claim], text: str, question: str) -> str:
    """Several boxed values as one answer: the one the question's last line asks for, when it asks
    for one that a box's label names ("Subproblem 1: What is the distance modulus?"); else all, in
    the order the question names their labels ("maximum and minimum"), else as written."""
    qlow = question.lower()
    last_line = qlow.strip().rsplit("\n", 1)[-1]
    firsts, asked = [], []
    prev_end = max(0, chain[0].start - 120)
    for c in chain:
        lo = max(prev_end, text.rfind("\n", 0, c.start) + 1, c.start - 120)
        words = [w.lower() for w in _LABEL_WORD.findall(text[lo : c.start]) if w.lower() not in _LABEL_STOP]
        where = [qlow.find(w) for w in words if qlow.find(w) >= 0]
        firsts.append(min(where) if where else -1)
        if words and any(w in last_line for w in words):
            asked.append(c.value)
        prev_end = c.start + _box_len(text, c)
    if len(set(asked)) == 1 and len(asked) < len(chain) and not _asks_several(last_line):
        return asked[0]
    values = [c.value for c in chain]
    if -1 not in firsts and len(set(firsts)) == len(firsts):
        values = [v for _, v in sorted(zip(firsts, values, strict=True))]
    return ", ".join(dict.fromkeys(values))


def _asks_several(line: str) -> bool:
    """The question's last line asks for more than one value ("... and ...", "both", "Compute two
    other 6-labels")."""
    return bool(re.search(r"\band\b|\bvalues\b|\bboth\b|\b(?:two|three|four|five|six|several)\s", line))


_OR = re.compile(r"\bor\b|\bequivalently\b|/", re.I)
_UNIT_WORD = re.compile(
    r"\\(?:text|mathrm|mbox)\s{0,3}\{\s{0,3}([A-Za-z][A-Za-z ./]{0,30})\}|([A-Za-z]{1,20}(?:/[A-Za-z]{1,10})?)\s{0,3}$"
)


def _box_len(text: str, c: Claim) -> int:
    k = text.find("{", c.start)
    inner = braced(text, k) if k >= 0 else None
    return (k - c.start + len(inner) + 2) if inner is not None else len("\\boxed{")


def _asked_unit(chain: list[Claim], text: str, question: str) -> str | None:
    """Of one quantity boxed in two units, the one whose unit the question names."""
    low = question.lower()
    picked = []
    for c in chain:
        k = text.find("{", c.start)
        raw = (braced(text, k) or "") if k >= 0 else ""
        m = _UNIT_WORD.search(raw.strip())
        unit = (m.group(1) or m.group(2)).strip().lower() if m else ""
        if unit and re.search(r"\b" + re.escape(unit) + r"\b", low):
            picked.append(c.value)
    return picked[0] if len(set(picked)) == 1 else None


_PART_AFTER = re.compile(
    r"\b(?:for|in)\s{1,3}(?:the\s{1,3})?(?:part|question|statement|sub-?question)\s{0,3}\(?(?:[a-h1-6]|i{1,3}|iv)\)?\b",
    re.I,
)


def _other_choice_after(text: str, chosen: Claim, ix: Index) -> bool:
    """Another option named in the rest of the chosen claim's sentence."""
    end = min(len(text), chosen.pos + 200)
    nl = text.find("\n", chosen.pos + 3, end)
    # A line that ends on "and" or "," goes on: "A. 2 kHz for part (a) and\nB. 20 kHz for part (b)."
    while nl >= 0 and text[chosen.pos : nl].rstrip().endswith((" and", ",", ";")):
        nl = text.find("\n", nl + 1, end)
    cut = [k for k in (text.find(".", chosen.pos + 3, end), nl) if k >= 0]
    vals = {v for _, _, v, neg in mentions(text, chosen.pos, min(cut) if cut else end, ix) if not neg}
    return bool(vals - {chosen.value})


_PART_MARK = re.compile(
    r"(?:^|\n)[ \t]{0,3}\d{1,2}[.)][ \t]"  # a numbered list item at a line start
    r"|(?:^|\n|(?<=[.!?])[ \t]{1,3})[ \t>*#]{0,6}(?:\(?[a-h]\)|\(?(?:i|ii|iii|iv|v|vi)\)|\([1-6]\)"
    r"|(?:for\s{1,3})?(?:part|statement|question)\s{1,3}(?:\(?[a-h1-6]\)?|one|two|three)\b"
    # roman numerals for parts only: "Statement I ... Statement II" weighs statements of one question
    r"|(?:for\s{1,3})?part\s{1,3}\(?(?:i{1,3}|iv|vi?)\)?(?![\w(])"
    r"|(?:for\s{1,3})?the\s{1,3}(?:first|second|third)\s{1,3}(?:part|question|statement|scenario)\b)",
    re.I,
)


def _rejects_every_option(text: str, chosen: Claim, ix: Index | None) -> bool:
    """After the chosen option, the response rejects them all ("The closest option is (A), but it has
    incorrect values. Therefore, none of the options are correct.") -- unless the chosen option is
    itself "None of the above"."""
    if ix is None or not P.NONE_CORRECT.search(text, chosen.pos, chosen.pos + MENTION_WINDOW):
        return False
    return not _NONE_OPTION.match(dict(ix.items).get(chosen.value, ""))


def _cannot_select(text: str, pos: int) -> bool:
    """P.NO_SELECTION after pos (within MENTION_WINDOW), looked for only where "not", "n't" or
    "unable" is (tested in place: most rows with a chosen option have none of them)."""
    end = pos + MENTION_WINDOW
    if all(text.find(w, pos, end) < 0 for w in ("not", "n't", "unable")):
        return False
    return P.NO_SELECTION.search(text[pos:end]) is not None


_NONE_OPTION = re.compile(r"\W{0,3}(?:none|neither|no\b)", re.I)  # "None of the above", "Neither"


def _part_marks(text: str, end: int) -> list[int]:
    """[m.start() for m in _PART_MARK.finditer(text, 0, end)], the pattern tried only where a match
    can start: the text's start, a line break, a space or tab right after ".", "!" or "?" (scanned
    position by position, the pattern cost more than the claim scans of a chain of thought)."""
    starts = [0]
    k = text.find("\n", 0, end)
    while k >= 0:
        starts.append(k)
        k = text.find("\n", k + 1, end)
    last = max(0, end - 1)  # a sentence end before the last position, with its space inside `end`
    for stop in ".!?":
        k = text.find(stop, 0, last)
        while k >= 0:
            if text[k + 1] in " \t":
                starts.append(k + 1)
            k = text.find(stop, k + 1, last)
    return [m.start() for m in finditer_from(_PART_MARK, text, starts, end)]


def _per_part(
    text: str, claims: list[Claim], chosen: Claim, question: str, ix: Index
) -> tuple[str, str, str] | None:
    """Answers to several parts ("a) ... The answer is (C). b) ... The answer is (E).") without one
    overall choice commit to no single option."""
    if _PART_AFTER.search(text, chosen.pos, chosen.pos + 30) and _other_choice_after(text, chosen, ix):
        return NO_VALID_ANSWER, UNSURE, "multi_part"  # "the answer is (C) for part a and (F) for part b"
    parts = _part_marks(text, chosen.start)
    if len(parts) < 2 or parts[-1] > chosen.start:
        return None
    earlier = []
    for c in claims:
        if c.start >= parts[-1]:
            break
        if c.start >= parts[0] and not known_below(c, P.NORMAL):
            parse_claim(text, c, ix, question)
            if c.status == OK and c.tier >= P.NORMAL:
                earlier.append(c.value)
    if earlier and any(v != chosen.value for v in earlier):
        if not P.CORRECTION.search(text, parts[-1], chosen.start) and not P.STRONG_CTX.search(
            text[max(0, chosen.start - 40) : chosen.pos]
        ):
            return NO_VALID_ANSWER, UNSURE, "multi_part"
    return None


# A recap of the few-shot examples' answers after the real answer ("Now, let's总结以上答案: The
# answer is H. ... The answer is J."): not the answer.
_RECAP = re.compile(
    r"总结|以上答案|\brecap\b|\bsummar(?:y|ize|ise)\s{1,3}(?:of\s{1,3})?(?:the\s{1,3})?"
    r"(?:above\s{1,3}|previous\s{1,3}|all\s{1,3}(?:the\s{1,3})?)?(?:final\s{1,3})?(?:answers|questions)\b"
    # a list of the few-shot questions' answers under its own heading: "The answers are:\n1. ..."
    r"|^[ \t=#*]{0,6}(?:the\s{1,3})?answers\s{1,3}are\s{0,3}:[ \t]{0,3}$|\bfor\s{1,3}the\s{1,3}other\s{1,3}questions\b"
    r"|\b(?:for|to)\s{1,3}(?:each|every|all(?:\s{1,3}the)?)\s{1,3}(?:of\s{1,3}the\s{1,3})?questions?\b",
    re.I | re.M,
)
# Where a _RECAP match can start (patterns.Anchor): searched there only, not at every position.
RECAP_ANCHORS: tuple[P.Anchor, ...] = (
    (("总结",), ("总结",), 0, 0, False),
    (("以上答案",), ("以上答案",), 0, 0, False),
    (("recap",), ("recap",), 0, 0, False),
    (("summar",), ("summar",), 0, 0, False),
    # "The answers are:" at a line start, after up to 6 of " \t=#*" and "the "
    ((" ", "\t", "=", "#", "*", "the", "answers"), ("answers",), 0, 12, False),
    (("for",), ("question",), 14, 20, False),  # "for the other questions"
    (("for", "to"), ("question",), 7, 32, False),  # "for each of the questions", "to all the questions"
)


def _may_recap(text: str) -> bool:
    """Whether _RECAP can match: a substring test for its words, not a case-insensitive scan. ("ſ"
    is one re.I reads as "s" that lower() keeps as it is.)"""
    low = text.lower()
    return (
        "recap" in low
        or "summar" in low
        or "answers" in low
        or "question" in low
        or "总结" in text
        or "以上答案" in text
        or "ſ" in text
    )


def _cut_recap(text: str, claims: list[Claim], question: str, ix: Index | None) -> tuple[str, list[Claim]]:
    if len(claims) < 3:
        return text, claims
    m = search_anchored(_RECAP, text, RECAP_ANCHORS, 0, len(text)) if _may_recap(text) else None
    if not m:
        return text, claims
    before = [c for c in claims if c.start < m.start()]
    after = [c for c in claims if c.start > m.end()]
    if len(after) < 2 or not before:
        return text, claims
    for c in reversed(before[-20:]):
        if known_below(c, P.NORMAL):
            continue
        parse_claim(text, c, ix, question)
        if c.status == OK and c.tier >= P.NORMAL:
            return text[: m.start()], before
    return text, claims


# One line after the real answer that names another one under a recap header, with no reasoning
# between: "The answer is (J).\nFinal Answer: The answer is (F)." / "... (E).\nNow, combining all
# the answers:\nThe answer is (B)." (Qwen1.5-Chat on MMLU-Pro, ~5% of one model's 12,000 answers,
# the same letter for question after question: a few-shot example's answer, not a correction);
# "Answer: The answer is (H)." (Phi-3-mini: the few-shot format's "Answer:" said again).
_RECAP_LEAD = (
    r"(?:now,?\s{1,3})?(?:let'?s\s{1,3}|let\s{1,3}us\s{1,3})?"  # "Now, let's ..." before a recap verb
)
_TRAILING_RECAP = re.compile(
    r"\n[ \t*#]{0,6}(?:final\s{1,3}answers?\s{0,3}\**\s{0,3}:"
    r"|answer\s{0,3}\**\s{0,3}:(?=[ \t*]{0,4}the\s{1,3}answer\s{1,3}is\b)"
    rf"|{_RECAP_LEAD}(?:combin|consider|summar|recap)\w{{0,6}}\b[^\n:]{{0,80}}:"
    rf"|{_RECAP_LEAD}combin\w{{0,6}}\s{{1,3}}all\s{{1,3}}(?:the\s{{1,3}})?answers\s{{0,3}}\.)"
    r"[ \t*]{0,4}\n{0,2}[ \t]{0,4}(?P<tail>[^\n]{1,60})\s{0,8}$",
    re.I,
)
MAX_TRAILING_RECAP = 240  # characters at the end where the header and its line can be
# A header over all the answers ("Now, let's summarize all the answers:", "Now, considering all the
# questions and answers:") after the real answer opens the few-shot recap whatever follows it: more
# "The answer is X." lines, the examples' option lists (Qwen1.5-Chat on MMLU-Pro).
_RECAP_ALL_HEADER = re.compile(
    rf"\n[ \t*#]{{0,6}}{_RECAP_LEAD}"
    r"(?:combin|consider|summar|recap|review|compil)\w{0,6}\s{1,3}(?:all\s{1,3})?(?:of\s{1,3})?(?:the\s{1,3})?"
    r"(?:questions\s{1,3}and\s{1,3})?answers\b[^\n]{0,40}[:.]",
    re.I,
)
MAX_RECAP_BLOCK = 2_500  # characters at the end where such a header can be


def cut_trailing_recap(text: str, question: str, ix: Index | None) -> int | None:
    """Where a trailing recap starts, or None. A recap line (_TRAILING_RECAP) names exactly one answer,
    and the line before it ends on one explicit answer that is a different one; a header over all
    the answers (_RECAP_ALL_HEADER) after such a line opens a recap of any length."""
    if ix is None or "\n" not in text[-MAX_TRAILING_RECAP:]:
        return None
    lo = len(text) - MAX_TRAILING_RECAP
    m = _TRAILING_RECAP.search(text, max(0, lo))
    block = None if m is not None else _RECAP_ALL_HEADER.search(text, max(0, len(text) - MAX_RECAP_BLOCK))
    if m is None and block is None:
        return None
    real = _answer_line_before(text, (m or block).start(), question, ix)
    if real is None:
        return None
    if block is not None:
        return block.start()
    recap = claim_values(m.group("tail"), question, ix) or claim_values(text[m.start() :], question, ix)
    if len(recap) == 1 and recap != real:
        return m.start()
    # "Now, let's combine all the answers.\nThe answer is (A, D, F, G, H, J)." -- the few-shot
    # examples' letters with this question's own among them (cut off or not): a recap, not a choice.
    listed = _listed_letters(m.group("tail"), ix)
    if listed is not None and real <= listed:
        return m.start()
    return None


def _answer_line_before(text: str, at: int, question: str, ix: Index) -> set[str] | None:
    """The one answer the line before `at` ends on ("... The answer is (D)."), or None: no explicit
    answer there, several, or a correction in its last sentence (one earlier in the line, "rather than
    what is actually observed", names no other answer: the line's claims must all be this one)."""
    before = text[:at].rstrip()
    line = before[before.rfind("\n") + 1 :]
    sentences = [x for x in P.SENT_SPLIT.split(line) if x.strip()]
    if not sentences or P.CORRECTION.search(sentences[-1]) or P.RETRACTION.search(sentences[-1]):
        return None
    real = claim_values(sentences[-1], question, ix)  # the line ends on its answer, nothing after it
    if len(real) != 1 or claim_values(line, question, ix) != real:
        return None
    return real


_LISTED_LETTER = re.compile(r"(?<![A-Za-z])[A-Z](?![A-Za-z])")


def _listed_letters(tail: str, ix: Index) -> set[str] | None:
    """The options of a bracketed list of two or more letters in `tail` ("(A, D, F, G, H, J)", also
    cut off: "(A, B, C, D"), or None."""
    k = tail.find("(")
    if k < 0:
        return None
    letters = [ix.letters[x] for x in _LISTED_LETTER.findall(tail, k) if x in ix.letters]
    return set(letters) if len(letters) >= 2 else None


def claim_values(text: str, question: str, ix: Index | None) -> set[str]:
    """The distinct values the answer claims (tier normal or above) in text state."""
    values = set()
    for c in find_claims(text, math=ix is None)[:MAX_CLAIMS_PARSED]:
        if known_below(c, P.NORMAL):
            continue
        parse_claim(text, c, ix, question)
        if c.status == OK and c.tier >= P.NORMAL:
            values.add(c.value)
    return values


FINAL_STATEMENT_WINDOW = 1_500


def decide_final_statement(text: str, question: str, ix: Index | None, explicit: bool = False) -> str | None:
    """The answer a final statement of text commits to, or None: with explicit=False the last claim
    must be a strong one (a box, "the final answer is") in the last FINAL_STATEMENT_WINDOW
    characters; with explicit=True any explicit answer claim (tier normal or above) counts."""
    lo = 0 if explicit else max(0, len(text) - FINAL_STATEMENT_WINDOW)
    part = text[lo:]
    scan = _last_claims(part, find_claims(part, math=ix is None), question, ix)
    c = scan.chosen
    if scan.bad_after or c is None or (not explicit and c.tier < P.STRONG):
        return None
    answer, _, why = _committed(part, c, question, ix)
    return None if answer == NO_VALID_ANSWER else answer


# ---------------------------------------------------------------------------------------------
# The restricted prose formats the `certain` tier accepts: the whole last line is one claim, and
# nothing else in the text claims an answer ("The answer is (B).", "Answer: B", "#### 42").

MAX_RESTRICTED = 20_000
_R_LEAD = r"(?:(?:so|thus|therefore|hence),?\s{1,3})?(?:the\s{1,3})?(?:final\s{1,3}|correct\s{1,3})?"
_R_CLAIM = re.compile(
    rf"^{_R_LEAD}answer\s{{0,3}}(?:is\s{{0,3}}:?|:)\s{{0,3}}(?P<v>.{{1,200}}?)\s{{0,3}}\.?$", re.I
)
_R_HASHES = re.compile(r"^####\s{0,3}(?P<v>.{1,60}?)\s{0,3}$")
_R_ANY_CLAIM = re.compile(r"answer\s{0,3}(?:is|:)|####", re.I)
_R_ANY_BOXED = re.compile(r"\\(?:boxed|fbox)")
_R_LETTER = re.compile(r"^\(?(?P<l>[A-Z])\)?(?:[.:]\s{0,3}(?P<t>.{1,150}))?$")
_R_NUMBER = re.compile(r"^-?\d{1,15}(?:\.\d{1,10})?$")
_R_BOXED = re.compile(r"^\$?\\boxed\{(?P<v>[^{}]{1,60})\}\$?$")
_R_DECOR = re.compile(r"^[*_`\"'“”]+|[*_`\"'“”]+$")


def restricted_answer(text: str, kat: str, ix: Index | None) -> str | None:
    """The answer when the response is in a restricted format beyond doubt, else None."""
    if not text or len(text) > MAX_RESTRICTED or len(_R_ANY_CLAIM.findall(text)) != 1:
        return None
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = _R_DECOR.sub("", lines[-1]).strip() if lines else ""
    boxes = len(_R_ANY_BOXED.findall(text))
    if boxes > 1 or (boxes == 1 and not _R_ANY_BOXED.search(line)):
        return None
    m = _R_CLAIM.match(line) or _R_HASHES.match(line)
    if not m:
        return None
    value = _R_DECOR.sub("", m.group("v")).strip()
    if ix is None:
        boxed = _R_BOXED.match(value)
        value = boxed.group("v").strip() if boxed else value.strip("$ ")
        return value if _R_NUMBER.match(value) else None
    if kat == "alphabet_option":
        lm = _R_LETTER.match(value)
        if not lm or lm.group("l") not in ix.letters:
            return None
        letter = ix.letters[lm.group("l")]
        if lm.group("t") is not None and key_of(lm.group("t")) != ix.own_key.get(letter):
            return None
        return letter
    hits = [a for a in ix.values if key_of(a) == key_of(value.strip(" ."))]
    return hits[0] if len(hits) == 1 else None
