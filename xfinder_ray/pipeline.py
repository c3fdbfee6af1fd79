"""The scoring job, end to end:

    inventory -> read -> validate -> [route] -> prompt -> [cache] -> extract -> parse+judge
              -> [second opinion] -> write
              -> verify + aggregate (accuracy/, leaderboard.md) -> commit (manifest.json, written last)

Each arrow is one stage in xfinder_ray/stages/. Everything streams through Ray Data; the driver
holds counters and the inventory. Rejected rows travel with the others and are split off only by
the writer, so `input = judged + rejected` is checked on what was actually written. A rerun of an
unfinished job reads only the rows not yet written (xfinder_ray/resume.py); model extractions are
cached by content across runs (stages/cache.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import ray

from xfinder_ray.config import JobConfig, redacted
from xfinder_ray.diff import compare_after_commit, resolve_compare_to
from xfinder_ray.job import (
    CountMismatch,
    commit,
    import_inputs,
    is_import_format,
    package_versions,
    retry_storage_errors_in_map_tasks,
    unwrap_bad_file,
    utc,
)
from xfinder_ray.preflight import uses_model
from xfinder_ray.report import write_report
from xfinder_ray.resume import OutputExists, open_output, written_positions
from xfinder_ray.stages.aggregate import build_tables, compare_models, count_outcomes, write_tables
from xfinder_ray.stages.cache import lookup_batch
from xfinder_ray.stages.extract import (
    ExtractStage,
    build_extract_stage,
    extract_stats,
    falls_back_to_rules,
)
from xfinder_ray.stages.inventory import BadInputFile, Inventory, take_inventory
from xfinder_ray.stages.judge import judge_batch
from xfinder_ray.stages.prompt import prompt_batch
from xfinder_ray.stages.read import InputSource, read_input, read_stats
from xfinder_ray.stages.route import route_batch
from xfinder_ray.stages.second_opinion import SecondOpinion, build_second_opinion, second_opinion_stats
from xfinder_ray.stages.validate import validate_batch
from xfinder_ray.stages.write import OutputSink
from xfinder_ray.storage import Location, resolve

log = logging.getLogger("xfinder_ray")
__all__ = ["BadInputFile", "CountMismatch", "JobResult", "OutputExists", "run"]


@dataclass
class JobResult:
    manifest: dict[str, Any]
    leaderboard: str
    output: str
    notes: list[str] = field(default_factory=list)


def choose_extractor(cfg: JobConfig) -> tuple[JobConfig, list[str]]:
    """Apply the embedded default's fallback: xfinder only when its checkpoint is on disk."""
    notes: list[str] = []
    if falls_back_to_rules(cfg):
        notes.append(
            f"xFinder checkpoint not found at {cfg.xfinder.model_source!r}; using the model-free `rules` "
            "extractor instead (set xfinder.model_source to a downloaded checkpoint to use xFinder)."
        )
        cfg.extractor.name = "rules"
    return cfg, logged(notes)


JOB_NOTE = "job_note"  # set on the log records of the job's notes: the CLI prints those itself (NOTE:)


def logged(notes: list[str]) -> list[str]:
    """The job's notes, logged as they arise (for the API and `ray job submit` logs)."""
    for note in notes:
        log.warning(note, extra={JOB_NOTE: True})
    return notes


def job_device(cfg: JobConfig) -> str | None:
    """cpu | gpu for a model extractor, resolved once on the driver; None for record-level ones."""
    if not uses_model(cfg):
        return None
    from xfinder_ray.extractors.vllm import resolve_device

    return resolve_device(cfg.xfinder.device)


def cache_root(cfg: JobConfig, out: Location) -> Location | None:
    """Where extraction caches live; None when off or for `rules` (it costs less than a lookup)."""
    if not uses_model(cfg) or not cfg.cache.enabled:
        return None
    return resolve(cfg.cache.path, cfg.storage) if cfg.cache.path else out.join("extraction_cache")


def extraction_identity(extract: ExtractStage) -> dict[str, Any]:
    """Everything besides the prompt that decides an extraction."""
    return extract.settings or {"extractor": extract.identity}


