import json
from pathlib import Path

import pytest

from xfinder_ray.prompts import (
    INSTRUCTION,
    REASONING,
    SYSTEM_FULL,
    SYSTEM_SHORT,
    TRUNCATION_MARKER,
    prompt_format,
    reduce_reasoning,
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


# --- reasoning output (`xfinder.reasoning`: final | tail | full) -------------------------------------------

# A long, realistic thought: ~14k characters (well past the 2,048-token window at 3 chars/token).
_STEPS = (
    "Let me reconsider the problem from the start. ",
    "We have a triangle with sides 13, 14 and 15, and we need its area. ",
    "Heron's formula: s = (13 + 14 + 15) / 2 = 21. ",
    "Then the area is sqrt(21 * 8 * 7 * 6) = sqrt(7056). Wait, is 7056 a perfect square? 84^2 = 7056, yes. ",
    "Hmm, but maybe the question wants the altitude instead; let me re-read it. No, it asks for the area. ",
    "Alternatively, I could check with coordinates: put B at (0, 0) and C at (14, 0). ",
)
THOUGHT = "\n".join("".join(_STEPS) for _ in range(30))
FINAL = "The area of the triangle is **84**.\n\nFinal answer: 84"
QUESTION = "A triangle has sides 13, 14 and 15. What is its area?"

THINK_CLOSED = f"<think>\n{THOUGHT}\n</think>\n\n{FINAL}"
THINK_OPEN = f"<think>\n{THOUGHT}\nSo far the area seems to be 84, but let me verify once more by"
SKY_CLOSED = (
    f"<|begin_of_thought|>\n\n{THOUGHT}\n\n<|end_of_thought|>\n\n<|begin_of_solution|>\n\n{FINAL}\n\n"
    "<|end_of_solution|>"
)
HARMONY_CLOSED = f"<|channel|>analysis<|message|>{THOUGHT}<|end|><|start|>assistant<|channel|>final<|message|>{FINAL}<|return|>"
HARMONY_OPEN = f"<|channel|>analysis<|message|>{THOUGHT}\nThus the area is 84. Let me double-check"


def _render(text, reasoning, **kw):
    return render_prompt(QUESTION, text, MATH_ANSWER_RANGE, reasoning=reasoning, **kw)


def _sentences(prompt: str) -> str:
    return prompt.split('Output sentences: """', 1)[1].rsplit('"""\n\nAnswer range:', 1)[0]


@pytest.mark.parametrize(
    "response", [THINK_CLOSED, SKY_CLOSED, HARMONY_CLOSED], ids=["think", "sky", "harmony"]
)
def test_final_hands_only_the_final_part_of_a_closed_thought(response):
    out = _render(response, "final")
    assert _sentences(out.prompt) == FINAL
    assert (out.part, out.truncated) == ("final", False)
    assert "Heron" not in out.prompt and "<think>" not in out.prompt and "<|" not in _sentences(out.prompt)


@pytest.mark.parametrize("response", [THINK_OPEN, HARMONY_OPEN], ids=["think", "harmony"])
def test_final_hands_the_tail_of_an_open_thought(response):
    out = _render(response, "final", max_prompt_tokens=1000)
    body = _sentences(out.prompt)
    assert (out.part, out.truncated) == ("thought", True)
    assert body.startswith(TRUNCATION_MARKER) and response.endswith(body[len(TRUNCATION_MARKER) :])
    assert len(out.prompt) <= 1000 * 3  # the char estimate's budget
    assert "<think>" not in out.prompt and "<|channel|>" not in out.prompt


def test_final_with_an_empty_final_part_hands_the_thought():
    short = "<think>\nThe answer must be 84 since 84^2 = 7056.\n</think>\n \n"
    out = _render(short, "final")
    assert _sentences(out.prompt) == "The answer must be 84 since 84^2 = 7056."
    assert (out.part, out.truncated) == ("thought", False)
    long_ = _render(f"<think>{THOUGHT}\nSo it is 84.</think>\n", "final", max_prompt_tokens=1000)
    assert long_.part == "thought" and long_.truncated and _sentences(long_.prompt).endswith("So it is 84.")


def test_final_cuts_a_long_final_part_in_the_middle_as_full_does():
    final = "Answer first. " + "padding " * 2000 + "So the answer is 84."
    out = _render(f"<think>short</think>{final}", "final", max_prompt_tokens=1000)
    assert out.part == "final" and out.truncated
    assert out.prompt == _render(final, "full", max_prompt_tokens=1000).prompt  # the same middle cut


def test_tail_keeps_the_end_of_the_response():
    out = _render(THINK_CLOSED, "tail", max_prompt_tokens=1000)
    body = _sentences(out.prompt)
    assert out.truncated and out.part == "response"
    assert body.startswith(TRUNCATION_MARKER) and THINK_CLOSED.endswith(body[len(TRUNCATION_MARKER) :])
    assert FINAL in body and "<think>" not in body  # the head (with the opening tag) is dropped
    assert len(out.prompt) <= 1000 * 3


def test_full_is_todays_middle_cut():
    out = _render(THINK_CLOSED, "full", max_prompt_tokens=1000)
    body = _sentences(out.prompt)
    assert out.truncated and body.startswith("<think>\n") and body.endswith(FINAL)
    assert (
        _render(THINK_CLOSED, "full").prompt
        == render_prompt(QUESTION, THINK_CLOSED, MATH_ANSWER_RANGE).prompt
    )


def test_token_aware_tail_of_an_open_thought_is_exact():
    enc, dec = str.split, " ".join  # a whitespace tokenizer stands in for a real one
    out = _render(THINK_OPEN, "final", max_prompt_tokens=800, tokenizer=enc, detokenizer=dec)
    assert out.truncated and out.part == "thought"
    assert out.prompt_tokens == len(enc(out.prompt)) <= 800
    assert out.prompt.endswith(
        'verify once more by"""\n\nAnswer range: '
        + MATH_ANSWER_RANGE
        + "\n\nKey extracted answer: \n<|Bot|>:"
    )
    assert "Let me reconsider the problem from the start." not in out.prompt.split("...")[0]


@pytest.mark.parametrize("reasoning", REASONING)
@pytest.mark.parametrize("checkpoint", ["xFinder-qwen1505", "xFinder-llama38it"])
def test_every_setting_keeps_the_training_sample_byte_for_byte(checkpoint, reasoning):
    out = _sample(checkpoint=checkpoint, reasoning=reasoning)
    assert out.prompt == SAMPLE["expected_prompt"]
    assert not out.truncated and out.part == "response"


@pytest.mark.parametrize("reasoning", REASONING)
def test_no_markers_is_the_response_as_is_for_every_setting(reasoning):
    plain = "Step 1: s = 21. Step 2: area = sqrt(7056) = 84. The answer is 84."
    assert _render(plain, reasoning).prompt == _render(plain, "full").prompt
    assert _sentences(_render(plain, reasoning).prompt) == plain


def test_reduce_reasoning_per_state_and_unknown_setting():
    assert reduce_reasoning(THINK_CLOSED, "final").text == FINAL
    assert reduce_reasoning(THINK_OPEN, "final").part == "thought"
    assert reduce_reasoning("plain", "final") == reduce_reasoning("plain", "full")
    assert reduce_reasoning(THINK_CLOSED, "tail").text == THINK_CLOSED
    assert reduce_reasoning(THINK_CLOSED, "tail").head_share == 0.0
    with pytest.raises(ValueError, match="unknown reasoning setting"):
        reduce_reasoning("x", "thought")
