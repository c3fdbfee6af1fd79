"""The notebook API without a cluster: entrypoint quoting, where credentials go, the job handle's logic."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import xfinder_ray
from xfinder_ray.submit import (
    DEFAULT_EXCLUDES,
    JobFailed,
    OutputNotCommitted,
    ScoringJob,
    build_entrypoint,
    prepare,
    split_secret_overrides,
)

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t/with'quote;$(rm -rf ~)"


def test_import_is_cheap_and_lazy() -> None:
    code = (
        "import sys, xfinder_ray; assert 'ray' not in sys.modules, 'ray imported';"
        "assert callable(xfinder_ray.submit) and xfinder_ray.ScoringJob.__name__ == 'ScoringJob';"
        "assert 'ray' not in sys.modules, 'ray imported by the submit module';"
        "import xfinder_ray.submit as m; assert callable(xfinder_ray.submit) and m.prepare"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_entrypoint_round_trips_through_the_shell() -> None:
    overrides = ["input=s3://b/in dir/", "output=/tmp/it's here", "extractor.name=rules", "x=$(touch /tmp/p)"]
    ep = build_entrypoint("configs/local.yaml", overrides)
    assert shlex.split(ep) == ["python", "jobs/score.py", "--config", "configs/local.yaml", *overrides]


def test_credentials_move_from_overrides_to_env_vars() -> None:
    kept, moved = split_secret_overrides(
        ["input=s3://b/in/", f"storage.secret_access_key={SECRET}", "storage.access_key_id=AKID"]
    )
    assert kept == ["input=s3://b/in/"]
    assert moved == {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ACCESS_KEY_ID": "AKID"}

    sub = prepare(
        "configs/local.yaml",
        [
            "input=s3://b/in/",
            "output=s3://b/out/",
            f"storage.secret_access_key={SECRET}",
            "storage.access_key_id=AKID",
        ],
        working_dir=ROOT,
        env_vars={"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"},
    )
    assert SECRET not in sub.entrypoint and "AKID" not in sub.entrypoint and SECRET not in repr(sub)
    env = sub.runtime_env["env_vars"]
    assert env["AWS_SECRET_ACCESS_KEY"] == SECRET and env["AWS_ACCESS_KEY_ID"] == "AKID"
    # The output is read back with the same settings the job gets.
    assert sub.storage.secret_access_key == SECRET and sub.storage.endpoint_url == "http://127.0.0.1:9000"
    assert sub.output == "s3://b/out/"


def test_the_output_is_read_back_through_the_jobs_profile() -> None:
    sub = prepare(
        "configs/local.yaml",
        ["input=s3://b/in/", "output=s3://b/out/", "storage.profile=lab", "storage.region=eu-west-1"],
        working_dir=ROOT,
        env_vars={"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"},
    )
    assert sub.storage.profile == "lab" and sub.storage.region == "eu-west-1"
    assert sub.storage.endpoint_url == "http://127.0.0.1:9000"
    assert shlex.split(sub.entrypoint)[-2:] == ["storage.profile=lab", "storage.region=eu-west-1"]


def test_runtime_env_uploads_working_dir_without_heavy_folders() -> None:
    sub = prepare(
        "configs/local.yaml",
        ["output=s3://b/o/"],
        working_dir=ROOT,
        env_vars={"A": "1"},
        runtime_env={"env_vars": {"A": "0", "B": "2"}, "excludes": ["data/big"], "pip": ["x"]},
    )
    renv = sub.runtime_env
    assert renv["working_dir"] == str(ROOT) and renv["pip"] == ["x"]
    assert set(DEFAULT_EXCLUDES) | {"data/big"} == set(renv["excludes"])
    assert renv["env_vars"]["A"] == "1" and renv["env_vars"]["B"] == "2"  # env_vars= wins over runtime_env
    assert shlex.split(sub.entrypoint)[:4] == ["python", "jobs/score.py", "--config", "configs/local.yaml"]


def test_relative_local_output_is_anchored_at_working_dir() -> None:
    sub = prepare("configs/local.yaml", [], working_dir=ROOT)
    assert sub.output == str(ROOT / "out" / "demo")
    assert shlex.split(sub.entrypoint)[-1] == f"output={ROOT / 'out' / 'demo'}"


def test_bad_config_fails_before_submitting(tmp_path: Path) -> None:
    from xfinder_ray.config import ConfigError

    with pytest.raises(ConfigError, match="extractor.name"):
        prepare("configs/local.yaml", ["extractor.name=nope"], working_dir=ROOT)
    outside = tmp_path / "c.yaml"
    outside.write_text("input: {paths: [x]}\noutput: {path: y}\n")
    with pytest.raises(ValueError, match="not inside working_dir"):
        prepare(outside, [], working_dir=ROOT)


def test_secret_in_a_plain_override_is_refused() -> None:
    with pytest.raises(ValueError, match="AWS_SECRET_ACCESS_KEY appears in the entrypoint"):
        prepare(
            "configs/local.yaml",
            [f"output=s3://b/{SECRET}/"],
            working_dir=ROOT,
            env_vars={"AWS_SECRET_ACCESS_KEY": SECRET},
        )


class FakeClient:
    """Stands in for JobSubmissionClient: a scripted status sequence and a growing log."""

    def __init__(self, statuses: list[str], logs: list[str], message: str = "", start_time: int = 0) -> None:
        self.statuses, self.log_steps = list(statuses), list(logs)
        self.message, self.start_time = message, start_time
        self.calls = 0

    def get_job_status(self, job_id: str) -> str:
        self.calls += 1
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

    def get_job_logs(self, job_id: str) -> str:
        return self.log_steps.pop(0) if len(self.log_steps) > 1 else self.log_steps[0]

    def get_job_info(self, job_id: str) -> Any:
        return type(
            "Info", (), {"message": self.message, "start_time": self.start_time, "job_id": "01000000"}
        )()


def test_follow_yields_whole_lines_once() -> None:
    client = FakeClient(["RUNNING", "RUNNING", "SUCCEEDED"], ["a\nb", "a\nb\nc\n", "a\nb\nc\nlast"])
    job = ScoringJob(client, "j", "s3://b/o")
    assert list(job.follow(poll_s=0)) == ["a", "b", "c", "last"]


def test_wait_raises_on_failure_with_the_log_tail() -> None:
    log = "\n".join(f"line {i}" for i in range(100)) + "\nxfinder-ray: input 's3://b/x' does not exist\n"
    job = ScoringJob(FakeClient(["PENDING", "RUNNING", "FAILED"], [log], message="exit code 1"), "j", "o")
    with pytest.raises(JobFailed) as err:
        job.wait(poll_s=0, tail_lines=5)
    assert "exit code 1" in str(err.value) and "does not exist" in err.value.log_tail
    assert "line 90" not in err.value.log_tail
    with pytest.raises(TimeoutError):
        ScoringJob(FakeClient(["RUNNING"], [""]), "j", "o").wait(timeout=0.05, poll_s=0.01)


def _committed(out: Path, started_at: str = "2030-01-01T00:00:10Z") -> None:
    (out / "accuracy").mkdir(parents=True)
    by_task = pd.DataFrame({"model": ["m"], "task": ["t"], "n": [3], "correct": [2], "accuracy": [2 / 3]})
    by_model = pd.DataFrame({"model": ["m"], "n": [3], "accuracy_macro": [2 / 3]})
    by_task.to_parquet(out / "accuracy" / "by_model_task.parquet")
    by_model.to_parquet(out / "accuracy" / "by_model.parquet")
    (out / "accuracy" / "leaderboard.md").write_text("# Leaderboard\n")
    (out / "manifest.json").write_text(json.dumps({"status": "committed", "started_at": started_at}))


def test_accuracy_only_from_this_jobs_committed_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    job_start_ms = 1_893_456_005_000  # 2030-01-01T00:00:05Z
    running = ScoringJob(FakeClient(["RUNNING"], [""], start_time=job_start_ms), "j", str(out))
    with pytest.raises(OutputNotCommitted, match="RUNNING"):
        running.accuracy()

    done = ScoringJob(FakeClient(["SUCCEEDED"], [""], start_time=job_start_ms), "j", str(out))
    with pytest.raises(OutputNotCommitted, match="manifest.json"):
        done.accuracy()
    _committed(out)
    tables = done.accuracy()
    assert set(tables) == {"by_model_task", "by_model"} and int(tables["by_model_task"]["n"].sum()) == 3
    assert done.leaderboard().startswith("# Leaderboard")

    # A manifest left by an earlier run at the same path (output.overwrite=true) is not this job's.
    later = ScoringJob(FakeClient(["SUCCEEDED"], [""], start_time=job_start_ms + 60_000), "j", str(out))
    with pytest.raises(OutputNotCommitted, match="before job"):
        later.manifest()


def test_package_exports() -> None:
    assert callable(xfinder_ray.submit) and xfinder_ray.ScoringJob is ScoringJob
