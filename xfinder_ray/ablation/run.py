"""The ablation job (`xfinder-ray ablate`): read once, fan out, compare, report.

    inventory -> read (+ labels) -> validate -> fan out -> records/ (one Ray Data pass)
              -> judgments/<extractor>__<comparator>/, rejects/, comparison/, review/, figures/,
                 report.html -> manifest.json (written last: the commit marker)

The Ray pass writes one wide Parquet table (records/); everything after it reads that table on the
driver, since every comparison needs all rows of every extractor side by side. Every input row is
accounted for: for each extractor, input = judged + rejected (validation rejects plus that
extractor's own failures), checked before anything is committed.

xFinder extractors (`xfinder:<label>`, ablation/model.py) run before the fan-out, on the valid rows
only: valid rows -> [prompt -> vLLM] per xFinder extractor -> union with the rejected rows -> fan out.
Each xFinder extractor after the first starts on the previous one's materialized output, so two
engines never hold the same CPUs/GPUs at once and no model runs twice on a row. One whose model
folder is not on disk is skipped with a note (manifest `skipped_extractors`, log, report).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from xfinder_ray.ablation import compare, figures, model, report
from xfinder_ray.ablation.config import AblationJobConfig, as_dict
from xfinder_ray.ablation.fanout import (
    error_col,
    extracted_col,
    fanout_batch,
    judgment_col,
    wide_schema,
)
from xfinder_ray.ablation.source import LabelledSource
from xfinder_ray.extractors import extractor_identity
from xfinder_ray.records import FIELDS
from xfinder_ray.resume import OutputExists
from xfinder_ray.stages.aggregate import write_table
from xfinder_ray.stages.inventory import take_inventory
from xfinder_ray.stages.read import InputSource, read_input
from xfinder_ray.stages.validate import validate_batch
from xfinder_ray.storage import Location, exists, remove_tree, resolve, write_bytes_atomic, write_json_atomic

log = logging.getLogger("xfinder_ray")


class CountMismatch(RuntimeError):
    pass


@dataclass
class AblationResult:
    manifest: dict[str, Any]
    output: str
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)


def combo_name(extractor: str, comparator: str) -> str:
    return f"{figures.slug(extractor)}__{figures.slug(comparator)}"


def prepare_output(out: Location, overwrite: bool) -> None:
    if exists(out) and out.fs.get_file_info(out.path).type.name == "Directory":
        from pyarrow.fs import FileSelector

        if out.fs.get_file_info(FileSelector(out.path)):
            if not overwrite:
                raise OutputExists(f"{out.uri} is not empty; set output.overwrite=true to replace it")
            remove_tree(out)
    out.fs.create_dir(out.path, recursive=True)


def model_extractors(cfg: AblationJobConfig) -> tuple[list[str], dict[str, Any], list[dict[str, str]]]:
    """The extractors that will run, the settings of the xFinder ones, and those skipped (model not on
    disk) with the reason."""
    a = cfg.ablation
    run, models, skipped = [], {}, []
    for e in a.extractors:
        if model.is_model_extractor(e):
            x = model.settings(a, e)
            reason = model.missing_model(x)
            if reason is not None:
                skipped.append({"extractor": e, "reason": reason})
                log.warning("ablation: skipping %s: %s", e, reason)
                continue
            models[e] = x
        run.append(e)
    if not run:
        raise FileNotFoundError(
            "no extractor left to run: " + "; ".join(f"{s['extractor']}: {s['reason']}" for s in skipped)
        )
    return run, models, skipped


def model_outputs(rows: Any, models: dict[str, Any], batch_size: int) -> Any:
    """checked rows -> the same rows with every xFinder extractor's columns; only valid rows reach a
    model (rejected rows take a separate branch and get the columns null)."""
    names = list(models)
    valid = rows.map_batches(model.valid_rows, batch_format="pyarrow")
    for i, name in enumerate(names):
        if i:  # one engine at a time: the previous model's output is computed (and kept) first
            valid = valid.materialize()
        valid = model.model_stage(name, models[name], batch_size)(valid)
    rejected = rows.map_batches(model.rejected_rows, batch_format="pyarrow", fn_kwargs=dict(extractors=names))
    return valid.union(rejected)


def fan_out(
    cfg: AblationJobConfig,
    out: Location,
    extractors: list[str] | None = None,
    models: dict[str, Any] | None = None,
) -> tuple[pd.DataFrame, int, list[dict[str, str]]]:
    """The Ray Data pass; returns the wide table (sorted by input position), the input row count and
    the input files skipped as unreadable."""
    from xfinder_ray.pipeline import unwrap_bad_file

    a = cfg.ablation
    extractors = list(a.extractors) if extractors is None else extractors
    models = models or {}
    inventory = take_inventory(cfg.input, cfg.storage)
    columns = dict(cfg.input.columns)
    if a.labels == "auto":
        source: InputSource = LabelledSource(inventory, columns, cfg.input.on_bad_file)
    else:
        source = InputSource(inventory, columns, {}, cfg.input.on_bad_file)
    rows = read_input(source)
    records = out.join("records")
    schema = wide_schema(extractors, a.comparators)
    if rows is not None:
        batch = cfg.ray.batch_size
        checked = rows.map_batches(validate_batch, batch_format="pandas", batch_size=batch)
        if models:
            checked = model_outputs(checked, models, batch)
        wide = checked.map_batches(
            fanout_batch,
            batch_format="pandas",
            batch_size=batch,
            fn_kwargs=dict(extractors=extractors, comparators=list(a.comparators)),
        )
        try:
            wide.write_parquet(records.path, filesystem=records.fs)
        except Exception as e:
            raise unwrap_bad_file(e) from e
    parts = [p for p in _parquet_files(records)]
    table = pq.read_table(parts, filesystem=records.fs, schema=schema) if parts else schema.empty_table()
    df = table.to_pandas(types_mapper=None).sort_values(["source_file", "source_row"], kind="stable")
    skipped = [{"file": f.uri, "error": f.error or ""} for f in inventory.files if f.error is not None]
    return df.reset_index(drop=True), inventory.n_rows, skipped


def _parquet_files(loc: Location) -> list[str]:
    from pyarrow.fs import FileSelector, FileType

    if not exists(loc):
        return []
    infos = loc.fs.get_file_info(FileSelector(loc.path, recursive=True))
    return sorted(i.path for i in infos if i.type == FileType.File and i.path.endswith(".parquet"))


def reconcile(
    wide: pd.DataFrame, n_input: int, extractors: list[str], comparators: list[str]
) -> dict[str, Any]:
    """Counts per extractor; raises CountMismatch unless input = judged + rejected for each one."""
    positions = wide[["source_file", "source_row"]].drop_duplicates()
    if not (len(wide) == len(positions) == n_input):
        raise CountMismatch(
            f"record counts do not reconcile: input={n_input}, rows out of the fan-out={len(wide)} "
            f"({len(positions)} distinct positions); output not committed"
        )
    invalid = wide["reject_reason"].notna()
    per: dict[str, dict[str, int]] = {}
    for e in extractors:
        judged = wide[extracted_col(e)].notna()
        errors = wide[error_col(e)].notna()
        for c in comparators:
            if int(wide[judgment_col(e, c)].notna().sum()) != int(judged.sum()):
                raise CountMismatch(f"{e} x {c}: judgments do not match extractions; output not committed")
        n_j, n_r = int(judged.sum()), int(invalid.sum()) + int(errors.sum())
        if n_j + n_r != n_input:
            raise CountMismatch(
                f"{e}: input={n_input} != judged={n_j} + rejected={n_r}; output not committed"
            )
        per[e] = {"judged": n_j, "rejected": n_r, "extraction_errors": int(errors.sum())}
    return {
        "input": n_input,
        "valid": int((~invalid).sum()),
        "rejected_by_validation": int(invalid.sum()),
        "per_extractor": per,
    }


def write_judgments(
    out: Location, wide: pd.DataFrame, extractors: list[str], comparators: list[str]
) -> dict[str, int]:
    labelled_tags = "tags" in wide and wide["tags"].notna().any()
    written = {}
    for e in extractors:
        judged = wide[wide[extracted_col(e)].notna()]
        for c in comparators:
            df = pd.DataFrame(
                {
                    "record_id": judged["record_id"],
                    "model": judged["model"],
                    "task": judged["task"],
                    "key_answer_type": judged["key_answer_type"],
                    "correct_answer": judged["correct_answer"],
                    "extracted": judged[extracted_col(e)],
                    "judgment": judged[judgment_col(e, c)].astype(bool),
                    "extractor": e,
                    "comparator": c,
                    "source_file": judged["source_file"],
                    "source_row": judged["source_row"],
                }
            )
            if labelled_tags:
                df["tags"] = judged["tags"]
            if model.is_model_extractor(e):
                df["raw_output"] = judged[model.raw_col(e)]
                df["logprob"] = judged[model.logprob_col(e)].astype(float)
            write_table(out.join("judgments", combo_name(e, c)), "part-0", df, csv=False)
            written[f"{e}|{c}"] = len(df)
    return written


def write_rejects(out: Location, wide: pd.DataFrame, extractors: list[str]) -> int:
    """rejects/rejects.parquet: validation rejects (extractor null: rejected for every extractor) and
    each extractor's own failures, with the original fields, the reason and the position."""
    keep = [*FIELDS, "source_file", "source_row"]
    invalid = wide[wide["reject_reason"].notna()]
    parts = [invalid[keep].assign(reason=invalid["reject_reason"], extractor=None)]
    for e in extractors:
        failed = wide[wide[error_col(e)].notna()]
        parts.append(failed[keep].assign(reason="extraction failed: " + failed[error_col(e)], extractor=e))
    rejects = pd.concat(parts, ignore_index=True)
    rejects["extractor"] = rejects["extractor"].astype(object)
    write_table(out.join("rejects"), "rejects", rejects, csv=False)
    return len(rejects)


