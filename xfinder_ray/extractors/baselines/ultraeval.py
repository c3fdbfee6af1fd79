"""UltraEval's RegEx answer extraction, re-implemented from UltraEval at commit 5d967b4e.

Followed: https://github.com/OpenBMB/UltraEval at commit 5d967b4ea5725ab1252904520bcaa87b40165b4b
(2024-09-17, the repository's last commit; it has no release tags):

- ``tasks/postprocess.py``: ``GSM8KPost``, ``MathPost`` (``math_postprocess``,
  ``normalize_final_answer``, ``_strip_string``), ``GaoKaoSingleChoicePost``,
  ``AGIEvalSingleAnswerPost``;
- ``metrics/prefix_match.py``, ``metrics/qa_match.py``, ``metrics/exact_match.py``: how its
  generative multiple-choice and classification configs (``datasets/*/config/*_gen.json``) score a
  response that has no post-processor (``"postprocess": ""``): MMLU, CommonsenseQA, MedMCQA,
  OpenBookQA, SIQA, WiC, ... use prefix_match; ARC, HellaSwag, PIQA, WinoGrande, BoolQ (v1
  prompts) use qa_match.

UltraEval's post-processors have no "no match" value of their own: GSM8KPost falls back to a word
of the response, MathPost to the normalised first sentence, the choice post-processors to ``''``.
Only ``''`` maps to ``[No valid answer]``.

prefix_match and qa_match are metrics: they compare the response with the correct answer. As
extractors they return the answer the metric credits (the correct one when it does, else the
option the response starts with / names), so judging their output reproduces the metric's verdict;
they read ``Record.correct_answer`` for that.
"""

from __future__ import annotations

import re

from xfinder_ray.extractors.baselines import _math
from xfinder_ray.extractors.baselines._common import (
    BASELINES_VERSION,
    correct_index,
    is_gsm8k_like,
    nva,
    range_letters,
    range_texts,
)
from xfinder_ray.records import Record

COMMIT = "5d967b4ea5725ab1252904520bcaa87b40165b4b"


def identity(function: str) -> str:
    return f"ultraeval@{COMMIT[:8]}:{function}/{BASELINES_VERSION}"


# ---------------------------------------------------------------------------------------------
# GSM8KPost

_HASHES = re.compile(r"#### (\-?[0-9\.\,]+)")


def _first_word_after(text: str, k: int) -> str | None:
    words = text[k:].split(None, 1)
    return words[0] if words else None


def gsm8k_post(text: str) -> str:
    """``GSM8KPost.postprocess``.

    1. the FIRST ``#### <number>``, commas removed;
    2. else the first word after the LAST ">>" (calculator annotations), else after the LAST "="
       anywhere in the response (even mid-reasoning: "3 + 4 = 7 apples ... The answer is 9" -> 7),
       with "$" stripped, commas removed and trailing periods dropped;
    3. else the last whitespace-separated token that is all digits ("1,000" and "18." are not);
    4. else the FIRST word of the response (the loop variable's last value), e.g. "I" for
       "I don't know" -- upstream has no "no match" value.
    """
    m = _HASHES.search(text)
    if m is not None:
        return m.group(1).strip().replace(",", "")
    for marker in (">>", "="):
        if marker in text:
            word = _first_word_after(text, text.rfind(marker) + len(marker))
            if word is not None:
                return word.strip("$").replace(",", "").rstrip(".").strip()
    words = text.split()
    for word in reversed(words):
        if word.isdigit():
            return word
    return words[0].strip() if words else text.strip()


# ---------------------------------------------------------------------------------------------
# MathPost

_MATH_CUES = ("final answer", "therefore", "thus", "hence")


def normalize_final_answer(text: str) -> str:
    return _math.normalize_final_answer(text, _math.ULTRAEVAL)


def strip_string(text: str) -> str:
    return _math.strip_string(text, _math.ULTRAEVAL)


