"""What changed between two committed scoring runs: `xfinder-ray diff OLD NEW`, or `score` with
`output.compare_to=OLD` (run after the new output is committed).

Driver-side, no Ray. Records are matched on (model, task, record_id): record_id is the record's own
identity and is unique within a run (a duplicate is rejected, docs/reliability.md), whereas input
positions (source_file, source_row) change whenever the input is re-laid out, appended to or re-imported
(imported files live under each run's own output). A record in both runs whose verdict differs is a
*flip*, listed with both extractions and the reason:

- `input`: the record itself differs (correct_answer, key_answer_type, or `question_key` where both
  runs have it);
- `extractor`: another extractor (its identity: name, checkpoint, prompt format, ...) read another key
  answer;
- `extraction`: the same extractor read another key answer (the response changed, or the extractor is
  not deterministic);
- `comparator`: same key answer and gold, another comparator;
- `judging`: same key answer, gold and comparator name (a new version of the comparator's code: see both
  manifests' `versions`).

Every record in both runs whose input changed (gold answer, key_answer_type, question) is listed in
<OUT>/diff/input_changes.parquet, flipped or not: a changed gold that left the verdict as it was is
still a data change a leaderboard maintainer wants to see.

Per model (and per model and task), over the records in both runs: accuracy in each, the delta, and the
exact McNemar test on the discordant pairs; with the runs' own macro accuracy and rank, rank and
ranked as each run's leaderboard has them (accuracy/by_model.parquet; ranks.parquet for an older output:
models scored on fewer tasks and rejects without a model are not ranked). A rank move is given only for a model ranked in both
runs; otherwise `rank_note` says why not (new, gone, ranked in one run only).
Written to <OUT>/diff/{flips,input_changes,models,tasks}.parquet, <OUT>/diff/rank_moves.png and
<OUT>/diff.md (last).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from xfinder_ray.config import ConfigError, StorageConfig
from xfinder_ray.significance import mcnemar_exact_many  # one exact McNemar for the leaderboard and the diff
from xfinder_ray.stages.aggregate import UNKNOWN, rank_label, rank_models
from xfinder_ray.storage import Location, exists, read_json, resolve, write_bytes_atomic

KEY = ["model", "task", "record_id"]
VALUES = ["key_answer_type", "correct_answer", "extracted_answer", "judgment", "extractor", "comparator"]
OPTIONAL = ["question_key"]  # compared where both runs have it
REASONS = ("input", "extractor", "extraction", "comparator", "judging")
PREVIOUS = "previous"  # output.compare_to=previous: the newest committed sibling named before this output
MD_FLIPS = 25  # flips listed in diff.md (all of them are in diff/flips.parquet)


class NotCommitted(FileNotFoundError):
    """A diff side that is not a committed scoring output (no manifest.json)."""


@dataclass
class DiffResult:
    flips: pd.DataFrame
    models: pd.DataFrame
    tasks: pd.DataFrame
    summary: dict[str, Any]
    markdown: str
    out: str
    input_changes: pd.DataFrame | None = None


def committed(uri: str, storage: StorageConfig | None = None) -> tuple[Location, dict[str, Any]]:
    loc = resolve(uri, storage)
    manifest = loc.join("manifest.json")
    if not exists(manifest):
        raise NotCommitted(f"{uri!r} is not a committed scoring output (no manifest.json)")
    data = read_json(manifest)
    if data.get("status") != "committed":
        raise NotCommitted(f"{uri!r}: manifest.json status is {data.get('status')!r}, not committed")
    return loc, data


def previous_run(output: str, storage: StorageConfig | None = None) -> str | None:
    """The committed sibling of `output` (same parent, a manifest.json) whose name sorts last before
    `output`'s own: with dated names (the cron manifests' YYYY-MM-DD) the previous run. None if none."""
    loc = resolve(output.rstrip("/"), storage)
    parent_uri, _, name = loc.uri.rstrip("/").rpartition("/")
    if not parent_uri or not name:
        return None
    parent = resolve(parent_uri, storage)
    infos = parent.fs.get_file_info(pafs.FileSelector(parent.path, allow_not_found=True))
    names = sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory and i.base_name < name)
    for candidate in reversed(names):
        if exists(parent.join(candidate, "manifest.json")):
            return f"{parent_uri}/{candidate}"
    return None


def resolve_compare_to(compare_to: str | None, output: str, storage: StorageConfig | None) -> str | None:
    """output.compare_to -> the run to compare with (checked to be committed), or None: not set, or
    `previous` and there is no earlier committed run. Called before the job runs, so a wrong path fails
    before any scoring is done."""
    if not compare_to:
        return None
    old = previous_run(output, storage) if compare_to == PREVIOUS else compare_to
    if old is None:
        return None
    if resolve(old, storage).uri.rstrip("/") == resolve(output, storage).uri.rstrip("/"):
        raise ConfigError("output.compare_to is output.path itself")
    try:
        committed(old, storage)
    except NotCommitted as e:
        raise ConfigError(f"output.compare_to: {e}") from None
    return old


def read_judgments(loc: Location) -> pa.Table:
    folder = loc.join("judgments")
    files: list[str] = []
    if exists(folder):
        infos = folder.fs.get_file_info(pafs.FileSelector(folder.path))
        files = sorted(
            i.path for i in infos if i.base_name.startswith("part-") and i.path.endswith(".parquet")
        )
    if not files:
        return pa.table(
            {c: pa.array([], pa.bool_() if c == "judgment" else pa.string()) for c in KEY + VALUES}
        )
    dataset = pads.dataset(files, format="parquet", filesystem=loc.fs)
    cols = [c for c in KEY + VALUES + OPTIONAL if c in dataset.schema.names]
    return dataset.to_table(columns=cols)


def join_runs(old: pa.Table, new: pa.Table) -> pa.Table:
    """Full outer join on KEY; value columns suffixed _old / _new; `in_old`, `in_new` flags."""
    shared = [c for c in VALUES + OPTIONAL if c in old.column_names and c in new.column_names]
    old = old.select(KEY + shared).rename_columns(KEY + [f"{c}_old" for c in shared])
    new = new.select(KEY + shared).rename_columns(KEY + [f"{c}_new" for c in shared])
    old = old.append_column("in_old", pa.array(np.ones(old.num_rows, bool)))
    new = new.append_column("in_new", pa.array(np.ones(new.num_rows, bool)))
    joined = old.join(new, keys=KEY, join_type="full outer")
    for flag in ("in_old", "in_new"):
        joined = joined.set_column(joined.column_names.index(flag), flag, pc.fill_null(joined[flag], False))
    return joined


def _differs(table: pa.Table, col: str) -> np.ndarray:
    """Per row, whether `col`'s old and new values differ: missing in both runs is no difference,
    missing in one is; a column the runs do not both have never differs."""
    if f"{col}_old" not in table.column_names:
        return np.zeros(table.num_rows, bool)
    a, b = table[f"{col}_old"], table[f"{col}_new"]
    one_missing = pc.xor(pc.is_null(a), pc.is_null(b))
    return _bools(pc.fill_null(pc.not_equal(a, b), one_missing))


def _bools(mask: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def _in_both(joined: pa.Table) -> np.ndarray:
    return _bools(pc.and_(joined["in_old"], joined["in_new"]))


def flips_of(joined: pa.Table, inputs: dict[str, np.ndarray]) -> pd.DataFrame:
    """The records in both runs whose verdict differs, with the reason (`inputs`: input_differences)."""
    changed = _bools(pc.fill_null(pc.not_equal(joined["judgment_old"], joined["judgment_new"]), False))
    keep = _in_both(joined) & changed
    flipped = joined.filter(pa.array(keep))
    inp = np.logical_or.reduce([d[keep] for d in inputs.values()])
    answer = _differs(flipped, "extracted_answer")
    df = flipped.to_pandas()
    reason = np.select(
        [inp, answer & _differs(flipped, "extractor"), answer, _differs(flipped, "comparator")],
        ["input", "extractor", "extraction", "comparator"],
        "judging",
    )
    df = df.assign(reason=reason, direction=np.where(df["judgment_new"], "wrong->right", "right->wrong"))
    df = df.rename(columns={"key_answer_type_new": "key_answer_type"})
    cols = KEY + ["key_answer_type", "reason", "direction", "extracted_answer_old", "extracted_answer_new"]
    cols += ["correct_answer_old", "correct_answer_new", "judgment_old", "judgment_new"]
    cols += ["extractor_old", "extractor_new", "comparator_old", "comparator_new"]
    return df[cols].sort_values(KEY).reset_index(drop=True)


def paired_counts(joined: pa.Table, by: list[str]) -> pd.DataFrame:
    """Per group: records in both runs, only in one, correct in each (on both), and the discordant
    pairs: lost (right -> wrong), gained (wrong -> right)."""
    both = pc.and_(joined["in_old"], joined["in_new"])
    jo = pc.fill_null(joined["judgment_old"], False)
    jn = pc.fill_null(joined["judgment_new"], False)
    t = pa.table(
        {
            **{c: joined[c] for c in by},
            "common": pc.cast(both, pa.int64()),
            "added": pc.cast(pc.and_(joined["in_new"], pc.invert(joined["in_old"])), pa.int64()),
            "removed": pc.cast(pc.and_(joined["in_old"], pc.invert(joined["in_new"])), pa.int64()),
            "correct_old": pc.cast(pc.and_(both, jo), pa.int64()),
            "correct_new": pc.cast(pc.and_(both, jn), pa.int64()),
            "lost": pc.cast(pc.and_(both, pc.and_(jo, pc.invert(jn))), pa.int64()),
            "gained": pc.cast(pc.and_(both, pc.and_(jn, pc.invert(jo))), pa.int64()),
        }
    )
    counts = ["common", "added", "removed", "correct_old", "correct_new", "lost", "gained"]
    g = t.group_by(by).aggregate([(c, "sum") for c in counts]).to_pandas()
    g = g.rename(columns={f"{c}_sum": c for c in counts})[by + counts]
    n = g["common"].where(g["common"] > 0)
    g["accuracy_old"] = g["correct_old"] / n
    g["accuracy_new"] = g["correct_new"] / n
    g["delta"] = (g["gained"] - g["lost"]) / n
    g["p_value"] = mcnemar_exact_many(g["lost"].to_numpy(), g["gained"].to_numpy())
    return g.sort_values(by).reset_index(drop=True)


def accuracy_table(loc: Location, name: str) -> pd.DataFrame | None:
    """A run's accuracy/<name>.parquet, or None where the run has none."""
    path = loc.join("accuracy", f"{name}.parquet")
    if not exists(path):
        return None
    with loc.fs.open_input_file(path.path) as f:
        return pq.read_table(f).to_pandas()