def run_ablation(cfg: AblationJobConfig) -> AblationResult:
    """Run the whole job on an initialised Ray; returns the manifest (also written, last)."""
    from xfinder_ray.pipeline import package_versions

    started = time.time()
    a = cfg.ablation
    comparators, primary = list(a.comparators), cfg.primary
    extractors, models, skipped_extractors = model_extractors(cfg)
    out = resolve(cfg.output.path, cfg.storage)
    prepare_output(out, cfg.output.overwrite)
    identities = {e: model.identity(models[e]) if e in models else extractor_identity(e) for e in extractors}

    wide, n_input, skipped = fan_out(cfg, out, extractors, models)
    counts = reconcile(wide, n_input, extractors, comparators)
    judgments = write_judgments(out, wide, extractors, comparators)
    n_rejects = write_rejects(out, wide, extractors)

    # comparison/
    cmp_loc = out.join("comparison")
    accuracy = compare.accuracy_table(wide, extractors, comparators)
    summary = accuracy.groupby(["extractor", "comparator"], sort=False)[["n", "correct"]].sum().reset_index()
    summary["accuracy"] = summary["correct"] / summary["n"]
    agreement = compare.agreement_table(wide, extractors, comparators)
    ranks = compare.rank_table(accuracy)
    taus = compare.tau_table(ranks, extractors)
    flips = compare.rank_flips(ranks, extractors, a.flips_limit)
    labelled = bool(wide["gold_key_answer"].notna().any()) if len(wide) else False
    tables = {
        "accuracy": accuracy,
        "summary": summary,
        "agreement": agreement,
        "ranks": ranks,
        "kendall_tau": taus,
        "rank_flips": flips,
    }
    lab = None
    if labelled:
        lab = compare.labelled_accuracy(wide, extractors, comparators)
        tables["labelled_accuracy"] = lab
    for name, df in tables.items():
        write_table(cmp_loc, name, df)

    review = compare.review_table(wide, extractors, primary, a.review_limit)
    write_table(out.join("review"), "review", review, csv=False)
    low = compare.low_confidence_table(wide, list(models), primary, a.low_confidence_limit)
    if models:
        write_table(out.join("review"), "low_confidence", low, csv=False)

    # figures/ and report.html (paths relative to the report)
    fig_loc = out.join("figures")
    matrix = compare.agreement_matrix(agreement, primary, extractors)
    pngs: dict[str, tuple[str, bytes]] = {}
    if len(accuracy):
        pngs["Model ranks per extractor (bump chart)"] = (
            "bump_ranks.png",
            figures.bump_chart(ranks, extractors, primary),
        )
        pngs["Judgment agreement between extractors"] = (
            "agreement.png",
            figures.agreement_heatmap(matrix, primary),
        )
        for e in extractors:
            pngs[f"Accuracy, models x tasks: {e}"] = (
                f"accuracy__{figures.slug(e)}.png",
                figures.accuracy_heatmap(accuracy, e, primary),
            )
        for e in models:
            pngs[f"Confidence: log-probability of the raw output, {e}"] = (
                f"logprob__{figures.slug(e)}.png",
                figures.logprob_histogram(wide, e, primary),
            )
    for name, data in pngs.values():
        write_bytes_atomic(fig_loc.join(name), data)
    count_rows = pd.DataFrame(
        [{"extractor": e, "input": n_input, **v} for e, v in counts["per_extractor"].items()]
    )
    lab_view = None
    if lab is not None:
        lab_view = lab[(lab["comparator"] == primary) & (lab["group_by"] != "tag")].drop(
            columns=["comparator"]
        )
    page = report.render(
        title=f"xfinder-ray ablation: {len(extractors)} extractors x {len(comparators)} comparators",
        counts=count_rows,
        overall=summary,
        agreement=matrix,
        taus=taus,
        flips=flips,
        labelled=lab_view,
        figures={caption: f"figures/{name}" for caption, (name, _) in pngs.items()},
        primary=primary,
        skipped=skipped_extractors,
        low_confidence=low if models else None,
        low_confidence_limit=a.low_confidence_limit,
    )
    write_bytes_atomic(out.join("report.html"), page.encode("utf-8"))

    wall = time.time() - started
    manifest = {
        "status": "committed",
        "counts": counts,
        "judgments": judgments,
        "rejects_rows": n_rejects,
        "review_rows": len(review),
        "low_confidence_rows": len(low) if models else None,
        "labelled": labelled,
        "skipped_files": skipped,
        "extractors": identities,
        "skipped_extractors": skipped_extractors,
        "notes": [f"skipped {s['extractor']}: {s['reason']}" for s in skipped_extractors],
        "comparators": comparators,
        "primary_comparator": primary,
        "outputs": {
            "records": "records/",
            "judgments": {
                f"{e}|{c}": f"judgments/{combo_name(e, c)}/" for e in extractors for c in comparators
            },
            "rejects": "rejects/rejects.parquet",
            "comparison": sorted(f"comparison/{n}.{{parquet,csv}}" for n in tables),
            "review": "review/review.parquet",
            "low_confidence": "review/low_confidence.parquet" if models else None,
            "figures": sorted(f"figures/{name}" for name, _ in pngs.values()),
            "report": "report.html",
        },
        "wall_time_s": round(wall, 3),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "versions": package_versions(),
        "config": as_dict(cfg),
    }
    # commit: readers trust an output only once manifest.json exists, so it is written last.
    write_json_atomic(out.join("manifest.json"), manifest)
    return AblationResult(manifest, out.uri, summary)
