"""The math-verify verdicts of this machine, shared by all its processes (one SQLite file).

Each Ray worker process runs its own math-verify worker (bounded.py), and the models of a leaderboard
give the same answers to the same questions, so without this every process parses and verifies the
same (gold, answer) pairs again: on 2 cores half the math-verify work of a 100k-row job, on a
16-core node 15/16 of it. A later run on the same machine finds its verdicts here too.

- Only verdicts the worker reached are stored (status ok): a timeout depends on the load.
- The file is named by what decides a verdict (the math-verify, sympy and antlr versions and the
  worker's code), so an upgrade starts a new file.
- It lives in a folder only this user can write (a shared folder could be fed false verdicts).
- Any SQLite error (locked, corrupt, read-only disk) is a miss, never an error, and waits at most
  LOCK_WAIT_S.

    XFINDER_VERDICT_CACHE=off          no shared verdicts (each process keeps its own, in memory)
    XFINDER_VERDICT_CACHE_DIR=<folder> where the file lives (default: <tmp>/xfinder-ray-<uid>)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import tempfile
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

LOCK_WAIT_S = 0.05
_WORKER_CODE = Path(__file__).with_name("_worker.py")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def identity() -> str:
    """What decides a verdict besides the pair: the packages that parse and compare, and our worker."""
    parts = [_version(d) for d in ("math-verify", "sympy", "antlr4-python3-runtime", "latex2sympy2_extended")]
    parts.append(hashlib.sha256(_WORKER_CODE.read_bytes()).hexdigest()[:16])
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def cache_folder() -> Path | None:
    """The folder of the shared file, or None when switched off."""
    if os.environ.get("XFINDER_VERDICT_CACHE", "").lower() in ("off", "0", "false", "no"):
        return None
    configured = os.environ.get("XFINDER_VERDICT_CACHE_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / f"xfinder-ray-{os.getuid()}"


def _private(folder: Path) -> bool:
    """The folder exists (made here if not), is ours and no one else can write into it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class VerdictCache:
    """get / put of a verdict by (gold candidates, pred candidates); opened lazily, once per process."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = self.misses = self.errors = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = -1
        self._broken = folder is None

    @staticmethod
    def key(gold: Sequence[str], pred: Sequence[str]) -> bytes:
        return hashlib.sha256(json.dumps([list(gold), list(pred)]).encode()).digest()[:16]

    def _connection(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is not None and self._pid == os.getpid():
            return self._db
        self._db = None  # a connection must not cross a fork: open a new one in the child
        assert self.folder is not None
        if not _private(self.folder):
            self._broken = True
            return None
        try:
            db = sqlite3.connect(
                self.folder / f"verdicts-{identity()}.sqlite",
                timeout=LOCK_WAIT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # a verdict lost in a crash is only computed again
            db.execute("CREATE TABLE IF NOT EXISTS verdicts (k BLOB PRIMARY KEY, ok INTEGER NOT NULL)")
        except sqlite3.Error:
            self.errors += 1
            self._broken = True
            return None
        self._db, self._pid = db, os.getpid()
        return db

    def get(self, gold: Sequence[str], pred: Sequence[str]) -> bool | None:
        with self._lock:
            db = self._connection()
            if db is None:
                return None
            try:
                row = db.execute("SELECT ok FROM verdicts WHERE k = ?", (self.key(gold, pred),)).fetchone()
            except sqlite3.Error:
                self.errors += 1
                return None
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            return bool(row[0])

    def put(self, gold: Sequence[str], pred: Sequence[str], ok: bool) -> None:
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                db.execute("INSERT OR IGNORE INTO verdicts VALUES (?, ?)", (self.key(gold, pred), int(ok)))
            except sqlite3.Error:
                self.errors += 1