def job_fingerprint(
    cfg: JobConfig, inventory: Inventory, extract: ExtractStage, second: SecondOpinion | None = None
) -> dict[str, Any]:
    """What an unfinished output must have been made from for a rerun to continue it."""
    fingerprint = {
        "input": inventory.fingerprint(),
        "columns": dict(cfg.input.columns),
        "extraction": extraction_identity(extract),
        "comparator": cfg.judge.comparator,
    }
    if second is not None:
        fingerprint["second_opinion"] = {"judge": second.identity, "decides": second.decides}
    return fingerprint


def run(cfg: JobConfig) -> JobResult:
    """The scoring job: import -> inventory -> open the output -> the stage chain -> verify and
    aggregate -> commit (manifest.json, written last)."""
    started = time.time()
    retry_storage_errors_in_map_tasks()
    cfg, notes = choose_extractor(cfg)
    out = resolve(cfg.output.path, cfg.storage)
    old = resolve_compare_to(cfg.output.compare_to, cfg.output.path, cfg.storage)  # checked before any work
    device = job_device(cfg)
    extract = build_extract_stage(cfg, device, cache_root(cfg, out))
    second, why_not = build_second_opinion(cfg, device)
    notes += logged(why_not)  # logged as it arises, like the job's other notes
    input_cfg, imported = import_inputs(cfg, out)
    inventory = take_inventory(input_cfg, cfg.storage)  # rows per file, read shards, duplicates, bad files
    notes += logged(inventory.notes)  # folders left out of the input listing (a run's own outputs)
    fingerprint = job_fingerprint(cfg, inventory, extract, second)
    progress = open_output(out, fingerprint, overwrite=cfg.output.overwrite, resume=cfg.output.resume)
    sink = OutputSink(
        out.join("judgments"),
        out.join("rejects"),
        extract.identity,
        cfg.judge.comparator,
        extract.cache,
        stage_stats(cfg, extract, second),
    )
    score_rows(cfg, inventory, progress, extract, sink, second)
    by_task, by_model, comparison = aggregate(cfg, out, imported)
    notes += comparison.notes  # a question with two gold answers (accuracy/conflicts.parquet)
    board = write_tables(
        out.join("accuracy"), by_task, by_model, extract.identity, comparison, cfg.aggregate.rejects
    )
    write_report(out, by_task, by_model, extract.identity, cfg.judge.comparator, old, notes, comparison)
    n_judged = reconcile(out, inventory, by_task)
    manifest = build_manifest(cfg, out, extract, inventory, progress, sink, n_judged, notes, started, second)
    commit(out, manifest)
    notes = notes + compare_after_commit(old, out, cfg.storage, cfg.output.compare_to)  # diff.md, diff/
    return JobResult(manifest, board, out.uri, notes)


def stage_stats(cfg: JobConfig, extract: ExtractStage, second: SecondOpinion | None = None) -> dict[str, Any]:
    """The stages this job runs, in order, with what each counts (over the rows written)."""
    stats: dict[str, Any] = {"read": read_stats, "validate": validate_batch.stats}
    if extract.needs_prompt:
        if cfg.extractor.router == "strict":
            stats["route"] = route_batch.stats
        stats.update(prompt=prompt_batch.stats, cache=lookup_batch.stats)
    stats.update(extract=extract_stats, judge=judge_batch.stats)
    if second is not None:
        stats["second_opinion"] = second_opinion_stats
    return stats


def score_rows(
    cfg: JobConfig,
    inventory: Inventory,
    progress: Any,
    extract: ExtractStage,
    sink: OutputSink,
    second: SecondOpinion | None = None,
) -> None:
    """read -> validate -> [route, prompt, cache] -> extract -> parse + judge -> [second opinion] ->
    write, for the rows not done by an earlier run of the same job."""
    batch = cfg.ray.batch_size
    group = extract.needs_prompt and cfg.xfinder.group_by_question  # only the model gains from the order
    rows = read_input(
        InputSource(inventory, dict(cfg.input.columns), progress.done, cfg.input.on_bad_file, group)
    )
    if rows is None:
        return
    checked = rows.map_batches(validate_batch, batch_format="pandas", batch_size=batch)
    extracted = extract_rows(cfg, extract, checked)
    judged = extracted.map_batches(
        judge_batch,
        batch_format="pandas",
        batch_size=batch,
        fn_kwargs=dict(math=cfg.judge.comparator, parse=extract.needs_parse, verifier=extract.verifier),
    )
    if second is not None:
        judged = second.apply(judged)
    try:
        judged.write_datasink(sink)
    except Exception as e:
        raise unwrap_bad_file(e) from e


