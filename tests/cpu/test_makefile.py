"""`make test` runs tests/gpu exactly where a GPU is listed, and that folder is a collectable suite
(pytest used to exit 4 on GPU machines: the folder did not exist)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_n(tmp_path: Path, gpu: bool) -> str:
    bin_dir = tmp_path / ("gpu" if gpu else "nogpu")
    bin_dir.mkdir()
    if gpu:  # a stand-in for the driver's tool: the Makefile only asks `nvidia-smi -L` for a GPU
        fake = bin_dir / "nvidia-smi"
        fake.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    # -n: print the recipe without running it; -o: treat the install stamp as up to date.
    out = subprocess.run(
        ["make", "-n", "-o", ".venv/bin/.installed", "test"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_gpu_suite_runs_only_where_a_gpu_is_listed(tmp_path):
    assert "tests/gpu" in _make_n(tmp_path, gpu=True)
    assert "tests/gpu" not in _make_n(tmp_path, gpu=False)


def test_gpu_suite_is_collectable():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/gpu", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    # 0: tests ran (or were skipped here, without a GPU); 4/5 would be "no such folder"/"no tests".
    assert out.returncode == 0, out.stdout + out.stderr
    assert "skipped" in out.stdout or "passed" in out.stdout
