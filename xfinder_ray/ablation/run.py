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
from dataclasses import dataclass, field, replace
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
from xfinder_ray.extractors.vllm.engine import resolve_device
from xfinder_ray.job import (
    CountMismatch,
    commit,
    import_inputs,
    package_versions,
    retry_storage_errors_in_map_tasks,
    unwrap_bad_file,
    utc,
)
from xfinder_ray.records import FIELDS
from xfinder_ray.resume import Progress, open_output, part_files
from xfinder_ray.stages.aggregate import write_table
from xfinder_ray.stages.inventory import Inventory, take_inventory
from xfinder_ray.stages.read import InputSource, read_input
from xfinder_ray.stages.validate import validate_batch
from xfinder_ray.stages.write import PartsSink
from xfinder_ray.storage import Location, resolve, write_bytes_atomic

log = logging.getLogger("xfinder_ray")


@dataclass
class AblationResult:
    manifest: dict[str, Any]
    output: str
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)


def combo_name(extractor: str, comparator: str) -> str:
    return f"{figures.slug(extractor)}__{figures.slug(comparator)}"


RECORDS = "records"  # the Ray pass's output: the checkpoint a rerun continues from
DERIVED = ("judgments", "rejects", "comparison", "review", "figures")  # rebuilt from records/


def ablation_fingerprint(
    cfg: AblationJobConfig, inventory: Inventory, extractors: list[str], models: dict[str, Any]
) -> dict[str, Any]:
    """What an unfinished ablation output must have been made from for a rerun to continue it."""
    return {
        "input": inventory.fingerprint(),
        "columns": dict(cfg.input.columns),
        "extractors": manifest_extractors(extractors, models, cfg.storage),
        "comparators": list(cfg.ablation.comparators),
        "labels": cfg.ablation.labels,
    }


def manifest_extractors(extractors: list[str], models: dict[str, Any], storage: Any = None) -> dict[str, str]:
    """Each extractor's identity string."""
    return {
        e: model.identity(models[e], storage) if e in models else extractor_identity(e) for e in extractors
    }


def model_extractors(cfg: AblationJobConfig) -> tuple[list[str], dict[str, Any], list[dict[str, str]]]:
    """The extractors that will run, the settings of the xFinder ones, and those skipped (model not on
    disk) with the reason."""
    a = cfg.ablation
    run, models, skipped = [], {}, []
    for e in a.extractors:
        if model.is_model_extractor(e):
            m = model.column_settings(a, e)
            reason = model.missing_model(m)
            if reason is not None:
                skipped.append({"extractor": e, "reason": reason})
                log.warning("ablation: skipping %s: %s", e, reason)
                continue
            models[e] = m.on(resolve_device(m.device))  # once, on the driver
        run.append(e)
    if not run:
        raise FileNotFoundError(
            "no extractor left to run: " + "; ".join(f"{s['extractor']}: {s['reason']}" for s in skipped)
        )
    return run, models, skipped


def model_outputs(rows: Any, models: dict[str, Any], batch_size: int | None, storage: Any = None) -> Any:
    """checked rows -> the same rows with every xFinder extractor's columns; only valid rows reach a
    model (rejected rows take a separate branch and get the columns null)."""
    names = list(models)
    valid = rows.map_batches(model.valid_rows, batch_format="pyarrow")
    for i, name in enumerate(names):
        if i:  # one engine at a time: the previous model's output is computed (and kept) first
            valid = valid.materialize()
        valid = model.model_stage(name, models[name], batch_size, storage)(valid)
    rejected = rows.map_batches(model.rejected_rows, batch_format="pyarrow", fn_kwargs=dict(extractors=names))
    return valid.union(rejected)