def aggregate(cfg: JobConfig, out: Location, imported: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """The accuracy tables from everything written (this run and before: judged and rejected, under
    `aggregate.rejects`), the paired tests and rank intervals; for imported framework outputs, the
    framework's own accuracy over the same judged records beside ours."""
    import_rejects = out.join("_imported", "_import") if imported else None
    outcomes = count_outcomes(out.join("judgments"), out.join("rejects"), import_rejects)
    by_task, by_model = build_tables(outcomes, cfg.aggregate.rejects)
    a = cfg.aggregate
    comparison = compare_models(outcomes, by_model, a.rejects, a.bootstrap, a.seed)
    if imported:
        from xfinder_ray.importers import add_source_accuracy, source_accuracy

        src = source_accuracy(out.join("judgments"), imported, cfg.storage)
        by_task, by_model = add_source_accuracy(by_task, by_model, src)
    return by_task, by_model, comparison


def reconcile(out: Location, inventory: Inventory, by_task: pd.DataFrame) -> int:
    """Input = judged + rejected, by distinct input position, or CountMismatch (nothing committed).
    Returns the number judged."""
    positions, n_written = written_positions(out)
    n_input = inventory.n_rows
    n_judged = int(by_task["judged"].sum()) if len(by_task) else 0
    n_positions = sum(len(v) for v in positions.values())
    if not (n_input == n_written == n_positions):
        raise CountMismatch(
            f"record counts do not reconcile: input={n_input}, written={n_written} "
            f"({n_positions} distinct input positions), judged={n_judged}; output not committed"
        )
    return n_judged


def build_manifest(
    cfg: JobConfig,
    out: Location,
    extract: ExtractStage,
    inventory: Inventory,
    progress: Any,
    sink: OutputSink,
    n_judged: int,
    notes: list[str],
    started: float,
    second: SecondOpinion | None = None,
) -> dict[str, Any]:
    """manifest.json: counts, resume and cache figures, identities, redacted config, versions, time."""
    n_input = inventory.n_rows
    wall = time.time() - started
    manifest = {
        "status": "committed",
        "counts": {"input": n_input, "judged": n_judged, "rejected": n_input - n_judged},
        "duplicates_rejected": sum(len(v) for v in inventory.duplicates.values()),
        "skipped_files": inventory.skipped,
        "resume": progress.figures(n_input),
        "cache": {
            "path": extract.cache.uri if extract.cache is not None else None,
            "hits": sink.counts["cache_hits"],
            "misses": sink.counts["cache_misses"],
        },
        "router": {
            "mode": cfg.extractor.router,
            "routed": sink.counts["routed"],
            "share": round(sink.counts["routed"] / n_judged, 4) if n_judged else 0.0,
        },
        "stages": sink.stage_counts,  # per stage, over this run's written rows (stages/rows.py)
        "second_opinion": None
        if second is None
        else {
            "judge": second.identity,
            "decides": second.decides,
            **sink.stage_counts.get("second_opinion", {}),
        },
        "extractor": extract.identity,
        "comparator": cfg.judge.comparator,
        "notes": notes,
        "wall_time_s": round(wall, 3),
        "records_per_s": round((n_input - progress.rows_done) / wall, 2) if wall else None,
        "started_at": utc(started),
        "versions": package_versions(),
        "config": redacted(cfg),
    }
    if is_import_format(cfg.input.format):
        # What the import read, wrote, rejected (_imported/_import/rejects.parquet) and skipped.
        from xfinder_ray.storage import read_json

        report = read_json(out.join("_imported", "_import", "report.json"))
        keep = (
            "framework",
            "read",
            "written",
            "rejected",
            "skipped",
            "skipped_tasks",
            "reject_reasons",
            "rejects",
        )
        manifest["import"] = {k: report[k] for k in keep}
    return manifest


def extract_rows(cfg: JobConfig, extract: ExtractStage, checked: ray.data.Dataset) -> ray.data.Dataset:
    """Rows -> + raw_output. With the strict router, rows it settles skip the model extractor."""
    if extract.needs_prompt and cfg.extractor.router == "strict":
        checked = checked.map_batches(route_batch, batch_format="pandas", batch_size=cfg.ray.batch_size)
    return extract.apply(checked)
