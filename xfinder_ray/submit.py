"""Submit the scoring job to a Ray cluster from Python (a notebook), follow it, and read its results.

    import xfinder_ray

    job = xfinder_ray.submit(
        config="configs/local.yaml",
        overrides=["input=s3://bucket/responses/", "output=s3://bucket/scored/run1/"],
        address="http://127.0.0.1:8265",
        env_vars={"AWS_ACCESS_KEY_ID": ..., "AWS_SECRET_ACCESS_KEY": ..., "AWS_ENDPOINT_URL": ...},
    )
    for line in job.follow():
        print(line)
    job.wait()                       # -> "SUCCEEDED"; raises JobFailed (with the log tail) on FAILED
    tables = job.accuracy()          # {"by_model_task": DataFrame, "by_model": DataFrame}
    print(job.leaderboard())

A thin layer over Ray's `JobSubmissionClient`: the entrypoint is `python jobs/score.py --config ...
overrides...` (what `ray job submit` would run), `working_dir` is uploaded through the runtime_env.
Storage credentials never go into the entrypoint (which Ray stores, shows in `ray job list` and logs):
they travel as runtime_env env_vars, and `storage.access_key_id=` / `storage.secret_access_key=`
overrides are moved there too. See docs/submit.md.

Importing this module does not import Ray; the Ray client is imported on first use.
"""

from __future__ import annotations

