"""xVerify (IAAR-Shanghai; arXiv 2504.10481; github.com/IAAR-Shanghai/xVerify, weights CC-BY-NC-ND-4.0).

xVerify reads the question, the model's response and the correct answer, and writes one word:
"Correct" or "Incorrect". The judge prompt is the repository's `src/xVerify/prompts/judge_prompt.py`
PROMPT, byte for byte (the prompt text is the repository's; the rest of this module is ours).

Two ways to wrap it in the checkpoint's chat format (`variant`):
- ``tokenizer`` (default): the base model's published chat template (chat_templates.py), what the
  README's recommended path (vLLM serve + OpenAI chat API, src/xVerify/model.py `_request_api`)
  renders.
- ``xverify-repo``: the repository's `src/xVerify/prompts/base_template.py`, which its local-inference
  path (`_request_local`) fills with str.format. Those strings write the two characters backslash-n
  where the chat formats have newlines, use ChatGLM3's format for the GLM-4 checkpoint and a
  sample system prompt ("a medieval knight") for the Phi-4 one; they disagree with the checkpoints'
  tokenizer configs (xVerify issue #5, unanswered). Kept to reproduce numbers made with that path.
"""

from __future__ import annotations

import re

from xfinder_ray.verifiers.verdict import CORRECT, INCORRECT, Verdict, invalid

HUB_ORG = "IAAR-Shanghai"
LICENSE = "CC-BY-NC-ND-4.0"  # the README's table, LICENSE.txt and each model card
VARIANTS = ("tokenizer", "xverify-repo")

# The 14 published checkpoints (Hugging Face collection IAAR-Shanghai/xverify; the repository's
# results tables) -> base family. The bases follow base_template.py's template per name, the
# checkpoints' model-card tags and the fine-tuning README (Qwen2.5, Llama-3.1/3.2, Gemma-2, GLM-4,
# Phi-4): Llama 1B/3B exist only as Llama-3.2, 8B only as Llama-3.1.
CHECKPOINTS: dict[str, str] = {
    "xVerify-0.5B-I": "qwen2.5",
    "xVerify-1B-I": "llama-3.2",
    "xVerify-1.5B-I": "qwen2.5",
    "xVerify-2B-I": "gemma-2",
    "xVerify-3B-Ia": "llama-3.2",
    "xVerify-3B-Ib": "qwen2.5",
    "xVerify-7B-I": "qwen2.5",
    "xVerify-8B-I": "llama-3.1",
    "xVerify-9B-C": "glm-4",
    "xVerify-9B-I": "gemma-2",
    "xVerify-14B-Ia": "qwen2.5",
    "xVerify-14B-Ib": "phi-4",
    "xVerify-27B-I": "gemma-2",
    "xVerify-32B-I": "qwen2.5",
}
# base_template.py names the Qwen2.5-14B checkpoint "xVerify-14B-I"; it was published as 14B-Ia.
REPO_TEMPLATE_NAME = {"xVerify-14B-Ia": "xVerify-14B-I"}

# src/xVerify/prompts/judge_prompt.py, verbatim.
PROMPT = '''You are a diligent and precise assistant tasked with evaluating the correctness of responses. You will receive a question, an output sentence, and the correct answer. Your task is to determine if the output sentence accurately answers the question based on the provided correct answer. Respond with either [Correct] or [Incorrect].
-
Special considerations:

1. **Multiple Answers**: If the output contains multiple answers, evaluate whether later answers modify or correct earlier ones. In such cases, compare the final answer with the correct answer. If the final answer is unclear or incorrect, respond with [Incorrect].

2. **Mathematical Problems**: If the formats differ but the answers are mathematically equivalent, respond with [Correct].

3. **Explicit Options**: If the question provides explicit candidate answers, the output will be considered correct if it clearly indicates the correct option's code or the correct option's content.

4. **No Explicit Options**: If the question does not provide explicit options, the output must align with the correct answer in content and meaning to be considered [Correct].
-

Question: """{question}"""

Output sentence: """{output}"""

Correct answer: {answer}

Judgement:
'''

# src/xVerify/prompts/base_template.py, verbatim (its 70B/72B entries name no published checkpoint).
BASE_TEMPLATE = {
    "xVerify-1B-I": "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful AI assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n{query}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\n",
    "xVerify-3B-Ia": "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful AI assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n{query}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\n",
    "xVerify-8B-I": "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful AI assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n{query}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\n",
    "xVerify-70B-I": "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n{query}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\\n\n",
    "xVerify-0.5B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-1.5B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-3B-Ib": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-7B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-14B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-32B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-72B-I": "<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n<|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n\n",
    "xVerify-9B-C": "<|system|>\\nYou are ChatGLM3, a large language model trained by Zhipu.AI. Follow the user's instructions carefully. Respond using markdown.\\n<|user|>\\n{query}\\n<|assistant|>\\n\n",
    "xVerify-2B-I": "<bos><start_of_turn>user\\n{query}<end_of_turn>\\n<start_of_turn>model\\n\n",
    "xVerify-9B-I": "<bos><start_of_turn>user\\n{query}<end_of_turn>\\n<start_of_turn>model\\n\n",
    "xVerify-27B-I": "<bos><start_of_turn>user\\n{query}<end_of_turn>\\n<start_of_turn>model\\n\n",
    "xVerify-14B-Ib": "<|im_start|>system<|im_sep|>\\nYou are a medieval knight and must provide explanations to modern people.<|im_end|>\\n<|im_start|>user<|im_sep|>\\n{query}<|im_end|>\\n<|im_start|>assistant<|im_sep|>\\n",
}


def user_message(question: str, llm_output: str, correct_answer: str) -> str:
    """The judge prompt filled in, as eval.py's Evaluator does (str.format leaves braces in values alone)."""
    return PROMPT.format(question=question, output=llm_output, answer=correct_answer)


def repo_prompt(checkpoint: str, user: str) -> str:
    """The ``xverify-repo`` variant: base_template.py's string for the checkpoint around `user`."""
    template = BASE_TEMPLATE[REPO_TEMPLATE_NAME.get(checkpoint, checkpoint)]
    return template.replace("{query}", user, 1)  # its only field; replace keeps braces in `user` literal


# The repository's own parser (eval.py stat_results) accepts exactly "correct"/"incorrect" after
# strip().lower(). The prompt asks for "[Correct]"/"[Incorrect]", so brackets, bold, quotes, a
# "Judgement:" echo and a closing full stop are tolerated too; any other text is not a verdict.
_ECHO = re.compile(r"^judge?ment\s*[:：]\s*", re.IGNORECASE)
_WRAPPERS = "[]()*\"'`"
_END = ".!。"


def parse(text: str) -> Verdict:
    """xVerify's output -> correct | incorrect; anything else is an invalid outcome with the raw text."""
    core = _ECHO.sub("", text.strip())
    core = core.rstrip(_END).strip().strip(_WRAPPERS).strip().rstrip(_END).strip()
    label = core.lower()
    if label not in ("correct", "incorrect"):
        return invalid(text)
    return Verdict(CORRECT if label == "correct" else INCORRECT, label.capitalize(), None, text)