def math_postprocess(text: str) -> str:
    """From the LAST line backwards, the first "."-separated piece of a line that says "final
    answer", "therefore", "thus" or "hence" (normalised); else the normalised first piece.

    Upstream loops over every line and piece; a cue never spans a newline or a ".", so the line
    is the one holding the last cue occurrence of the lower-cased text (lower-casing keeps every
    newline where it is), found without the loop.
    """
    low = text.lower()
    last = max(low.rfind(cue) for cue in _MATH_CUES)
    if last >= 0:
        k = low.count("\n", 0, last)
        line = text.split("\n", k + 1)[k]
        line_low = line.lower()
        first = min(i for i in (line_low.find(cue) for cue in _MATH_CUES) if i >= 0)
        j = line_low.count(".", 0, first)  # the first piece of the line with a cue
        return normalize_final_answer(line.split(".", j + 1)[j])
    return normalize_final_answer(text.split(".", 1)[0])


def math_post(text: str) -> str:
    """``MathPost``: strip_string(math_postprocess(text)); if strip_string raises (a trailing
    ``\\sqrt`` or ``\\frac``, two ``\\text{ `` units) the unstripped piece; never a no-match."""
    piece = math_postprocess(text)
    try:
        return strip_string(piece)
    except Exception:
        return piece


# ---------------------------------------------------------------------------------------------
# Single-choice post-processors


def gaokao_single_choice_post(text: str) -> str:
    """``GaoKaoSingleChoicePost``: the LAST of A-D anywhere in the response (E and beyond never;
    "A" as an article counts), or ``''``."""
    m = re.search(r"[A-D]", text[::-1])
    return m.group(0) if m else ""


_A_TO_G = re.compile(r"[A-G]")


def _lead_then_letter(text: str, lead: str) -> str | None:
    """``re.search(lead + '.*?([A-G])', text).group(1)`` in linear time: the first occurrence of
    the lead followed by an A-G later on its line (a later occurrence on the same line sees less)."""
    pos = 0
    n = len(text)
    while pos <= n:
        i = text.find(lead, pos)
        if i < 0:
            return None
        j = i + len(lead)
        eol = text.find("\n", j)
        eol = n if eol < 0 else eol
        m = _A_TO_G.search(text, j, eol)
        if m:
            return m.group(0)
        pos = eol + 1
    return None


def agieval_single_answer_post(text: str) -> str:
    """``AGIEvalSingleAnswerPost``: the first A-G after the first "answer is " that has one on its
    line, else after "答案是", else the first of A-F (not G) anywhere, else ``''``."""
    for lead in ("answer is ", "答案是"):
        found = _lead_then_letter(text, lead)
        if found is not None:
            return found
    for ch in text:
        if ch in "ABCDEF":
            return ch
    return ""


# ---------------------------------------------------------------------------------------------
# The metrics as extractors


def find_first_letter(text: str, n: int) -> str:
    """``QaMatch.find_first_letter``: the first space-separated token of the first line that is
    "(X)" or "X" (one trailing "." dropped) for the first n letters, as "(X)"; else ``''``."""
    letters = {f"({chr(65 + i)})" for i in range(n)}
    for token in text.split("\n", 1)[0].split(" "):
        if token.endswith("."):
            token = token[:-1]
        if token in letters:
            return token
        if f"({token})" in letters:
            return f"({token})"
    return ""


def qa_match_answer(rec: Record) -> str:
    """The option ``QaMatch`` credits: the gold when the first letter token is the gold's or the
    response (after an echoed question) starts with the gold's text; else the first letter token's
    option, else the option whose text the response starts with; else ``''``."""
    letters = range_letters(rec.answer_range)
    texts = range_texts(rec.answer_range)
    gold = correct_index("alphabet_option", rec.answer_range, rec.correct_answer)
    text = rec.llm_output.strip()
    found = find_first_letter(text, len(letters))
    if found and gold is not None and found == f"({chr(65 + gold)})":
        return letters[gold]
    question = rec.question.strip()
    if text.startswith(question):
        text = text[len(question) :].strip()
    if gold is not None and text.startswith(texts[gold].strip()):
        return letters[gold]
    if found:
        return letters[ord(found[1]) - 65]
    for letter, option in zip(letters, texts, strict=True):
        if option.strip() and text.startswith(option.strip()):
            return letter
    return ""