RANK_INTERVAL = ["rank_low", "rank_high"]


def with_ranking(by_model: pd.DataFrame, ranks: pd.DataFrame | None, interval: bool = False) -> pd.DataFrame:
    """by_model's models but (unknown), with `ranked` and `rank` as the run's leaderboard has them:
    by_model's own (build_tables writes them); for a by_model written before it carried them, from
    `ranks` (accuracy/ranks.parquet), or else aggregate.rank_models. With `interval`: rank_low and
    rank_high from `ranks`, null without them. A `ranks` that lacks any of these columns is not used."""
    columns = ["ranked", "rank", *(RANK_INTERVAL if interval else [])]
    usable = ranks is not None and {"model", *columns} <= set(ranks.columns)
    df = by_model[by_model["model"] != UNKNOWN]
    if "ranked" not in df:
        df = _merge_ranks(df, ranks, ["ranked", "rank"]) if usable else rank_models(df)
    if interval:
        df = _merge_ranks(df, ranks, RANK_INTERVAL) if usable else df.assign(rank_low=pd.NA, rank_high=pd.NA)
    return df


def _merge_ranks(df: pd.DataFrame, ranks: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """df with `columns` from ranks, by model; a model ranks does not have is not ranked."""
    df = df.drop(columns=columns, errors="ignore").merge(ranks[["model", *columns]], on="model", how="left")
    return df.assign(ranked=df["ranked"].fillna(False).astype(bool))


RANKING = ["model", "ranked", "rank", "accuracy_micro", "accuracy_macro"]


def ranked(loc: Location) -> pd.DataFrame:
    """A run's ranking, as its leaderboard has it (with_ranking): accuracy/by_model's models (never
    (unknown)) with `ranked` and `rank` (null where not ranked)."""
    by_model = accuracy_table(loc, "by_model")
    if by_model is None:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in RANKING})
    df = with_ranking(by_model, accuracy_table(loc, "ranks"))
    df["rank"] = df["rank"].astype("Int64").where(df["ranked"])
    return df[RANKING].reset_index(drop=True)


