"""The same mini tasks as ../lighteval_run/tasks_mini.py, for lighteval 0.10 (before the v0.11 details
schema): `metric=` and `suite=` instead of `metrics=`."""

from string import ascii_uppercase

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

MC_INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be of the "
    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD."
)


def mcq_letters_prompt(line, task_name: str = None):
    options = "\n".join(f"{ascii_uppercase[i]}) {o}" for i, o in enumerate(line["options"]))
    query = f"{MC_INSTRUCTION}\n\n{line['question']}\n\n{options}"
    return Doc(
        task_name=task_name,
        query=query,
        choices=list(ascii_uppercase)[: len(line["options"])],
        gold_index=line["answer_index"],
        instruction=MC_INSTRUCTION,
    )


def mcq_loglikelihood_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[f" {o}" for o in line["options"]],
        gold_index=line["answer_index"],
    )


def gsm8k_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[f" {line['answer']}"],
        gold_index=0,
    )


common = dict(hf_subset="default", suite=["community"], version=0)

mmlu_mini_gen = LightevalTaskConfig(
    name="mmlu_mini_gen",
    prompt_function=mcq_letters_prompt,
    hf_repo="data/mcq_mini",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=32,
    metric=[Metrics.gpqa_instruct_metric],
    stop_sequence=[],
    **common,
)
arc_mini_ll = LightevalTaskConfig(
    name="arc_mini_ll",
    prompt_function=mcq_loglikelihood_prompt,
    hf_repo="data/mcq_mini",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    metric=[Metrics.loglikelihood_acc],
    **common,
)
gsm8k_mini = LightevalTaskConfig(
    name="gsm8k_mini",
    prompt_function=gsm8k_prompt,
    hf_repo="data/math_mini",
    hf_avail_splits=["train", "test"],
    evaluation_splits=["test"],
    few_shots_split="train",
    few_shots_select="sequential",
    generation_size=64,
    metric=[Metrics.expr_gold_metric, Metrics.exact_match],
    stop_sequence=["Question:"],
    **common,
)

TASKS_TABLE = [mmlu_mini_gen, arc_mini_ll, gsm8k_mini]
