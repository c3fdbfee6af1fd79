"""Fault injection with real components: the S3 server goes away, a vLLM replica dies, the driver dies.

Every job runs as a real `xfinder-ray score` subprocess with its own local Ray instance (tests/faults.py),
so a kill here is a kill of real processes, and the output is checked for completeness afterwards: every
input record exactly once across judgments/ + rejects/, and a manifest whose counts reconcile.

Run inside the loopback namespace (scripts/loopback.sh); with -s each test prints what it measured.
XFINDER_FAULTS_OUTAGE_S sets the S3 outage (default 8 s); XFINDER_FAULTS_CODE runs the jobs from another
checkout (e.g. a `git worktree` of a fixed commit while this tree is being edited).
"""

from __future__ import annotations

import json
import os
import re
import signal
import time

import pandas as pd
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests import faults
from tests.cpu.vllm_fixtures import smollm2_model  # noqa: F401  (fixture)
from tests.s3_server import s3_server  # noqa: F401  (fixture)

LOCAL = pafs.LocalFileSystem()


@pytest.fixture
def jobs():
    """Start jobs with `jobs(args, log)`; whatever of them is still running at teardown is killed."""
    started: list[faults.Job] = []

    def start(args: list[str], log, **kwargs) -> faults.Job:
        job = faults.Job(args, log, **kwargs)
        started.append(job)
        return job

    yield start
    for job in started:
        job.kill_tree()


def report(name: str, **numbers: object) -> None:
    print(f"\n[{name}] " + json.dumps(numbers, default=str), flush=True)


# --------------------------------------------------------------------------------------- S3 outage

OUTAGE_ROWS = 60_000  # ~30-60 s of `rules` work on 2 cores
EXECUTING = "Starting execution of Dataset"  # Ray Data's log line when the dataset starts running
# "A few seconds". XFINDER_FAULTS_OUTAGE_S overrides it to measure how long an outage the job rides out.
OUTAGE_SECONDS = float(os.environ.get("XFINDER_FAULTS_OUTAGE_S", "8"))


@pytest.mark.s3
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize(
    "when, on_bad_file",
    [
        # Mid-run: some output is written, more is to come (there always is: at least the manifest).
        ("first_part_file", "fail"),
        # While the input is being read, with unreadable files skipped: an outage is not a bad file.
        ("reading", "skip"),
    ],
)
def test_s3_server_stopped_and_restarted_mid_run(s3_server, tmp_path, jobs, when, on_bad_file):  # noqa: F811
    fs = s3_server.pyarrow_fs()
    bucket = s3_server.make_bucket(f"faults-outage-{when.replace('_', '-')}")
    faults.write_synthetic(fs, f"{bucket}/in", OUTAGE_ROWS, n_files=4, row_group_size=5_000)
    ids = faults.input_ids(fs, f"{bucket}/in")
    defective = faults.defective_ids(fs, f"{bucket}/in")
    out = f"{bucket}/out"
    job = jobs(
        faults.score_args(
            f"input=s3://{bucket}/in/",
            f"output=s3://{out}",
            "extractor.name=rules",
            f"input.on_bad_file={on_bad_file}",
            f"storage.endpoint_url={s3_server.endpoint_url}",
            f"storage.access_key_id={s3_server.access_key}",
            f"storage.secret_access_key={s3_server.secret_key}",
            "storage.region=us-east-1",
        ),
        tmp_path / "job.log",
        env={"AWS_EC2_METADATA_DISABLED": "true"},
    )

    def written() -> list[str]:
        return faults.part_files(fs, f"{out}/judgments") + faults.part_files(fs, f"{out}/rejects")

    if when == "first_part_file":
        faults.wait_for(written, 900, "the first part file", job=job)
    else:
        faults.wait_for(lambda: EXECUTING in job.log_text(), 900, "the dataset's execution", job=job)
    parts_before = len(written())
    stopped_at = job.elapsed()
    assert job.running
    try:
        s3_server.stop()
        time.sleep(OUTAGE_SECONDS)
    finally:
        s3_server.start()  # the server is shared by the session's other tests
    down = job.elapsed() - stopped_at
    running_after = job.running

    rc = job.wait(1200)
    assert rc == 0, f"the job did not survive a {down:.1f}s S3 outage; log:\n{job.log_tail()}"
    result = faults.read_output(fs, out)
    faults.assert_complete(result, ids)
    rejected = set(result.rejects.column("record_id").to_pylist()) if result.rejects.num_rows else set()
    report(
        f"s3 outage at {when}",
        rows=len(ids),
        part_files_before_outage=parts_before,
        stopped_at_s=round(stopped_at, 1),
        down_s=round(down, 1),
        job_running_when_back=running_after,
        job_wall_s=round(job.elapsed(), 1),
        part_files=[len(v) for v in result.files.values()],
        rejected=len(rejected),
        defective_in_input=len(defective),
        skipped_files=result.manifest.get("skipped_files"),
    )
    # Only the deliberately invalid records are rejects: the outage did not turn good rows into rejects.
    assert not result.manifest.get("skipped_files"), result.manifest["skipped_files"]
    spurious = sorted(rejected - defective)
    reasons = result.rejects.to_pandas().set_index("record_id").loc[spurious[:3], "reason"].tolist()
    assert not spurious, f"{len(spurious)} valid rows rejected during the outage, e.g. {reasons}"
    assert rejected == defective


