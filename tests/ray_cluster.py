"""A real multi-node Ray cluster on one machine, for tests: `ray start` a head node and worker nodes.

    from tests.ray_cluster import RayCluster, loopback_skip_reason

    with RayCluster(num_workers=1, cpus_per_node=1) as cluster:   # 2 nodes, 1 CPU each
        cluster.dashboard_url      # http://127.0.0.1:<port>  (ray job submit --address, JobSubmissionClient)
        cluster.gcs_address        # 127.0.0.1:<port>         (ray.init(address=...), ray start --address)
        cluster.env()              # environment for `ray` CLI calls and notebook kernels (auth token, ...)
        cluster.auth_header()      # {"Authorization": "Bearer ..."} for in-process clients

Each node gets its own `--temp-dir` (ray 2.60 honours a per-node temp dir: the worker node writes its
session, sockets, logs and runtime_resources under its own directory) and its own explicit ports, so two
nodes on one machine never race for a default port (the dashboard agent's 52365, the worker port range).
Every process is started from the running interpreter's bin/, so workers run the same venv.

Token authentication is on (ray 2.60 enables it for `ray start --head` whenever a token exists, and for
every new local `ray.init()`), with a private token file: the test never reads or writes ~/.ray/auth_token,
and in-process clients pass the token explicitly (`auth_header()`) because Ray's token loader in this
process may have cached another one.

Loopback only: Ray binds to the machine's routable address by default, even with
`--node-ip-address=127.0.0.1`. Run inside a private network namespace whose only interface is `lo`
(scripts/loopback.sh); `loopback_skip_reason()` says why a test should skip elsewhere.

Stopping: inside a private PID namespace (scripts/loopback.sh) with no other Ray in it, `ray stop`. It stops
every Ray it can see, so not outside a PID namespace (every Ray on the machine) and not next to the suite's
`ray_local` instance (whose driver, pytest itself, exits when its raylet dies). There, and always as a safety
net, we signal only the processes whose command line, cwd or stdout/stderr lie under our temp dirs, and
their descendants.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.s3_server import free_ports

ALLOW_HOST_NETWORK = "XFINDER_ALLOW_HOST_NETWORK"
# Disjoint worker port ranges per node, below Linux's ephemeral range (32768+) where free_ports() draws.
WORKER_PORT_BASE = 21000
WORKER_PORTS_PER_NODE = 1000


def network_interfaces() -> list[str]:
    """Interfaces of this process's network namespace.

    Not /sys/class/net: sysfs shows the namespace of whoever mounted it (the host's, under `unshare --net`
    without a sysfs remount). if_nameindex() asks the kernel in our own namespace; /proc/self/net/dev too.
    """
    try:
        return sorted(name for _, name in socket.if_nameindex())
    except OSError:
        try:
            lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
        except OSError:
            return []
        return sorted(line.split(":", 1)[0].strip() for line in lines)


def in_private_netns() -> bool:
    """True when loopback is the only network interface (a private network namespace)."""
    return network_interfaces() == ["lo"]


def in_private_pidns() -> bool:
    """True under scripts/loopback.sh, which creates the network and PID namespaces together.

    (There is no reliable way to tell a fresh PID namespace from the inside: with --mount-proc, PID 1 is
    whatever loopback.sh exec'd, e.g. pytest. loopback.sh exports XFINDER_IN_NETNS=1 before `unshare`.)
    """
    return os.environ.get("XFINDER_IN_NETNS") == "1" and in_private_netns()


def loopback_skip_reason() -> str | None:
    """Why a cluster test should not run here, or None when it may."""
    if in_private_netns() or os.environ.get(ALLOW_HOST_NETWORK) == "1":
        return None
    others = [i for i in network_interfaces() if i != "lo"]
    return (
        f"needs a private network namespace (interfaces here: {', '.join(others) or 'unknown'}): Ray would "
        f"listen on the routable address. Run it with scripts/loopback.sh, or set {ALLOW_HOST_NETWORK}=1"
    )


def ray_bin() -> str:
    """The `ray` script next to the running interpreter (the venv's), so every node runs this venv."""
    candidate = Path(sys.executable).parent / "ray"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("ray")
    if not found:
        raise FileNotFoundError("the `ray` command is not installed next to this Python")
    return found


class RayCluster:
    """A head node plus `num_workers` worker nodes started with `ray start`, on 127.0.0.1."""

    def __init__(
        self,
        base_dir: str | os.PathLike[str] | None = None,
        *,
        num_workers: int = 1,
        cpus_per_node: int = 1,
        object_store_mb: int = 300,
        extra_env: dict[str, str] | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        # Short paths: Ray puts Unix sockets under the temp dir (limit 107 bytes); pytest's tmp dirs are long.
        self.base_dir = Path(base_dir) if base_dir else Path(tempfile.mkdtemp(prefix="xfray-"))
        self.num_workers = num_workers
        self.cpus_per_node = cpus_per_node
        self.object_store_bytes = object_store_mb * 1024 * 1024
        self.extra_env = dict(extra_env or {})
        self.startup_timeout = startup_timeout
        self.ray = ray_bin()
        self.token = secrets.token_hex(32)
        self.token_path = self.base_dir / "auth_token"
        self.temp_dirs = [self.base_dir / "head"] + [self.base_dir / f"w{i}" for i in range(num_workers)]
        self.head_port, self.dashboard_port, self.client_port = free_ports(3)
        self.startup_seconds: float | None = None
        self.started = False

    # ------------------------------------------------------------------------------------------ addresses

    @property
    def gcs_address(self) -> str:
        return f"127.0.0.1:{self.head_port}"

    @property
    def dashboard_url(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    def env(self) -> dict[str, str]:
        """Environment for the cluster's processes and for `ray` CLI calls / kernels that talk to it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
        env.update(
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN_PATH=str(self.token_path),
            RAY_DISABLE_USAGE_STATS="1",
            # Jobs run `python ...` through the shell: make that this venv's interpreter on every node.
            PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            PYTHONNOUSERSITE="1",
        )
        env.update(self.extra_env)
        return env

    def auth_header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    # ------------------------------------------------------------------------------------------ life cycle

    def _node_ports(self, index: int) -> list[str]:
        agent_http, agent_grpc, runtime_env, metrics, node_manager, object_manager = free_ports(6)
        low = WORKER_PORT_BASE + index * WORKER_PORTS_PER_NODE
        return [
            f"--dashboard-agent-listen-port={agent_http}",
            f"--dashboard-agent-grpc-port={agent_grpc}",
            f"--runtime-env-agent-port={runtime_env}",
            f"--metrics-export-port={metrics}",
            f"--node-manager-port={node_manager}",
            f"--object-manager-port={object_manager}",
            f"--min-worker-port={low}",
            f"--max-worker-port={low + WORKER_PORTS_PER_NODE - 1}",
        ]

    def _ray(
        self, *args: str, timeout: float = 120.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [self.ray, *args],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"`ray {' '.join(args[:2])} ...` exited with {proc.returncode}:\n{proc.stdout[-3000:]}\n"
                f"{proc.stderr[-3000:]}"
            )
        return proc

    def start(self) -> float:
        """Start the head and the worker nodes; wait until every node is ALIVE. Returns the seconds taken."""
        t0 = time.monotonic()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.token_path.write_text(self.token)
        self.token_path.chmod(0o600)
        for d in self.temp_dirs:
            d.mkdir(parents=True, exist_ok=True)
        self.started = True  # from here on stop() has something to clean up, even if a start fails
        _set_child_subreaper()
        common = [
            f"--num-cpus={self.cpus_per_node}",
            "--num-gpus=0",
            "--node-ip-address=127.0.0.1",
            f"--object-store-memory={self.object_store_bytes}",
            "--disable-usage-stats",
        ]
        self._ray(
            "start",
            "--head",
            f"--port={self.head_port}",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={self.dashboard_port}",
            f"--ray-client-server-port={self.client_port}",
            f"--temp-dir={self.temp_dirs[0]}",
            *common,
            *self._node_ports(0),
        )
        for i in range(1, self.num_workers + 1):
            self._ray(
                "start",
                f"--address={self.gcs_address}",
                f"--temp-dir={self.temp_dirs[i]}",
                *common,
                *self._node_ports(i),
            )
        self.wait_for_nodes(self.num_workers + 1, timeout=self.startup_timeout - (time.monotonic() - t0))
        self.startup_seconds = time.monotonic() - t0
        return self.startup_seconds

    def api_get(self, path: str, timeout: float = 10.0) -> Any:
        req = urllib.request.Request(self.dashboard_url + path, headers=self.auth_header())
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
        with opener.open(req, timeout=timeout) as resp:
            return json.loads(resp.read())

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's nodes as the state API reports them (node_id, state, is_head_node, ...)."""
        data = self.api_get("/api/v0/nodes?limit=100&detail=true")
        return data["data"]["result"]["result"]

    def alive_nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.nodes() if n.get("state") == "ALIVE"]

    def wait_for_nodes(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + max(timeout, 1.0)
        last: Any = None
        while time.monotonic() < deadline:
            try:
                alive = self.alive_nodes()
                if len(alive) >= n:
                    return alive
                last = f"{len(alive)} of {n} nodes alive"
            except (urllib.error.URLError, OSError, KeyError, ValueError) as e:
                last = e
            time.sleep(0.5)
        raise TimeoutError(f"Ray cluster not up after {timeout:.0f}s ({last}):\n{self.log_tail()}")

    def our_pids(self) -> list[int]:
        """PIDs of this cluster's processes and their descendants.

        A process is ours when its command line names one of our temp dirs or our GCS address, or its
        stdout/stderr/cwd lie under our base dir (workers rewrite their command line to `ray::...`, but
        their output goes to `<temp dir>/session_*/logs/worker-*.out`).
        """
        base = str(self.base_dir.resolve())
        marks = [str(d) for d in self.temp_dirs] + [f"--gcs-address={self.gcs_address}", base]
        parent: dict[int, int] = {}
        ours: set[int] = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent[pid] = int((entry / "stat").read_text().rsplit(")", 1)[-1].split()[1])
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                links = []
                for link in ("cwd", "fd/1", "fd/2"):
                    with contextlib.suppress(OSError):
                        links.append(os.readlink(entry / link))
                if any(m in cmd for m in marks) or any(t.startswith(base) for t in links):
                    ours.add(pid)
        changed = True
        while changed:  # add descendants (a job's driver is a child of a worker, ...)
            grown = {p for p, pp in parent.items() if pp in ours} - ours
            ours |= grown
            changed = bool(grown)
        ours.discard(os.getpid())
        return sorted(ours)

    @staticmethod
    def foreign_ray_pids(ours: list[int]) -> list[int]:
        """Ray processes visible here that are not this cluster's (another instance in the namespace)."""
        names = (b"gcs_server", b"raylet", b"ray::", b"default_worker.py", b"dashboard/dashboard.py")
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in ours or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                cmd = (entry / "cmdline").read_bytes()
                if any(n in cmd for n in names):
                    found.append(int(entry.name))
        return found

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every process of this cluster. Safe to call twice, and after a failed start."""
        if not self.started:
            return
        self.started = False
        pids = self.our_pids()
        # Ray's daemons were orphaned by `ray start` and re-parented to us (PID 1 of the namespace, or the
        # subreaper set in start()): reap them as they exit, else they linger as zombies and `ray stop`
        # waits its whole grace period for processes that are already dead.
        done = threading.Event()
        reaper = threading.Thread(target=_reap_until, args=(pids, done), daemon=True)
        reaper.start()
        try:
            if in_private_pidns() and not self.foreign_ray_pids(pids):
                # Only our Ray is visible here; `ray stop` stops it in Ray's own order. Not when another Ray
                # shares the namespace (the suite's `ray_local` instance): `ray stop` would stop that one
                # too, and its driver, the pytest process, exits when its raylet dies.
                with contextlib.suppress(Exception):
                    self._ray("stop", "--grace-period=10", timeout=timeout, check=False)
            # The safety net (and, outside a PID namespace, the only way): signal what carries our dirs, and
            # what was ours before anything died (a worker whose raylet died is no longer its descendant).
            for sig in (signal.SIGTERM, signal.SIGKILL):
                left = [p for p in sorted({*pids, *self.our_pids()}) if _alive(p)]
                for pid in left:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, sig)
                # gcs_server and raylet can take >10 s to honour a SIGTERM sent to all at once; don't wait long.
                deadline = time.monotonic() + 5
                while left and time.monotonic() < deadline:
                    time.sleep(0.1)
                    left = [p for p in left if _alive(p)]
                if not left:
                    break
        finally:
            done.set()
            reaper.join(5)
            _reap(pids)

    def close(self, *, keep_dirs: bool = False) -> None:
        self.stop()
        for _ in range(3 if not keep_dirs else 0):
            shutil.rmtree(self.base_dir, ignore_errors=True)
            if not self.base_dir.exists():
                break
            time.sleep(1.0)  # something was still writing there; try again

    def __enter__(self) -> RayCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ helpers

    def log_tail(self, n: int = 30) -> str:
        """The last lines of each node's raylet and the head's GCS/dashboard logs, for failure messages."""
        out = []
        for d in self.temp_dirs:
            for name in ("raylet.out", "gcs_server.out", "dashboard.log", "raylet.err"):
                path = d / "session_latest" / "logs" / name
                with contextlib.suppress(OSError):
                    lines = path.read_text(errors="replace").splitlines()[-n:]
                    out.append(f"--- {path}\n" + "\n".join(lines))
        return "\n".join(out)

    def ray_cli(
        self, *args: str, timeout: float = 120.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run `ray ARGS` against this cluster's environment (auth token, no RAY_ADDRESS from outside)."""
        return self._ray(*args, timeout=timeout, check=check)


def _set_child_subreaper() -> None:
    """Become the parent of orphaned descendants (Linux), so we can reap Ray's daemons when they exit."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)  # only succeeds for our (re-parented) children; others: ECHILD


def _reap_until(pids: list[int], done: threading.Event) -> None:
    while not done.wait(0.1):
        _reap(pids)


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"
