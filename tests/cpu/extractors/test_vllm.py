"""The vLLM extraction stage: pure helpers (fast) and one real run on SmolLM2 (slow, vllm).

The real run uses a Ray instance (the shared `ray_local` fixture, num_cpus=2) and the vLLM CPU engine
with enforce_eager; the engine starts once for the module (see vllm_fixtures.py).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from tests.cpu.vllm_fixtures import INPUT_SCHEMA, TOO_LONG_ID, smollm2_model, vllm_stage_run
from xfinder_ray.extractors import vllm as vs
from xfinder_ray.extractors.vllm import VLLMStageConfig, engine, model_identity, transport

# The fixtures live in vllm_fixtures.py (tests/cpu/conftest.py is shared); importing them registers them here.
_FIXTURES = (smollm2_model, vllm_stage_run)

# --- fast: no Ray, no engine --------------------------------------------------------------------------


def _table() -> pa.Table:
    rows = [
        {
            "record_id": "a",
            "model": "m1",
            "prompt": "p1",
            "standard_answer_range": ["x", "y"],
            "score": 1.5,
            "n": 1,
        },
        {
            "record_id": "b",
            "model": None,
            "prompt": "p2",
            "standard_answer_range": None,
            "score": None,
            "n": 2,
        },
    ]
    return pa.Table.from_pylist(rows, schema=INPUT_SCHEMA)


def test_pack_unpack_round_trip_keeps_values_and_types():
    table = _table()
    packed = vs.make_pack(vs.sampling_params(VLLMStageConfig("m")))(table)
    assert packed.column_names == ["prompt", "sampling_params", transport._ROW_COLUMN]
    sp = packed["sampling_params"][0].as_py()
    assert sp["temperature"] == 0.0 and sp["max_tokens"] == 32 and "<|im_end|>" in sp["stop"]
    # What the processor hands back: a success row (slimmed) and an error row (with the error message).
    processed = pa.table(
        {
            transport._ROW_COLUMN: packed[transport._ROW_COLUMN],
            "generated_text": ["B", ""],
            "num_input_tokens": [17, 0],
            transport._ERROR_KEY: ["", "ValueError: too long"],
        }
    )
    out = vs.unpack(processed)
    assert out.schema == INPUT_SCHEMA.append(pa.field("raw_output", pa.string())).append(
        pa.field("prompt_tokens", pa.int64())
    ).append(pa.field("extract_error", pa.string()))
    assert out.select(INPUT_SCHEMA.names).equals(table)
    assert out["raw_output"].to_pylist() == ["B", ""]
    assert out["prompt_tokens"].to_pylist() == [17, 0]
    assert out["extract_error"].to_pylist() == [None, "ValueError: too long"]


def test_unpack_replaces_previous_outputs():
    table = _table().append_column("raw_output", pa.array(["old", "old"]))
    packed = vs.make_pack({})(table)
    processed = pa.table(
        {
            transport._ROW_COLUMN: packed[transport._ROW_COLUMN],
            "generated_text": ["new", "new"],
            "num_input_tokens": [1, 1],
        }
    )
    out = vs.unpack(processed)
    assert out["raw_output"].to_pylist() == ["new", "new"]
    assert out.column_names.count("raw_output") == 1
    assert out["extract_error"].to_pylist() == [None, None]


def test_identical_prompts_in_a_batch_are_generated_once_and_fanned_out():
    rows = [{"record_id": f"r{i}", "prompt": ["p-a", "p-b", "p-a", "p-a", "p-c"][i]} for i in range(5)]
    table = pa.Table.from_pylist(rows)
    packed = vs.make_pack({})(table)
    assert packed["prompt"].to_pylist() == ["p-a", "p-b", "p-c"]  # three engine requests for five rows
    processed = pa.table(
        {
            transport._ROW_COLUMN: packed[transport._ROW_COLUMN],
            "generated_text": ["A", "B", "C"],
            "num_input_tokens": [3, 4, 5],
        }
    )
    out = vs.unpack(processed).to_pandas().set_index("record_id")
    assert out.loc[["r0", "r2", "r3"], "raw_output"].tolist() == ["A", "A", "A"]
    assert out.loc["r1", "raw_output"] == "B" and out.loc["r4", "raw_output"] == "C"
    assert out.loc["r3", "prompt_tokens"] == 3 and sorted(out.index) == [f"r{i}" for i in range(5)]


def test_pack_needs_a_prompt_column():
    with pytest.raises(KeyError, match="prompt"):
        vs.make_pack({})(pa.table({"x": [1]}))


def test_processor_kwargs_cpu(monkeypatch):
    monkeypatch.setattr(engine, "cpu_has_fast_bf16", lambda: False)
    monkeypatch.setattr(engine, "cpu_cores", lambda: 64)
    cfg = VLLMStageConfig("some/model", concurrency=2, kv_cache_gib=3, env_vars={"A": 1})
    kw = vs.processor_config_kwargs(cfg, "cpu")
    assert kw["concurrency"] == (2, 2)  # an int is a fixed pool (ray.data.llm would read 1..2)
    ek = kw["engine_kwargs"]
    assert ek["enforce_eager"] is True and ek["enable_prefix_caching"] is True
    assert ek["max_model_len"] == 2048 and ek["dtype"] == "float32"
    assert ek["block_size"] == vs.CPU_BLOCK_SIZE  # small blocks: the prefix cache reuses more of a question
    assert ek["max_num_batched_tokens"] == vs.CPU_MAX_BATCHED_TOKENS
    assert kw["placement_group_config"]["bundle_per_worker"] == {"CPU": 1.0}
    assert kw["runtime_env"]["env_vars"]["VLLM_CPU_KVCACHE_SPACE"] == "3"
    assert kw["runtime_env"]["env_vars"]["A"] == "1"
    assert "VLLM_CPU_NUM_OF_RESERVED_CPU" not in kw["runtime_env"]["env_vars"]  # a big node: vLLM's default
    assert kw["chat_template_stage"] is False and kw["should_continue_on_error"] is True
    assert kw["log_engine_metrics"] is False


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_small_cpu_node_computes_on_every_core(monkeypatch, cores):
    monkeypatch.setattr(engine, "cpu_cores", lambda: cores)
    env = vs.processor_config_kwargs(VLLMStageConfig("m"), "cpu")["runtime_env"]["env_vars"]
    assert env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
    # the user's setting wins; the GPU path never sets it
    cfg = VLLMStageConfig("m", env_vars={"VLLM_CPU_NUM_OF_RESERVED_CPU": "1"})
    assert (
        vs.processor_config_kwargs(cfg, "cpu")["runtime_env"]["env_vars"]["VLLM_CPU_NUM_OF_RESERVED_CPU"]
        == "1"
    )
    assert (
        "VLLM_CPU_NUM_OF_RESERVED_CPU"
        not in vs.processor_config_kwargs(VLLMStageConfig("m"), "gpu")["runtime_env"]["env_vars"]
    )


def test_processor_kwargs_gpu_and_overrides():
    cfg = VLLMStageConfig(
        "some/model",
        concurrency=(1, 4),
        num_gpus_per_replica=0.5,
        tensor_parallel_size=2,
        engine_kwargs={"max_model_len": 4096, "enforce_eager": False},
    )
    kw = vs.processor_config_kwargs(cfg, "gpu")
    assert kw["concurrency"] == (1, 4)
    ek = kw["engine_kwargs"]
    assert ek["max_model_len"] == 4096 and ek["enforce_eager"] is False  # engine_kwargs win
    assert ek["tensor_parallel_size"] == 2 and ek["gpu_memory_utilization"] == 0.45
    assert "dtype" not in ek and "VLLM_CPU_KVCACHE_SPACE" not in kw["runtime_env"]["env_vars"]
    assert "block_size" not in ek and "max_num_batched_tokens" not in ek  # vLLM's GPU defaults
    assert kw["placement_group_config"]["bundle_per_worker"] == {"CPU": 1.0, "GPU": 0.5}
    # And ray.data.llm accepts them.
    from ray.data.llm import vLLMEngineProcessorConfig

    vLLMEngineProcessorConfig(**kw)


def test_stage_config_from_job_config():
    from xfinder_ray.config import XFinderConfig

    x = XFinderConfig(model_source="some/model", revision="abc123", replicas=3, gpus_per_replica=0.5)
    cfg = vs.stage_config_from(x)
    assert cfg.concurrency == 3 and cfg.num_gpus_per_replica == 0.5 and cfg.revision == "abc123"
    assert cfg.max_tokens == x.max_tokens and cfg.max_model_len == x.max_model_len
    assert vs.stage_config_from(XFinderConfig(min_replicas=1, max_replicas=4)).concurrency == (1, 4)
    ek = vs.processor_config_kwargs(cfg, "gpu")["engine_kwargs"]
    assert ek["revision"] == "abc123" and ek["tokenizer_revision"] == "abc123"


def test_cpu_bf16_detection():
    assert vs.cpu_has_fast_bf16("flags\t\t: fpu avx2 avx512f avx512_bf16\n")
    assert not vs.cpu_has_fast_bf16("flags\t\t: fpu avx2 fma\n")


def test_model_identity_local_folder(tmp_path):
    d = tmp_path / "xFinder-qwen1505"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (d / "model.safetensors").write_bytes(b"0" * 10)
    (d / "README.md").write_text("not part of the identity")
    first = model_identity(str(d))
    assert first.startswith("xFinder-qwen1505@") and len(first.split("@")[1]) == 12
    (d / "README.md").write_text("changed")
    assert model_identity(str(d)) == first
    (d / "model.safetensors").write_bytes(b"0" * 11)
    assert model_identity(str(d)) != first
    (d / "model.safetensors").write_bytes(b"0" * 10)
    assert model_identity(str(d)) == first
    (d / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert model_identity(str(d)) != first


def test_model_identity_hf_id(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert model_identity("IAAR-Shanghai/xFinder-qwen1505").startswith("IAAR-Shanghai/xFinder-qwen1505@")
    assert model_identity("IAAR-Shanghai/xFinder-qwen1505", "v1") == "IAAR-Shanghai/xFinder-qwen1505@v1"


# --- slow: the real engine --------------------------------------------------------------------------------


def _by_id(rows: list[dict]) -> dict[str, dict]:
    return {r["record_id"]: r for r in rows}


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.timeout(420)
def test_every_row_comes_back_with_outputs(vllm_stage_run):
    run = vllm_stage_run
    assert sorted(r["record_id"] for r in run.outputs) == sorted(r["record_id"] for r in run.inputs)
    for r in run.outputs:
        assert isinstance(r["raw_output"], str)
        if r["record_id"] == TOO_LONG_ID:
            continue
        assert r["extract_error"] is None, r["extract_error"]
        assert r["prompt_tokens"] > 100  # the xFinder instruction alone is a few hundred tokens
        assert r["raw_output"].strip(), r  # greedy SmolLM2 says something
        for stop in VLLMStageConfig("m").stop:
            assert stop not in r["raw_output"]


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.timeout(420)
def test_passthrough_columns_intact(vllm_stage_run):
    run = vllm_stage_run
    for name in INPUT_SCHEMA.names:
        assert run.schema.field(name).type == INPUT_SCHEMA.field(name).type, name
    assert run.schema.field("raw_output").type == pa.string()
    assert run.schema.field("prompt_tokens").type == pa.int64()
    outs = _by_id(run.outputs)
    for row in run.inputs:
        got = outs[row["record_id"]]
        for k, v in row.items():
            assert got[k] == v, (row["record_id"], k)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.timeout(420)
def test_identical_prompts_in_a_batch_share_one_generation(vllm_stage_run):
    # What the stage guarantees (its pack step): one engine request per distinct prompt in a batch.
    order = [r["record_id"] for r in vllm_stage_run.inputs]
    assert order.index("dup-of-r00") == order.index("r00") + 1  # the fixture keeps pairs adjacent
    outs = _by_id(vllm_stage_run.outputs)
    for src in ("r00", "r05"):
        dup = outs[f"dup-of-{src}"]
        assert dup["raw_output"] == outs[src]["raw_output"]
        assert dup["prompt_tokens"] == outs[src]["prompt_tokens"]


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.timeout(420)
def test_a_bad_row_reports_its_error_and_spares_the_batch(vllm_stage_run):
    bad = _by_id(vllm_stage_run.outputs)[TOO_LONG_ID]
    assert bad["extract_error"] and "maximum context length" in bad["extract_error"]
    assert bad["raw_output"] == "" and bad["prompt_tokens"] == 0
    assert sum(r["extract_error"] is not None for r in vllm_stage_run.outputs) == 1
