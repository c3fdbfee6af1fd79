"""Filesystems for local paths, file:// and s3:// URIs, and atomic small-file writes.

Credentials come from the config or the environment and are never logged: only the endpoint and
region appear in messages.
"""

from __future__ import annotations

import copyreg
import json
import os
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from xfinder_ray.config import StorageConfig


@dataclass(frozen=True)
class Location:
    fs: pafs.FileSystem
    path: str  # path inside `fs` (no scheme)
    uri: str  # as the user wrote it

    def join(self, *parts: str) -> Location:
        path = "/".join([self.path.rstrip("/"), *parts])
        uri = "/".join([self.uri.rstrip("/"), *parts])
        return Location(self.fs, path, uri)


# Seconds-long S3 outages (a restarted server, throttling) are ridden out by retrying each request.
S3_MAX_ATTEMPTS = 10
# Messages of errors worth retrying: a network or server fault, not a bad file. Ray Data's list covers
# AWS error codes; curl's covers a server that refuses connections while it restarts.
TRANSIENT_ERRORS = (
    "AWS Error INTERNAL_FAILURE",
    "AWS Error NETWORK_CONNECTION",
    "AWS Error SLOW_DOWN",
    "AWS Error UNKNOWN (HTTP status 503)",
    "AWS Error SERVICE_UNAVAILABLE",
    "curlCode: 7",
    "Couldn't connect to server",
)


def is_transient(error: BaseException) -> bool:
    """True for storage errors that a retry may cure; those must never turn a file into rejects."""
    text = f"{type(error).__name__}: {error}"
    return any(pattern in text for pattern in TRANSIENT_ERRORS)


def _s3_from_pickle(kwargs: dict[str, Any]) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(
        **kwargs, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=S3_MAX_ATTEMPTS)
    )


def _s3_to_pickle(fs: pafs.S3FileSystem) -> tuple[Any, tuple[dict[str, Any]]]:
    return _s3_from_pickle, (fs.__reduce__()[1][0],)


# pyarrow's S3FileSystem pickles without its retry strategy, so a filesystem shipped to a Ray worker
# would give up after pyarrow's default three quick attempts; rebuild it with ours instead.
copyreg.pickle(pafs.S3FileSystem, _s3_to_pickle)


def s3_filesystem(storage: StorageConfig | None = None) -> pafs.S3FileSystem:
    s = storage or StorageConfig()
    endpoint = s.endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_S3")
    region = s.region or os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION") or "us-east-1"
    kwargs: dict[str, Any] = {
        "region": region,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=S3_MAX_ATTEMPTS),
    }
    if endpoint:
        scheme, _, rest = endpoint.partition("://")
        kwargs["endpoint_override"] = rest or scheme
        kwargs["scheme"] = scheme if rest else "https"
    key = s.access_key_id or os.environ.get("AWS_ACCESS_KEY_ID")
    secret = s.secret_access_key or os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        kwargs.update(access_key=key, secret_key=secret, session_token=os.environ.get("AWS_SESSION_TOKEN"))
    return pafs.S3FileSystem(**kwargs)


def resolve(uri: str, storage: StorageConfig | None = None) -> Location:
    """A filesystem and an inner path for a local path, file:// URI or s3:// URI."""
    if uri.startswith("s3://"):
        return Location(s3_filesystem(storage), uri[len("s3://") :].rstrip("/"), uri)
    if uri.startswith("file://"):
        uri_path = uri[len("file://") :]
        return Location(pafs.LocalFileSystem(), os.path.abspath(uri_path), uri)
    if "://" in uri:
        raise ValueError(f"unsupported URI scheme in {uri!r}; use a local path, file:// or s3://")
    return Location(pafs.LocalFileSystem(), os.path.abspath(uri), uri)


def exists(loc: Location) -> bool:
    return loc.fs.get_file_info(loc.path).type != pafs.FileType.NotFound


def list_files(loc: Location, suffixes: tuple[str, ...]) -> list[str]:
    """Files under a file or prefix, sorted, with one of `suffixes`; hidden and _-prefixed names skipped."""
    info = loc.fs.get_file_info(loc.path)
    if info.type == pafs.FileType.File:
        return [loc.path]
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"input {loc.uri!r} does not exist")
    found = loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=True))
    return sorted(
        f.path
        for f in found
        if f.type == pafs.FileType.File
        and f.path.endswith(suffixes)
        and not any(part.startswith((".", "_")) for part in f.path[len(loc.path) :].split("/"))
    )


def write_bytes_atomic(loc: Location, data: bytes) -> None:
    """Write a small file so readers see the old or the new content, never a torn one.

    Local: write a temp file and rename. S3: a single PUT is atomic by itself.
    """
    if isinstance(loc.fs, pafs.LocalFileSystem):
        os.makedirs(os.path.dirname(loc.path), exist_ok=True)
        tmp = f"{loc.path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, loc.path)
        return
    with loc.fs.open_output_stream(loc.path) as f:
        f.write(data)


def write_json_atomic(loc: Location, obj: Any) -> None:
    write_bytes_atomic(loc, (json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n").encode())


def read_json(loc: Location) -> Any:
    with loc.fs.open_input_stream(loc.path) as f:
        return json.loads(f.read())


def remove_tree(loc: Location) -> None:
    if exists(loc):
        loc.fs.delete_dir(loc.path)


def ensure_dir(loc: Location) -> None:
    loc.fs.create_dir(loc.path, recursive=True)
