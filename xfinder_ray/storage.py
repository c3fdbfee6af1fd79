"""Filesystems for local paths, file:// and s3:// URIs, other fsspec URLs, and atomic small-file writes.

s3:// is served by pyarrow's S3FileSystem, or, with `storage.profile` set, by s3fs (botocore reads the
named AWS profile: keys, role, SSO, region, endpoint_url). Other fsspec URLs (gs://, az://, ...) go
through their fsspec package. Both are wrapped as pyarrow filesystems, so every caller sees one kind.
Credentials come from the config, the environment or the profile and are never logged: only the
endpoint, region, profile name and file paths appear in messages.
"""

from __future__ import annotations

import copyreg
import json
import os
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from xfinder_ray.config import ConfigError, StorageConfig


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
    # botocore's (s3fs, storage.profile) for the same faults
    "Could not connect to the endpoint URL",
    "Connect timeout on endpoint URL",
    "Read timeout on endpoint URL",
    "SlowDown",
    "ServiceUnavailable",
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


class StorageHandler(pafs.FSSpecHandler):
    """pyarrow's FSSpecHandler, except that storage errors get through.

    pyarrow's opens and listings first ask `fs.isfile()` / `fs.isdir()`, which answer False on any
    error: an S3 outage would read as a missing file (a bad input, a lost part). Here they ask
    `fs.info()`, which raises FileNotFoundError only for a missing path and the real error otherwise.
    """

    def _open(self, path: str) -> pa.PythonFile:
        if self.fs.info(path)["type"] != "file":
            raise FileNotFoundError(f"{path} is not a file")
        return pa.PythonFile(self.fs.open(path, mode="rb"), mode="r")

    def open_input_stream(self, path: str) -> pa.PythonFile:
        return self._open(path)

    def open_input_file(self, path: str) -> pa.PythonFile:
        return self._open(path)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        try:
            kind = self.fs.info(selector.base_dir)["type"]
        except FileNotFoundError:
            if selector.allow_not_found:
                return []
            raise
        if kind != "directory":
            raise NotADirectoryError(selector.base_dir)
        found = self.fs.find(
            selector.base_dir, maxdepth=None if selector.recursive else 1, withdirs=True, detail=True
        )
        base = selector.base_dir.strip("/")
        return [self._create_file_info(p, info) for p, info in found.items() if p.strip("/") != base]

    def delete_file(self, path: str) -> None:
        self.fs.info(path)  # FileNotFoundError if missing, as pyarrow's filesystems raise
        self.fs.rm(path)


def _wrap(fs: Any) -> pafs.PyFileSystem:
    return pafs.PyFileSystem(StorageHandler(fs))


# botocore's session variables for the shared files, and the environment variables that set them.
_AWS_FILES = {"credentials_file": "AWS_SHARED_CREDENTIALS_FILE", "config_file": "AWS_CONFIG_FILE"}


def _pinned_aws_files() -> dict[str, tuple[None, None, str, None]]:
    """botocore `session_vars` naming the credentials/config files this process was pointed at.

    Pinned in the filesystem (and so in its pickle) so that Ray workers read the same files whatever
    their own environment; unset, each process uses its own AWS_* variables or ~/.aws/.
    """
    return {
        var: (None, None, os.path.abspath(os.path.expanduser(os.environ[env])), None)
        for var, env in _AWS_FILES.items()
        if os.environ.get(env)
    }


def _check_profile(name: str, session_vars: dict[str, Any]) -> None:
    """A clear error, before any request, for a profile that the files do not define."""
    import botocore.exceptions
    import botocore.session

    session = botocore.session.Session(profile=name, session_vars=session_vars)
    try:
        session.get_scoped_config()
    except botocore.exceptions.ProfileNotFound:
        files = " or ".join(str(session.get_config_variable(var)) for var in _AWS_FILES)
        known = ", ".join(sorted(session.available_profiles)) or "none"
        raise ConfigError(
            f"storage.profile={name!r}: no such AWS profile in {files} (profiles there: {known}; "
            "AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE choose other files)"
        ) from None


