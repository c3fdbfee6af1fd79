"""Vendor the openAPIV3Schema of KubeRay CRDs for tests/cpu/test_cluster_configs.py.

    python tests/data/kuberay/vendor_crd_schemas.py v1.7.0                  # from GitHub (raw files)
    python tests/data/kuberay/vendor_crd_schemas.py v1.7.0 --git KUBERAY_GIT_DIR   # from a local clone

Writes tests/data/kuberay/<tag>/<plural>.ray.io.<version>.json (compact, keys sorted) for every
version each CRD serves, plus sources.json (source path, tag, commit where known, sha256 of each CRD
file, and the operator Helm chart's default featureGates, which cluster/kuberay/operator-values.yaml
must repeat). The schemas are copied verbatim: the test maps the x-kubernetes-* extensions itself.
After bumping the tag, update KUBERAY_VERSION in the test and the chart version in docs/deploy.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import yaml

CRDS = ("rayclusters", "rayjobs", "raycronjobs")
CRD_DIR = "ray-operator/config/crd/bases"
CHART_VALUES = "helm-chart/kuberay-operator/values.yaml"
RAW = "https://raw.githubusercontent.com/ray-project/kuberay/{tag}/{path}"


def read_file(tag: str, path: str, git_dir: str | None) -> bytes | None:
    if git_dir:
        r = subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{path}"], capture_output=True)
        return r.stdout if r.returncode == 0 else None
    try:
        with urllib.request.urlopen(RAW.format(tag=tag, path=path), timeout=60) as f:
            return f.read()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tag", help="KubeRay release tag, e.g. v1.7.0")
    ap.add_argument("--git", dest="git_dir", help="a local clone of ray-project/kuberay (else: download)")
    args = ap.parse_args()

    out = Path(__file__).resolve().parent / args.tag
    out.mkdir(parents=True, exist_ok=True)
    commit = None
    if args.git_dir:
        commit = subprocess.run(
            ["git", "-C", args.git_dir, "rev-parse", f"{args.tag}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    sources = {"repository": "https://github.com/ray-project/kuberay", "tag": args.tag, "commit": commit}
    files = {}
    for plural in CRDS:
        path = f"{CRD_DIR}/ray.io_{plural}.yaml"
        raw = read_file(args.tag, path, args.git_dir)
        if raw is None:
            print(f"{path}: not in {args.tag} (skipped)")
            continue
        crd = yaml.safe_load(raw)
        for v in crd["spec"]["versions"]:
            if not v.get("served", False):
                continue
            name = f"{plural}.ray.io.{v['name']}.json"
            schema = v["schema"]["openAPIV3Schema"]
            (out / name).write_text(json.dumps(schema, sort_keys=True, separators=(",", ":")) + "\n")
            files[name] = {
                "source": path,
                "source_sha256": hashlib.sha256(raw).hexdigest(),
                "kind": crd["spec"]["names"]["kind"],
                "version": v["name"],
                "storage": v.get("storage", False),
                "deprecated": v.get("deprecated", False),
            }
            print(f"wrote {out / name}")
    sources["files"] = files
    values = read_file(args.tag, CHART_VALUES, args.git_dir)
    if values is not None:
        sources["chart_values"] = CHART_VALUES
        sources["chart_default_feature_gates"] = yaml.safe_load(values).get("featureGates", [])
    (out / "sources.json").write_text(json.dumps(sources, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