import calendar
import inspect
import os
import shlex
import sys
import time
import types
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from xfinder_ray.config import JobConfig, StorageConfig

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
ENTRYPOINT_SCRIPT = "jobs/score.py"
# Never uploaded (.gitignore syntax; a leading / anchors at working_dir): the venv, model/cache folders,
# local outputs, git metadata, tool caches.
DEFAULT_EXCLUDES = (
    "/.venv",
    "/.cache",
    "/out",
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
# Config keys that hold credentials -> the environment variable storage.py reads instead.
SECRET_OVERRIDES = {
    "storage.access_key_id": "AWS_ACCESS_KEY_ID",
    "storage.secret_access_key": "AWS_SECRET_ACCESS_KEY",
}
# Storage keys that fall back to an environment variable -> that variable (used to read the job's output
# with the same settings). storage.profile has none (storage.py reads no AWS_PROFILE): it comes from the
# config alone, and the client then reads its own AWS shared files for that profile.
STORAGE_ENV = {
    "endpoint_url": "AWS_ENDPOINT_URL",
    "region": "AWS_DEFAULT_REGION",
    "access_key_id": "AWS_ACCESS_KEY_ID",
    "secret_access_key": "AWS_SECRET_ACCESS_KEY",
}
SECRET_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class JobFailed(RuntimeError):
    """The job ended FAILED; the message carries Ray's reason and the tail of the job's log."""

    def __init__(self, job_id: str, status: str, message: str, log_tail: str) -> None:
        self.job_id, self.status, self.log_tail = job_id, status, log_tail
        super().__init__(f"job {job_id} {status}: {message}\n--- last lines of the job log ---\n{log_tail}")


class OutputNotCommitted(FileNotFoundError):
    """The output has no manifest.json (the commit marker) from this job: the run is not complete."""


@dataclass(frozen=True)
class Submission:
    """What `submit` sends: the entrypoint (no secrets) and the runtime_env (secrets in env_vars)."""

    entrypoint: str
    runtime_env: dict[str, Any] = field(repr=False)  # holds credentials: kept out of repr()
    output: str = ""  # the output path/URI the job writes
    storage: StorageConfig | None = field(default=None, repr=False)  # how to read it back (as the job)
    config: JobConfig | None = field(default=None, repr=False)


# ------------------------------------------------------------------------------------------------ building


def split_secret_overrides(overrides: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Move credential overrides (storage.access_key_id=..., storage.secret_access_key=...) to env vars."""
    kept: list[str] = []
    moved: dict[str, str] = {}
    for item in overrides:
        key, sep, value = str(item).partition("=")
        env = SECRET_OVERRIDES.get(key.strip())
        if sep and env:
            moved[env] = value
        else:
            kept.append(str(item))
    return kept, moved


def _is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file://")


def build_entrypoint(config: str, overrides: Sequence[str], script: str = ENTRYPOINT_SCRIPT) -> str:
    """`python jobs/score.py --config CONFIG OVERRIDES...`, each argument shell-quoted (Ray runs it in a shell)."""
    return shlex.join(["python", script, "--config", config, *overrides])


def prepare(
    config: str | os.PathLike[str] = "configs/local.yaml",
    overrides: Sequence[str] = (),
    *,
    working_dir: str | os.PathLike[str] | None = ".",
    env_vars: Mapping[str, str] | None = None,
    runtime_env: Mapping[str, Any] | None = None,
) -> Submission:
    """Validate the config here (a bad key fails now, not on the cluster) and build entrypoint + runtime_env.

    Everything `submit` sends, without contacting a cluster (unit-testable).
    """
    from xfinder_ray.config import StorageConfig, load_config

    base = Path(working_dir).resolve() if working_dir is not None else Path.cwd()
    cfg_path = Path(config)
    local_cfg = cfg_path if cfg_path.is_absolute() else base / cfg_path
    if working_dir is not None:
        # The job sees the uploaded copy of working_dir: the config must be inside it.
        try:
            rel_cfg = local_cfg.resolve().relative_to(base).as_posix()
        except ValueError:
            raise ValueError(f"config {str(config)!r} is not inside working_dir {str(base)!r}") from None
    else:
        rel_cfg = str(config)

    kept, secret_env = split_secret_overrides(list(overrides))
    env: dict[str, str] = {
        **secret_env,
        **dict((runtime_env or {}).get("env_vars") or {}),
        **(env_vars or {}),
    }
    cfg = load_config(local_cfg, kept)
    for key, env_name in SECRET_OVERRIDES.items():
        in_file = getattr(cfg.storage, key.split(".", 1)[1])
        if in_file is not None:
            if env_name in secret_env:
                # storage.py prefers the config value over the environment: the moved override would lose.
                raise ValueError(
                    f"{key} is set in {str(config)!r} and as an override; keep one (the override)"
                )
            warnings.warn(
                f"{str(config)!r} holds {key}: config files are uploaded with working_dir; "
                f"pass credentials as env_vars ({env_name}) instead",
                stacklevel=3,
            )

    # A relative local output would land in the job's temporary copy of working_dir on the cluster, out of
    # reach and soon deleted: anchor it here (meaningful when the cluster shares this filesystem).
    if _is_local(cfg.output.path) and not os.path.isabs(cfg.output.path.removeprefix("file://")):
        absolute = str(base / cfg.output.path.removeprefix("file://"))
        kept.append(f"output={absolute}")
        cfg.output.path = absolute

    for name in SECRET_ENV:  # checked on the arguments: shell quoting could hide a match in the string
        value = env.get(name)
        if value and any(value in arg for arg in (rel_cfg, *kept)):
            raise ValueError(f"the value of {name} appears in the entrypoint; pass it only in env_vars")
    entrypoint = build_entrypoint(rel_cfg, kept)

    renv: dict[str, Any] = {k: v for k, v in (runtime_env or {}).items() if k not in ("env_vars", "excludes")}
    if working_dir is not None:
        renv["working_dir"] = str(base)
        renv["excludes"] = sorted({*DEFAULT_EXCLUDES, *((runtime_env or {}).get("excludes") or ())})
    # Unbuffered output: follow() shows lines as the job prints them.
    renv["env_vars"] = {"PYTHONUNBUFFERED": "1", **env}

    # Read the output back with what the job gets: the config's storage section, then the job's env_vars.
    storage = StorageConfig(
        **{
            k: getattr(cfg.storage, k) if getattr(cfg.storage, k) is not None else env.get(e)
            for k, e in STORAGE_ENV.items()
        },
        profile=cfg.storage.profile,
    )
    return Submission(entrypoint, renv, cfg.output.path, storage, cfg)


def _client(address: str | None, auth_token: str | None, headers: Mapping[str, str] | None) -> Any:
    from ray.job_submission import JobSubmissionClient

    hdrs = dict(headers or {})
    if auth_token:
        hdrs["Authorization"] = f"Bearer {auth_token}"
    return JobSubmissionClient(
        address or os.environ.get("RAY_ADDRESS") or DEFAULT_ADDRESS, headers=hdrs or None
    )


def submit(
    config: str | os.PathLike[str] = "configs/local.yaml",
    overrides: Sequence[str] = (),
    *,
    address: str | None = None,
    working_dir: str | os.PathLike[str] | None = ".",
    env_vars: Mapping[str, str] | None = None,
    runtime_env: Mapping[str, Any] | None = None,
    wait: bool = False,
    timeout: float | None = None,
    submission_id: str | None = None,
    metadata: Mapping[str, str] | None = None,
    auth_token: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ScoringJob:
    """Submit the scoring job to the Ray cluster at `address`; returns a `ScoringJob` handle.

    config: a YAML inside `working_dir` (relative to it, or absolute). overrides: dotlist overrides as on the
    command line (`input=...`, `output=...`, `extractor.name=rules`). address: the dashboard URL; default
    $RAY_ADDRESS, else http://127.0.0.1:8265. working_dir: uploaded for the job (without .venv, .cache, out,
    .git); None uploads nothing (the cluster's image has the project). env_vars: for the job's processes —
    put storage credentials here (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL,
    AWS_DEFAULT_REGION). runtime_env: extra runtime_env keys (merged; env_vars and excludes are combined).
    wait: block until the job ends (see `ScoringJob.wait`). auth_token / headers: for a cluster with token
    authentication when this process's Ray settings (RAY_AUTH_MODE=token + a token) do not cover it.
    """
    sub = prepare(config, overrides, working_dir=working_dir, env_vars=env_vars, runtime_env=runtime_env)
    client = _client(address, auth_token, headers)
    job_id = client.submit_job(
        entrypoint=sub.entrypoint,
        runtime_env=sub.runtime_env,
        submission_id=submission_id,
        metadata=dict(metadata) if metadata else None,
    )
    job = ScoringJob(client, job_id, sub.output, sub.storage, entrypoint=sub.entrypoint)
    if wait:
        job.wait(timeout=timeout)
    return job


# ------------------------------------------------------------------------------------------------ the handle


class ScoringJob:
    """A submitted scoring job: status, logs, and its committed output as pandas tables."""

    def __init__(
        self,
        client: Any,
        job_id: str,
        output: str,
        storage: StorageConfig | None = None,
        *,
        entrypoint: str | None = None,
    ) -> None:
        self.client = client  # a ray.job_submission.JobSubmissionClient
        self.id = job_id
        self.output = output
        self.storage = storage
        self.entrypoint = entrypoint
        self._succeeded = False

    def __repr__(self) -> str:
        return f"ScoringJob(id={self.id!r}, output={self.output!r})"

    # -------------------------------------------------------------------------------------------- status

    def status(self) -> str:
        """PENDING, RUNNING, SUCCEEDED, FAILED or STOPPED."""
        return str(self.client.get_job_status(self.id))

    def info(self) -> Any:
        """Ray's JobDetails (status, message, start/end times, driver node, ...)."""
        return self.client.get_job_info(self.id)

    def logs(self) -> str:
        """The job's whole log so far (driver stdout/stderr)."""
        return self.client.get_job_logs(self.id)

    def follow(self, poll_s: float = 1.0, timeout: float | None = None) -> Iterator[str]:
        """Yield the job's log lines as they appear, until the job ends.

        Polls the log over HTTP instead of Ray's websocket tail: that one is an async generator, which a
        notebook (whose event loop is already running) cannot drive from plain code.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        sent = 0
        while True:
            done = self.status() in TERMINAL  # read status first: a log read after it is complete
            text = self.logs()
            end = len(text) if done else text.rfind("\n", sent) + 1  # only whole lines while running
            if end > sent:
                yield from text[sent:end].splitlines()
                sent = end
            if done:
                return
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} still {self.status()} after {timeout}s")
            time.sleep(poll_s)

    def wait(self, timeout: float | None = None, poll_s: float = 1.0, tail_lines: int = 40) -> str:
        """Block until the job ends; returns its final status. Raises JobFailed on FAILED, TimeoutError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status()
            if status in TERMINAL:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} still {status} after {timeout}s")
            time.sleep(poll_s)
        if status == "FAILED":
            info = self.info()
            tail = "\n".join(self.logs().splitlines()[-tail_lines:])
            raise JobFailed(self.id, status, getattr(info, "message", "") or "", tail)
        self._succeeded = status == "SUCCEEDED"
        return status

    def stop(self) -> bool:
        return bool(self.client.stop_job(self.id))

    # -------------------------------------------------------------------------------------------- output

    def manifest(self) -> dict[str, Any]:
        """manifest.json of this job's committed output. Raises OutputNotCommitted until the job succeeded."""
        if not self._succeeded:
            status = self.status()
            if status != "SUCCEEDED":
                raise OutputNotCommitted(f"job {self.id} is {status}; its output is not committed")
            self._succeeded = True
        manifest = read_manifest(self.output, self.storage)
        self._check_fresh(manifest)
        return manifest

    def _check_fresh(self, manifest: dict[str, Any]) -> None:
        # With output.overwrite=true an earlier run's manifest may sit at the same path: it must not pass
        # for this job's. The manifest's start (whole seconds) is no earlier than the job's start.
        start_ms = getattr(self.info(), "start_time", None)
        started_at = manifest.get("started_at")
        if not start_ms or not started_at:
            return
        job_start = int(start_ms / 1000)
        run_start = calendar.timegm(time.strptime(started_at, "%Y-%m-%dT%H:%M:%SZ"))
        if run_start < job_start - 1:
            raise OutputNotCommitted(
                f"{self.output}/manifest.json is from a run started at {started_at}, before job {self.id}"
            )

    def accuracy(self) -> dict[str, pd.DataFrame]:
        """The accuracy tables as DataFrames: {"by_model_task": ..., "by_model": ...} (committed output only)."""
        self.manifest()
        return read_accuracy(self.output, self.storage)

    def leaderboard(self) -> str:
        """accuracy/leaderboard.md (markdown: models x tasks, ranked by macro accuracy)."""
        self.manifest()
        return read_leaderboard(self.output, self.storage)


# ------------------------------------------------------------------------------------------------ outputs
# Readers for any committed output (no cluster needed), e.g. after the cluster is gone.


def _location(output: str, storage: StorageConfig | None, *parts: str) -> Any:
    from xfinder_ray.storage import resolve

    return resolve(output, storage).join(*parts)


def read_manifest(output: str, storage: StorageConfig | None = None) -> dict[str, Any]:
    """manifest.json of a committed output; OutputNotCommitted when there is none (running, failed)."""
    from xfinder_ray.storage import exists, read_json

    loc = _location(output, storage, "manifest.json")
    if not exists(loc):
        raise OutputNotCommitted(f"{loc.uri} does not exist: the output is not committed")
    return read_json(loc)


def read_accuracy(output: str, storage: StorageConfig | None = None) -> dict[str, pd.DataFrame]:
    """{"by_model_task", "by_model", and where written "pairwise" (paired tests), "ranks" (the ranking
    and rank intervals) and "conflicts" (questions given two gold answers): DataFrame} from a committed
    output's accuracy/."""
    import pyarrow.parquet as pq

    from xfinder_ray.storage import exists

    read_manifest(output, storage)
    tables = {}
    for name in ("by_model_task", "by_model", "pairwise", "ranks", "conflicts"):
        loc = _location(output, storage, "accuracy", f"{name}.parquet")
        if name in ("pairwise", "ranks", "conflicts") and not exists(loc):
            continue  # outputs committed before these tables existed
        with loc.fs.open_input_file(loc.path) as f:
            tables[name] = pq.read_table(f).to_pandas()
    return tables


def read_leaderboard(output: str, storage: StorageConfig | None = None) -> str:
    read_manifest(output, storage)
    loc = _location(output, storage, "accuracy", "leaderboard.md")
    with loc.fs.open_input_stream(loc.path) as f:
        return f.read().decode()


def attach(
    job_id: str,
    output: str,
    *,
    address: str | None = None,
    storage: StorageConfig | Mapping[str, Any] | None = None,
    auth_token: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ScoringJob:
    """A handle on a job submitted earlier (e.g. before a kernel restart), by its id and output path."""
    from xfinder_ray.config import StorageConfig

    if isinstance(storage, Mapping):
        storage = StorageConfig(**storage)
    return ScoringJob(_client(address, auth_token, headers), job_id, output, storage)


# The package exports this module as `xfinder_ray.submit` (importing a submodule binds that name to the
# module anyway); calling it calls `submit`, and `inspect.signature`/help show submit's signature.
class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> ScoringJob:
        return submit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
__signature__ = inspect.signature(submit)
__all__ = [
    "JobFailed",
    "OutputNotCommitted",
    "ScoringJob",
    "Submission",
    "attach",
    "prepare",
    "read_accuracy",
    "read_leaderboard",
    "read_manifest",
    "submit",
]
