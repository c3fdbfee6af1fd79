"""End to end with `rules`, reading from and writing to a real S3 server (SeaweedFS on loopback)."""

import json
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cpu.test_pipeline import make_rows
from tests.s3_server import s3_server  # noqa: F401  (fixture)
from xfinder_ray.config import load_config
from xfinder_ray.pipeline import run

pytestmark = [pytest.mark.ray, pytest.mark.s3]


def test_rules_end_to_end_s3(ray_local, s3_server, tmp_path):  # noqa: F811
    fs = s3_server.pyarrow_fs()
    bucket = s3_server.make_bucket("pipeline")
    rows = make_rows(2000, seed=1)
    for i in range(2):
        pq.write_table(
            pa.Table.from_pylist(rows[i * 1002 : (i + 1) * 1002]),
            f"{bucket}/in/part-{i}.parquet",
            filesystem=fs,
        )
    creds = [
        f"storage.endpoint_url={s3_server.endpoint_url}",
        f"storage.access_key_id={s3_server.access_key}",
        f"storage.secret_access_key={s3_server.secret_key}",
        "storage.region=us-east-1",
    ]
    cfg = load_config(
        "configs/local.yaml",
        [f"input=s3://{bucket}/in/", f"output=s3://{bucket}/out/", "extractor.name=rules", *creds],
    )
    res = run(cfg)
    assert res.manifest["counts"] == {"input": 2004, "judged": 2000, "rejected": 4}

    with fs.open_input_stream(f"{bucket}/out/manifest.json") as f:
        text = f.read().decode()
    assert s3_server.secret_key not in text and s3_server.access_key not in text
    assert json.loads(text)["config"]["storage"]["secret_access_key"] == "***"

    judgments = pq.read_table(f"{bucket}/out/judgments", filesystem=fs).to_pandas()
    rejects = pq.read_table(f"{bucket}/out/rejects", filesystem=fs).to_pandas()
    assert len(judgments) == 2000 and judgments["record_id"].is_unique and len(rejects) == 4
    assert rejects["reason"].str.len().gt(0).all()
    with fs.open_input_stream(f"{bucket}/out/accuracy/by_model_task.csv") as f:
        import io

        table = pd.read_csv(io.BytesIO(f.read()))
    again = judgments.groupby(["model", "task"])["judgment"].agg(["size", "sum"]).reset_index()
    merged = table.merge(again, on=["model", "task"])
    assert (merged["n"] == merged["size"]).all() and (merged["correct"] == merged["sum"]).all()


def test_model_identity_of_an_s3_folder_uses_the_job_storage_settings(s3_server, tmp_path, monkeypatch):  # noqa: F811
    """An s3:// checkpoint on a custom endpoint, credentials only in the config (none in the
    environment): its identity is read with the job's storage settings and equals the identity of the
    same folder on disk."""
    from xfinder_ray.config import StorageConfig
    from xfinder_ray.extractors.vllm import model_identity

    for name in [k for k in list(os.environ) if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    local = tmp_path / "xFinder-qwen1505"
    local.mkdir()
    files = {
        "config.json": b'{"model_type": "qwen2"}',
        "model.safetensors": b"\0" * 1000,
        "tokenizer.json": b"{}",
    }
    fs = s3_server.pyarrow_fs()
    bucket = s3_server.make_bucket("models")
    for name, data in files.items():
        (local / name).write_bytes(data)
        with fs.open_output_stream(f"{bucket}/ckpt/xFinder-qwen1505/{name}") as f:
            f.write(data)
    storage = StorageConfig(
        endpoint_url=s3_server.endpoint_url,
        region="us-east-1",
        access_key_id=s3_server.access_key,
        secret_access_key=s3_server.secret_key,
    )
    remote = model_identity(f"s3://{bucket}/ckpt/xFinder-qwen1505", storage=storage)
    assert remote == model_identity(str(local))
    assert remote.startswith("xFinder-qwen1505@")
