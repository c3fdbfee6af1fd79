"""xFinder prompts, byte for byte as each checkpoint was fine-tuned, plus the two formats found in the wild.

Formats (see docs/prompts.md for the exact differences):
- ``training`` (default): what xtuner fed the model during fine-tuning — PROMPT_TEMPLATE.default
  ``<|System|>:{system}\\n<|User|>:{input}\\n<|Bot|>:`` for both published checkpoints, the two-sentence
  system text, and the Instruction before the query (scripts/xfinder_training/README.md).
- ``xfinder-package``: the ``xfinder`` PyPI package 0.2.6 — one-sentence system text, no Instruction,
  Llama-3 chat headers for xFinder-llama38it.
- ``opencompass``: OpenCompass's xFinder post-processor — the training texts, except the Instruction
  lacks the space before one newline ("aware of:\\n"), and Llama-3 headers for xFinder-llama38it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xfinder_ray.reasoning import CLOSED, OPEN, segment
from xfinder_ray.records import AnswerRange, range_repr
from xfinder_ray.registry import Registry

CHECKPOINTS = ("xFinder-qwen1505", "xFinder-llama38it")
TRAINING_MAX_LENGTH = 2048  # xtuner max_length used for both checkpoints

SYSTEM_SHORT = (
    "You are a help assistant tasked with extracting the precise key answer from given output sentences."
)
SYSTEM_FULL = (
    SYSTEM_SHORT + " You must only provide the extracted key answer without including any additional text."
)

INSTRUCTION = (
    "I will provide you with a question, output sentences along with an answer range. The output sentences are "
    "the response of the question provided. The answer range could either describe the type of answer expected "
    "or list all possible valid answers. Using the information provided, you must accurately and precisely "
    "determine and extract the intended key answer from the output sentences. Please don't have your subjective "
    "thoughts about the question.\n"
    "First, you need to determine whether the content of the output sentences is relevant to the given question. "
    "If the entire output sentences are unrelated to the question (meaning the output sentences are not "
    "addressing the question), then output [No valid answer].\n"
    "Otherwise, ignore the parts of the output sentences that have no relevance to the question and then extract "
    "the key answer that matches the answer range.\n"
    "Below are some special cases you need to be aware of: \n"
    "    (1) If the output sentences present multiple different answers, carefully determine if the later provided "
    "answer is a correction or modification of a previous one. If so, extract this corrected or modified answer "
    "as the final response. Conversely, if the output sentences fluctuate between multiple answers without a "
    "clear final answer, you should output [No valid answer].\n"
    "    (2) If the answer range is a list and the key answer in the output sentences is not explicitly listed "
    "among the candidate options in the answer range, also output [No valid answer].\n\n"
)
# OpenCompass's copy of the Instruction drops one space ("aware of: \n" -> "aware of:\n").
INSTRUCTION_OPENCOMPASS = INSTRUCTION.replace("aware of: \n", "aware of:\n")

TEMPLATE_XTUNER_DEFAULT = "<|System|>:{system}\n<|User|>:{input}\n<|Bot|>:"
TEMPLATE_LLAMA3 = (
    "<|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\n{input}<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)


@dataclass(frozen=True)
class PromptFormat:
    name: str
    template: str
    system: str
    instruction: str


# Prompt formats (`xfinder.prompt_format`): name -> the format for a checkpoint.
PROMPT_FORMATS: Registry[Callable[[str], PromptFormat]] = Registry("prompt format")


@PROMPT_FORMATS.register("training")
def _training(checkpoint: str) -> PromptFormat:
    # Both checkpoints were fine-tuned with xtuner's default template, whatever their base model.
    return PromptFormat("training", TEMPLATE_XTUNER_DEFAULT, SYSTEM_FULL, INSTRUCTION)


def _chat_template(checkpoint: str) -> str:
    return TEMPLATE_LLAMA3 if checkpoint == "xFinder-llama38it" else TEMPLATE_XTUNER_DEFAULT


@PROMPT_FORMATS.register("xfinder-package")
def _xfinder_package(checkpoint: str) -> PromptFormat:
    return PromptFormat("xfinder-package", _chat_template(checkpoint), SYSTEM_SHORT, "")


@PROMPT_FORMATS.register("opencompass")
def _opencompass(checkpoint: str) -> PromptFormat:
    return PromptFormat("opencompass", _chat_template(checkpoint), SYSTEM_FULL, INSTRUCTION_OPENCOMPASS)


# The registered formats, the training format (the default) first.
FORMATS = ("training", *(n for n in PROMPT_FORMATS.names() if n != "training"))


def prompt_format(checkpoint: str, fmt: str = "training") -> PromptFormat:
    if checkpoint not in CHECKPOINTS:
        raise ValueError(
            f"unknown xFinder checkpoint {checkpoint!r}; expected one of {', '.join(CHECKPOINTS)}"
        )
    if fmt not in PROMPT_FORMATS:
        raise ValueError(f"unknown prompt format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return PROMPT_FORMATS.get(fmt)(checkpoint)


def query_text(question: str, llm_output: str, answer_range: AnswerRange) -> str:
    return (
        f'Question: """{question}"""\n\n'
        f'Output sentences: """{llm_output}"""\n\n'
        f"Answer range: {range_repr(answer_range)}\n\n"
        "Key extracted answer: "
    )


def render(fmt: PromptFormat, question: str, llm_output: str, answer_range: AnswerRange) -> str:
    # str.format is not used on the record text: braces in responses ({}, \frac{1}{2}) must stay literal.
    user = fmt.instruction + query_text(question, llm_output, answer_range)
    return fmt.template.replace("{system}", fmt.system, 1).replace("{input}", user, 1)


# --- keeping the prompt within the training length -------------------------------------------------------

TRUNCATION_MARKER = "\n...\n"
HEAD_SHARE = 0.25  # final answers live at the end: keep a quarter from the start, the rest from the end
CHARS_PER_TOKEN = 3.0  # conservative without a tokenizer (English averages ~4; code and maths fewer)

# What of a reasoning model's response xFinder reads (`xfinder.reasoning`; docs/prompts.md):
#   final  the final part after a closed thought (empty: the thought's tail); an open thought's tail;
#          a response without markers as is
#   tail   the end of the response that fits (no head kept)
#   full   the whole response, its middle cut to fit (the behaviour before the setting existed)
REASONING = ("final", "tail", "full")


@dataclass(frozen=True)
class RenderedPrompt:
    prompt: str
    truncated: bool  # the text handed xFinder was cut to fit the window
    prompt_tokens: int | None  # exact when a tokenizer was given
    part: str = "response"  # what of the response the prompt holds: response | final | thought


@dataclass(frozen=True)
class Reduced:
    text: str  # what xFinder reads as the output sentences
    head_share: float  # if it must be cut: the share of the budget kept from its start (0: the tail only)
    part: str  # response | final | thought


def reduce_reasoning(llm_output: str, reasoning: str = "full") -> Reduced:
    """What of `llm_output` to hand xFinder under the `reasoning` setting (see REASONING)."""
    if reasoning == "full":
        return Reduced(llm_output, HEAD_SHARE, "response")
    if reasoning == "tail":
        return Reduced(llm_output, 0.0, "response")
    if reasoning != "final":
        raise ValueError(f"unknown reasoning setting {reasoning!r}; expected one of {', '.join(REASONING)}")
    seg = segment(llm_output)
    if seg.state == CLOSED and seg.final.strip():
        return Reduced(seg.final.strip(), HEAD_SHARE, "final")
    if seg.state in (CLOSED, OPEN):  # no final part (yet): the end of the thought is the nearest to one
        return Reduced(seg.thought.strip(), 0.0, "thought")
    return Reduced(llm_output, HEAD_SHARE, "response")


def cut_middle(items, keep: int, head_share: float = HEAD_SHARE):
    """items without their middle: `keep` of them, `head_share` from the start, the rest from the end."""
    head = int(keep * head_share)
    tail = keep - head
    return items[:head], items[len(items) - tail :] if tail else items[:0]


def render_prompt(
    question: str,
    llm_output: str,
    answer_range: AnswerRange,
    *,
    checkpoint: str = "xFinder-qwen1505",
    fmt: str = "training",
    max_prompt_tokens: int = TRAINING_MAX_LENGTH - 32,
    tokenizer: Callable[[str], list[int]] | None = None,
    detokenizer: Callable[[list[int]], str] | None = None,
    reasoning: str = "full",
) -> RenderedPrompt:
    """Render the prompt over the part of `llm_output` that `reasoning` selects (reduce_reasoning);
    if it would exceed `max_prompt_tokens`, cut that text: its middle, or its head for a tail.

    `tokenizer`/`detokenizer` (e.g. ``tok.encode``/``tok.decode``) make the cut exact; without them
    the budget is estimated from characters, erring on the short side. The default, ``full``, renders
    the response as given; the job's default (``xfinder.reasoning``) is ``final``.
    """
    spec = prompt_format(checkpoint, fmt)
    red = reduce_reasoning(llm_output, reasoning)
    text, part = red.text, red.part
    full = render(spec, question, text, answer_range)
    if tokenizer is None:
        budget_chars = int(max_prompt_tokens * CHARS_PER_TOKEN)
        if len(full) <= budget_chars:
            return RenderedPrompt(full, False, None, part)
        overhead = len(full) - len(text) + len(TRUNCATION_MARKER)
        keep = max(0, budget_chars - overhead)
        head, tail = cut_middle(text, keep, red.head_share)
        prompt = render(spec, question, head + TRUNCATION_MARKER + tail, answer_range)
        return RenderedPrompt(prompt, True, None, part)
    n_full = len(tokenizer(full))
    if n_full <= max_prompt_tokens:
        return RenderedPrompt(full, False, n_full, part)
    if detokenizer is None:
        raise ValueError("token-aware truncation needs a detokenizer too")
    out_ids = tokenizer(text)
    overhead = n_full - len(out_ids) + len(tokenizer(TRUNCATION_MARKER))
    keep = max(0, max_prompt_tokens - overhead)
    while True:  # re-tokenizing at the seams can add a token or two
        head_ids, tail_ids = cut_middle(out_ids, keep, red.head_share)
        cut = detokenizer(list(head_ids)) + TRUNCATION_MARKER + detokenizer(list(tail_ids))
        prompt = render(spec, question, cut, answer_range)
        n = len(tokenizer(prompt))
        if n <= max_prompt_tokens or keep == 0:
            return RenderedPrompt(prompt, True, n, part)
        keep = max(0, keep - (n - max_prompt_tokens) - 1)
