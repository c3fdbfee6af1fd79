#!/usr/bin/env python3
"""Build a vLLM + Ray install bundle for an air-gapped GPU node (`make offline-bundle`).

Runs on a machine that reaches the package registry. From the node's facts (Python, torch and its CUDA
flavour; defaults: the H200 node, Python 3.12 with torch 2.11.0+cu130 and transformers preinstalled) it:

1. picks the newest vLLM release whose wheel METADATA pins `torch==<the node's torch>` (metadata only,
   through pip; `--vllm` skips the pick);
2. downloads that release's pinned closure (scripts/offline_bundle_pins/vllm-<version>.txt) for the
   node's platform, and checks that vLLM's kernels link the node's CUDA major version;
3. trims what a dense bf16 model never loads (FlashAttention-2, MoE kernels, the Rust frontend,
   DeepGEMM / SM100 sources, Ray's Java jar);
4. unpacks all wheels into one tree (as pip would on the node), packs it with xz, splits it into parts of
   `--part-mib` MiB with SHA256SUMS;
5. lays out OUT/p1, OUT/p2, ...: one folder per transfer, each with its part, SHA256SUMS, BUNDLE.txt and
   the node-side scripts/offline_install.sh (stash / verify / install / smoke).

Usage: python scripts/offline_bundle.py [--python 3.12] [--torch 2.11.0] [--cuda cu130] [--part-mib 55]
       [--out .whl] [--vllm VERSION] [--pins FILE] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.version import Version
except ImportError:  # pip always carries it
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PINS_DIR = ROOT / "scripts" / "offline_bundle_pins"
NODE_SCRIPT = ROOT / "scripts" / "offline_install.sh"
PART_PREFIX = "site.tar.xz.part"
MANYLINUX = (5, 17, 24, 26, 27, 28, 31)
# What an H200 running dense bf16 models never loads. A pattern ending in "/" drops a folder.
TRIM = {
    "vllm": (
        "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",  # FA2: Hopper uses FA3
        "vllm/_moe_C_stable_libtorch.abi3.so",  # MoE kernels
        "vllm/vllm-rs",  # the Rust frontend (API server)
        "vllm/third_party/deep_gemm/",  # FP8 GEMM sources, JIT-compiled on first use
        "vllm/third_party/fmha_sm100/",  # Blackwell attention sources
    ),
    "ray": ("ray/jars/",),  # the Java API
}


# ---- 1. which vLLM: pure functions over wheel metadata -------------------------------------------


def torch_pin(requires_dist: Iterable[str]) -> str | None:
    """The exact torch version a wheel's `Requires-Dist` lines pin (`torch==X`), or None."""
    for line in requires_dist:
        req = Requirement(line)
        if req.name.lower() != "torch" or (req.marker and "extra" in str(req.marker)):
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
            return specs[0].version
    return None


def base_version(version: str) -> Version:
    """2.11.0+cu130 -> 2.11.0: the node's torch without its local (CUDA) label."""
    return Version(Version(version).base_version)


def pick_vllm(torch_version: str, pins: Mapping[str, str | None]) -> str | None:
    """The newest final vLLM release in `pins` (version -> its torch pin) that pins `torch_version`."""
    want = base_version(torch_version)
    matches = [
        v for v, pin in pins.items() if pin and not Version(v).is_prerelease and base_version(pin) == want
    ]
    return max(matches, key=Version) if matches else None


def cuda_major(flavour: str) -> int:
    """cu130 -> 13, cu128 -> 12."""
    m = re.fullmatch(r"cu(\d+)(\d)", flavour)
    if not m:
        raise SystemExit(f"--cuda {flavour!r}: expected cuNNN, for example cu130")
    return int(m.group(1))


# ---- pip, for the node's platform ------------------------------------------------------------------