def fan_out(
    cfg: AblationJobConfig,
    out: Location,
    inventory: Inventory,
    progress: Progress,
    extractors: list[str],
    models: dict[str, Any],
) -> tuple[pd.DataFrame, int, list[dict[str, str]]]:
    """The Ray Data pass over the rows an earlier run of the same ablation did not write; returns the
    wide table of all rows (sorted by input position), the input row count and the input files
    skipped as unreadable."""
    a = cfg.ablation
    columns = dict(cfg.input.columns)
    if a.labels == "auto":
        source: InputSource = LabelledSource(inventory, columns, cfg.input.on_bad_file, progress.done)
    else:
        source = InputSource(inventory, columns, progress.done, cfg.input.on_bad_file)
    rows = read_input(source)
    records = out.join(RECORDS)
    schema = wide_schema(extractors, a.comparators)
    if rows is not None:
        batch = cfg.ray.batch_size
        checked = rows.map_batches(validate_batch, batch_format="pandas", batch_size=batch)
        if models:
            checked = model_outputs(checked, models, batch, cfg.storage)
        wide = checked.map_batches(
            fanout_batch,
            batch_format="pandas",
            batch_size=batch,
            fn_kwargs=dict(extractors=extractors, comparators=list(a.comparators)),
        )
        try:
            wide.write_datasink(PartsSink(records, schema))
        except Exception as e:
            raise unwrap_bad_file(e) from e
    parts = part_files(records)
    table = pq.read_table(parts, filesystem=records.fs, schema=schema) if parts else schema.empty_table()
    df = table.to_pandas(types_mapper=None).sort_values(["source_file", "source_row"], kind="stable")
    skipped = [{"file": f.uri, "error": f.error or ""} for f in inventory.files if f.error is not None]
    return df.reset_index(drop=True), inventory.n_rows, skipped


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
    """The ablation job on an initialised Ray: [import] -> one read and fan-out (every extractor x every
    comparator per record) -> judgments and rejects -> comparison tables, review, figures, report ->
    commit (manifest.json, written last)."""
    started = time.time()
    retry_storage_errors_in_map_tasks()
    extractors, models, skipped_extractors = model_extractors(cfg)
    out = resolve(cfg.output.path, cfg.storage)
    input_cfg, _ = import_inputs(cfg, out)  # lm-eval / OpenCompass outputs, as in the scoring job
    cfg = replace(cfg, input=input_cfg)
    inventory = take_inventory(cfg.input, cfg.storage)
    progress = open_output(out, ablation_fingerprint(cfg, inventory, extractors, models), **resume_args(cfg))
    wide, n_input, skipped = fan_out(cfg, out, inventory, progress, extractors, models)
    counts = reconcile(wide, n_input, extractors, cfg.ablation.comparators)
    judgments = write_judgments(out, wide, extractors, cfg.ablation.comparators)
    n_rejects = write_rejects(out, wide, extractors)
    tables = comparison_tables(cfg, out, wide, extractors)
    review, low = review_tables(cfg, out, wide, extractors, models)
    pngs = write_figures(out, tables, wide, extractors, models, cfg.primary)
    write_report(cfg, out, tables, counts, n_input, extractors, models, skipped_extractors, pngs, low)
    written = Written(judgments, n_rejects, review, low, tables, pngs)
    manifest = ablation_manifest(cfg, counts, written, skipped, extractors, models, skipped_extractors)
    manifest["resume"] = progress.figures(n_input)
    manifest.update(wall_time_s=round(time.time() - started, 3), started_at=utc(started))
    commit(out, manifest)
    return AblationResult(manifest, out.uri, tables["summary"])


def comparison_tables(
    cfg: AblationJobConfig, out: Location, wide: pd.DataFrame, extractors: list[str]
) -> dict[str, pd.DataFrame]:
    """comparison/: accuracy per model x task, a summary, agreement, ranks, Kendall tau, rank flips, and
    accuracy against labels where the input has them."""
    a, comparators = cfg.ablation, list(cfg.ablation.comparators)
    accuracy = compare.accuracy_table(wide, extractors, comparators)
    summary = accuracy.groupby(["extractor", "comparator"], sort=False)[["n", "correct"]].sum().reset_index()
    summary["accuracy"] = summary["correct"] / summary["n"]
    agreement = compare.agreement_table(wide, extractors, comparators)
    ranks = compare.rank_table(accuracy)
    tables = {
        "accuracy": accuracy,
        "summary": summary,
        "agreement": agreement,
        "ranks": ranks,
        "kendall_tau": compare.tau_table(ranks, extractors),
        "rank_flips": compare.rank_flips(ranks, extractors, a.flips_limit),
    }
    if len(wide) and bool(wide["gold_key_answer"].notna().any()):
        tables["labelled_accuracy"] = compare.labelled_accuracy(wide, extractors, comparators)
    for name, df in tables.items():
        write_table(out.join("comparison"), name, df)
    return tables


