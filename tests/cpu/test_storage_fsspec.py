"""s3:// through s3fs with a named AWS profile (storage.profile), and other fsspec URLs, against real
servers on loopback: SeaweedFS for S3, Python's http.server for a generic fsspec filesystem."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests.s3_server import SeaweedS3, free_ports, s3_server  # noqa: F401  (registers the fixture)
from xfinder_ray.config import ConfigError, StorageConfig, load_config
from xfinder_ray.storage import (
    StorageHandler,
    exists,
    is_transient,
    list_files,
    read_json,
    remove_tree,
    resolve,
    uri_of,
    write_json_atomic,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def s3(s3_server: SeaweedS3) -> SeaweedS3:  # noqa: F811  (a parameter named like the imported fixture)
    return s3_server


@pytest.fixture
def profiles(s3: SeaweedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """AWS shared files in tmp_path: `lab` (the server's keys; region and endpoint_url in its config),
    `wrong` (a bad secret); no other AWS_* variable set."""
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    creds, conf = tmp_path / "credentials", tmp_path / "config"
    creds.write_text(
        f"[lab]\naws_access_key_id = {s3.access_key}\naws_secret_access_key = {s3.secret_key}\n\n"
        f"[wrong]\naws_access_key_id = {s3.access_key}\naws_secret_access_key = not-the-secret\n"
    )
    conf.write_text(
        f"[profile lab]\nregion = {s3.region}\nendpoint_url = {s3.endpoint_url}\n\n"
        f"[profile wrong]\nregion = {s3.region}\nendpoint_url = {s3.endpoint_url}\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(conf))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata lookups
    return {"credentials": str(creds), "config": str(conf)}


def _prefix(s3: SeaweedS3, name: str) -> str:
    return f"s3://{s3.bucket}/fsspec/{name}-{uuid.uuid4().hex[:8]}"


def test_profile_writes_and_reads_parquet(s3, profiles):
    loc = resolve(_prefix(s3, "parquet"), StorageConfig(profile="lab"))
    assert isinstance(loc.fs, pafs.PyFileSystem) and not loc.path.startswith("s3://")
    table = pa.table({"record_id": ["a", "b", "c"], "n": [1, 2, 3]})
    part = loc.join("part-0.parquet")
    pq.write_table(table, part.path, filesystem=loc.fs)
    assert pq.read_table(part.path, filesystem=loc.fs).equals(table)
    # It is the real server: pyarrow's own S3 client with the keys reads the same object.
    assert pq.read_table(part.path, filesystem=s3.pyarrow_fs()).equals(table)

    write_json_atomic(loc.join("_meta", "m.json"), {"ok": True})
    assert read_json(loc.join("_meta", "m.json")) == {"ok": True}
    assert list_files(loc, (".parquet",)) == [part.path]  # _meta/ skipped, as for pyarrow's S3
    assert uri_of(loc, part.path) == part.uri
    remove_tree(loc)
    # Every object is gone (SeaweedFS, unlike AWS, may keep listing the emptied prefix as a folder).
    assert not exists(part)
    assert not exists(loc) or list_files(loc, (".parquet", ".json")) == []


def test_the_keys_are_the_profiles(s3, profiles, monkeypatch):
    # The right keys in the environment do not rescue a profile with wrong ones: the profile wins.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3.secret_key)
    loc = resolve(_prefix(s3, "wrong"), StorageConfig(profile="wrong"))
    with pytest.raises(PermissionError):
        with loc.fs.open_output_stream(loc.join("x").path) as f:
            f.write(b"x")


def test_config_endpoint_and_region_win_over_the_profiles(s3, profiles):
    # storage.endpoint_url set: the profile's endpoint (the live server) is not used; nothing listens here.
    dead = f"http://127.0.0.1:{free_ports(1)[0]}"
    loc = resolve(_prefix(s3, "dead"), StorageConfig(profile="lab", endpoint_url=dead, region="eu-west-1"))
    fs = loc.fs.handler.fs
    assert fs.endpoint_url == dead and fs.client_kwargs == {"region_name": "eu-west-1"}


def test_unknown_profile_is_a_clear_error(s3, profiles):
    with pytest.raises(ConfigError) as err:
        resolve(f"s3://{s3.bucket}/x", StorageConfig(profile="nope"))
    text = str(err.value)
    assert "storage.profile='nope'" in text and profiles["credentials"] in text and profiles["config"] in text
    assert "lab, wrong" in text  # the profiles there, by name
    assert s3.secret_key not in text and s3.access_key not in text


def test_profile_and_keys_together_are_refused():
    with pytest.raises(ConfigError, match="storage.profile and storage.access_key_id"):
        load_config(None, ["input=x.parquet", "output=out", "storage.profile=lab", "storage.access_key_id=k"])


def test_profile_filesystem_pickles_without_keys(s3, profiles):
    loc = resolve(_prefix(s3, "pickle"), StorageConfig(profile="lab"))
    with loc.fs.open_output_stream(loc.join("k.txt").path) as f:
        f.write(b"pickled")
    blob = pickle.dumps(loc.fs)
    # The pickle names the profile and its files; the keys stay in the files.
    assert s3.secret_key.encode() not in blob and s3.access_key.encode() not in blob
    assert pickle.loads(blob).open_input_stream(loc.join("k.txt").path).read() == b"pickled"
    # A process without any AWS_* variable (a Ray worker started before they were set) reads it too.
    code = "import pickle, sys; fs = pickle.loads(sys.stdin.buffer.read()); print(fs.open_input_stream(sys.argv[1]).read().decode())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_EC2_METADATA_DISABLED="true", PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", code, loc.join("k.txt").path],
        input=blob, capture_output=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    assert out.stdout.decode().strip() == "pickled"


def test_an_outage_is_an_error_not_a_missing_file(s3, profiles):
    import s3fs

    # pyarrow's FSSpecHandler asks isfile(), which says False on a refused connection: a missing file.
    dead = f"http://127.0.0.1:{free_ports(1)[0]}"
    fs = s3fs.S3FileSystem(
        key="k", secret="s", endpoint_url=dead, config_kwargs={"retries": {"max_attempts": 1}},
        skip_instance_cache=True, use_listings_cache=False,
    )  # fmt: skip
    fs.retries = 1
    wrapped = pafs.PyFileSystem(StorageHandler(fs))
    for op in (
        lambda: wrapped.open_input_stream("b/k"),
        lambda: wrapped.open_input_file("b/k"),
        lambda: wrapped.get_file_info(pafs.FileSelector("b/dir", recursive=True)),
    ):
        with pytest.raises(Exception) as err:
            op()
        assert not isinstance(err.value, FileNotFoundError) and is_transient(err.value), repr(err.value)
    # And a missing object on a live server is FileNotFoundError, as from pyarrow's S3FileSystem.
    loc = resolve(_prefix(s3, "missing"), StorageConfig(profile="lab"))
    with pytest.raises(FileNotFoundError):
        loc.fs.open_input_stream(loc.join("nothing").path)
    with pytest.raises(FileNotFoundError):
        loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=True))
    assert loc.fs.get_file_info(pafs.FileSelector(loc.path, allow_not_found=True)) == []
    with pytest.raises(FileNotFoundError):
        list_files(loc, (".parquet",))


@pytest.mark.parametrize(("scheme", "package"), [("gs", "gcsfs"), ("az", "adlfs"), ("abfs", "adlfs")])
def test_a_protocol_without_its_package_names_it(scheme, package):
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    with pytest.raises(
        ConfigError, match=rf"^{scheme}:// needs the {package} package.*pip install {package}$"
    ):
        resolve(f"{scheme}://bucket/prefix/")


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("bogus://b/k", "unsupported URI scheme"),
        ("simplecache::s3://b/k", "unsupported URI scheme"),
        ("memory://x", "Ray workers cannot see it"),
        ("s3a://b/k", "write s3://"),
    ],
)
def test_unsupported_urls(uri, message):
    with pytest.raises(ConfigError, match=message):
        resolve(uri)


@pytest.fixture
def http_root(tmp_path):
    """A read-only HTTP server on 127.0.0.1 serving tmp_path/www."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_another_fsspec_protocol_is_wrapped_and_pickles(http_root):
    root, url = http_root
    lines = [json.dumps({"record_id": f"r{i}"}) for i in range(3)]
    (root / "records.jsonl").write_text("\n".join(lines) + "\n")
    loc = resolve(f"{url}/records.jsonl")
    assert isinstance(loc.fs, pafs.PyFileSystem) and uri_of(loc, loc.path) == loc.uri
    assert exists(loc) and list_files(loc, (".jsonl",)) == [loc.path]
    again = pickle.loads(pickle.dumps(loc.fs))
    with again.open_input_stream(loc.path) as f:
        assert f.read().decode().splitlines() == lines
    assert not exists(resolve(f"{url}/absent.jsonl"))


@pytest.mark.ray
def test_scoring_job_writes_to_s3_through_a_profile(ray_local, s3, profiles, tmp_path):
    from tests.cpu.test_pipeline import make_rows
    from xfinder_ray.pipeline import run

    rows = make_rows(300, seed=3)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    out = _prefix(s3, "job")
    cfg = load_config(
        str(REPO / "configs/local.yaml"),
        [f"input={tmp_path / 'in.parquet'}", f"output={out}/", "extractor.name=rules", "storage.profile=lab"],
    )
    # Ray's workers started before the fixture set AWS_*: they find the profile's files through the pickle.
    res = run(cfg)
    assert res.manifest["counts"] == {"input": 304, "judged": 300, "rejected": 4}
    fs, bucket_path = s3.pyarrow_fs(), out[len("s3://") :]
    with fs.open_input_stream(f"{bucket_path}/manifest.json") as f:
        text = f.read().decode()
    assert s3.secret_key not in text and s3.access_key not in text
    assert json.loads(text)["config"]["storage"]["profile"] == "lab"
    judgments = pq.read_table(f"{bucket_path}/judgments", filesystem=fs)
    assert judgments.num_rows == 300


def _upload(loc, folder: Path) -> None:
    for f in sorted(folder.rglob("*")):
        if f.is_file():
            with loc.fs.open_output_stream(loc.join(*f.relative_to(folder).parts).path) as out:
                out.write(f.read_bytes())


def test_inventory_names_s3_files_read_through_a_profile(s3, profiles):
    from xfinder_ray.config import InputConfig
    from xfinder_ray.stages.inventory import list_input

    storage = StorageConfig(profile="lab")
    loc = resolve(_prefix(s3, "inventory"), storage)
    for name in ("a.parquet", "sub/b.parquet"):
        pq.write_table(pa.table({"record_id": [name]}), loc.join(name).path, filesystem=loc.fs)
    files = list_input(InputConfig(paths=[f"{loc.uri}/"]), storage)
    # s3fs is a PyFileSystem, not pyarrow's S3FileSystem: the names still carry s3:// (source_file).
    assert [f.uri for f in files] == [f"{loc.uri}/a.parquet", f"{loc.uri}/sub/b.parquet"]
    assert all(f.uri == f"s3://{f.path}" and f.path.startswith(f"{s3.bucket}/") for f in files)


def test_imported_files_are_named_s3_through_a_profile(s3, profiles):
    from xfinder_ray.importers import lm_eval, opencompass

    storage = StorageConfig(profile="lab")
    data = REPO / "tests/data/importers"
    runs = resolve(_prefix(s3, "imports"), storage)
    _upload(runs.join("lm_eval"), data / "lm_eval/dummy")
    _upload(runs.join("opencompass"), data / "opencompass/chat")

    found = lm_eval.find_files([runs.join("lm_eval").uri], storage)
    assert found.files and all(f.uri == f"s3://{f.path}" for f in found.files)
    assert all(f.results_uri.startswith(f"{runs.uri}/lm_eval/") for f in found.files)
    # A results file given by name: its samples are found beside it, on S3 too.
    (results,) = [p for p in list_files(runs.join("lm_eval"), (".json",)) if "/results_" in p]
    by_name = lm_eval.find_files([uri_of(runs, results)], storage)
    assert sorted(f.uri for f in by_name.files) == sorted(f.uri for f in found.files)

    oc = opencompass.find_files([runs.join("opencompass").uri], storage)
    assert oc.uris and all(u.startswith(f"{runs.uri}/opencompass/") for u in oc.uris)