def platform_args(python: str) -> list[str]:
    tag = "cp" + python.replace(".", "")
    args = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
    args += ["--abi", tag, "--abi", "abi3", "--abi", "none"]
    for n in MANYLINUX:
        args += ["--platform", f"manylinux_2_{n}_x86_64"]
    return args + ["--platform", "manylinux2014_x86_64", "--platform", "manylinux1_x86_64"]


def pip(*args: str, capture: bool = False) -> str:
    env = dict(os.environ, PIP_CONSTRAINT="", PIP_DISABLE_PIP_VERSION_CHECK="1")
    out = subprocess.run([sys.executable, "-m", "pip", *args], env=env, text=True, capture_output=capture)
    if out.returncode:  # no registry (a network namespace, a proxy) reads here as pip's own last lines
        tail = "\n".join((out.stderr or "").strip().splitlines()[-3:])
        raise subprocess.CalledProcessError(out.returncode, f"pip {args[0]}", out.stdout, tail)
    return out.stdout if capture else ""


def vllm_versions() -> list[str]:
    """Every vLLM release the index serves, newest first."""
    out = pip("index", "versions", "vllm", capture=True)
    line = next(ln for ln in out.splitlines() if ln.startswith("Available versions:"))
    versions = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted(versions, key=Version, reverse=True)


def requires_dist(spec: str, python: str) -> list[str]:
    """A wheel's Requires-Dist, read from its metadata only (no wheel download where the index serves it)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        pip("install", "-q", "--dry-run", "--ignore-installed", "--no-deps", "--report", str(report),
            "--target", str(Path(tmp) / "t"), *platform_args(python), spec, capture=True)  # fmt: skip
        (item,) = json.loads(report.read_text())["install"]
    return item["metadata"].get("requires_dist", [])


def find_vllm(torch_version: str, python: str) -> tuple[str | None, dict[str, str | None]]:
    """Scan releases newest first until one pins the node's torch (or pins an older torch: none will)."""
    table: dict[str, str | None] = {}
    want = base_version(torch_version)
    for v in (v for v in vllm_versions() if not Version(v).is_prerelease):
        try:
            table[v] = torch_pin(requires_dist(f"vllm=={v}", python))
        except subprocess.CalledProcessError:
            table[v] = None  # no wheel for this Python
        print(f"  vllm {v}: torch=={table[v]}", flush=True)
        if table[v] and base_version(table[v]) <= want:
            break
    return pick_vllm(torch_version, table), table


# ---- 2. the pinned closure ----------------------------------------------------------------------


def read_pins(path: Path) -> tuple[list[str], list[str]]:
    """(pins, fallbacks) from a pins file: `name==version` lines and `fallback name==version` lines."""
    pins, fallbacks = [], []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("fallback "):
            fallbacks.append(line.split(None, 1)[1])
        elif line:
            pins.append(line)
    return pins, fallbacks


def download(specs: list[str], dest: Path, python: str) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    req = dest / "requirements.txt"
    req.write_text("\n".join(specs) + "\n")
    pip("download", "-q", "--no-deps", *platform_args(python), "-d", str(dest), "-r", str(req))
    return [w for w in sorted(dest.glob("*.whl")) if any(_matches(w, s) for s in specs)]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _matches(wheel: Path, spec: str) -> bool:
    req = Requirement(spec)
    name, version = wheel.name.split("-")[:2]
    return _norm(name) == _norm(req.name) and req.specifier.contains(version, True)