def review_tables(
    cfg: AblationJobConfig, out: Location, wide: pd.DataFrame, extractors: list[str], models: dict[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """review/: the records the extractors disagree on, and the model's least confident outputs."""
    a = cfg.ablation
    review = compare.review_table(wide, extractors, cfg.primary, a.review_limit)
    write_table(out.join("review"), "review", review, csv=False)
    low = compare.low_confidence_table(wide, list(models), cfg.primary, a.low_confidence_limit)
    if models:
        write_table(out.join("review"), "low_confidence", low, csv=False)
    return review, low


def write_figures(
    out: Location,
    tables: dict[str, pd.DataFrame],
    wide: pd.DataFrame,
    extractors: list[str],
    models: dict[str, Any],
    primary: str,
) -> dict[str, tuple[str, bytes]]:
    """figures/*.png; returns caption -> (file name, bytes) for the report."""
    matrix = compare.agreement_matrix(tables["agreement"], primary, extractors)
    pngs: dict[str, tuple[str, bytes]] = {}
    if len(tables["accuracy"]):
        pngs["Model ranks per extractor (bump chart)"] = (
            "bump_ranks.png",
            figures.bump_chart(tables["ranks"], extractors, primary),
        )
        pngs["Judgment agreement between extractors"] = (
            "agreement.png",
            figures.agreement_heatmap(matrix, primary),
        )
        for e in extractors:
            pngs[f"Accuracy, models x tasks: {e}"] = (
                f"accuracy__{figures.slug(e)}.png",
                figures.accuracy_heatmap(tables["accuracy"], e, primary),
            )
        for e in models:
            pngs[f"Confidence: log-probability of the raw output, {e}"] = (
                f"logprob__{figures.slug(e)}.png",
                figures.logprob_histogram(wide, e, primary),
            )
    for name, data in pngs.values():
        write_bytes_atomic(out.join("figures").join(name), data)
    return pngs


def write_report(
    cfg: AblationJobConfig,
    out: Location,
    tables: dict[str, pd.DataFrame],
    counts: dict[str, Any],
    n_input: int,
    extractors: list[str],
    models: dict[str, Any],
    skipped_extractors: list[dict[str, str]],
    pngs: dict[str, tuple[str, bytes]],
    low: pd.DataFrame,
) -> None:
    """report.html: one static page (figure paths relative to it)."""
    primary = cfg.primary
    count_rows = pd.DataFrame(
        [{"extractor": e, "input": n_input, **v} for e, v in counts["per_extractor"].items()]
    )
    lab = tables.get("labelled_accuracy")
    lab_view = None
    if lab is not None:
        lab_view = lab[(lab["comparator"] == primary) & (lab["group_by"] != "tag")].drop(
            columns=["comparator"]
        )
    page = report.render(
        title=f"xfinder-ray ablation: {len(extractors)} extractors x {len(cfg.ablation.comparators)} comparators",
        counts=count_rows,
        overall=tables["summary"],
        agreement=compare.agreement_matrix(tables["agreement"], primary, extractors),
        taus=tables["kendall_tau"],
        flips=tables["rank_flips"],
        labelled=lab_view,
        figures={caption: f"figures/{name}" for caption, (name, _) in pngs.items()},
        primary=primary,
        skipped=skipped_extractors,
        low_confidence=low if models else None,
        low_confidence_limit=cfg.ablation.low_confidence_limit,
    )
    write_bytes_atomic(out.join("report.html"), page.encode("utf-8"))


def output_index(
    extractors: list[str],
    comparators: list[str],
    tables: dict[str, pd.DataFrame],
    pngs: dict[str, tuple[str, bytes]],
    with_models: bool,
) -> dict[str, Any]:
    """Where each output is, relative to the output folder (the manifest's `outputs`)."""
    return {
        "records": "records/",
        "judgments": {f"{e}|{c}": f"judgments/{combo_name(e, c)}/" for e in extractors for c in comparators},
        "rejects": "rejects/rejects.parquet",
        "comparison": sorted(f"comparison/{n}.{{parquet,csv}}" for n in tables),
        "review": "review/review.parquet",
        "low_confidence": "review/low_confidence.parquet" if with_models else None,
        "figures": sorted(f"figures/{name}" for name, _ in pngs.values()),
        "report": "report.html",
    }


@dataclass
class Written:
    """What the driver-side steps wrote, for the manifest."""

    judgments: dict[str, int]
    n_rejects: int
    review: pd.DataFrame
    low: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    pngs: dict[str, tuple[str, bytes]]


def resume_args(cfg: AblationJobConfig) -> dict[str, Any]:
    """open_output's settings for the ablation: records/ is the checkpoint, the rest is rebuilt."""
    return dict(overwrite=cfg.output.overwrite, resume=cfg.output.resume, parts=(RECORDS,), derived=DERIVED)


def ablation_manifest(
    cfg: AblationJobConfig,
    counts: dict[str, Any],
    written: Written,
    skipped: list[dict[str, str]],
    extractors: list[str],
    models: dict[str, Any],
    skipped_extractors: list[dict[str, str]],
) -> dict[str, Any]:
    """manifest.json (the job adds wall time and start): counts, outputs, identities, config, versions."""
    return {
        "status": "committed",
        "counts": counts,
        "judgments": written.judgments,
        "rejects_rows": written.n_rejects,
        "review_rows": len(written.review),
        "low_confidence_rows": len(written.low) if models else None,
        "labelled": "labelled_accuracy" in written.tables,
        "skipped_files": skipped,
        "extractors": manifest_extractors(extractors, models, cfg.storage),
        "skipped_extractors": skipped_extractors,
        "notes": [f"skipped {s['extractor']}: {s['reason']}" for s in skipped_extractors],
        "comparators": list(cfg.ablation.comparators),
        "primary_comparator": cfg.primary,
        "outputs": output_index(
            extractors, cfg.ablation.comparators, written.tables, written.pngs, bool(models)
        ),
        "versions": package_versions(),
        "config": as_dict(cfg),
    }
