"""Custom lighteval tasks over local JSON Lines folders (data/<name>/test.jsonl), for xfinder-ray's
import fixtures. Run from the folder holding data/ (hf_repo is a relative local path)."""

from string import ascii_uppercase

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

MC_INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be of the "
    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD."
)


def mcq_letters_prompt(line, task_name: str = None):
    # lighteval's own generative MC convention (gpqa:diamond, mmlu_pro): choices are the letters,
    # the option texts are in the query.
    options = "\n".join(f"{ascii_uppercase[i]}) {o}" for i, o in enumerate(line["options"]))
    query = f"{MC_INSTRUCTION}\n\n{line['question']}\n\n{options}"
    return Doc(
        task_name=task_name,
        query=query,
        choices=list(ascii_uppercase)[: len(line["options"])],
        gold_index=line["answer_index"],
        instruction=MC_INSTRUCTION,
    )


def mcq_text_prompt(line, task_name: str = None):
    # choices are the option texts (as lighteval's log-likelihood MC tasks keep them)
    options = "\n".join(f"{ascii_uppercase[i]}. {o}" for i, o in enumerate(line["options"]))
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\n{options}\nAnswer with the text of the correct option.\nAnswer:",
        choices=list(line["options"]),
        gold_index=line["answer_index"],
    )


def mcq_loglikelihood_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[f" {o}" for o in line["options"]],
        gold_index=line["answer_index"],
    )


def gsm8k_prompt(line, task_name: str = None):
    # as lighteval's tasks/gsm8k.py
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[f" {line['answer']}"],
        gold_index=0,
    )


mmlu_mini_gen = LightevalTaskConfig(
    name="mmlu_mini_gen",
    prompt_function=mcq_letters_prompt,
    hf_repo="data/mcq_mini",
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=32,
    metrics=[Metrics.gpqa_instruct_metric],
    stop_sequence=[],
    version=0,
)

mcq_mini_text = LightevalTaskConfig(
    name="mcq_mini_text",
    prompt_function=mcq_text_prompt,
    hf_repo="data/mcq_mini",
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=16,
    metrics=[Metrics.exact_match],
    stop_sequence=["\n"],
    version=0,
)

arc_mini_ll = LightevalTaskConfig(
    name="arc_mini_ll",
    prompt_function=mcq_loglikelihood_prompt,
    hf_repo="data/mcq_mini",
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    metrics=[Metrics.loglikelihood_acc],
    version=0,
)

gsm8k_mini = LightevalTaskConfig(
    name="gsm8k_mini",
    prompt_function=gsm8k_prompt,
    hf_repo="data/math_mini",
    hf_subset="default",
    hf_avail_splits=["train", "test"],
    evaluation_splits=["test"],
    few_shots_split="train",
    few_shots_select="sequential",
    generation_size=64,
    metrics=[Metrics.expr_gold_metric, Metrics.exact_match],
    stop_sequence=["Question:"],
    version=0,
)

gsm8k_mini_pass = LightevalTaskConfig(
    name="gsm8k_mini_pass",
    prompt_function=gsm8k_prompt,
    hf_repo="data/math_mini",
    hf_subset="default",
    hf_avail_splits=["train", "test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=48,
    metrics=[Metrics.pass_at_k_math(sample_params={"k": 1, "n": 2})],
    stop_sequence=["Question:"],
    version=0,
)

TASKS_TABLE = [mmlu_mini_gen, mcq_mini_text, arc_mini_ll, gsm8k_mini, gsm8k_mini_pass]
