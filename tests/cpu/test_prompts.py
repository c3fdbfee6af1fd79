import json
from pathlib import Path

import pytest

from xfinder_ray.prompts import (
    INSTRUCTION,
    SYSTEM_FULL,
    SYSTEM_SHORT,
    TRUNCATION_MARKER,
    prompt_format,
    render_prompt,
)
from xfinder_ray.records import MATH_ANSWER_RANGE, parse_answer_range

SAMPLE = json.loads((Path(__file__).parent.parent / "data" / "xfinder_training_sample.json").read_text())


def _sample(**kw):
    r = SAMPLE["record"]
    return render_prompt(
        r["question"],
        r["llm_output"],
        parse_answer_range(r["standard_answer_range"], "alphabet_option"),
        **kw,
    )


@pytest.mark.parametrize("checkpoint", ["xFinder-qwen1505", "xFinder-llama38it"])
def test_training_sample_byte_for_byte(checkpoint):
    out = _sample(checkpoint=checkpoint)
    assert out.prompt == SAMPLE["expected_prompt"]
    assert not out.truncated


def test_sample_parts_match_published_system_and_input():
    assert SYSTEM_FULL == SAMPLE["system"]
    assert SAMPLE["input"].startswith(INSTRUCTION)


def test_xfinder_package_format():
    qwen = _sample(fmt="xfinder-package").prompt
    assert qwen.startswith("<|System|>:" + SYSTEM_SHORT + '\n<|User|>:Question: """')
    assert "I will provide you" not in qwen
    llama = _sample(checkpoint="xFinder-llama38it", fmt="xfinder-package").prompt
    assert llama.startswith("<|start_header_id|>system<|end_header_id|>\n\n" + SYSTEM_SHORT + "<|eot_id|>")
    assert llama.endswith("Key extracted answer: <|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")


def test_opencompass_format_is_one_byte_off_training():
    train = _sample().prompt
    oc = _sample(fmt="opencompass").prompt
    assert len(train) - len(oc) == 1
    assert oc == train.replace("aware of: \n", "aware of:\n")


def test_unknown_names_are_clear():
    with pytest.raises(ValueError, match="unknown xFinder checkpoint"):
        prompt_format("xFinder-gpt5")
    with pytest.raises(ValueError, match="unknown prompt format"):
        prompt_format("xFinder-qwen1505", "chatml")


def test_braces_and_math_range_are_literal():
    out = render_prompt("Compute {x}.", r"\frac{3}{4} {system} {input}", MATH_ANSWER_RANGE).prompt
    assert r'Output sentences: """\frac{3}{4} {system} {input}"""' in out
    assert f"Answer range: {MATH_ANSWER_RANGE}\n\nKey extracted answer: " in out


def test_char_truncation_keeps_start_and_end():
    body = "START " + "filler words " * 3000 + " so the final answer is 42"
    out = render_prompt("Q", body, MATH_ANSWER_RANGE, max_prompt_tokens=1000)
    assert out.truncated
    assert len(out.prompt) <= 1000 * 3
    assert "START" in out.prompt and 'the final answer is 42"""' in out.prompt
    assert TRUNCATION_MARKER in out.prompt
    assert not render_prompt("Q", "short", MATH_ANSWER_RANGE).truncated


def test_token_truncation_is_exact():
    # A whitespace tokenizer stands in for a real one: the cut must land within the token budget.
    enc = str.split
    dec = " ".join
    body = " ".join(f"w{i}" for i in range(5000)) + " answer 7"
    out = render_prompt("Q", body, MATH_ANSWER_RANGE, max_prompt_tokens=600, tokenizer=enc, detokenizer=dec)
    assert out.truncated and out.prompt_tokens == len(enc(out.prompt)) <= 600
    assert "w0 " in out.prompt and "answer 7" in out.prompt and "w2500" not in out.prompt
