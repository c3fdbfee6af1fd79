"""Verifier prompts (xfinder_ray/verifiers): the judge prompts byte for byte as published, and every
checkpoint's full prompt against golden_prompts.json, which make_golden.py made from the upstream
repositories' own code and transformers' renderer (not from xfinder_ray.verifiers)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from xfinder_ray.verifiers import (
    CHECKPOINTS,
    VERIFIERS,
    compassverifier,
    render_verifier_prompt,
    response_for_verifier,
    verifier_spec,
    xverify,
)

GOLDEN = json.loads((Path(__file__).parent / "golden_prompts.json").read_text(encoding="utf-8"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_judge_prompts_are_the_published_text():
    # sha256 of the constants exec'd from IAAR-Shanghai/xVerify@5e3606a src/xVerify/prompts/judge_prompt.py
    # and open-compass/CompassVerifier@2d7cba6 src/prompts.py.
    assert _sha(xverify.PROMPT) == "d8a5d3999c304b5ac64690bda8e21444d74cc45ee029078d2141c468ee1179f1"
    assert (
        _sha(compassverifier.CV_PROMPT) == "aee9c27520639ca543f0b5077164dc32c1976be0f16c87bee7055f3b7ba45e72"
    )
    assert (
        _sha(compassverifier.CV_COT_PROMPT)
        == "3d7456fb730b7517ca1f3bc1a28a3cc8847522ea6cc721a4d709f28bd07b4a10"
    )


def test_repo_templates_are_the_published_text():
    # sha256 of IAAR-Shanghai/xVerify@5e3606a src/xVerify/prompts/base_template.py BASE_TEMPLATE values.
    expected = {
        "c9c2b9a4d27c4accde48c0bd6ceb71fca95fd7b3254fa05126fbb63efdb6df41": {"xVerify-1B-I", "xVerify-3B-Ia", "xVerify-8B-I"},
        "f950ff28ce7fab8a5916e5f0cde7ec53c1dc96655c9b6330da35099cbb9fa966": {"xVerify-70B-I"},
        "402619365b07b91a9edacd000a45977e39f1da72413de532da3b7a18b42376c6": {
            "xVerify-0.5B-I", "xVerify-1.5B-I", "xVerify-3B-Ib", "xVerify-7B-I", "xVerify-14B-I", "xVerify-32B-I", "xVerify-72B-I",
        },
        "9a042ef1f86814abbeee1d6c6f0cc5f25ccabc12ef115989fe351f338094b165": {"xVerify-9B-C"},
        "87d542da41d38492395b6ae6b1f50880ea735a593fbd5d05eef6b546d1c56c1b": {"xVerify-2B-I", "xVerify-9B-I", "xVerify-27B-I"},
        "0ba11f1c2fe2e2c170bf77c41bb5bf7ea81bbab92515618ad2c18d1385670eec": {"xVerify-14B-Ib"},
    }  # fmt: skip
    got: dict[str, set[str]] = {}
    for name, template in xverify.BASE_TEMPLATE.items():
        got.setdefault(_sha(template), set()).add(name)
    assert got == expected


def _cases():
    for group in GOLDEN["golden"]:
        for key in group["keys"]:
            name, variant, *cot = key.split(":")
            yield pytest.param(name, variant, bool(cot), group["prompt"], id=key)


@pytest.mark.parametrize("name,variant,cot,expected", list(_cases()))
def test_every_checkpoint_prompt_byte_for_byte(name, variant, cot, expected):
    s = GOLDEN["sample"]
    got = render_verifier_prompt(
        name, s["question"], s["llm_output"], s["correct_answer"], variant=variant, cot=cot
    )
    assert got == expected


def test_golden_covers_every_checkpoint_variant_and_cot():
    keys = {k for group in GOLDEN["golden"] for k in group["keys"]}
    want = set()
    for name in CHECKPOINTS:
        spec = verifier_spec(name)
        for variant in spec.variants:
            want.add(f"{name}:{variant}")
            if spec.family == "compassverifier":
                want.add(f"{name}:{variant}:cot")
    assert keys == want and len(CHECKPOINTS) == 17


def test_xverify_golden_shapes():
    # The two variants differ as xVerify issue #5 says: the repository's strings write backslash-n
    # where the tokenizer's template has a newline, and ChatGLM3's format for the GLM-4 checkpoint.
    prompts = {k: g["prompt"] for g in GOLDEN["golden"] for k in g["keys"]}
    assert prompts["xVerify-0.5B-I:tokenizer"].startswith("<|im_start|>system\nYou are Qwen")
    assert prompts["xVerify-0.5B-I:xverify-repo"].startswith("<|im_start|>system\\nYou are Qwen")
    assert prompts["xVerify-9B-C:tokenizer"].startswith("[gMASK]<sop><|user|>\nYou are a diligent")
    assert prompts["xVerify-9B-C:xverify-repo"].startswith("<|system|>\\nYou are ChatGLM3")
    # the Llama template trims the prompt's closing newline; Qwen keeps it
    assert prompts["xVerify-8B-I:tokenizer"].endswith(
        "Judgement:<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    assert prompts["xVerify-0.5B-I:tokenizer"].endswith("Judgement:\n<|im_end|>\n<|im_start|>assistant\n")


def test_fields_are_inserted_literally():
    tricky = "{question} {output} {answer} {query} {gold_answer} {llm_response} {{}}"
    for name in ("xVerify-0.5B-I", "CompassVerifier-3B"):
        for variant in verifier_spec(name).variants:
            prompt = render_verifier_prompt(name, tricky, tricky, tricky, variant=variant)
            assert prompt.count(tricky) == 3
    cv = render_verifier_prompt("CompassVerifier-3B", "q", "r", "g", cot=True)
    assert "\\boxed{A} - CORRECT" in cv and "{{" not in cv  # the template's own {{}} are format escapes


def test_thought_is_dropped_by_default():
    out = "<think>maybe 5? no, 4</think>\n\nThe answer is 4."
    assert response_for_verifier(out) == "The answer is 4."
    assert response_for_verifier(out, strip_thought=False) == out
    prompt = render_verifier_prompt("xVerify-0.5B-I", "2+2?", out, "4")
    assert 'Output sentence: """The answer is 4."""' in prompt and "maybe 5" not in prompt
    kept = render_verifier_prompt("xVerify-0.5B-I", "2+2?", out, "4", strip_thought=False)
    assert "maybe 5" in kept
    # an open thought (cut off inside it) and plain output are handed over whole
    assert response_for_verifier("<think>4, or maybe") == "<think>4, or maybe"
    assert response_for_verifier("  plain 4  ") == "  plain 4  "
    # nothing after a closed thought: the verifier sees an empty response (and should call it invalid)
    assert response_for_verifier("<think>4</think>  ") == ""


def test_registry_names_hub_ids_and_licenses():
    assert set(VERIFIERS.names()) == set(CHECKPOINTS)
    x = verifier_spec("xVerify-0.5B-I")
    assert (x.family, x.base, x.hub_id, x.license) == (
        "xverify",
        "qwen2.5",
        "IAAR-Shanghai/xVerify-0.5B-I",
        "CC-BY-NC-ND-4.0",
    )
    assert x.default_variant == "tokenizer" and x.variants == ("tokenizer", "xverify-repo")
    c = verifier_spec("CompassVerifier-32B")
    assert (c.family, c.base, c.hub_id, c.license) == (
        "compassverifier",
        "qwen2.5",
        "opencompass/CompassVerifier-32B",
        "Apache-2.0",
    )
    assert c.variants == ("tokenizer",)
    assert {verifier_spec(n).base for n in ("xVerify-1B-I", "xVerify-3B-Ia", "xVerify-8B-I")} == {
        "llama-3.2",
        "llama-3.1",
    }
    assert verifier_spec("xVerify-9B-C").base == "glm-4" and verifier_spec("xVerify-14B-Ib").base == "phi-4"


def test_unknown_names_and_bad_options_are_clear():
    with pytest.raises(ValueError, match="unknown verifier checkpoint 'xVerify-9B'"):
        render_verifier_prompt("xVerify-9B", "q", "r", "a")
    with pytest.raises(ValueError, match="unknown prompt variant 'xverify-repo' for CompassVerifier-3B"):
        render_verifier_prompt("CompassVerifier-3B", "q", "r", "a", variant="xverify-repo")
    with pytest.raises(ValueError, match="no CoT prompt"):
        render_verifier_prompt("xVerify-8B-I", "q", "r", "a", cot=True)
