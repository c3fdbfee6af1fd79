from opencompass.models import HuggingFaceBaseModel

models = [
    dict(
        type=HuggingFaceBaseModel,
        abbr="smollm2-135m-instruct",
        path="/tmp/ocx/smollm2",
        max_out_len=24,
        batch_size=4,
        run_cfg=dict(num_gpus=0),
    )
]
datasets = [
    dict(path="/tmp/ocx/data/lukaemon_mmlu_mini.jsonl"),
    dict(path="/tmp/ocx/data/gsm8k_mini.jsonl"),
    dict(path="/tmp/ocx/data/ARC-c-mini.jsonl", infer_method="ppl"),
    dict(path="/tmp/ocx/data/mytask.jsonl"),
]
