"""The math-verify verdicts shared by the processes of one machine (judging/verdict_cache.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from xfinder_ray.judging import verdict_cache
from xfinder_ray.judging.bounded import BoundedVerifier
from xfinder_ray.judging.verdict_cache import VerdictCache

GOLD, PRED = ["\\frac{e^{-2t}}{15}"], ["\\frac{1}{15} e^{-2t}"]

# One judgment in a fresh process: its verdict and its math-verify worker's counters.
CHILD = """
import json
from xfinder_ray.judging import judge, stats
ok = judge("math", None, "\\\\frac{1}{15} e^{-2t}", "\\\\frac{e^{-2t}}{15}")
s = stats()
print(json.dumps({"ok": ok, "boots": s["worker_boots"], "requests": s["worker_requests"],
                  "shared_hits": s["worker_shared_hits"]}))
"""


def _judge_in_a_new_process(folder, **env) -> dict:
    environ = {**os.environ, "XFINDER_VERDICT_CACHE_DIR": str(folder), **env}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=environ, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_verdict_one_process_reached_is_served_to_the_next_without_math_verify(tmp_path):
    first = _judge_in_a_new_process(tmp_path)
    assert first == {"ok": True, "boots": 1, "requests": 1, "shared_hits": 0}
    second = _judge_in_a_new_process(tmp_path)
    assert second == {"ok": True, "boots": 0, "requests": 0, "shared_hits": 1}  # no worker started
    off = _judge_in_a_new_process(tmp_path, XFINDER_VERDICT_CACHE="off")
    assert off == {"ok": True, "boots": 1, "requests": 1, "shared_hits": 0}


def test_a_timeout_is_not_shared(tmp_path, monkeypatch):
    monkeypatch.setenv("XFINDER_VERDICT_CACHE_DIR", str(tmp_path))
    slow = BoundedVerifier(budget_s=0.001, limit_s=0.001)
    slow.warm_up()
    try:
        ok, status = slow.verify(GOLD, PRED)
    finally:
        slow.close()
    assert (ok, status) == (False, "timeout")
    assert VerdictCache(tmp_path).get(GOLD, PRED) is None


def test_verdicts_round_trip_and_keys_tell_pairs_apart(tmp_path):
    cache = VerdictCache(tmp_path)
    assert cache.get(GOLD, PRED) is None
    cache.put(GOLD, PRED, True)
    cache.put(PRED, GOLD, False)
    again = VerdictCache(tmp_path)
    assert (again.get(GOLD, PRED), again.get(PRED, GOLD)) == (True, False)
    assert again.get(GOLD + ["x"], PRED) is None
    assert (again.hits, again.misses) == (2, 1)
    [db] = tmp_path.glob("verdicts-*.sqlite")
    assert verdict_cache.identity() in db.name  # an upgrade of what judges starts a new file


def test_a_folder_others_can_write_is_not_used(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    cache = VerdictCache(folder)
    cache.put(GOLD, PRED, False)  # a false verdict planted here must never be read back
    assert cache.get(GOLD, PRED) is None
    assert not list(folder.iterdir())


@pytest.mark.parametrize("damage", ["garbage", "directory"])
def test_a_damaged_file_is_a_miss_not_an_error(tmp_path, damage):
    path = tmp_path / f"verdicts-{verdict_cache.identity()}.sqlite"
    if damage == "garbage":
        path.write_bytes(b"not a database" * 100)
    else:
        path.mkdir()
    cache = VerdictCache(tmp_path)
    cache.put(GOLD, PRED, True)
    assert cache.get(GOLD, PRED) is None
    assert cache.errors >= 1


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("XFINDER_VERDICT_CACHE", "off")
    assert verdict_cache.cache_folder() is None
    assert VerdictCache(None).get(GOLD, PRED) is None
