from opencompass.models import HuggingFacewithChatTemplate
from opencompass.partitioners import NumWorkerPartitioner
from opencompass.runners import LocalRunner
from opencompass.tasks import OpenICLInferTask

models = [
    dict(
        type=HuggingFacewithChatTemplate,
        abbr="smollm2-135m-instruct-chat",
        path="/tmp/ocx/smollm2",
        max_out_len=24,
        batch_size=4,
        run_cfg=dict(num_gpus=0),
    )
]
datasets = [
    dict(path="/tmp/ocx/data/commonsense_qa_mini.jsonl"),
    dict(path="/tmp/ocx/data/gsm8k_mini.jsonl"),
]
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=2, min_task_size=1, strategy="split"),
    runner=dict(type=LocalRunner, task=dict(type=OpenICLInferTask)),
)