_MMLU = re.compile(r"(?<![a-z])mmlu", re.I)
_QA_MATCH_TASKS = re.compile(r"arc|hellaswag|piqa|winogrande", re.I)


def prefix_forms(rec: Record) -> tuple[list[str], list[str]]:
    """(the gold strings UltraEval's prompt for this task uses, the answers they stand for)."""
    if rec.key_answer_type == "alphabet_option":
        letters = range_letters(rec.answer_range)
        if _MMLU.search(rec.task):  # mmlu/transform_gen_v1.py: "(A)"
            return [f"({x})" for x in letters], letters
        return letters, letters  # commonsenseqa, medmcqa, openbookqa, siqa, ...: "A"
    texts = range_texts(rec.answer_range)
    return texts, texts


def prefix_match_answer(rec: Record) -> str:
    """The answer ``PrefixMatch`` credits: the gold when the stripped response starts with it, else
    the first answer (range order) it starts with; else ``''``."""
    forms, answers = prefix_forms(rec)
    text = rec.llm_output.strip()
    gold = correct_index(rec.key_answer_type, rec.answer_range, rec.correct_answer)
    if gold is not None and text.startswith(forms[gold].strip()):
        return answers[gold]
    for form, answer in zip(forms, answers, strict=True):
        if form.strip() and text.startswith(form.strip()):
            return answer
    return ""


def exact_match(pred: str, gold: str) -> bool:
    """``ExactMatch``: equal ignoring spaces; an empty prediction is wrong."""
    if not pred.strip():
        return False
    return pred.replace(" ", "") == gold.replace(" ", "")


def math_equal(pred: str, gold: str) -> bool:
    """The MATH verdict: exact_match(pred, MathPost(gold)) (UltraEval post-processes the gold)."""
    return exact_match(pred, math_post(gold))


def gsm8k_equal(pred: str, gold: str) -> bool:
    """The GSM8K verdict: exact_match(pred, GSM8KPost(gold))."""
    return exact_match(pred, gsm8k_post(gold))


# ---------------------------------------------------------------------------------------------
# Record extractors


def extract_gsm8k(rec: Record) -> str:
    return nva(gsm8k_post(rec.llm_output))


def extract_math(rec: Record) -> str:
    return nva(math_post(rec.llm_output))


def extract_single_choice(rec: Record) -> str:
    return nva(gaokao_single_choice_post(rec.llm_output))


def extract_agieval_single_answer(rec: Record) -> str:
    return nva(agieval_single_answer_post(rec.llm_output))


def extract_prefix_match(rec: Record) -> str:
    if rec.key_answer_type == "math":
        return nva("")
    return nva(prefix_match_answer(rec))


def extract_qa_match(rec: Record) -> str:
    if rec.key_answer_type != "alphabet_option":
        return nva("")
    return nva(qa_match_answer(rec))


def extract(rec: Record) -> str:
    """The `ultraeval` dispatcher: math -> GSM8KPost for GSM8K-like tasks, else MathPost;
    alphabet_option -> qa_match for ARC / HellaSwag / PIQA / WinoGrande, else prefix_match ("(A)"
    for MMLU, "A" otherwise); short_text / categorical_label -> prefix_match on the candidates."""
    kat = rec.key_answer_type
    if kat == "math":
        return extract_gsm8k(rec) if is_gsm8k_like(rec.task) else extract_math(rec)
    if kat == "alphabet_option" and _QA_MATCH_TASKS.search(rec.task):
        return extract_qa_match(rec)
    return extract_prefix_match(rec)
