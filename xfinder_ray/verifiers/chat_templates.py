"""The base models' chat templates, written out for one user turn followed by the generation prompt.

Each function returns the text `tokenizer.apply_chat_template([{"role": "user", "content": user}],
add_generation_prompt=True, tokenize=False)` gives for that base model's published tokenizer_config
(what vLLM's chat API renders when the checkpoint keeps its base model's template). Written out
rather than rendered with Jinja so a prompt needs no tokenizer download and stays byte-stable.
tests/cpu/verifiers/published_templates.py holds the published Jinja text of each and checks that
rendering it gives the same string.

Where each template came from (the model's tokenizer_config.json on the Hugging Face Hub; the text
was read from copies in public code, as no tokenizer_config was in the xVerify or CompassVerifier
repositories):
  qwen2.5    Qwen/Qwen2.5-*-Instruct; xLLM's jinja_chat_template test ("Qwen2.5's published template")
  llama-3.1  meta-llama/Llama-3.1-8B-Instruct; a verbatim copy set as tokenizer.chat_template for llama-3.1
  llama-3.2  meta-llama/Llama-3.2-{1B,3B}-Instruct; a copy "the same chat_template as llama 3.2 1B Instruct"
  gemma-2    google/gemma-2-*-it; Gemma-2 template copies (identical to google/gemma-7b-it's)
  glm-4      THUDM/glm-4-9b-chat; tokenization_chatglm.py default_chat_template, llama.cpp's ChatGLM4 case
  phi-4      microsoft/phi-4; Berkeley function-calling leaderboard's phi-4 handler quoting its config

Jinja's `trim` is Python's str.strip(): the Llama and Gemma templates strip the user text, the others
insert it as is. The BOS token is part of the text where the template writes it (Llama, Gemma, GLM):
tokenize such a prompt without adding special tokens again.
"""

from __future__ import annotations

from collections.abc import Callable

from xfinder_ray.registry import Registry

QWEN25_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
# Llama-3.1's template fixes this date; Llama-3.2's writes today's (strftime_now) and falls back to it.
LLAMA3_DEFAULT_DATE = "26 Jul 2024"

# Base family -> render(user) -> prompt text. Config and CLI choices read its names().
CHAT_TEMPLATES: Registry[Callable[[str], str]] = Registry("chat template")


@CHAT_TEMPLATES.register("qwen2.5")
def qwen25(user: str, system: str | None = None) -> str:
    # Without a system message the template adds Qwen's own; the user text is not stripped.
    sys_text = QWEN25_DEFAULT_SYSTEM if system is None else system
    return (
        f"<|im_start|>system\n{sys_text}<|im_end|>\n"
        f"<|im_start|>user\n{user}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def _llama3(user: str, date_string: str) -> str:
    # Llama-3.1 and 3.2 always open with a system turn carrying the knowledge cutoff and a date;
    # with no system message its text is empty. The user text is trimmed.
    return (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        f"Cutting Knowledge Date: December 2023\nToday Date: {date_string}\n\n<|eot_id|>"
        f"<|start_header_id|>user<|end_header_id|>\n\n{user.strip()}<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


@CHAT_TEMPLATES.register("llama-3.1")
def llama31(user: str) -> str:
    return _llama3(user, LLAMA3_DEFAULT_DATE)


@CHAT_TEMPLATES.register("llama-3.2")
def llama32(user: str, date_string: str = LLAMA3_DEFAULT_DATE) -> str:
    # transformers gives the template strftime_now, so apply_chat_template writes the day's date; we
    # pin the template's own fallback so that a prompt (and a cached verdict) does not change daily.
    return _llama3(user, date_string)


@CHAT_TEMPLATES.register("gemma-2")
def gemma2(user: str) -> str:
    # No system role (the template raises on one); the user text is trimmed.
    return f"<bos><start_of_turn>user\n{user.strip()}<end_of_turn>\n<start_of_turn>model\n"


@CHAT_TEMPLATES.register("glm-4")
def glm4(user: str) -> str:
    # The template writes a turn only when its content is non-empty; no newline after the turn.
    turn = f"<|user|>\n{user}" if user else ""
    return f"[gMASK]<sop>{turn}<|assistant|>"


@CHAT_TEMPLATES.register("phi-4")
def phi4(user: str) -> str:
    # ChatML with <|im_sep|> after the role and no newlines anywhere.
    return f"<|im_start|>user<|im_sep|>{user}<|im_end|><|im_start|>assistant<|im_sep|>"


def render_chat(base: str, user: str) -> str:
    """`user` as the single user turn of base family `base`'s chat template, ready to generate."""
    return CHAT_TEMPLATES.get(base)(user)
