"""CompassVerifier (OpenCompass; arXiv 2508.03686; github.com/open-compass/CompassVerifier, Apache-2.0).

CompassVerifier reads the question, the standard (gold) answer and the model's response. With
CV_PROMPT it writes one letter: A (correct), B (incorrect) or C (invalid: cut off, repetitive,
irrelevant, a refusal). With CV_COT_PROMPT it reasons first and ends with
"Final Judgment: \\boxed{A|B|C} - <TYPE>", TYPE one of CORRECT / INCORRECT / INCOMPLETE /
REPETITIVE / REFUSAL. Both prompts are the repository's `src/prompts.py`, byte for byte (the prompt
text is the repository's; the rest of this module is ours). They are str.format templates:
`\\boxed{{}}` becomes `\\boxed{}` once filled.

The checkpoints are fine-tuned Qwen2.5-Instruct models (model cards: base_model
Qwen/Qwen2.5-*-Instruct), prompted through the tokenizer's chat template with the prompt as the only
user message (README, src/cv_eval.ipynb): Qwen2.5's default system prompt included.
"""

from __future__ import annotations

import re

from xfinder_ray.verifiers.verdict import CORRECT, INCORRECT, INVALID, Verdict, invalid

HUB_ORG = "opencompass"
LICENSE = "Apache-2.0"  # the README's badge and the model cards (the repository has no LICENSE file)
VARIANTS = ("tokenizer",)

# README, "Get the model": the three published checkpoints -> base family.
CHECKPOINTS: dict[str, str] = {
    "CompassVerifier-3B": "qwen2.5",
    "CompassVerifier-7B": "qwen2.5",
    "CompassVerifier-32B": "qwen2.5",
}

# src/prompts.py, verbatim.
CV_PROMPT = """
Please as a grading expert, judge whether the final answers given by the candidates below are consistent with the standard answers, that is, whether the candidates answered correctly. 
Here are some evaluation criteria:
1. Please refer to the given standard answer. You don't need to re-generate the answer to the question because the standard answer has been given. You only need to judge whether the candidate's answer is consistent with the standard answer according to the form of the question. THE STANDARD ANSWER IS ALWAYS CORRECT AND THE QUESTION IS PERFECTLY VALID. NEVER QUESTION THEM.
2. ONLY compare the FINAL ANSWER - COMPLETELY IGNORE any potential errors in the REASONING PROCESSES.
3. Some answers may be expressed in different ways, such as some answers may be a mathematical expression, some answers may be a textual description, as long as the meaning expressed is the same. Before making a judgment, please understand the question and the standard answer first, and then judge whether the candidate's answer is correct.
4. Some answers may consist of multiple items, such as multiple-choice questions, multiple-select questions, fill-in-the-blank questions, etc. Regardless of the question type, the final answer will be considered correct as long as it matches the standard answer, regardless of whether the reasoning process is correct. For multiple-select questions and multi-blank fill-in-the-blank questions, all corresponding options or blanks must be answered correctly and match the standard answer exactly to be deemed correct.
5. If the prediction is given with \\boxed{{}}, please ignore the \\boxed{{}} and only judge whether the candidate's answer is consistent with the standard answer.
6. If the candidate's answer is invalid (e.g., incomplete (cut off mid-response), lots of unnormal repetitive content, or irrelevant to the question, saying it can't answer the question because some irresistible factors, like ethical issues, no enough information, etc.), select option C (INVALID).Please judge whether the following answers are consistent with the standard answer based on the above criteria. Grade the predicted answer of this new question as one of:
A: CORRECT 
B: INCORRECT
C: INVALID
Just return the letters "A", "B", or "C", with no text around it.
Here is your task. Simply reply with either CORRECT, INCORRECT, or INVALID. Don't apologize or correct yourself if there was a mistake; we are just trying to grade the answer.
<Original Question Begin>:
{question}
<Original Question End>
<Standard Answer Begin>:
{gold_answer}
<Standard Answer End>
<Candidate's Answer Begin>: 
{llm_response}
<Candidate's Answer End>
Judging the correctness of the candidate's answer:
"""  # noqa: W291 (trailing spaces are part of the prompt)