@pytest.mark.s3
def test_s3_location_shipped_to_a_ray_worker_keeps_its_retries(s3_server):  # noqa: F811
    """What a write task gets is a cloudpickled copy of the job's S3 Location: it must ride out an outage too.

    pyarrow's S3FileSystem.__reduce__ does not carry `retry_strategy`, so an unpickled copy falls back
    to pyarrow's default AwsStandardS3RetryStrategy(max_attempts=3) (gives up after ~1-3 s) instead of
    storage.py's max_attempts=10 (~60-100 s).
    """
    import threading

    import pyarrow as pa
    from ray import cloudpickle

    from xfinder_ray.config import StorageConfig
    from xfinder_ray.storage import resolve

    bucket = s3_server.make_bucket("faults-shipped")
    storage = StorageConfig(
        endpoint_url=s3_server.endpoint_url,
        region="us-east-1",
        access_key_id=s3_server.access_key,
        secret_access_key=s3_server.secret_key,
    )
    shipped = cloudpickle.loads(cloudpickle.dumps(resolve(f"s3://{bucket}/shipped", storage)))
    outcome: dict[str, object] = {}

    def write() -> None:
        t0 = time.monotonic()
        try:
            pq.write_table(
                pa.table({"x": [1, 2, 3]}), f"{shipped.path}/part-0.parquet", filesystem=shipped.fs
            )
            outcome["ok"] = True
        except OSError as e:
            outcome["error"] = str(e).splitlines()[0]
        outcome["seconds"] = round(time.monotonic() - t0, 1)

    try:
        s3_server.stop()
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        time.sleep(OUTAGE_SECONDS)
    finally:
        s3_server.start()
    writer.join(300)
    report("shipped S3 location", outage_s=OUTAGE_SECONDS, **outcome)
    assert outcome.get("ok"), (
        f"a worker-side S3 write gave up during a {OUTAGE_SECONDS:.0f}s outage: {outcome}"
    )


# --------------------------------------------------------------------------------------- vLLM replica

VLLM_ROWS = 48
VLLM_BATCH = 4  # 12 batches, 8 in flight at once (ray.data.llm's max_concurrent_batches)
BATCH_DONE = re.compile(r"\[vLLM\] Elapsed time for batch")  # ray.data.llm, when its INFO log is shown
# The engine has produced tokens: a finished batch, or vLLM's periodic stats with a non-zero generation rate.
GENERATING = re.compile(r"\[vLLM\] Elapsed time for batch|Avg generation throughput: (?!0\.0 )\d")
# Process titles (/proc/<pid>/cmdline after setproctitle): Ray's actor for the vLLM stage, and vLLM's
# engine process that the actor starts.
TARGETS = {
    "replica_actor": lambda p: p.cmdline.startswith("ray::") and "vLLMEngineStage" in p.cmdline,
    "engine_core": lambda p: "EngineCore" in p.cmdline and not p.cmdline.startswith("ray::"),
}


def vllm_input(path) -> list[str]:
    import pyarrow as pa

    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import read_sample

    rows = [r for r in read_sample() if r["defect"] is None][:VLLM_ROWS]
    pq.write_table(pa.Table.from_pylist([{k: r[k] for k in FIELDS} for r in rows]), path)
    return [r["record_id"] for r in rows]