def linked_cuda_major(wheel: Path, package: str = "vllm") -> int | None:
    """The libcudart major version the wheel's top-level kernels link (DT_NEEDED), or None."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if re.fullmatch(rf"{package}/_C[\w.]*\.so", name):
                m = re.search(rb"libcudart\.so\.(\d+)", z.read(name))
                if m:
                    return int(m.group(1))
    return None


# ---- 3. trimming ----------------------------------------------------------------------------------


def _dropped(name: str, patterns: Iterable[str]) -> bool:
    return any(name == p or (p.endswith("/") and name.startswith(p)) for p in patterns)


def trim_wheel(src: Path, dest: Path, patterns: Iterable[str]) -> list[str]:
    """Copy a wheel without the files `patterns` name, their RECORD lines removed too; returns the dropped."""
    patterns = tuple(patterns)
    dropped = []
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            if _dropped(info.filename, patterns):
                dropped.append(info.filename)
                continue
            data = zi.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(True)
                data = "".join(ln for ln in lines if not _dropped(ln.split(",")[0], patterns)).encode()
            zo.writestr(info, data)
    return dropped


def trim_all(wheels: list[Path], dest: Path) -> tuple[list[Path], list[str]]:
    dest.mkdir(parents=True, exist_ok=True)
    out, dropped = [], []
    for w in wheels:
        target = dest / w.name
        patterns = TRIM.get(_norm(w.name.split("-")[0]), ())
        if patterns:
            dropped += trim_wheel(w, target, patterns)
        else:
            shutil.copy2(w, target)
        out.append(target)
    return out, dropped


# ---- 4. one tree, packed and split ------------------------------------------------------------------


def unpack_wheels(wheels: list[Path], site: Path, python: str) -> None:
    shutil.rmtree(site, ignore_errors=True)
    pip("install", "-q", "--no-index", "--no-deps", "--no-compile", *platform_args(python),
        "--target", str(site), *map(str, wheels))  # fmt: skip
    shutil.rmtree(site / "bin", ignore_errors=True)


def pack(tree: Path, archive: Path) -> None:
    """tree -> archive (.tar.xz) whose single top folder is named `site`, as the node-side script expects."""
    archive.unlink(missing_ok=True)
    tar = ["tar", "-C", str(tree.parent), "--sort=name", "--owner=0", "--group=0", "--numeric-owner"]
    tar += ["--transform", f"s,^{re.escape(tree.name)},site,", "-cf", "-", tree.name]
    if shutil.which("xz"):
        with archive.open("wb") as f:
            t = subprocess.Popen(tar, stdout=subprocess.PIPE)
            subprocess.run(["xz", "-9", "-T0"], stdin=t.stdout, stdout=f, check=True)
            if t.wait():
                raise SystemExit("tar failed")
    else:
        import tarfile

        with tarfile.open(archive, "w:xz", preset=9) as t:
            t.add(tree, arcname="site")


def split(archive: Path, part_bytes: int, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    parts = []
    with archive.open("rb") as f:
        while chunk := f.read(part_bytes):
            part = dest / f"{PART_PREFIX}{len(parts):02d}"
            part.write_bytes(chunk)
            parts.append(part)
    return parts


def sha256sums(files: Iterable[Path]) -> str:
    """The lines `sha256sum` writes (and `sha256sum -c` reads) for these files."""
    return "".join(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}\n" for f in sorted(files))


# ---- 5. one folder per transfer -------------------------------------------------------------------


def lay_out(parts: list[Path], out: Path, manifest: str, extra: Iterable[Path] = ()) -> list[Path]:
    """OUT/p1..pN, each with its part, SHA256SUMS, BUNDLE.txt and offline_install.sh; `extra` in the last."""
    for old in out.glob("p[0-9]*"):
        shutil.rmtree(old)
    sums = sha256sums(parts)
    dirs = []
    for i, part in enumerate(parts, 1):
        d = out / f"p{i}"
        d.mkdir(parents=True)
        shutil.copy2(part, d / part.name)
        (d / "SHA256SUMS").write_text(sums)
        (d / "BUNDLE.txt").write_text(manifest)
        shutil.copy2(NODE_SCRIPT, d / NODE_SCRIPT.name)
        dirs.append(d)
    for f in extra:
        shutil.copy2(f, dirs[-1] / f.name)
    return dirs


def trimmed_what(dropped: list[str]) -> str:
    """The TRIM patterns that matched something, for the manifest."""
    hit = [p for ps in TRIM.values() for p in ps if any(_dropped(d, (p,)) for d in dropped)]
    return " ".join(hit) or "-"


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", default="3.12", help="the node's Python (default 3.12)")
    p.add_argument("--torch", default="2.11.0", help="the node's torch version (default 2.11.0)")
    p.add_argument("--cuda", default="cu130", help="the node's torch CUDA flavour (default cu130)")
    p.add_argument("--part-mib", type=float, default=55, help="size of each part (default 55 MiB)")
    p.add_argument("--out", type=Path, default=ROOT / ".whl", help="where p1, p2, ... go (default .whl)")
    p.add_argument("--vllm", help="skip the pick: use this vLLM release")
    p.add_argument("--pins", type=Path, help="pins file (default offline_bundle_pins/vllm-<version>.txt)")
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "offline-bundle", help="scratch space")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    try:
        return build(a)
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"{e.cmd} failed ({e.returncode}): {e.stderr or 'see above'}") from None


def build(a: argparse.Namespace) -> int:
    t0 = time.time()
    print(f"target: Python {a.python}, torch {a.torch}+{a.cuda}", flush=True)
    version = a.vllm
    if not version:
        version, table = find_vllm(a.torch, a.python)
        if not version:
            raise SystemExit(f"no vLLM release pins torch=={a.torch} (seen: {table})")
    print(f"vllm {version} pins torch {a.torch}", flush=True)
    pins_file = a.pins or PINS_DIR / f"vllm-{version}.txt"
    if not pins_file.exists():
        raise SystemExit(f"{pins_file} is missing: make it as docs/deploy.md ('Air-gapped GPU nodes') says")
    pins, fallbacks = read_pins(pins_file)
    wheels = download(pins, a.work / "whl", a.python)
    extra = download(fallbacks, a.work / "extra", a.python) if fallbacks else []
    (vllm_whl,) = [w for w in wheels if w.name.startswith("vllm-")]
    linked, want = linked_cuda_major(vllm_whl), cuda_major(a.cuda)
    if linked != want:
        raise SystemExit(f"{vllm_whl.name} links libcudart.so.{linked}, the node's torch is CUDA {want}")
    print(f"downloaded {len(wheels)} wheels ({mib(sum(w.stat().st_size for w in wheels))}), "
          f"vllm kernels link CUDA {linked}; {time.time() - t0:.0f} s", flush=True)  # fmt: skip
    trimmed, dropped = trim_all(wheels, a.work / "trimmed")
    unpack_wheels(trimmed, a.work / "site", a.python)
    tree = tree_bytes(a.work / "site")
    archive = a.work / "site.tar.xz"
    pack(a.work / "site", archive)
    print(f"tree {mib(tree)} -> {mib(archive.stat().st_size)} xz; {time.time() - t0:.0f} s", flush=True)
    shutil.rmtree(a.work / "parts", ignore_errors=True)
    parts = split(archive, int(a.part_mib * 2**20), a.work / "parts")
    manifest = (
        f"target: Python {a.python}, torch {a.torch}+{a.cuda}\nvllm {version} (pins {pins_file.name})\n"
        f"parts: {len(parts)}, archive {archive.stat().st_size} bytes, tree {tree} bytes\n"
        f"fallbacks: {' '.join(fallbacks) or '-'}\ntrimmed: {len(dropped)} files ({trimmed_what(dropped)})\n"
        + "".join(f"{p}\n" for p in pins)
    )
    dirs = lay_out(parts, a.out, manifest, extra)
    for d in dirs:
        print(f"  {d}: {mib(tree_bytes(d))}")
    print(f"{len(dirs)} parts in {a.out} in {time.time() - t0:.0f} s: send {a.out}/p1, then p2, ...; "
          f"on the node: bash p1/offline_install.sh stash p1, ...", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