def profile_filesystem(storage: StorageConfig) -> pafs.PyFileSystem:
    """s3:// through s3fs with a named AWS profile, as a pyarrow filesystem (pickles for Ray workers).

    botocore resolves the profile in each process that uses it: static keys, role_arn/source_profile,
    credential_process, SSO (refreshed as they expire), and the profile's region and endpoint_url.
    storage.endpoint_url / storage.region, when set, win over the profile's.
    """
    import s3fs

    assert storage.profile
    session_vars = _pinned_aws_files()
    _check_profile(storage.profile, session_vars)
    kwargs: dict[str, Any] = {
        "profile": storage.profile,
        "config_kwargs": {"retries": {"max_attempts": S3_MAX_ATTEMPTS, "mode": "standard"}},
        # Ray workers write the parts that the driver lists later: a cached listing would miss them.
        "use_listings_cache": False,
    }
    if session_vars:
        kwargs["session_vars"] = session_vars
    if storage.endpoint_url:
        kwargs["endpoint_url"] = storage.endpoint_url
    if storage.region:
        kwargs["client_kwargs"] = {"region_name": storage.region}
    return _wrap(s3fs.S3FileSystem(**kwargs))


def fsspec_location(uri: str) -> Location:
    """A URL of another fsspec filesystem (gs://, az://, abfs://, ...), served by its package.

    Its credentials come from that package's usual sources (environment, its config files); fsspec's
    FSSPEC_<PROTOCOL>_<OPTION> variables pass options. The package is not a dependency of ours: a
    missing one is named in the error.
    """
    from fsspec.core import url_to_fs
    from fsspec.registry import known_implementations, registry

    scheme = uri.partition("://")[0]
    supported = "use a local path, file://, s3://, or an fsspec URL such as gs:// (gcsfs) or az:// (adlfs)"
    if scheme in ("s3a", "s3n"):
        raise ConfigError(f"{uri!r}: write s3:// (storage.* configures it)")
    if scheme == "memory":
        raise ConfigError(f"{uri!r}: memory:// lives in one process; Ray workers cannot see it")
    if "::" in uri or (scheme not in registry and scheme not in known_implementations):
        raise ConfigError(f"unsupported URI scheme in {uri!r}; {supported}")
    try:
        fs, path = url_to_fs(uri, use_listings_cache=False)
    except ImportError:
        package = known_implementations.get(scheme, {}).get("class", scheme).split(".")[0]
        raise ConfigError(
            f"{scheme}:// needs the {package} package, which is not installed: pip install {package}"
        ) from None
    return Location(_wrap(fs), path.rstrip("/"), uri)


def resolve(uri: str, storage: StorageConfig | None = None) -> Location:
    """A filesystem and an inner path for a local path, a file:// or s3:// URI, or another fsspec URL."""
    if uri.startswith("s3://"):
        s = storage or StorageConfig()
        fs = profile_filesystem(s) if s.profile else s3_filesystem(s)
        return Location(fs, uri[len("s3://") :].rstrip("/"), uri)
    if uri.startswith("file://"):
        uri_path = uri[len("file://") :]
        return Location(pafs.LocalFileSystem(), os.path.abspath(uri_path), uri)
    if "://" in uri:
        return fsspec_location(uri)
    return Location(pafs.LocalFileSystem(), os.path.abspath(uri), uri)


def uri_of(loc: Location, path: str) -> str:
    """The URI of `path` (a path inside `loc.fs`, e.g. from a listing): with `loc`'s scheme, or bare
    for local files. Unlike `isinstance(loc.fs, S3FileSystem)`, right for every filesystem here."""
    scheme, sep, _ = loc.uri.partition("://")
    if not sep or scheme == "file" or "://" in path:
        return path
    return f"{scheme}://{path}"


def exists(loc: Location) -> bool:
    return loc.fs.get_file_info(loc.path).type != pafs.FileType.NotFound


def list_files(
    loc: Location,
    suffixes: tuple[str, ...],
    *,
    skip: tuple[str, ...] = (".", "_"),
    missing: type[FileNotFoundError] = FileNotFoundError,
) -> list[str]:
    """Files under a file or prefix, sorted, with one of `suffixes`; names below the prefix starting
    with one of `skip` (hidden and _-prefixed ones) left out. A missing `loc` raises `missing`.
    (importers/core.py:list_tree is this with nothing skipped.)"""
    info = loc.fs.get_file_info(loc.path)
    if info.type == pafs.FileType.File:
        return [loc.path]
    if info.type == pafs.FileType.NotFound:
        raise missing(f"input {loc.uri!r} does not exist")
    found = loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=True))
    return sorted(
        f.path
        for f in found
        if f.type == pafs.FileType.File
        and f.path.endswith(suffixes)
        and not any(part.startswith(skip) for part in f.path[len(loc.path) :].split("/"))
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
