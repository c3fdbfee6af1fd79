"""The scoring job on a real two-node Ray cluster (`ray start` x2, 1 CPU each), reading from and writing to
a real S3 server (SeaweedFS), submitted three ways: `ray job submit`, `xfinder_ray.submit(...)`, and the
example notebook run headless with nbclient.

Run it inside a private network namespace (every listener on 127.0.0.1):

    scripts/loopback.sh .venv/bin/python -m pytest tests/cpu/test_cluster.py -q

"Both nodes did work" is read from Ray's state API after the job: the tasks Ray recorded for the job's
Ray job id (GCS task events, with the node each ran on). The job's Ray Data tasks that FINISHED must
include tasks on the head node and on the worker node. The input is split into 6 files so the read
stage alone has more tasks than one node has CPUs, and Ray Data spreads its tasks by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.parse
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.ray_cluster import RayCluster, loopback_skip_reason
from tests.s3_server import find_weed, s3_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "xfinder_ray" / "data" / "sample_responses.parquet"
NOTEBOOK = ROOT / "docs" / "examples" / "score_from_notebook.ipynb"
N_FILES = 6
JOB_TIMEOUT = 300  # seconds per job; ~40 s on an idle 2-core machine, ~115 s under load average 19

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.ray, pytest.mark.s3]

_skip = loopback_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def cluster() -> Any:
    """Two nodes: a head and one worker, 1 CPU each, each with its own temp dir. Always stopped."""
    # Ray's runtime-env agent logs every job's runtime_env, env_vars (credentials) included, at INFO:
    # run the cluster's own processes at WARNING (docs/submit.md); test_no_credentials_on_cluster_disk checks.
    c = RayCluster(num_workers=1, cpus_per_node=1, extra_env={"RAY_LOGGER_LEVEL": "warning"})
    try:
        c.start()
        print(f"\nRay cluster up in {c.startup_seconds:.1f}s: {c.dashboard_url}")
        yield c
    finally:
        c.close()
        assert not c.our_pids(), "Ray processes left behind"
        if c.base_dir.exists():
            warnings.warn(f"could not remove the cluster's temp dirs: {c.base_dir}", stacklevel=1)


@pytest.fixture(scope="module")
def bucket(s3_server) -> str:  # noqa: F811
    """The shipped sample split into N_FILES Parquet files under s3://cluster/in/."""
    name = s3_server.make_bucket("cluster")
    table = pq.read_table(SAMPLE)
    fs = s3_server.pyarrow_fs()
    step = -(-table.num_rows // N_FILES)
    for i in range(N_FILES):
        pq.write_table(table.slice(i * step, step), f"{name}/in/part-{i:02d}.parquet", filesystem=fs)
    return name


@pytest.fixture(scope="module")
def n_rows() -> int:
    return pq.ParquetFile(SAMPLE).metadata.num_rows


# ------------------------------------------------------------------------------------------------ helpers


def job_env(s3: Any) -> dict[str, str]:
    """What the job's processes need to reach S3: endpoint, region, keys (never on a command line).

    RAY_LOGGER_LEVEL=info: the job's own processes log Ray Data's progress again (the cluster runs at WARNING).
    """
    return {**s3.env(), "RAY_LOGGER_LEVEL": "info"}


def check_output(s3: Any, prefix: str, n_rows: int) -> dict[str, Any]:
    """Committed, counts reconcile, one judgment per record, every table present. Returns the manifest."""
    fs = s3.pyarrow_fs()
    with fs.open_input_stream(f"{prefix}/manifest.json") as f:
        text = f.read().decode()
    assert s3.secret_key not in text and s3.access_key not in text
    manifest = json.loads(text)
    counts = manifest["counts"]
    assert manifest["status"] == "committed"
    assert counts["input"] == n_rows == counts["judged"] + counts["rejected"], counts
    judgments = pq.read_table(f"{prefix}/judgments", filesystem=fs).to_pandas()
    assert len(judgments) == counts["judged"] and judgments["record_id"].is_unique
    rejects = pq.read_table(f"{prefix}/rejects", filesystem=fs)
    assert rejects.num_rows == counts["rejected"]
    for name in (
        "by_model_task.parquet",
        "by_model_task.csv",
        "by_model.parquet",
        "by_model.csv",
        "leaderboard.md",
    ):
        assert fs.get_file_info(f"{prefix}/accuracy/{name}").size > 0, name
    assert manifest["extractor"].startswith("rules:")
    return manifest


def job_tasks(cluster: RayCluster, ray_job_id: str, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The tasks Ray recorded for a job (state API, with node ids), once every node shows up or timeout.

    Task events reach the GCS asynchronously (about every second), so poll briefly after the job ends.
    """
    query = urllib.parse.urlencode(
        {
            "limit": 10000,
            "detail": "true",
            "filter_keys": "job_id",
            "filter_predicates": "=",
            "filter_values": ray_job_id,
        }
    )
    deadline = time.monotonic() + timeout
    nodes = {n["node_id"] for n in cluster.alive_nodes()}
    while True:
        tasks = cluster.api_get(f"/api/v0/tasks?{query}")["data"]["result"]["result"]
        done = {t.get("node_id") for t in tasks if t.get("state") == "FINISHED"}
        if nodes <= done or time.monotonic() > deadline:
            return tasks
        time.sleep(1.0)


def assert_both_nodes_worked(cluster: RayCluster, ray_job_id: str) -> Counter[str]:
    nodes = {n["node_id"]: n for n in cluster.alive_nodes()}
    assert len(nodes) == 2 and sum(bool(n.get("is_head_node")) for n in nodes.values()) == 1
    tasks = job_tasks(cluster, ray_job_id)
    # Ray Data's operator tasks (ReadParquet->MapBatches(...), Write..., ...), as opposed to Ray's own
    # bookkeeping actors: NORMAL_TASKs of this job that finished.
    data_tasks = [t for t in tasks if t.get("type") == "NORMAL_TASK" and t.get("state") == "FINISHED"]
    per_node = Counter(t["node_id"] for t in data_tasks)
    names = Counter(t.get("name") for t in data_tasks)
    assert set(per_node) == set(nodes), f"tasks per node {dict(per_node)}; nodes {list(nodes)}; tasks {names}"
    return per_node


# ------------------------------------------------------------------------------------------------ tests


def test_cluster_is_two_loopback_nodes(cluster: RayCluster) -> None:
    nodes = cluster.alive_nodes()
    assert len(nodes) == 2
    assert {n["node_ip"] for n in nodes} == {"127.0.0.1"}
    assert sorted(n["resources_total"]["CPU"] for n in nodes) == [1.0, 1.0]
    # Each node writes its session under its own --temp-dir.
    for d in cluster.temp_dirs:
        assert list(d.glob("session_*/logs/raylet.out")), f"no raylet log under {d}"


def test_ray_job_submit_cli(cluster: RayCluster, s3_server, bucket: str, n_rows: int, tmp_path: Path) -> None:  # noqa: F811
    # Credentials in a runtime_env file (mode 0600): not in the entrypoint, not on any process's argv.
    renv = tmp_path / "runtime_env.json"
    renv.write_text(json.dumps({"env_vars": job_env(s3_server)}))
    renv.chmod(0o600)
    sid = f"xfinder-cli-{int(time.time())}"
    args = [
        "job", "submit",
        f"--address={cluster.dashboard_url}",
        f"--submission-id={sid}",
        "--working-dir=.",
        f"--runtime-env={renv}",
        "--",
        "python", "jobs/score.py", "--config", "configs/local.yaml", "extractor.name=rules",
        f"input=s3://{bucket}/in/", f"output=s3://{bucket}/cli/",
    ]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.run(
        [cluster.ray, *args], cwd=ROOT, env=cluster.env(), capture_output=True, text=True, timeout=JOB_TIMEOUT
    )
    elapsed = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert s3_server.secret_key not in out and s3_server.access_key not in out

    info = cluster.api_get(f"/api/jobs/{sid}")
    assert info["status"] == "SUCCEEDED", info
    assert s3_server.secret_key not in info["entrypoint"]
    manifest = check_output(s3_server, f"{bucket}/cli", n_rows)
    per_node = assert_both_nodes_worked(cluster, info["job_id"])
    print(f"\nray job submit: {elapsed:.1f}s; counts {manifest['counts']}; tasks per node {dict(per_node)}")


def test_submit_api(cluster: RayCluster, s3_server, bucket: str, n_rows: int) -> None:  # noqa: F811
    import xfinder_ray

    t0 = time.monotonic()
    job = xfinder_ray.submit(
        config="configs/local.yaml",
        overrides=["extractor.name=rules", f"input=s3://{bucket}/in/", f"output=s3://{bucket}/api/"],
        address=cluster.dashboard_url,
        working_dir=ROOT,
        env_vars=job_env(s3_server),
        auth_token=cluster.token,  # this process's Ray token loader may hold another cluster's token
    )
    lines = list(job.follow(timeout=JOB_TIMEOUT))
    status = job.wait(timeout=30)
    elapsed = time.monotonic() - t0
    assert status == "SUCCEEDED"
    logs = job.logs()
    assert lines and "\n".join(lines).strip() == logs.strip()
    for secret in (s3_server.secret_key, s3_server.access_key):
        assert secret not in job.entrypoint and secret not in logs
    assert "records:" in logs and "judged" in logs  # score_main's summary line

    tables = job.accuracy()
    by_task, by_model = tables["by_model_task"], tables["by_model"]
    manifest = check_output(s3_server, f"{bucket}/api", n_rows)
    assert job.manifest()["counts"] == manifest["counts"]
    assert int(by_task["judged"].sum()) == manifest["counts"]["judged"] == int(by_model["judged"].sum())
    assert int(by_model["input"].sum()) == manifest["counts"]["input"]
    assert by_model["accuracy_macro"].is_monotonic_decreasing
    board = job.leaderboard()
    assert board.startswith("# Leaderboard") and all(m in board for m in by_model["model"])
    assert_both_nodes_worked(cluster, job.info().job_id)
    print(f"\nxfinder_ray.submit: {elapsed:.1f}s; {len(lines)} log lines")


def test_example_notebook(cluster: RayCluster, s3_server, bucket: str, n_rows: int, tmp_path: Path) -> None:  # noqa: F811
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")

    # A private kernelspec for this interpreter (the venv's python): found via JUPYTER_PATH, no network,
    # nothing written under ~/.local.
    jupyter = tmp_path / "jupyter"
    spec = jupyter / "kernels" / "xfinder-venv"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "xfinder venv", "language": "python"})
    )
    env = {
        **cluster.env(),  # RAY_AUTH_MODE=token + RAY_AUTH_TOKEN_PATH: Ray's own client finds the token
        **job_env(s3_server),  # the notebook forwards these to the job as env_vars
        "RAY_ADDRESS": cluster.dashboard_url,
        "XFINDER_INPUT": f"s3://{bucket}/in/",
        "XFINDER_OUTPUT": f"s3://{bucket}/notebook/",
        "JUPYTER_PATH": str(jupyter),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": str(ROOT),
    }
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "JUPYTER_RUNTIME_DIR", "JUPYTER_PLATFORM_DIRS")}
    os.environ.update({k: env[k] for k in saved})  # where this process looks for the kernelspec
    try:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        client = nbclient.NotebookClient(
            nb,
            kernel_name="xfinder-venv",
            timeout=JOB_TIMEOUT,
            resources={"metadata": {"path": str(NOTEBOOK.parent)}},  # the kernel's cwd, as in Jupyter
        )
        t0 = time.monotonic()
        client.execute(env=env)
        elapsed = time.monotonic() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    nbformat.write(nb, tmp_path / "executed.ipynb")
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "\n".join(
        str(o.get("text", "")) + json.dumps(o.get("data", {}))
        for o in outputs
        if o.get("output_type") != "error"
    )
    assert "SUCCEEDED" in text and "# Leaderboard" in text
    assert s3_server.secret_key not in text
    check_output(s3_server, f"{bucket}/notebook", n_rows)
    print(f"\nnotebook: {elapsed:.1f}s")


def test_failed_job_raises_with_log_tail(cluster: RayCluster, s3_server, bucket: str) -> None:  # noqa: F811
    import xfinder_ray
    from xfinder_ray.submit import JobFailed, OutputNotCommitted

    job = xfinder_ray.submit(
        config="configs/local.yaml",
        overrides=["extractor.name=rules", f"input=s3://{bucket}/missing/", f"output=s3://{bucket}/failed/"],
        address=cluster.dashboard_url,
        working_dir=ROOT,
        env_vars=job_env(s3_server),
        auth_token=cluster.token,
    )
    with pytest.raises(JobFailed) as err:
        job.wait(timeout=JOB_TIMEOUT)
    assert err.value.status == "FAILED" and "does not exist" in err.value.log_tail
    with pytest.raises(OutputNotCommitted):
        job.accuracy()


def test_no_credentials_on_cluster_disk(cluster: RayCluster, s3_server) -> None:  # noqa: F811
    """After the jobs above: no file the cluster wrote (logs, sessions, runtime resources) holds a key."""
    secrets_ = [s3_server.secret_key.encode(), s3_server.access_key.encode()]
    found = []
    for path in cluster.base_dir.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 64 * 2**20:
            data = path.read_bytes()
            found += [str(path) for s in secrets_ if s in data]
    assert not found, f"credentials written to: {sorted(set(found))}"
