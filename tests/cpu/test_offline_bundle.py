"""scripts/offline_bundle.py and the node-side scripts/offline_install.sh (`make offline-bundle`).

The fast tests need no network: the vLLM pick over a table of torch pins, the trimming of a small fake
wheel, and a pack / split / checksum / join / unpack roundtrip of a small generated tree through the real
node-side script. The real build (registry, about 1 GB of downloads, minutes of xz) runs only with
XFINDER_BUNDLE_TEST=1.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("offline_bundle", ROOT / "scripts" / "offline_bundle.py")
ob = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ob)

# (vLLM release -> the torch its wheel pins), the shape of the real index around torch 2.11.
PINS = {
    "0.29.0": "2.13.0",
    "0.28.0": "2.13.0",
    "0.27.1": "2.13.0",
    "0.27.0": "2.12.1",
    "0.26.0": "2.11.0",
    "0.25.1": "2.10.0",
    "0.25.0": "2.10.0",
    "0.24.0": "2.10.0",
    "0.30.0rc1": "2.11.0",  # a prerelease is never picked
    "0.23.0": None,  # no torch pin (a broken or source-only release)
}


@pytest.mark.parametrize(
    ("torch", "expected"),
    [
        ("2.11.0", "0.26.0"),
        ("2.11.0+cu130", "0.26.0"),  # the node's local label does not matter
        ("2.10.0", "0.25.1"),  # the newest of several
        ("2.13.0+cu128", "0.29.0"),
        ("2.12.1", "0.27.0"),
        ("2.12.0", None),
        ("2.9.0", None),
    ],
)
def test_pick_vllm_matches_the_torch_pin(torch, expected):
    assert ob.pick_vllm(torch, PINS) == expected


# The index as scripts/offline_bundle.py read it on 2026-12-02 (vllm release -> Requires-Dist torch==).
INDEX_2026_12 = {"0.33.0": "2.14.0", "0.32.0": "2.13.0", "0.31.0": "2.13.0", "0.30.0": "2.13.0",
                 "0.29.0": "2.13.0", "0.28.0": "2.13.0", "0.27.1": "2.13.0", "0.27.0": "2.13.0",
                 "0.26.0": "2.11.0"}  # fmt: skip


def test_pick_vllm_on_the_real_index():
    assert ob.pick_vllm("2.11.0+cu130", INDEX_2026_12) == "0.26.0"  # the H200 node
    assert ob.pick_vllm("2.13.0", INDEX_2026_12) == "0.32.0"
    assert ob.pick_vllm("2.14.0+cu130", INDEX_2026_12) == "0.33.0"
    assert ob.pick_vllm("2.12.0", INDEX_2026_12) is None


def test_torch_pin_from_requires_dist():
    meta = [
        "regex",
        "torchaudio==2.11.0",
        'torch==2.9.0; extra == "cpu"',
        "torch==2.11.0",
        "torchvision==0.26.0",
    ]
    assert ob.torch_pin(meta) == "2.11.0"
    assert ob.torch_pin(["torch>=2.4", "numpy"]) is None
    assert ob.torch_pin([]) is None


def test_cuda_major_and_platform_tags():
    assert ob.cuda_major("cu130") == 13 and ob.cuda_major("cu128") == 12
    with pytest.raises(SystemExit):
        ob.cuda_major("cuda13")
    args = ob.platform_args("3.12")
    assert args[args.index("--python-version") + 1] == "3.12" and "cp312" in args


def test_read_pins_default_list():
    pins, fallbacks = ob.read_pins(ob.PINS_DIR / "vllm-0.26.0.txt")
    assert len(pins) == 46 and "vllm==0.26.0" in pins and "ray==2.60.0" in pins
    assert fallbacks == ["llguidance==1.6.1"]
    assert not any(p.startswith(("torch==", "transformers==")) for p in pins)  # the image has them


def _fake_wheel(path: Path, files: dict[str, bytes]) -> None:
    record = "".join(f"{name},sha256=x,{len(data)}\n" for name, data in files.items())
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("vllm-0.26.0.dist-info/RECORD", record + "vllm-0.26.0.dist-info/RECORD,,\n")


def test_trim_wheel_drops_files_and_their_record_lines(tmp_path):
    files = {
        "vllm/__init__.py": b"x = 1\n",
        "vllm/_C.abi3.so": b"\x7fELF libcudart.so.13\x00",
        "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": b"fa2",
        "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so": b"fa3",
        "vllm/third_party/deep_gemm/a.cu": b"a",
        "vllm/third_party/deep_gemm/sub/b.cu": b"b",
        "vllm/third_party/deep_gemmish.py": b"kept: not inside the folder",
    }
    src, dest = tmp_path / "vllm-0.26.0-cp38-abi3-x.whl", tmp_path / "out.whl"
    _fake_wheel(src, files)
    dropped = ob.trim_wheel(src, dest, ob.TRIM["vllm"])
    assert sorted(dropped) == [
        "vllm/third_party/deep_gemm/a.cu",
        "vllm/third_party/deep_gemm/sub/b.cu",
        "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",
    ]
    with zipfile.ZipFile(dest) as z:
        names = set(z.namelist())
        record = z.read("vllm-0.26.0.dist-info/RECORD").decode()
    assert names == set(files) - set(dropped) | {"vllm-0.26.0.dist-info/RECORD"}
    assert "fa2" not in record and "deep_gemm/" not in record
    assert "_vllm_fa3_C" in record and "deep_gemmish.py" in record
    assert ob.linked_cuda_major(dest) == 13
    assert ob.trimmed_what(dropped) == "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so vllm/third_party/deep_gemm/"


def _node(cmd: list[str], env: dict[str, str], cwd: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", *cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def bundle(tmp_path):
    """A small generated tree packed, split into 3 parts and laid out as OUT/p1..p3, plus the node's env."""
    tree = tmp_path / "build" / "tree"
    (tree / "fakepkg").mkdir(parents=True)
    rng = random.Random(0)
    (tree / "fakepkg" / "__init__.py").write_text("__version__ = '1.2.3'\n")
    (tree / "fakepkg" / "blob.bin").write_bytes(rng.randbytes(150_000))  # incompressible: 3 parts
    archive = tmp_path / "build" / "site.tar.xz"
    ob.pack(tree, archive)
    parts = ob.split(archive, 64 * 1024, tmp_path / "build" / "parts")
    assert len(parts) == 3 and b"".join(p.read_bytes() for p in parts) == archive.read_bytes()
    dirs = ob.lay_out(parts, tmp_path / "out", "test bundle\n")
    env = dict(
        os.environ,
        PARTS_DIR=str(tmp_path / "node" / "parts"),
        SITE=str(tmp_path / "node" / "site"),
        PY=sys.executable,
        CHECK_IMPORTS="fakepkg",
        PYTHONPATH="",
    )
    return dirs, env, tmp_path