COUNTS = ["common", "added", "removed", "correct_old", "correct_new", "lost", "gained"]


def _rank_note(ranked_old: Any, ranked_new: Any, in_old: bool, in_new: bool) -> str:
    """Why a model has no rank move ("" when it has one: ranked in both runs)."""
    if not in_old:
        return "new"
    if not in_new:
        return "gone"
    if ranked_old and ranked_new:
        return ""
    if ranked_old:
        return "not ranked now (fewer tasks)"
    return "ranked now" if ranked_new else "not ranked in either"


def model_table(joined: pa.Table, old: Location, new: Location) -> pd.DataFrame:
    """Per model: the paired counts over the records in both runs (integers), each run's macro and
    rank (null where not ranked), `rank_move` (old - new, > 0 up; only between ranked runs) and
    `rank_note`; ranked-in-new first by rank, then the rest of the new run by macro, then the gone."""
    g = paired_counts(joined, ["model"]).rename(
        columns={"accuracy_old": "common_accuracy_old", "accuracy_new": "common_accuracy_new"}
    )
    ro = ranked(old).rename(columns=lambda c: c if c == "model" else f"{c}_old").assign(_in_old=True)
    rn = ranked(new).rename(columns=lambda c: c if c == "model" else f"{c}_new").assign(_in_new=True)
    df = g.merge(ro, on="model", how="outer").merge(rn, on="model", how="outer")
    df = df[df["model"] != UNKNOWN]
    for c in COUNTS:
        df[c] = df[c].fillna(0).astype("int64")
    in_old = df["_in_old"].fillna(False).astype(bool) | (df["removed"] + df["common"] > 0)
    in_new = df["_in_new"].fillna(False).astype(bool) | (df["added"] + df["common"] > 0)
    for side in ("old", "new"):
        df[f"ranked_{side}"] = df[f"ranked_{side}"].fillna(False).astype(bool)
        df[f"rank_{side}"] = df[f"rank_{side}"].astype("Int64")
    both = df["ranked_old"] & df["ranked_new"]
    df["rank_move"] = (df["rank_old"] - df["rank_new"]).where(both)  # > 0: moved up
    df["rank_note"] = [
        _rank_note(a, b, o, n)
        for a, b, o, n in zip(df["ranked_old"], df["ranked_new"], in_old, in_new, strict=True)
    ]
    group = np.where(df["ranked_new"], 0, np.where(in_new, 1, 2))
    macro = -df["accuracy_macro_new"].astype(float).fillna(-1.0)
    order = df.assign(_g=group, _r=df["rank_new"].astype(float), _m=macro)
    order = order.sort_values(["_g", "_r", "_m", "model"], kind="stable")
    return df.loc[order.index].drop(columns=["_in_old", "_in_new"]).reset_index(drop=True)


