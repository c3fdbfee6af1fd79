"""Every published verifier checkpoint by name, and the one entry point that renders its prompt.

    render_verifier_prompt(checkpoint, question, llm_output, correct_answer) -> the model's input text
    parse_verdict(checkpoint, text) -> Verdict

A checkpoint name says everything the prompt depends on: the verifier family (its judge prompt and
output format) and the base model (its chat template). docs/judges.md lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xfinder_ray.prompts import CHARS_PER_TOKEN, TRUNCATION_MARKER, cut_middle
from xfinder_ray.reasoning import CLOSED, segment
from xfinder_ray.registry import Registry
from xfinder_ray.verifiers import compassverifier, xverify
from xfinder_ray.verifiers.chat_templates import render_chat
from xfinder_ray.verifiers.verdict import Verdict

XVERIFY, COMPASSVERIFIER = "xverify", "compassverifier"


@dataclass(frozen=True)
class VerifierSpec:
    name: str  # the checkpoint's published name, e.g. xVerify-0.5B-I
    family: str  # xverify | compassverifier
    base: str  # the base model's chat template (chat_templates.CHAT_TEMPLATES)
    hub_id: str  # the Hugging Face repository, e.g. IAAR-Shanghai/xVerify-0.5B-I
    license: str  # of the weights (SPDX)
    variants: tuple[str, ...]  # the prompt variants it can be rendered in

    @property
    def default_variant(self) -> str:
        return self.variants[0]


# Checkpoint name -> spec. Config validation and CLI choices read it.
VERIFIERS: Registry[VerifierSpec] = Registry("verifier checkpoint")
for _name, _base in xverify.CHECKPOINTS.items():
    VERIFIERS.register(
        _name,
        VerifierSpec(_name, XVERIFY, _base, f"{xverify.HUB_ORG}/{_name}", xverify.LICENSE, xverify.VARIANTS),
    )
for _name, _base in compassverifier.CHECKPOINTS.items():
    VERIFIERS.register(
        _name,
        VerifierSpec(
            _name,
            COMPASSVERIFIER,
            _base,
            f"{compassverifier.HUB_ORG}/{_name}",
            compassverifier.LICENSE,
            compassverifier.VARIANTS,
        ),
    )

# Every verifier checkpoint, in publication order (xVerify by size, then CompassVerifier).
CHECKPOINTS = (*xverify.CHECKPOINTS, *compassverifier.CHECKPOINTS)
VARIANTS = tuple(dict.fromkeys(v for name in CHECKPOINTS for v in VERIFIERS.get(name).variants))


def verifier_spec(checkpoint: str) -> VerifierSpec:
    return VERIFIERS.get(checkpoint)


def response_for_verifier(llm_output: str, strip_thought: bool = True) -> str:
    """What of a response the verifier reads. OpenCompass drops a closed thought before its judges
    (extract_non_reasoning_content), so by default a closed thought's final part alone, stripped
    (empty when nothing follows the thought); an open thought or plain output is kept whole."""
    if not strip_thought:
        return llm_output
    seg = segment(llm_output)
    return seg.final.strip() if seg.state == CLOSED else llm_output


def render_verifier_prompt(
    checkpoint: str,
    question: str,
    llm_output: str,
    correct_answer: str,
    *,
    variant: str | None = None,
    cot: bool = False,
    strip_thought: bool = True,
) -> str:
    """The full input text of `checkpoint` judging `llm_output` against `correct_answer`.

    `variant`: the checkpoint's prompt variant (default its first: ``tokenizer``); `cot`:
    CompassVerifier's CoT prompt; `strip_thought`: see response_for_verifier.
    """
    spec = verifier_spec(checkpoint)
    variant = spec.default_variant if variant is None else variant
    if variant not in spec.variants:
        raise ValueError(
            f"unknown prompt variant {variant!r} for {checkpoint}; expected one of {', '.join(spec.variants)}"
        )
    if cot and spec.family != COMPASSVERIFIER:
        raise ValueError(f"{checkpoint} has no CoT prompt (only CompassVerifier has one)")
    response = response_for_verifier(llm_output, strip_thought)
    if spec.family == XVERIFY:
        user = xverify.user_message(question, response, correct_answer)
        if variant == "xverify-repo":
            return xverify.repo_prompt(checkpoint, user)
    else:
        user = compassverifier.user_message(question, response, correct_answer, cot=cot)
    return render_chat(spec.base, user)


def fit_verifier_prompt(
    checkpoint: str,
    question: str,
    llm_output: str,
    correct_answer: str,
    *,
    max_prompt_tokens: int,
    variant: str | None = None,
    cot: bool = False,
    strip_thought: bool = True,
) -> tuple[str, bool]:
    """(prompt, truncated): the verifier's prompt, with the middle of the response cut (a quarter kept
    from its start, the rest from its end, as for xFinder) when it would pass `max_prompt_tokens`,
    estimated from characters on the short side."""
    response = response_for_verifier(llm_output, strip_thought)

    def render(text: str) -> str:
        return render_verifier_prompt(
            checkpoint, question, text, correct_answer, variant=variant, cot=cot, strip_thought=False
        )

    full = render(response)
    budget = int(max_prompt_tokens * CHARS_PER_TOKEN)
    if len(full) <= budget:
        return full, False
    keep = max(0, budget - (len(full) - len(response)) - len(TRUNCATION_MARKER))
    head, tail = cut_middle(response, keep)
    return render(head + TRUNCATION_MARKER + tail), True


def parse_verdict(checkpoint: str, text: str) -> Verdict:
    """The checkpoint's output text as a Verdict (correct | incorrect | invalid, never a guess)."""
    family = verifier_spec(checkpoint).family
    return xverify.parse(text) if family == XVERIFY else compassverifier.parse(text)
