"""Verifier judges beside xFinder: xVerify and CompassVerifier (docs/judges.md).

A verifier reads the question, the model's response and the correct answer, and writes a verdict
itself (xFinder extracts an answer that a comparator then judges). This package builds their
prompts and parses their outputs; it needs no model and no tokenizer.

    chat_templates.py    the base models' chat templates (Qwen2.5, Llama-3.1/3.2, Gemma-2, GLM-4, Phi-4)
    xverify.py           xVerify's judge prompt, checkpoints, the repository's own templates, parser
    compassverifier.py   CompassVerifier's prompts (plain and CoT), checkpoints, parser
    verdict.py           Verdict: what an output says (correct | incorrect | invalid, detail, raw)
    checkpoints.py       VERIFIERS (checkpoint name -> spec), render_verifier_prompt, parse_verdict
"""

from xfinder_ray.verifiers.checkpoints import (
    CHECKPOINTS,
    VARIANTS,
    VERIFIERS,
    VerifierSpec,
    fit_verifier_prompt,
    parse_verdict,
    render_verifier_prompt,
    response_for_verifier,
    verifier_spec,
)
from xfinder_ray.verifiers.verdict import Verdict

__all__ = [
    "CHECKPOINTS",
    "VARIANTS",
    "VERIFIERS",
    "Verdict",
    "VerifierSpec",
    "fit_verifier_prompt",
    "parse_verdict",
    "render_verifier_prompt",
    "response_for_verifier",
    "verifier_spec",
]
