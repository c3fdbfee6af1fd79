"""Write golden_prompts.json: every verifier checkpoint's prompt for one sample, made WITHOUT
xfinder_ray.verifiers, from the upstream sources themselves:

- the judge prompts exec'd from the xVerify and CompassVerifier repositories (judge_prompt.py,
  base_template.py, src/prompts.py) and filled with str.format as their own code does;
- the chat templates of published_templates.py rendered by transformers' own Jinja renderer
  (render_jinja_template, what apply_chat_template calls), with the tokenizer's special tokens;
- the response's closed thought dropped as OpenCompass does (the text after </think>, stripped).

    python tests/cpu/verifiers/make_golden.py XVERIFY_GIT_DIR COMPASSVERIFIER_GIT_DIR

(git directories, e.g. bare mirrors; read at HEAD). Needs transformers. Not a test: the golden test
reads its output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from published_templates import PUBLISHED  # noqa: E402

SAMPLE = {
    "question": "What is {x} if x = 1/2 + 1/4? Answer as a fraction.",
    "llm_output": "<think>\n1/2 = 2/4, and 2/4 + 1/4 = 3/4.\n</think>\n\nSo {x} = \\frac{3}{4}.  ",
    "correct_answer": "3/4",
}
# Checkpoint -> base family, as the xVerify results tables and model cards name them.
XVERIFY = {
    "xVerify-0.5B-I": "qwen2.5", "xVerify-1B-I": "llama-3.2", "xVerify-1.5B-I": "qwen2.5",
    "xVerify-2B-I": "gemma-2", "xVerify-3B-Ia": "llama-3.2", "xVerify-3B-Ib": "qwen2.5",
    "xVerify-7B-I": "qwen2.5", "xVerify-8B-I": "llama-3.1", "xVerify-9B-C": "glm-4",
    "xVerify-9B-I": "gemma-2", "xVerify-14B-Ia": "qwen2.5", "xVerify-14B-Ib": "phi-4",
    "xVerify-27B-I": "gemma-2", "xVerify-32B-I": "qwen2.5",
}  # fmt: skip
COMPASSVERIFIER = ("CompassVerifier-3B", "CompassVerifier-7B", "CompassVerifier-32B")


def _exec(git_dir: str, path: str) -> dict:
    source = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout
    namespace: dict = {}
    exec(source, namespace)  # the upstream modules are plain constant definitions
    return namespace


def _head(git_dir: str) -> str:
    out = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True)
    return out.stdout.decode().strip()


def _chat(base: str, user: str) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    template, tokens = PUBLISHED[base]
    extra = {"date_string": "26 Jul 2024"} if base == "llama-3.2" else {}  # the pinned date
    rendered, _ = render_jinja_template(
        [[{"role": "user", "content": user}]],
        chat_template=template,
        add_generation_prompt=True,
        **tokens,
        **extra,
    )
    return rendered[0]


def main(xverify_git: str, cv_git: str) -> None:
    judge = _exec(xverify_git, "src/xVerify/prompts/judge_prompt.py")["PROMPT"]
    base_template = _exec(xverify_git, "src/xVerify/prompts/base_template.py")["BASE_TEMPLATE"]
    cv = _exec(cv_git, "src/prompts.py")
    q, a = SAMPLE["question"], SAMPLE["correct_answer"]
    response = SAMPLE["llm_output"].split("</think>")[-1].strip()
    prompts: dict[str, str] = {}
    for name, base in XVERIFY.items():
        user = judge.format(question=q, output=response, answer=a)
        prompts[f"{name}:tokenizer"] = _chat(base, user)
        repo_name = "xVerify-14B-I" if name == "xVerify-14B-Ia" else name
        prompts[f"{name}:xverify-repo"] = base_template[repo_name].format(query=user)
    for name in COMPASSVERIFIER:
        for cot, template in ((False, cv["CV_PROMPT"]), (True, cv["CV_COT_PROMPT"])):
            user = template.format(question=q, gold_answer=a, llm_response=response)
            prompts[f"{name}:tokenizer" + (":cot" if cot else "")] = _chat("qwen2.5", user)
    # One copy of each distinct prompt, with the checkpoints that render it.
    groups: dict[str, list[str]] = {}
    for key, text in prompts.items():
        groups.setdefault(text, []).append(key)
    out = {
        "made_by": "tests/cpu/verifiers/make_golden.py",
        "xverify_commit": _head(xverify_git),
        "compassverifier_commit": _head(cv_git),
        "sample": SAMPLE,
        "golden": [{"keys": keys, "prompt": text} for text, keys in groups.items()],
    }
    (HERE / "golden_prompts.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
