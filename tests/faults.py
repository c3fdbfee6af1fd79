"""Helpers for the fault-injection tests (tests/cpu/test_faults.py).

The scoring job runs as a real `xfinder-ray score` subprocess in its own session (so it, its local Ray
instance and every worker share one session id and can be killed together); its output is read back and
checked for completeness (every input record exactly once across judgments + rejects).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
XFINDER_RAY = Path(sys.executable).parent / "xfinder-ray"
# The checkout whose code the jobs run (default: this one). Another one, e.g. a `git worktree` of a
# known commit, keeps the fault tests meaningful while this tree is being edited.
CODE_ROOT = Path(os.environ.get("XFINDER_FAULTS_CODE") or ROOT).resolve()


# --------------------------------------------------------------------------------------- processes


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    name: str
    cmdline: str


def proc_info(pid: int) -> ProcInfo | None:
    """What /proc says about one process (None when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    # The name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2 :].split()
    cmdline = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return ProcInfo(pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0], name, cmdline)


def all_procs() -> list[ProcInfo]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = proc_info(int(entry))
            if info is not None:
                found.append(info)
    return found


def alive(pid: int) -> bool:
    """Running (a zombie counts as dead: it holds no resources but a table slot)."""
    info = proc_info(pid)
    return info is not None and info.state not in ("Z", "X")