CV_COT_PROMPT = """As a grading expert, your task is to determine whether the candidate's final answer matches the provided standard answer. Follow these evaluation guidelines precisely:

Evaluation Protocol:
1. Reference Standard:
   - The standard answer is definitive and always correct
   - The question is perfectly valid - never question them
   - Do not regenerate answers; only compare with the given standard

2. Comparison Method:
   - Carefully analyze the question's requirements and the standard answer's structure
     * Determine whether the question expects exact matching of the entire standard answer or allows partial matching of its components.
     * This determination must be made based on the question's phrasing and the nature of the standard answer.
   - Compare ONLY the candidate's final answer (ignore all reasoning/explanation errors)
   - Disregard any differences in formatting or presentation style
   - For mathematical expressions: calculate step by step whether the two formulas are equivalent
   - For multiple-choice questions: compare only the final choice and corresponding option content

3. Multi-part Answers:
   - For questions requiring multiple responses (e.g., multi-select):
   - All parts must match the standard answer exactly. 
   - Compare each sub-answer step by step. Partial matches are considered incorrect.

4. Validity Check:
   - Reject answers that are:
     * Incomplete (cut off mid-sentence in the final sentence, lacking a complete response) → Label as INCOMPLETE
     * Repetitive (repetition of words or phrases in a loop) → Label as REPETITIVE
     * Explicit refusals (e.g., directly return "I cannot answer/provide/access ...") → Label as REFUSAL
   - For invalid answers, specify the type in the judgment (e.g., \\boxed{{C}} - INCOMPLETE).

Grading Scale:
\\boxed{{A}} - CORRECT: 
   - Answer matches standard exactly (including equivalent expressions)
   - For numerical answers: consider as equivalent if values match when rounded appropriately
   - Semantically equivalent responses

\\boxed{{B}} - INCORRECT:
   - Any deviation from standard answer
   - Partial matches for multi-part questions

\\boxed{{C}} - INCOMPLETE/REPETITIVE/REFUSAL:
   - Fails validity criteria above (must specify: INCOMPLETE/REPETITIVE/REFUSAL)

Execution Steps and Output Formats:

Analysis step by step: [
Thoroughly evaluate the candidate's answer including:
(1) First check if the answer is INCOMPLETE (cut off mid-sentence), REPETITIVE (looping repetition), or a REFUSAL (explicit denial) - if so, immediately classify as \\boxed{{C}} with the corresponding type.
(2) Analyze the question's core requirements and the standard answer's structure, for example:
- Strict requirements: Identify mandatory constraints (e.g., simplification, answer order, multi-part completeness)
- Tolerant allowances: Ignore non-critical deviations (e.g., missing option labels in MCQs, equivalent but unformatted expressions)
- Required answer type, precision level, etc.
(3) Perform a detailed comparison between the candidate's final answer and the standard answer, for example:
- Content equivalence
- Permitted variations in numerical precision
- Allowed expression formats]
Final Judgment: \\boxed{{A/B/C}} - <CORRECT/INCORRECT/INCOMPLETE/REPETITIVE/REFUSAL>

Here is your task.
<Original Question Begin>
{question}
<Original Question End>

<Standard Answer Begin>
{gold_answer}
<Standard Answer End>

<Candidate's Answer Begin>
{llm_response}
<Candidate's Answer End>

Analysis step by step and Final Judgment:
"""  # noqa: W291 (trailing spaces are part of the prompt)


def user_message(question: str, llm_output: str, correct_answer: str, *, cot: bool = False) -> str:
    """The prompt filled in as the README does (str.format leaves braces in the values alone)."""
    template = CV_COT_PROMPT if cot else CV_PROMPT
    return template.format(question=question, gold_answer=correct_answer, llm_response=llm_output)


LETTER_VERDICT = {"A": CORRECT, "B": INCORRECT, "C": INVALID}
WORD_LETTER = {"CORRECT": "A", "INCORRECT": "B", "INVALID": "C"}  # CV_PROMPT: "A: CORRECT" ...
# The type a CoT judgment may name after each letter (CV_COT_PROMPT's grading scale).
LETTER_TYPES = {
    "A": ("CORRECT",),
    "B": ("INCORRECT",),
    "C": ("INCOMPLETE", "REPETITIVE", "REFUSAL", "INVALID"),
}
_TYPES = {t for types in LETTER_TYPES.values() for t in types}

# A label standing alone: "A", "(B)", "C: INVALID", "A - CORRECT", "INCORRECT".
_ALONE = re.compile(r"\(?([ABC])\)?(?:\s*[-–—:]\s*<?\s*([A-Z]+)\s*>?)?|(CORRECT|INCORRECT|INVALID)")
_BOXED = re.compile(r"\\boxed\{\s*([ABC])\s*\}")
# The type written after a boxed letter on the same line: "\boxed{C} - INCOMPLETE".
_TYPE_AFTER = re.compile(r"[ \t]*[-–—:]?[ \t]*<?[ \t]*([A-Za-z]+)")
_FINAL = re.compile(r"final\s+judge?ment\s*:", re.IGNORECASE)
_WRAPPERS = "[]*\"'`"


def parse(text: str) -> Verdict:
    """CompassVerifier's output (plain or CoT) -> A correct / B incorrect / C invalid, with its type.

    Tried in order: the whole output as a label (CV_PROMPT's answer); the last ``\\boxed{A|B|C}`` and
    the type after it (CV_COT_PROMPT's "Final Judgment", and the repository's own parser's first
    rule); the label after the last "Final Judgment:". A type that contradicts its letter
    (``\\boxed{A} - INCORRECT``), or no label at all, is an invalid outcome keeping the raw text.
    """
    found = _alone(text.strip())
    if found is None:
        boxed = list(_BOXED.finditer(text))
        if boxed:
            last = boxed[-1]
            after = _TYPE_AFTER.match(text, last.end())
            word = after.group(1).upper() if after else None
            found = (last.group(1), word if word in _TYPES else None)
    if found is None:
        finals = list(_FINAL.finditer(text))
        if finals:
            tail = text[finals[-1].end() :].strip().split("\n", 1)[0]
            found = _alone(tail)
    if found is None:
        return invalid(text)
    letter, kind = found
    if kind is not None and kind not in LETTER_TYPES[letter]:
        return invalid(text)  # the letter and its type disagree: no verdict to trust
    if kind is None and letter == "C":
        kind = "INVALID"  # what C means in both prompts when no finer type is given
    return Verdict(LETTER_VERDICT[letter], letter, kind, text)


def _alone(candidate: str) -> tuple[str, str | None] | None:
    """(letter, type or None) when `candidate` is nothing but a label, else None."""
    core = candidate.strip().rstrip(".").strip().strip(_WRAPPERS).strip().rstrip(".").strip()
    m = _ALONE.fullmatch(core.upper())
    if m is None:
        return None
    if m.group(3):
        return WORD_LETTER[m.group(3)], m.group(3)
    kind = m.group(2)
    if kind is not None and kind not in _TYPES:
        return None
    return m.group(1), kind