INPUT_FIELDS = {
    "correct_answer": "correct_answer",
    "key_answer_type": "key_answer_type",
    "question_key": "question",
}


def input_differences(joined: pa.Table) -> dict[str, np.ndarray]:
    """Per input field (INPUT_FIELDS' names), row for row with `joined`, whether the runs' values
    differ; built once for the flips' `input` reason and diff/input_changes."""
    return {name: _differs(joined, col) for col, name in INPUT_FIELDS.items()}


def input_changes_of(joined: pa.Table, inputs: dict[str, np.ndarray]) -> pd.DataFrame:
    """The records in both runs whose input differs (gold answer, key_answer_type, question: by
    question_key where both runs have it; `inputs`: input_differences), whether or not their verdict
    flipped; `changed` names what. Only those records are converted to pandas."""
    keep = _in_both(joined) & np.logical_or.reduce(list(inputs.values()))
    rows = joined.filter(pa.array(keep))
    fields = [
        f"{c}_{side}" for c in INPUT_FIELDS for side in ("old", "new") if f"{c}_old" in rows.column_names
    ]
    df = rows.select(KEY + fields + ["judgment_old", "judgment_new"]).to_pandas()
    kept = {name: d[keep] for name, d in inputs.items()}
    what = [", ".join(name for name, d in kept.items() if d[i]) for i in range(len(df))]
    df["changed"] = pd.Series(what, index=df.index, dtype=object)
    jo, jn = (pc.fill_null(rows[f"judgment_{side}"], False) for side in ("old", "new"))
    df["flipped"] = _bools(pc.not_equal(jo, jn))
    cols = KEY + ["changed", "flipped", *fields, "judgment_old", "judgment_new"]
    return df[cols].sort_values(KEY).reset_index(drop=True)


