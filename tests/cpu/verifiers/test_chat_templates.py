"""The base models' chat templates (xfinder_ray/verifiers/chat_templates.py): the exact text of each,
and the same text as the published Jinja template renders it (published_templates.py)."""

from __future__ import annotations

import pytest

from xfinder_ray.verifiers import CHECKPOINTS, verifier_spec
from xfinder_ray.verifiers.chat_templates import CHAT_TEMPLATES, llama32, render_chat

from .published_templates import PUBLISHED

# Leading spaces and a trailing newline (xVerify's prompt ends in one): the Llama and Gemma templates
# trim the user text, the others keep it. Braces and a backslash must come through literally.
USER = "  Judge {this}: \\boxed{x}\n"

GOLDEN = {
    "qwen2.5": (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n  Judge {this}: \\boxed{x}\n<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "llama-3.1": (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nJudge {this}: \\boxed{x}<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    ),
    "llama-3.2": (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nJudge {this}: \\boxed{x}<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    ),
    "gemma-2": "<bos><start_of_turn>user\nJudge {this}: \\boxed{x}<end_of_turn>\n<start_of_turn>model\n",
    "glm-4": "[gMASK]<sop><|user|>\n  Judge {this}: \\boxed{x}\n<|assistant|>",
    "phi-4": "<|im_start|>user<|im_sep|>  Judge {this}: \\boxed{x}\n<|im_end|><|im_start|>assistant<|im_sep|>",
}


@pytest.mark.parametrize("base", sorted(GOLDEN))
def test_each_base_family_byte_for_byte(base):
    assert render_chat(base, USER) == GOLDEN[base]


def test_every_checkpoint_has_a_template_and_every_template_a_checkpoint():
    bases = {verifier_spec(name).base for name in CHECKPOINTS}
    assert bases == set(CHAT_TEMPLATES.names()) == set(GOLDEN) == set(PUBLISHED)
    with pytest.raises(ValueError, match="unknown chat template 'chatml'"):
        render_chat("chatml", USER)


def _jinja(base: str, user: str, **extra) -> str:
    """What transformers' apply_chat_template renders (chat_template_utils._compile_jinja_template:
    the same environment, filters and globals), without importing transformers."""
    jinja2 = pytest.importorskip("jinja2")
    import json
    from datetime import datetime

    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: (
        json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    )
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    template, tokens = PUBLISHED[base]
    messages = [{"role": "user", "content": user}]
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=True, tools=None, **tokens, **extra
    )


USERS = [USER, "plain", "\n\n  {{ not jinja }} {% raw %}\n", "多语言 ünïcode\t", "x" * 5000]


@pytest.mark.parametrize("base", sorted(PUBLISHED))
@pytest.mark.parametrize("user", USERS, ids=range(len(USERS)))
def test_written_out_template_matches_the_published_one(base, user):
    extra = {"date_string": "26 Jul 2024"} if base == "llama-3.2" else {}
    assert render_chat(base, user) == _jinja(base, user, **extra)


def test_llama32_date_is_pinned_where_the_template_writes_today():
    # Rendered like apply_chat_template, the 3.2 template dates the prompt today (strftime_now); ours
    # pins the template's own fallback so a prompt does not change with the calendar.
    from datetime import datetime

    today = datetime.now().strftime("%d %b %Y")
    assert f"Today Date: {today}\n" in _jinja("llama-3.2", "hi")
    assert "Today Date: 26 Jul 2024\n" in llama32("hi")
    assert llama32("hi", date_string=today) == _jinja("llama-3.2", "hi")


def test_glm4_skips_an_empty_turn_as_its_template_does():
    assert render_chat("glm-4", "") == "[gMASK]<sop><|assistant|>" == _jinja("glm-4", "")
