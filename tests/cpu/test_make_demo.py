"""`make demo` on a fresh clone prints one install line, not pip's hundreds: the install's output goes to
<venv>/install.log, and a failed install shows the log's tail (the error) and stops. Run through the real
Makefile with a stand-in python whose venv's pip is noisy (no packages are installed)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# `python -m venv DIR` makes DIR/bin/pip (300 lines of pip-like noise; FAKE_PIP_FAIL=1: an error at the end)
# and DIR/bin/xfinder-ray (prints a leaderboard line).
FAKE_PYTHON = """#!/bin/sh
[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 9
mkdir -p "$3/bin"
cat > "$3/bin/pip" <<'PIP'
#!/bin/sh
i=0; while [ $i -lt 100 ]; do echo "Collecting package$i"; echo "  Downloading package$i.whl (1 MB)"; \
  echo "WARNING: Location 'x' is ignored" >&2; i=$((i+1)); done
if [ "${FAKE_PIP_FAIL:-0}" = "1" ]; then echo "ERROR: No matching distribution found for vllm" >&2; exit 1; fi
PIP
printf '#!/bin/sh\\necho "| 1 | demo-model | 91.7 |"\\n' > "$3/bin/xfinder-ray"
chmod +x "$3/bin/pip" "$3/bin/xfinder-ray"
"""


def make_demo(tmp_path: Path, fail: bool = False) -> subprocess.CompletedProcess:
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    env = {**os.environ, "XFINDER_NO_NETNS": "1", "FAKE_PIP_FAIL": "1" if fail else "0"}
    env.pop("MAKEFLAGS", None)
    return subprocess.run(
        ["make", "--no-print-directory", "demo", f"PY={python}", f"VENV={tmp_path / 'venv'}", "HAS_GPU=1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_install_is_one_line_and_its_output_is_in_a_log(tmp_path):
    r = make_demo(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    ours = [line for line in r.stdout.splitlines() if not line.startswith("scripts/loopback.sh")]
    assert ours[0].startswith(f"installing into {tmp_path / 'venv'}") and "install.log" in ours[0]
    assert ours[1].startswith("installed in ") and ours[1].endswith(" s")
    assert ours[2:] == ["| 1 | demo-model | 91.7 |"]  # then the leaderboard
    assert "Collecting" not in r.stdout + r.stderr and "ignored" not in r.stderr
    log = (tmp_path / "venv" / "install.log").read_text()
    assert log.count("Collecting") == 400  # four pip installs, all kept in the log
    again = make_demo(tmp_path)  # installed: no install line at all
    assert again.returncode == 0 and "installing" not in again.stdout, again.stdout
    assert again.stdout.splitlines()[-1] == "| 1 | demo-model | 91.7 |"


def test_a_failed_install_shows_the_error_and_stops(tmp_path):
    r = make_demo(tmp_path, fail=True)
    assert r.returncode != 0
    assert "ERROR: No matching distribution found for vllm" in r.stderr  # the log's tail
    assert f"the install failed; the whole log: {tmp_path / 'venv' / 'install.log'}" in r.stderr
    assert len(r.stderr.splitlines()) <= 45 and "demo-model" not in r.stdout