def diff_runs(
    old_uri: str, new_uri: str, out_uri: str | None = None, storage: StorageConfig | None = None
) -> DiffResult:
    """Compare two committed outputs; write <out>/diff/ and <out>/diff.md (out defaults to NEW)."""
    old, old_manifest = committed(old_uri, storage)
    new, new_manifest = committed(new_uri, storage)
    out = resolve(out_uri, storage) if out_uri else new
    joined = join_runs(read_judgments(old), read_judgments(new))
    inputs = input_differences(joined)
    flips = flips_of(joined, inputs)
    changes = input_changes_of(joined, inputs)
    models = model_table(joined, old, new)
    tasks = paired_counts(joined, ["model", "task"])
    summary = summarize(joined, flips, old, new, old_manifest, new_manifest)
    summary["input_changes"] = {"records": len(changes)} | {
        name: sum(name in c.split(", ") for c in changes["changed"]) for name in INPUT_FIELDS.values()
    }
    from xfinder_ray.report import bump_chart  # matplotlib only when a diff is written

    figure = bump_chart(models, summary["old"]["label"], summary["new"]["label"])
    markdown = diff_markdown(summary, models, flips, figure is not None, changes)
    write_diff(out, flips, models, tasks, figure, markdown, changes)
    return DiffResult(flips, models, tasks, summary, markdown, out.uri, changes)


def _side(loc: Location, manifest: dict[str, Any]) -> dict[str, Any]:
    name = loc.uri.rstrip("/").rpartition("/")[2] or loc.uri
    return {
        "uri": loc.uri,
        "label": name,
        "extractor": manifest.get("extractor"),
        "comparator": manifest.get("comparator"),
        "started_at": manifest.get("started_at"),
        "counts": manifest.get("counts", {}),
    }


def summarize(
    joined: pa.Table,
    flips: pd.DataFrame,
    old: Location,
    new: Location,
    old_manifest: dict[str, Any],
    new_manifest: dict[str, Any],
) -> dict[str, Any]:
    in_old, in_new = joined["in_old"], joined["in_new"]
    common = int(pc.sum(pc.cast(pc.and_(in_old, in_new), pa.int64())).as_py() or 0)
    summary = {
        "old": _side(old, old_manifest),
        "new": _side(new, new_manifest),
        "common": common,
        "added": int(pc.sum(pc.cast(in_new, pa.int64())).as_py() or 0) - common,
        "removed": int(pc.sum(pc.cast(in_old, pa.int64())).as_py() or 0) - common,
        "flips": len(flips),
        "by_reason": {r: int((flips["reason"] == r).sum()) for r in REASONS},
        "wrong_to_right": int((flips["direction"] == "wrong->right").sum()),
        "right_to_wrong": int((flips["direction"] == "right->wrong").sum()),
    }
    if summary["old"]["label"] == summary["new"]["label"]:
        summary["old"]["label"] += " (old)"
    return summary


def _md(value: Any) -> str:
    text = "–" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")[:80]


def _pct(v: Any) -> str:
    return "–" if v is None or v != v else f"{100 * v:.1f}"


def _moved(r: Any) -> str:
    """The move column: ↑2 / ↓1 / = between ranked runs, else why there is none."""
    move = r.rank_move
    if move is None or pd.isna(move):
        return r.rank_note or "–"
    return "=" if move == 0 else (f"↑{int(move)}" if move > 0 else f"↓{int(-move)}")