def descendants(pid: int, procs: Iterable[ProcInfo] | None = None) -> list[ProcInfo]:
    """Every live process below `pid` in the parent tree, plus those that kept its session id.

    Orphans are re-parented (to PID 1 of the namespace), so the parent tree alone can miss a raylet or
    worker whose parent died first; a process started with start_new_session=True is its session's
    leader, and Ray's processes inherit that session unless they call setsid themselves.
    """
    procs = list(procs if procs is not None else all_procs())
    children: dict[int, list[ProcInfo]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    found: dict[int, ProcInfo] = {}
    stack = [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            if c.pid not in found:
                found[c.pid] = c
                stack.append(c.pid)
    for p in procs:
        if p.sid == pid and p.pid != pid:
            found.setdefault(p.pid, p)
    return [p for p in found.values() if p.state not in ("Z", "X")]


def reap_zombies(keep: Iterable[int] = ()) -> None:
    """Reap zombie children of this process other than `keep` (inside loopback.sh pytest is PID 1)."""
    me, keep = os.getpid(), set(keep)
    for p in all_procs():
        if p.ppid == me and p.state == "Z" and p.pid not in keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(p.pid, os.WNOHANG)


class Job:
    """One `xfinder-ray score` run in a subprocess, in a session of its own."""

    def __init__(
        self, args: list[str], log_path: Path, env: dict[str, str] | None = None, cwd: Path = CODE_ROOT
    ):
        self.args = args
        self.log_path = Path(log_path)
        self.started = time.monotonic()
        # Its own local Ray instance: no address inherited from the test's environment.
        full_env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        if cwd != ROOT:
            full_env["PYTHONPATH"] = os.pathsep.join(
                [str(cwd), *filter(None, [os.environ.get("PYTHONPATH")])]
            )
        full_env.update(env or {})
        full_env.setdefault("RAY_DISABLE_USAGE_STATS", "1")
        full_env.setdefault("HF_HUB_OFFLINE", "1")
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== {' '.join(args)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                args,
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.pid = self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_tree()
            raise AssertionError(f"job did not finish in {timeout:.0f}s; log:\n{self.log_tail()}") from None

    def kill_tree(self, grace: float = 30.0) -> list[ProcInfo]:
        """SIGKILL the driver and everything it started (its process group, session and descendants).

        Returns the processes that were signalled; raises if any of them is still alive after `grace`.
        """
        victims = {p.pid: p for p in descendants(self.pid)}
        me = proc_info(self.pid)
        if me is not None and me.state not in ("Z", "X"):
            victims[self.pid] = me
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + grace
        while True:
            # Sweep again: a process may have been forked between the listing and the signal.
            for p in [*victims.values(), *descendants(self.pid)]:
                victims.setdefault(p.pid, p)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(0.2)
            reap_zombies(keep=[self.pid])
            left = [p for p in victims.values() if alive(p.pid)] + descendants(self.pid)
            if not left:
                return list(victims.values())
            if time.monotonic() > deadline:
                raise AssertionError(f"still alive after SIGKILL: {[(p.pid, p.cmdline[:80]) for p in left]}")
            time.sleep(0.1)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, n: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-n:])


def score_args(*overrides: str, config: str = "configs/local.yaml") -> list[str]:
    return [str(XFINDER_RAY), "score", "--config", config, *overrides]


def wait_for(
    cond: Callable[[], Any], timeout: float, what: str, poll: float = 0.2, job: Job | None = None
) -> Any:
    """Poll `cond` until it returns something truthy; fail (with the job's log) after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        if job is not None and not job.running:
            raise AssertionError(f"job exited ({job.proc.returncode}) before {what}; log:\n{job.log_tail()}")
        time.sleep(poll)
    tail = f"; log:\n{job.log_tail()}" if job is not None else ""
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{tail}")


# --------------------------------------------------------------------------------------- data


def write_synthetic(
    fs: pafs.FileSystem, prefix: str, n_rows: int, n_files: int, seed: int = 0, row_group_size: int = 10_000
) -> list[str]:
    """`n_rows` synthetic records (xfinder_ray.sample_data, ~1% invalid) as `n_files` Parquet files.

    Row groups of `row_group_size` rows: several read shards per file, so part files appear during the run.
    """
    from xfinder_ray.sample_data import iter_synthetic_tables

    fs.create_dir(prefix, recursive=True)
    per_file = -(-n_rows // n_files)
    paths = []
    for i, table in enumerate(iter_synthetic_tables(n_rows, per_file, seed)):
        path = f"{prefix}/part-{i:05d}.parquet"
        pq.write_table(table, path, filesystem=fs, compression="zstd", row_group_size=row_group_size)
        paths.append(path)
    return paths


def input_ids(fs: pafs.FileSystem, prefix: str) -> list[str]:
    return pq.read_table(prefix, filesystem=fs, columns=["record_id"]).column(0).to_pylist()


def defective_ids(fs: pafs.FileSystem, prefix: str) -> set[str]:
    """Record ids of the deliberately invalid synthetic rows (`defect` set): the expected rejects."""
    t = pq.read_table(prefix, filesystem=fs, columns=["record_id", "defect"]).to_pandas()
    return set(t.loc[t["defect"].notna(), "record_id"])


def part_files(fs: pafs.FileSystem, prefix: str) -> list[str]:
    """The finished `part-*.parquet` files under `prefix` (none when it does not exist yet)."""
    try:
        infos = fs.get_file_info(pafs.FileSelector(prefix, allow_not_found=True))
    except OSError:
        return []
    return sorted(
        i.path
        for i in infos
        if i.type == pafs.FileType.File
        and i.path.rsplit("/", 1)[-1].startswith("part-")
        and i.path.endswith(".parquet")
    )


@dataclass
class Output:
    judgments: pa.Table
    rejects: pa.Table
    manifest: dict[str, Any] | None
    files: dict[str, list[str]]


def read_output(fs: pafs.FileSystem, prefix: str) -> Output:
    """Everything a run wrote under `prefix` (tables may be empty; manifest None when uncommitted)."""
    tables, files = {}, {}
    for part in ("judgments", "rejects"):
        files[part] = part_files(fs, f"{prefix}/{part}")
        read = [pq.read_table(p, filesystem=fs) for p in files[part]]
        tables[part] = pa.concat_tables(read, promote_options="permissive") if read else pa.table({})
    try:
        with fs.open_input_stream(f"{prefix}/manifest.json") as f:
            manifest = json.loads(f.read())
    except (FileNotFoundError, OSError):
        manifest = None
    return Output(tables["judgments"], tables["rejects"], manifest, files)


def completeness(out: Output, expected_ids: Iterable[str]) -> dict[str, Any]:
    """Lost, duplicated and unexpected record ids across judgments + rejects."""
    from collections import Counter

    seen = Counter()
    for t in (out.judgments, out.rejects):
        if t.num_rows:
            seen.update(t.column("record_id").to_pylist())
    expected = set(expected_ids)
    return {
        "rows": sum(seen.values()),
        "lost": sorted(expected - set(seen))[:20],
        "n_lost": len(expected - set(seen)),
        "duplicated": sorted(k for k, v in seen.items() if v > 1)[:20],
        "n_duplicated": sum(v - 1 for v in seen.values() if v > 1),
        "unexpected": sorted(set(seen) - expected)[:20],
    }


def assert_complete(out: Output, expected_ids: list[str]) -> None:
    c = completeness(out, expected_ids)
    if c["n_lost"] or c["n_duplicated"] or c["unexpected"]:
        if out.rejects.num_rows:  # rows that lost their record_id are rejects: say why
            c["reject_reasons"] = sorted({str(r)[:300] for r in out.rejects.column("reason").to_pylist()})[:5]
        raise AssertionError(f"output incomplete: {c}")
    assert out.manifest is not None, "no manifest.json: the output was not committed"
    counts = out.manifest["counts"]
    assert counts["input"] == len(expected_ids) == counts["judged"] + counts["rejected"], counts
    assert counts["judged"] == out.judgments.num_rows and counts["rejected"] == out.rejects.num_rows, counts
