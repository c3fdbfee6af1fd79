"""A bounded, thread-safe, fork-aware client for the math-verify worker (`_worker.py`).

The bound, counted from the moment the caller asks (so including the wait for another thread's
request): the worker's child must answer by `budget_s` (default 1.3 s) or the supervisor SIGKILLs
it; the caller itself stops waiting at `limit_s` (default 1.85 s) whatever the supervisor does, and
gets False. Replies that arrive later are recognised by their id and dropped; only after
MAX_MISSES consecutive late answers is the supervisor considered stuck and restarted. Memory is
bounded by RLIMIT_AS in the child (default 500 MiB).

Not counted in the bound: starting the worker (a one-time ~3 s import and warm-up of sympy and
math-verify per process; call `warm_up()` to pay it early) and restarting a dead or stuck supervisor.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .verdict_cache import VerdictCache, cache_folder

WORKER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")
DEFAULT_BUDGET_S = 1.3
# Hard cap on a caller's wait; the gap to the budget absorbs IPC and the supervisor's kill on a
# loaded machine. Both stay under the 2 s promised per comparison.
DEFAULT_LIMIT_S = 1.85
DEFAULT_MEM_BYTES = 500 * 1024 * 1024
BOOT_TIMEOUT_S = 120.0
MAX_MISSES = 3
_CACHE_SIZE = 4096


@dataclass
class WorkerStats:
    requests: int = 0
    cache_hits: int = 0
    timeouts: int = 0
    crashes: int = 0
    errors: int = 0
    busy: int = 0
    restarts: int = 0
    boots: int = 0
    shared_hits: int = 0  # verdicts another process of this machine had reached (verdict_cache.py)


def _close_pipes(proc: subprocess.Popen) -> None:
    """Close the worker's stdin and stdout, ignoring errors (a pipe may already be broken)."""
    for f in (proc.stdin, proc.stdout):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass


class BoundedVerifier:
    """Sends (gold candidates, pred candidates) to the worker; True if any pair is equivalent."""

    def __init__(
        self,
        budget_s: float = DEFAULT_BUDGET_S,
        limit_s: float = DEFAULT_LIMIT_S,
        mem_bytes: int = DEFAULT_MEM_BYTES,
    ) -> None:
        self.budget_s = budget_s
        self.limit_s = max(limit_s, budget_s)
        self.mem_bytes = mem_bytes
        self.stats = WorkerStats()
        self._init_process_state()

    def _init_process_state(self) -> None:
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._buf = b""
        self._next_id = 0
        self._misses = 0
        self._pid = os.getpid()
        self._cache: OrderedDict[tuple, bool] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._shared = VerdictCache(cache_folder())
        self._stats_lock = threading.Lock()

    def _count(self, name: str) -> None:
        with self._stats_lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    # -- lifecycle ---------------------------------------------------------------------------------

    def after_fork_in_child(self) -> None:
        """Forget the parent's worker (it belongs to the parent) and renew the locks."""
        proc = self._proc
        if proc is not None:
            _close_pipes(proc)
            # Popen.__del__ of the parent's process object must not reap it from here.
            proc.returncode = 0
        self._init_process_state()

    def _check_pid(self) -> None:
        if self._pid != os.getpid():
            self.after_fork_in_child()

    def warm_up(self) -> None:
        """Start the worker now (blocking) instead of on the first comparison that needs it."""
        self._check_pid()
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._boot()

    def _boot(self) -> None:
        if self._proc is not None:
            self._kill()
            self._count("restarts")
        self._count("boots")
        self._misses = 0
        proc = subprocess.Popen(
            [sys.executable, WORKER_PATH, str(self.mem_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            # Own process group: terminal signals do not reach it, and a kill takes the child too.
            start_new_session=True,
        )
        self._proc = proc
        self._buf = b""
        line = self._read_line(time.monotonic() + BOOT_TIMEOUT_S)
        if line is None or not json.loads(line).get("ready"):
            self._kill()
            raise RuntimeError("the math-verify worker did not start")

    def _kill(self) -> None:
        proc = self._proc
        self._proc = None
        self._buf = b""
        if proc is None:
            return
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        _close_pipes(proc)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """Stop the worker (it also exits by itself when this process ends)."""
        if self._pid != os.getpid():
            return
        with self._lock:
            self._kill()

    # -- I/O ----------------------------------------------------------------------------------------

    def _read_line(self, deadline: float) -> bytes | None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    # -- the call -----------------------------------------------------------------------------------

    def verify(self, gold: Sequence[str], pred: Sequence[str]) -> tuple[bool, str]:
        """(equivalent, status); status is ok | cached | error | timeout | crash | busy."""
        self._check_pid()
        key = (tuple(gold), tuple(pred))
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self._count("cache_hits")
                return hit, "cached"
        shared = self._shared.get(gold, pred)
        if shared is not None:
            self._count("shared_hits")
            self._remember(key, shared)
            return shared, "cached"
        if self._proc is None:
            self.warm_up()  # one-time start, outside the budget
        start = time.monotonic()
        if not self._lock.acquire(timeout=self.budget_s):
            self._count("busy")
            return False, "busy"
        try:
            if self._proc is None or self._proc.poll() is not None or self._misses >= MAX_MISSES:
                self._boot()  # the supervisor died or is stuck (rare): restart, outside the budget
                start = time.monotonic()
            self._count("requests")
            self._next_id += 1
            rid = self._next_id
            msg = {"id": rid, "gold": list(gold), "pred": list(pred), "deadline": start + self.budget_s}
            try:
                assert self._proc is not None and self._proc.stdin is not None
                self._proc.stdin.write(json.dumps(msg).encode() + b"\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):
                self._kill()
                self._count("crashes")
                return False, "crash"
            while True:
                line = self._read_line(start + self.limit_s)
                if line is None:
                    if self._proc is not None and self._proc.poll() is not None:
                        self._kill()  # died: the next call restarts it
                    self._misses += 1
                    self._count("timeouts")
                    return False, "timeout"
                reply = json.loads(line)
                if reply.get("id") == rid:
                    break  # earlier ids are late answers to callers that already gave up
            self._misses = 0
            ok = bool(reply.get("ok"))
            status = str(reply.get("status", "error"))
        finally:
            self._lock.release()
        if status == "timeout":
            self._count("timeouts")
        elif status == "crash":
            self._count("crashes")
        elif status == "error":
            self._count("errors")
        if status in ("ok", "error"):
            # Deterministic outcomes only: a timeout may succeed on a less loaded machine.
            self._remember(key, ok)
        if status == "ok":
            self._shared.put(gold, pred, ok)
        return ok, status

    def _remember(self, key: tuple, ok: bool) -> None:
        with self._cache_lock:
            self._cache[key] = ok
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)


_VERIFIER: BoundedVerifier | None = None
_VERIFIER_LOCK = threading.Lock()


def get_verifier() -> BoundedVerifier:
    """The process-wide worker client (created lazily)."""
    global _VERIFIER
    if _VERIFIER is None:
        with _VERIFIER_LOCK:
            if _VERIFIER is None:
                _VERIFIER = BoundedVerifier()
                atexit.register(_VERIFIER.close)
    return _VERIFIER


def _after_fork_in_child() -> None:
    global _VERIFIER_LOCK
    _VERIFIER_LOCK = threading.Lock()
    if _VERIFIER is not None:
        _VERIFIER.after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
