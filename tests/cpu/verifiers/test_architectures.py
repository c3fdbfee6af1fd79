"""The verifiers' base architectures through the real vLLM CPU engine, as random-weight stand-ins
(xfinder_ray.devmodels.make_tiny_random_model): Qwen2 (Qwen2.5: CompassVerifier, most xVerify),
Gemma-2 (soft-capping, sliding window), GLM-4 and Phi-3 (Phi-4). Llama-3.x is SmolLM2's own
architecture, run by the verifier's end-to-end test (tests/cpu/test_pipeline_verifier.py).

Each family's checkpoint prompt (its base's chat template written out) goes to an engine built with
the job's engine settings for the CPU (processor_config_kwargs), and what comes back is read as the
job reads it: the engine saw the prompt token for token, the output is a verdict or an `invalid`
outcome that keeps its text (random weights write no verdict), and the first generated token's
log-probability is there for the verdict's confidence. What a GPU adds (bf16 kernels, memory per
replica) is planned in docs/performance.md and measured when one is lent.
"""

from __future__ import annotations

import gc
import math
from dataclasses import replace

import pytest

from xfinder_ray.config import VerifierConfig, XFinderConfig, complete_verifier
from xfinder_ray.devmodels import make_tiny_random_model
from xfinder_ray.extractors.verifier import engine_section, verifier_prompt_tokens
from xfinder_ray.extractors.vllm import processor_config_kwargs, sampling_params, stage_config_from
from xfinder_ray.extractors.vllm.transport import generated_logprob
from xfinder_ray.records import FIELDS
from xfinder_ray.sample_data import read_sample
from xfinder_ray.verifiers import fit_verifier_prompt, parse_verdict

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

# family -> (a published checkpoint on that base (verifiers/checkpoints.py), the model class vLLM loads)
FAMILIES = {
    "qwen2": ("CompassVerifier-3B", "Qwen2ForCausalLM"),
    "gemma2": ("xVerify-2B-I", "Gemma2ForCausalLM"),
    "glm4": ("xVerify-9B-C", "GlmForCausalLM"),
    "phi3": ("xVerify-14B-Ib", "Phi3ForCausalLM"),
}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    rows = [r for r in read_sample() if r["defect"] is None]
    return [
        {k: r[k] for k in FIELDS}
        for kat in ("alphabet_option", "math")
        for r in rows
        if r["key_answer_type"] == kat
    ][:3]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_checkpoint_family_runs_on_its_architecture(family, records, monkeypatch):
    # The engine core in this process: the test pays vLLM's imports once, not once per family.
    monkeypatch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    from transformers import AutoConfig, AutoTokenizer
    from vllm import LLM, SamplingParams

    checkpoint, architecture = FAMILIES[family]
    model = make_tiny_random_model(family=family)
    assert AutoConfig.from_pretrained(model).architectures == [architecture]
    v = VerifierConfig(checkpoint=checkpoint, model_source=str(model), max_model_len=2048)
    complete_verifier(v, None, "verifier")
    # The engine and sampling settings the job's verifier stage uses on a CPU (logprobs on, as there).
    stage = replace(stage_config_from(engine_section(v, XFinderConfig())), logprobs=True)
    engine_kwargs = processor_config_kwargs(stage, "cpu")["engine_kwargs"]
    prompts = [
        fit_verifier_prompt(
            checkpoint,
            r["question"],
            r["llm_output"],
            r["correct_answer"],
            max_prompt_tokens=verifier_prompt_tokens(v),
        )[0]
        for r in records
    ]
    llm = LLM(model=str(model), seed=0, **engine_kwargs)
    try:
        outs = llm.generate(prompts, SamplingParams(**sampling_params(stage)))
    finally:
        del llm
        gc.collect()

    tok = AutoTokenizer.from_pretrained(model)
    for r, prompt, out in zip(records, prompts, outs, strict=True):
        assert r["correct_answer"] in prompt
        assert out.prompt == prompt
        assert list(out.prompt_token_ids) == tok(prompt)["input_ids"]  # the prompt, token for token
        generated = out.outputs[0]
        verdict = parse_verdict(checkpoint, generated.text)
        assert verdict.raw == generated.text  # a verdict, or `invalid` keeping the text: never "wrong"
        assert verdict.parsed or verdict.verdict == "invalid"
        lp = generated_logprob(generated.logprobs, generated.token_ids)
        assert lp is not None and math.isfinite(lp) and lp <= 0.0
