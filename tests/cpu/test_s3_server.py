"""The SeaweedFS S3 test server: real S3 clients work against it, credentials are enforced, data survives restarts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests.s3_server import PORT_FLAGS, SeaweedS3, find_weed, s3_server  # noqa: F401  (registers the fixture)

pytestmark = pytest.mark.s3

LOOPBACK = {"127.0.0.1", "::1"}


@pytest.fixture
def s3(s3_server: SeaweedS3) -> SeaweedS3:  # noqa: F811  (a parameter named like the imported fixture)
    return s3_server


def _key(prefix: str) -> str:
    return f"{prefix}/{uuid.uuid4().hex}"


def test_endpoint_env_and_ports(s3):
    env = s3.env()
    assert env["AWS_ENDPOINT_URL"] == s3.endpoint_url
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", s3.endpoint_url)
    assert env["AWS_ACCESS_KEY_ID"] == s3.access_key
    assert env["AWS_SECRET_ACCESS_KEY"] == s3.secret_key
    assert env["AWS_DEFAULT_REGION"] == s3.region == "us-east-1"
    assert set(s3.ports) == set(PORT_FLAGS)
    assert len(set(s3.ports.values())) == len(PORT_FLAGS)


def test_listens_on_loopback_only(s3):
    sockets = s3.listening_sockets()
    assert sockets, "no listening sockets found in /proc"
    assert {addr for _, addr, _ in sockets} <= LOOPBACK, sockets
    ports = {port for _, _, port in sockets}
    assert s3.ports["s3"] in ports
    # Only the ports we chose: no default port (8333, 9333, 23646, 7333, 8181, 9101, ...) slipped through.
    assert ports <= set(s3.ports.values()), sockets
    if shutil.which("ss"):
        out = subprocess.run(["ss", "-ltnupH"], capture_output=True, text=True, check=True).stdout
        mine = [line for line in out.splitlines() if f"pid={s3.pid}," in line]
        assert mine
        for line in mine:
            local = line.split()[4]
            assert local.rsplit(":", 1)[0].strip("[]") in LOOPBACK, line


def test_pyarrow_writes_and_reads(s3):
    fs = s3.pyarrow_fs()
    path = f"{s3.bucket}/{_key('pyarrow')}.parquet"
    table = pa.table({"record_id": ["a", "b"], "n": [1, 2]})
    pq.write_table(table, path, filesystem=fs)
    assert pq.read_table(path, filesystem=fs).equals(table)
    with fs.open_output_stream(path + ".txt") as f:
        f.write(b"hello")
    with fs.open_input_stream(path + ".txt") as f:
        assert f.read() == b"hello"


def test_s3_uris_work_from_the_environment(s3, monkeypatch):
    # FileSystem.from_uri (what pq.read_table("s3://...") and Ray use) honours AWS_ENDPOINT_URL;
    # a bare pafs.S3FileSystem() does not, so code must build it from the URI or pass endpoint_override.
    for k, v in s3.env().items():
        monkeypatch.setenv(k, v)
    uri = f"s3://{s3.bucket}/{_key('env')}.parquet"
    table = pa.table({"x": [1, 2, 3]})
    pq.write_table(table, uri)
    assert pq.read_table(uri).equals(table)
    fs, path = pafs.FileSystem.from_uri(uri)
    assert fs.get_file_info(path).type == pafs.FileType.File


def test_s3fs_writes_and_reads(s3, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", s3.region)  # s3fs: region from the environment only
    fs = s3.s3fs_fs()
    key = f"{s3.bucket}/{_key('s3fs')}"
    fs.pipe(key, b"world")
    assert fs.cat(key) == b"world"
    assert key in fs.ls(key.rsplit("/", 1)[0])
    # And from the environment alone (botocore reads AWS_ENDPOINT_URL).
    for k, v in s3.env().items():
        monkeypatch.setenv(k, v)
    import s3fs

    assert s3fs.S3FileSystem(skip_instance_cache=True).cat(key) == b"world"


def test_make_bucket_is_idempotent(s3):
    name = "extra-" + uuid.uuid4().hex[:8]
    assert s3.make_bucket(name) == name
    assert s3.make_bucket(name) == name
    fs = s3.s3fs_fs()
    fs.pipe(f"{name}/k", b"1")
    assert fs.cat(f"{name}/k") == b"1"


def test_wrong_or_missing_credentials_are_refused(s3):
    key = f"{s3.bucket}/{_key('auth')}"
    s3.s3fs_fs().pipe(key, b"secret")
    retry = pafs.AwsStandardS3RetryStrategy(max_attempts=1)
    bad = s3.pyarrow_fs(secret_key="not-the-secret", retry_strategy=retry)
    with pytest.raises(OSError, match="ACCESS_DENIED|AccessDenied|403"):
        bad.open_input_stream(key).read()
    with pytest.raises(OSError):
        with bad.open_output_stream(f"{s3.bucket}/{_key('auth')}") as f:
            f.write(b"x")
    with pytest.raises(PermissionError):
        s3.s3fs_fs(secret="not-the-secret").cat(key)
    with pytest.raises(PermissionError):
        s3.s3fs_fs(anon=True, key=None, secret=None).cat(key)


def test_restart_keeps_data_and_endpoint(s3):
    fs = s3.pyarrow_fs()
    path = f"{s3.bucket}/{_key('restart')}"
    with fs.open_output_stream(path) as f:
        f.write(b"persisted")
    endpoint, pid = s3.endpoint_url, s3.pid
    seconds = s3.restart()
    assert s3.pid != pid and s3.endpoint_url == endpoint
    assert 0 < seconds < 30
    with fs.open_input_stream(path) as f:  # the same client object reconnects
        assert f.read() == b"persisted"
    s3.restart(kill=True)  # a crash, not a clean stop
    assert s3.s3fs_fs().cat(path) == b"persisted"
    assert {addr for _, addr, _ in s3.listening_sockets()} <= LOOPBACK


def test_stop_then_start_and_second_instance(tmp_path):
    if find_weed() is None:
        pytest.skip("weed binary not found")
    # A second server alongside the session one: its own free ports, its own data.
    with SeaweedS3(tmp_path / "data", bucket="solo") as server:
        assert server.startup_seconds is not None and server.startup_seconds < 30
        fs = server.s3fs_fs()
        fs.pipe("solo/a", b"1")
        pid = server.pid
        server.stop()
        assert not server.running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        server.start()
        assert fs.cat("solo/a") == b"1"
        ports = dict(server.ports)
    assert not server.running
    for name in ("master-grpc", "volume-grpc", "filer-grpc", "s3-grpc", "admin-grpc"):
        assert not os.path.exists(f"/tmp/seaweedfs-{name}-{ports[name.replace('-', '_')]}.sock")