def _stash_all(dirs: list[Path], env: dict[str, str], cwd: Path) -> None:
    for d in dirs:
        out = _node([str(d / "offline_install.sh"), "stash", str(d)], env, cwd)
        assert out.returncode == 0, out.stdout + out.stderr


def test_lay_out_one_folder_per_part(bundle):
    dirs, _, tmp_path = bundle
    assert [d.name for d in dirs] == ["p1", "p2", "p3"]
    for i, d in enumerate(dirs):
        assert sorted(f.name for f in d.iterdir()) == sorted(
            ["BUNDLE.txt", "SHA256SUMS", "offline_install.sh", f"site.tar.xz.part{i:02d}"]
        )
    sums = (dirs[0] / "SHA256SUMS").read_text()
    check = subprocess.run(["sha256sum", "-c", "-"], cwd=tmp_path / "build" / "parts", input=sums, text=True)
    assert check.returncode == 0  # the format coreutils reads


def test_roundtrip_through_the_node_script(bundle):
    dirs, env, tmp_path = bundle
    _stash_all(dirs, env, tmp_path)
    out = _node([str(Path(env["PARTS_DIR"]) / "offline_install.sh"), "verify"], env, tmp_path)
    assert out.returncode == 0 and "parts OK: 3 checked" in out.stdout, out.stdout + out.stderr
    out = _node([str(Path(env["PARTS_DIR"]) / "offline_install.sh"), "install"], env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "imports OK: fakepkg=1.2.3" in out.stdout
    site = Path(env["SITE"])
    assert (site / "fakepkg" / "blob.bin").read_bytes() == random.Random(0).randbytes(150_000)
    assert not Path(env["SITE"] + ".unpack").exists()


def test_missing_part_is_named(bundle):
    dirs, env, tmp_path = bundle
    _stash_all([dirs[0], dirs[2]], env, tmp_path)  # p2 lost on the way
    for cmd in ("verify", "install"):
        out = _node([str(dirs[0] / "offline_install.sh"), cmd], env, tmp_path)
        assert out.returncode == 3, out.stdout + out.stderr
        assert "MISSING PARTS: site.tar.xz.part01 (resend them)" in out.stdout
    assert not Path(env["SITE"]).exists()


def test_corrupted_part_is_named(bundle):
    dirs, env, tmp_path = bundle
    _stash_all(dirs, env, tmp_path)
    part = Path(env["PARTS_DIR"]) / "site.tar.xz.part02"
    data = bytearray(part.read_bytes())
    data[100] ^= 0xFF
    part.write_bytes(bytes(data))
    for cmd in ("verify", "install"):
        out = _node([str(dirs[0] / "offline_install.sh"), cmd], env, tmp_path)
        assert out.returncode == 4, out.stdout + out.stderr
        assert "CHECKSUM MISMATCH: site.tar.xz.part02 (resend them)" in out.stdout
    assert not Path(env["SITE"]).exists()


def test_nothing_stashed_yet(tmp_path):
    env = dict(os.environ, PARTS_DIR=str(tmp_path / "none"))
    out = _node([str(ob.NODE_SCRIPT), "verify"], env, tmp_path)
    assert out.returncode == 3 and "NO SHA256SUMS" in out.stdout


def test_failed_import_is_reported(bundle):
    dirs, env, tmp_path = bundle
    _stash_all(dirs, env, tmp_path)
    env["CHECK_IMPORTS"] = "fakepkg no_such_module_here"
    out = _node([str(dirs[0] / "offline_install.sh"), "install"], env, tmp_path)
    assert out.returncode == 6 and "IMPORT FAILED" in out.stdout


def test_bundle_output_is_git_ignored():
    out = subprocess.run(["git", "check-ignore", "-q", ".whl/p1/x"], cwd=ROOT)
    assert out.returncode == 0


# ---- the real build: registry, ~1 GB of downloads, minutes of xz -------------------------------


def _python312() -> str | None:
    found = os.environ.get("XFINDER_BUNDLE_PY") or shutil.which("python3.12")
    pyenv = Path.home() / ".pyenv" / "versions"
    if not found and pyenv.is_dir():
        found = next((str(p) for p in sorted(pyenv.glob("3.12*/bin/python3.12"))), None)
    return found


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("XFINDER_BUNDLE_TEST"), reason="set XFINDER_BUNDLE_TEST=1 (network, GBs)"
)
def test_real_default_bundle(tmp_path):
    """Build the default (H200) bundle, verify and unpack it, and import vllm + ray from it on CPU.

    The importing Python is XFINDER_BUNDLE_VENV's, or a stand-in for the node's image made once by
    scripts/offline_bundle_node_venv.sh in .cache/offline-bundle/node-venv (Python 3.12, torch 2.11.0).
    """
    work = ROOT / ".cache" / "offline-bundle"  # keeps the downloads between runs
    out = tmp_path / "whl"
    build = subprocess.run([sys.executable, str(ROOT / "scripts" / "offline_bundle.py"), "--out", str(out),
                            "--work", str(work)], timeout=1800)  # fmt: skip
    assert build.returncode == 0
    dirs = sorted(out.glob("p[0-9]*"))
    assert len(dirs) >= 2 and all(ob.tree_bytes(d) < 64 * 2**20 for d in dirs)
    venv = Path(os.environ.get("XFINDER_BUNDLE_VENV") or work / "node-venv")
    if not (venv / "bin" / "python").exists():
        python = _python312()
        if not python:
            pytest.skip("no Python 3.12 here for the node's stand-in")
        made = subprocess.run(
            ["bash", str(ROOT / "scripts" / "offline_bundle_node_venv.sh"), str(venv), python]
        )
        assert made.returncode == 0
    env = dict(os.environ, PARTS_DIR=str(tmp_path / "parts"), SITE=str(tmp_path / "site"),
               PY=str(venv / "bin" / "python"),
               CHECK_IMPORTS="torch vllm vllm.entrypoints.llm ray ray.data ray.data.llm",
               PYTHONPATH="")  # fmt: skip
    _stash_all(dirs, env, tmp_path)
    res = _node([str(tmp_path / "parts" / "offline_install.sh"), "install"], env, tmp_path, timeout=900)
    print(res.stdout, res.stderr)
    assert res.returncode == 0 and "imports OK" in res.stdout