def _model_rows(models: pd.DataFrame, ranks: bool) -> list[str]:
    shared = models["ranked_new"] & models["rank_new"].duplicated(keep=False) & models["rank_new"].notna()
    rows = []
    for r, tie in zip(models.itertuples(), shared, strict=True):
        delta = "–" if r.delta != r.delta else f"{100 * r.delta:+.1f}"
        paired = r.common > 0  # a new or gone model has no records in both runs: nothing lost or gained
        lost, gained = (str(r.lost), str(r.gained)) if paired else ("–", "–")
        p = f"{r.p_value:.3g}" if paired else "–"
        cells = [rank_label(r.rank_new, tie)] if ranks else []
        cells += [
            _moved(r),
            _md(r.model),
            _pct(r.accuracy_macro_old),
            _pct(r.accuracy_macro_new),
            _pct(r.common_accuracy_old),
            _pct(r.common_accuracy_new),
            delta,
            lost,
            gained,
            p,
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


MODEL_HEAD = "move | model | macro old | macro new | both: old | both: new | Δ | lost | gained | p |"


def _models_markdown(models: pd.DataFrame) -> list[str]:
    """The ranked models of the new run, then the others (not ranked in it, or gone) apart."""
    ranked, others = models[models["ranked_new"]], models[~models["ranked_new"]]
    lines = [
        "## Per model (ranked by the new run)\n",
        "Accuracy in %. Δ and p: over the records in both runs (p: exact McNemar test on the "
        "flips, two-sided); rank and macro: each run's own leaderboard (accuracy/ranks.parquet; `1=`: "
        "a shared rank). A move is given between two runs that both rank the model.\n",
    ]
    if len(ranked):
        lines += ["| rank | " + MODEL_HEAD, "|---" * 11 + "|", *_model_rows(ranked, True)]
    else:
        lines.append("No model is ranked in the new run.")
    if len(others):
        lines += [
            "\n### Not ranked in the new run\n",
            "Scored on fewer tasks than the ranked models (their macro is not comparable), new without a "
            "rank, or gone.\n",
            "| " + MODEL_HEAD,
            "|---" * 10 + "|",
            *_model_rows(others, False),
        ]
    return lines


def _gold(r: Any) -> str:
    old, new = _md(r.correct_answer_old), _md(r.correct_answer_new)
    return new if old == new else f"{old} → {new}"


def _input_changes_markdown(summary: dict[str, Any], changes: pd.DataFrame | None) -> list[str]:
    if changes is None or not len(changes):
        return []
    counts = summary["input_changes"]
    what = ", ".join(f"{k}: {v}" for k, v in counts.items() if k != "records" and v)
    lines = [
        f"\n## Inputs changed: {len(changes)} records ({what}); first {min(MD_FLIPS, len(changes))}, all in "
        "diff/input_changes.parquet\n",
        "A changed gold answer or question is a data change, whether or not the verdict moved.\n",
        "| model | task | record_id | changed | gold | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in changes.head(MD_FLIPS).itertuples():
        verdict = {True: "right", False: "wrong"}
        move = f"{verdict.get(r.judgment_old, '–')}->{verdict.get(r.judgment_new, '–')}"
        lines.append(
            f"| {_md(r.model)} | {_md(r.task)} | {_md(r.record_id)} | {r.changed} | {_gold(r)} | {move} |"
        )
    return lines


def diff_markdown(
    summary: dict[str, Any],
    models: pd.DataFrame,
    flips: pd.DataFrame,
    figure: bool,
    changes: pd.DataFrame | None = None,
) -> str:
    o, n = summary["old"], summary["new"]
    reasons = ", ".join(f"{r} {k}" for r, k in summary["by_reason"].items() if k) or "none"
    n_changes = 0 if changes is None else len(changes)
    lines = [
        f"# What changed: {_md(o['label'])} → {_md(n['label'])}\n",
        "| | old | new |\n|---|---|---|",
        f"| output | `{_md(o['uri'])}` | `{_md(n['uri'])}` |",
        f"| extractor | `{_md(o['extractor'])}` | `{_md(n['extractor'])}` |",
        f"| comparator | `{_md(o['comparator'])}` | `{_md(n['comparator'])}` |",
        f"| judged | {_md(o['counts'].get('judged'))} | {_md(n['counts'].get('judged'))} |\n",
        f"Records in both: {summary['common']}; only in new: {summary['added']}; only in old: "
        f"{summary['removed']}. Verdict flips: {summary['flips']} ({summary['wrong_to_right']} wrong→right, "
        f"{summary['right_to_wrong']} right→wrong); by reason: {reasons}. Inputs changed: {n_changes}.\n",
        *_models_markdown(models),
    ]
    if figure:
        lines.append("\n![rank moves](diff/rank_moves.png)")
    if len(flips):
        lines += [
            f"\n## Flips (first {min(MD_FLIPS, len(flips))} of {len(flips)}; all in diff/flips.parquet)\n",
            "| model | task | record_id | reason | old answer | new answer | gold | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in flips.head(MD_FLIPS).itertuples():
            lines.append(
                f"| {_md(r.model)} | {_md(r.task)} | {_md(r.record_id)} | {r.reason} | "
                f"{_md(r.extracted_answer_old)} | {_md(r.extracted_answer_new)} | {_gold(r)} | "
                f"{r.direction} |"
            )
    lines += _input_changes_markdown(summary, changes)
    return "\n".join(lines) + "\n"


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf)
    return buf.getvalue()


def write_diff(
    out: Location,
    flips: pd.DataFrame,
    models: pd.DataFrame,
    tasks: pd.DataFrame,
    figure: bytes | None,
    markdown: str,
    input_changes: pd.DataFrame | None = None,
) -> None:
    folder = out.join("diff")
    folder.fs.create_dir(folder.path, recursive=True)
    tables = [("flips", flips), ("models", models), ("tasks", tasks)]
    if input_changes is not None:
        tables.append(("input_changes", input_changes))
    for name, df in tables:
        write_bytes_atomic(folder.join(f"{name}.parquet"), _parquet(df))
    if figure is not None:
        write_bytes_atomic(folder.join("rank_moves.png"), figure)
    write_bytes_atomic(out.join("diff.md"), markdown.encode())  # last: the diff is complete


def compare_after_commit(
    old: str | None, out: Location, storage: StorageConfig | None, requested: str | None
) -> list[str]:
    """`score` with output.compare_to: the diff of the committed output against `old` (resolved by
    resolve_compare_to before the job ran); one note saying what it found."""
    if old is None:
        if not requested:
            return []
        return [f"output.compare_to={requested}: no earlier committed run beside {out.uri}; nothing compared"]
    s = diff_runs(old, out.uri, storage=storage).summary
    reasons = ", ".join(f"{r} {k}" for r, k in s["by_reason"].items() if k) or "none"
    changed = s.get("input_changes", {}).get("records", 0)
    return [
        f"compared with {old}: {s['common']} records in both, {s['flips']} verdict flips ({reasons}), "
        f"{changed} inputs changed, {s['added']} new, {s['removed']} gone -> {out.uri.rstrip('/')}/diff.md"
    ]


def add_diff_parser(sub: Any) -> Any:
    sp = sub.add_parser(
        "diff",
        help="what changed between two committed scoring outputs (flips, deltas, rank moves)",
        description=(
            "Compare two committed `score` outputs: per-record verdict flips with both extractions and "
            "the reason, per-model accuracy deltas with an exact McNemar test, rank moves. Writes "
            "OUT/diff/{flips,input_changes,models,tasks}.parquet, OUT/diff/rank_moves.png and OUT/diff.md "
            "(OUT: NEW unless --out). s3:// credentials from the AWS_* environment (docs/diff.md)."
        ),
    )
    sp.add_argument("old", metavar="OLD", help="the earlier output (local, file://, s3://)")
    sp.add_argument("new", metavar="NEW", help="the later output")
    sp.add_argument("--out", metavar="DIR", help="where to write diff/ and diff.md (default: NEW)")
    sp.set_defaults(run=diff_main)
    return sp


def diff_main(args: Any) -> int:
    import sys

    try:
        result = diff_runs(args.old, args.new, args.out)
    except (NotCommitted, ConfigError) as e:
        print(f"xfinder-ray diff: {e}", file=sys.stderr)
        return 1
    print(result.markdown)
    print(f"-> {result.out.rstrip('/')}/diff.md", file=sys.stderr)
    return 0