def find_procs(job: faults.Job, which: str) -> list[faults.ProcInfo]:
    return [p for p in faults.descendants(job.pid) if TARGETS[which](p)]


@pytest.mark.vllm
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize(
    "target",
    [
        "replica_actor",
        # The same recovery through another process (~3 min more): XFINDER_FAULTS_ALL=1 runs it too.
        pytest.param(
            "engine_core",
            marks=pytest.mark.skipif(
                os.environ.get("XFINDER_FAULTS_ALL") != "1", reason="XFINDER_FAULTS_ALL=1 runs it"
            ),
        ),
    ],
)
def test_sigkill_vllm_replica_mid_run(smollm2_model, tmp_path, jobs, target):  # noqa: F811
    ids = vllm_input(tmp_path / "in.parquet")
    out = tmp_path / "out"
    job = jobs(
        faults.score_args(
            f"input={tmp_path / 'in.parquet'}",
            f"output={out}",
            f"xfinder.model_source={smollm2_model}",
            "xfinder.max_tokens=8",
            f"xfinder.batch_size={VLLM_BATCH}",
        ),
        tmp_path / "job.log",
    )
    # Generating: the engine has produced tokens (most rows are still to come).
    faults.wait_for(lambda: GENERATING.search(job.log_text()), 900, "the engine's first tokens", job=job)
    batches_before = len(BATCH_DONE.findall(job.log_text()))
    engines_before = {p.pid for p in find_procs(job, "engine_core")}
    victims = find_procs(job, target)
    assert len(victims) == 1, [(p.pid, p.cmdline[:100]) for p in faults.descendants(job.pid)]
    victim = victims[0]
    killed_at = job.elapsed()
    os.kill(victim.pid, signal.SIGKILL)
    faults.wait_for(lambda: not faults.alive(victim.pid), 30, f"{target} {victim.pid} to die")

    # A replacement engine starts (the actor is restarted, or a new one is created) ...
    replacement = faults.wait_for(
        lambda: [p.pid for p in find_procs(job, "engine_core") if p.pid not in engines_before],
        600,
        "a replacement engine",
        poll=1.0,
        job=job,
    )
    restarted_at = job.elapsed()
    # ... and the old engine is gone (an orphaned EngineCore would hold its CPUs and KV cache).
    orphans = [pid for pid in engines_before if faults.alive(pid)]
    rc = job.wait(1500)
    assert rc == 0, f"the job did not survive the kill of its {target}; log:\n{job.log_tail(80)}"

    # Every record is judged exactly once: nothing lost with the dead replica, nothing twice.
    result = faults.read_output(LOCAL, str(out))
    faults.assert_complete(result, ids)
    reasons = result.rejects.column("reason").to_pylist() if result.rejects.num_rows else []
    batches_total = len(BATCH_DONE.findall(job.log_text()))
    report(
        f"vllm kill {target}",
        rows=len(ids),
        killed_pid=victim.pid,
        killed=victim.cmdline[:80],
        batches_done_before_kill=batches_before,
        batches_done_total=batches_total,
        # batches generated twice: the work lost with the replica (a Ray task is retried whole)
        batches_redone=batches_total - -(-len(ids) // VLLM_BATCH) if batches_total else None,
        killed_at_s=round(killed_at, 1),
        replacement_engine_after_s=round(restarted_at - killed_at, 1),
        replacement_engine_pids=replacement,
        old_engine_alive_after_replacement=orphans,
        rejected=len(reasons),
        job_wall_s=round(job.elapsed(), 1),
    )
    assert not reasons, f"valid rows rejected after the kill (engine errors as row errors?): {reasons[:5]}"
    assert not [pid for pid in orphans if faults.alive(pid)], f"EngineCore {orphans} outlived the job"


# --------------------------------------------------------------------------------------- driver killed

RESUME_ROWS = 30_000
RESUME_FILES = 4
RESUME_ROW_GROUP = 2_500  # 12 read shards, each written as its own part files
RAY_DAEMONS = ("raylet", "gcs_server")
MID_RUN_PARTS = 4  # of the 12 shards' part files


@pytest.fixture(scope="module")
def resume_input(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resume-in")
    faults.write_synthetic(
        LOCAL, str(folder), RESUME_ROWS, RESUME_FILES, seed=7, row_group_size=RESUME_ROW_GROUP
    )
    return folder, faults.input_ids(LOCAL, str(folder))


@pytest.fixture(scope="module")
def uninterrupted(resume_input, tmp_path_factory):
    """The same job run once without faults: what a resumed run must reproduce."""
    folder, ids = resume_input
    out = tmp_path_factory.mktemp("resume-ref") / "out"
    job = faults.Job(resume_args(folder, out), out.parent / "job.log")
    try:
        rc = job.wait(1800)
    finally:
        job.kill_tree()
    assert rc == 0, job.log_tail()
    result = faults.read_output(LOCAL, str(out))
    faults.assert_complete(result, ids)
    return out, result, job.elapsed()


def resume_args(folder, out) -> list[str]:
    return faults.score_args(f"input={folder}", f"output={out}", "extractor.name=rules")


def sorted_rows(table) -> pd.DataFrame:
    df = table.to_pandas()
    keys = [c for c in ("source_file", "source_row", "record_id") if c in df]
    return df.sort_values(keys).reset_index(drop=True)


def assert_same_output(out, result, ref_out, ref) -> None:
    for part in ("judgments", "rejects"):
        mine, theirs = getattr(result, part), getattr(ref, part)
        assert {"source_file", "source_row"} <= set(mine.column_names), (
            f"{part} has no source_file/source_row: resume is not implemented"
        )
        pd.testing.assert_frame_equal(sorted_rows(mine), sorted_rows(theirs), check_like=True)
    for csv in sorted(p.name for p in (ref_out / "accuracy").glob("*.csv")):
        pd.testing.assert_frame_equal(
            pd.read_csv(out / "accuracy" / csv), pd.read_csv(ref_out / "accuracy" / csv), obj=csv
        )


def kill_and_resume(jobs, folder, ids, out, log, kill_when, what: str) -> dict:
    first = jobs(resume_args(folder, out), log)
    faults.wait_for(kill_when(first), 900, what, job=first)
    killed_at = first.elapsed()
    victims = first.kill_tree()
    names = {p.name for p in victims}
    # Its own Ray instance went down with it: nothing of that session survives.
    assert set(RAY_DAEMONS) <= names, f"no Ray daemons among the killed processes: {sorted(names)}"
    assert not faults.descendants(first.pid)
    assert not (out / "manifest.json").exists()
    parts_at_kill = {p: len(faults.part_files(LOCAL, str(out / p))) for p in ("judgments", "rejects")}

    second = jobs(resume_args(folder, out), log)  # the same command again
    rc = second.wait(1800)
    assert rc == 0, second.log_tail()
    result = faults.read_output(LOCAL, str(out))
    faults.assert_complete(result, ids)
    resume = result.manifest.get("resume")
    assert resume is not None, "manifest.json has no `resume` section: resume is not implemented"
    assert resume["rows_done_before"] + resume["rows_this_run"] == len(ids), resume
    return {
        "killed_at_s": round(killed_at, 1),
        "killed_processes": len(victims),
        "part_files_at_kill": parts_at_kill,
        "rows_done_before": resume["rows_done_before"],
        "rows_this_run": resume["rows_this_run"],
        "rerun_wall_s": round(second.elapsed(), 1),
        "result": result,
    }


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("when", ["mid_run", "right_after_start"])
def test_driver_killed_and_rerun_resumes(resume_input, uninterrupted, tmp_path, jobs, when):
    folder, ids = resume_input
    ref_out, ref, ref_wall = uninterrupted
    out = tmp_path / "out"
    if when == "mid_run":
        what = f"{MID_RUN_PARTS} judgments part files"

        def kill_when(job):
            return lambda: len(faults.part_files(LOCAL, str(out / "judgments"))) >= MID_RUN_PARTS
    else:
        # Ray is up, the output is opened and the dataset starts executing: nothing is written yet.
        what = "the dataset's execution"

        def kill_when(job):
            return lambda: EXECUTING in job.log_text()

    got = kill_and_resume(jobs, folder, ids, out, tmp_path / "job.log", kill_when, what)
    result = got.pop("result")
    if when == "mid_run":  # part files that existed at the kill are kept: the rerun did not start over
        assert got["rows_done_before"] > 0, got
    else:
        assert got["part_files_at_kill"] == {"judgments": 0, "rejects": 0}, got
        assert got["rows_done_before"] == 0, got
    assert_same_output(out, result, ref_out, ref)
    report(f"driver killed {when}", rows=len(ids), uninterrupted_wall_s=round(ref_wall, 1), **got)
