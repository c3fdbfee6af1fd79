"""aggregate: a pass over written judgments/ and rejects/ -> accuracy tables, the paired comparisons
of models, rank intervals and the leaderboard (docs/leaderboard.md).

Streams the few needed columns batch by batch and keeps only counters: per (model, task), and per
(model, task, question_key) for the paired test and the bootstrap (memory grows with the distinct
questions answered, never with the records). Every input record is in the tables: judged, or rejected
by cause. Record-caused rejects (the record's own fields) are left out of accuracy; response-caused
ones (the model's output could not be judged) count as wrong unless `aggregate.rejects=exclude`.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from xfinder_ray import significance as sig
from xfinder_ray.records import NO_VALID_ANSWER
from xfinder_ray.storage import Location, write_bytes_atomic

Z95 = 1.959963984540054
UNKNOWN = "(unknown)"  # the model / task of a rejected row that has none (an unreadable line)
REJECT_POLICIES = ("wrong", "exclude")
# Rejects caused by the model's response rather than the record: the judge stage's (extraction failed:
# oversized or unreadable model output, engine errors, a verifier's output that is no verdict: all by
# their stage), a response over the size bound or not valid
# UTF-8, and a JSONL line over the line bound (in practice an over-long response; the read stage takes
# its model and task from the line's head, stages/read.py: head_fields).
RESPONSE_REASONS = re.compile(
    r"^(extraction failed|field 'llm_output' is longer than|field 'llm_output' is not valid UTF-8|line longer than)"
)
# Compact the per-question counters once this many partial rows are held.
COMPACT_ROWS = 1_000_000
ITEM_KEYS = ["model", "task", "question_key"]
ITEM_COUNTS = ["judged", "correct", "rejected_response"]


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (sound at 0%, 100% and small n)."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # exact at the edges (0% and 100% are on their own bound, not a rounding error past it)
    lo = 0.0 if correct == 0 else min(p, max(0.0, centre - half))
    hi = 1.0 if correct == n else max(p, min(1.0, centre + half))
    return (lo, hi)


def question_key(task: Any, question: Any) -> str | None:
    """The item a record answers: the first 16 hex digits of sha256(task \\0 question); None without
    either. The same question in the same task gets the same key in every model's records."""
    if not isinstance(task, str) or not isinstance(question, str):
        return None
    return hashlib.sha256(f"{task}\0{question}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def question_keys(tasks: Any, questions: Any) -> list[str | None]:
    return [question_key(t, q) for t, q in zip(tasks, questions, strict=True)]


def reject_cause(stage: Any, reason: Any) -> str:
    """`response` when the model's output is why the record could not be judged, else `record`."""
    if stage == "judge" or (isinstance(reason, str) and RESPONSE_REASONS.match(reason)):
        return "response"
    return "record"


@dataclass
class Outcomes:
    """What aggregate counts: per (model, task) [judged, correct, no valid answer, rejected_record,
    rejected_response], the no valid answers by no_answer_reason and the verdicts by `rules`'
    confidence tier; per (model, task, question_key) judged, correct, rejected_response; and per
    question its gold answers (GOLD_KEYS, with the records and one example), for the conflicts."""

    cells: dict[tuple[str, str], list[int]]
    items: pd.DataFrame
    no_answer: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    confidence: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    golds: pd.DataFrame | None = None


def _files(loc: Location | None) -> list[str]:
    if loc is None:
        return []
    infos = loc.fs.get_file_info(pa.fs.FileSelector(loc.path, allow_not_found=True))
    return sorted(f.path for f in infos if f.path.endswith(".parquet"))


def _compact(parts: list[pa.Table]) -> list[pa.Table]:
    if len(parts) <= 1:
        return parts
    grouped = pa.concat_tables(parts).group_by(ITEM_KEYS).aggregate([(c, "sum") for c in ITEM_COUNTS])
    return [grouped.rename_columns([c.removesuffix("_sum") for c in grouped.column_names])]


GOLD_KEYS = ["task", "question_key", "key_answer_type", "correct_answer"]
EXAMPLE_SEP = "\x1f"  # model <sep> record_id in one string, so one `min` picks both from the same row


class _GoldCounter:
    """Per (task, question_key, key_answer_type, correct_answer): records and an example (the
    smallest model/record_id); one row per question and gold, however many models answered it."""

    def __init__(self) -> None:
        self.parts: list[pa.Table] = []
        self.rows = 0

    def add(self, table: pa.Table) -> None:
        table = table.filter(pc.is_valid(table["question_key"]))
        example = pc.binary_join_element_wise(table["model"], table["record_id"], EXAMPLE_SEP)
        part = table.select(GOLD_KEYS).append_column("example", example)
        self.parts.append(
            self._group(part.append_column("records", pa.array([1] * part.num_rows, pa.int64())))
        )
        self.rows += self.parts[-1].num_rows
        if self.rows >= COMPACT_ROWS and len(self.parts) > 1:
            self.parts = [self._group(pa.concat_tables(self.parts))]
            self.rows = self.parts[0].num_rows

    @staticmethod
    def _group(t: pa.Table) -> pa.Table:
        g = t.group_by(GOLD_KEYS).aggregate([("records", "sum"), ("example", "min")])
        return g.rename_columns([c.removesuffix("_sum").removesuffix("_min") for c in g.column_names])

    def frame(self) -> pd.DataFrame:
        if not self.parts:
            return pd.DataFrame(columns=[*GOLD_KEYS, "records", "example"])
        return self._group(pa.concat_tables(self.parts)).to_pandas()


class _ItemCounter:
    """Per (model, task, question_key) counters as Arrow tables, re-grouped as they grow."""

    def __init__(self) -> None:
        self.parts: list[pa.Table] = []
        self.rows = 0

    def add(self, table: pa.Table) -> None:
        self.parts.append(table.select([*ITEM_KEYS, *ITEM_COUNTS]))
        self.rows += table.num_rows
        if self.rows >= COMPACT_ROWS:
            self.parts = _compact(self.parts)
            self.rows = self.parts[0].num_rows

    def frame(self) -> pd.DataFrame:
        parts = _compact(self.parts)
        if not parts:
            return pd.DataFrame(
                {c: pd.Series(dtype=object) for c in ITEM_KEYS} | {c: [] for c in ITEM_COUNTS}
            )
        df = parts[0].to_pandas()
        for c in ITEM_COUNTS:
            df[c] = df[c].fillna(0).astype("int64")
        return df.sort_values(ITEM_KEYS, na_position="last", kind="stable").reset_index(drop=True)


def count_outcomes(
    judgments: Location, rejects: Location | None = None, import_rejects: Location | None = None
) -> Outcomes:
    """One streaming pass over judgments/ (model, task, question_key, judgment, extracted_answer,
    no_answer_reason), rejects/ (model, task, question, reason, stage) and, for imported framework
    outputs, the import's rejects (_imported/_import/: samples that never became a record), so a task
    scored on 1 of its 3 samples says so. The import's rejects are classed by reason like the job's."""
    outcomes = Outcomes(defaultdict(lambda: [0, 0, 0, 0, 0]), pd.DataFrame())
    items, golds = _ItemCounter(), _GoldCounter()
    _count_judgments(judgments, outcomes, items, golds)
    _count_rejects(rejects, outcomes, items)
    _count_rejects(import_rejects, outcomes, items)
    return Outcomes(
        dict(outcomes.cells), items.frame(), outcomes.no_answer, outcomes.confidence, golds.frame()
    )


JUDGMENT_COLUMNS = (
    "record_id", "model", "task", "question_key", "key_answer_type", "correct_answer", "extracted_answer",
    "no_answer_reason", "confidence",
)  # fmt: skip


def _count_judgments(
    judgments: Location, outcomes: Outcomes, items: _ItemCounter, golds: _GoldCounter
) -> None:
    files = _files(judgments)
    if not files:
        return
    schema = pa.schema([(c, pa.string()) for c in JUDGMENT_COLUMNS] + [("judgment", pa.bool_())])
    # judgments written before question_key (no_answer_reason, confidence) existed read it as null
    dataset = pads.dataset(files, format="parquet", filesystem=judgments.fs, schema=schema)
    for batch in dataset.to_batches(columns=schema.names):
        table = pa.Table.from_batches([batch])
        golds.add(table)
        _count_tiers(table, outcomes.confidence)
        nva = pc.fill_null(pc.equal(table["extracted_answer"], NO_VALID_ANSWER), False)
        table = table.append_column("nva", nva)
        grouped = table.group_by(["model", "task"]).aggregate(
            [("judgment", "count"), ("judgment", "sum"), ("nva", "sum")]
        )
        for m, t, n, c, v in zip(
            *(grouped[k].to_pylist() for k in ("model", "task", "judgment_count", "judgment_sum", "nva_sum")),
            strict=True,
        ):
            acc = outcomes.cells[(m, t)]
            acc[0] += n
            acc[1] += c or 0
            acc[2] += v or 0
        _count_reasons(table.filter(nva), outcomes.no_answer)
        per_item = table.group_by(ITEM_KEYS).aggregate([("judgment", "count"), ("judgment", "sum")])
        per_item = per_item.rename_columns(
            [{"judgment_count": "judged", "judgment_sum": "correct"}.get(c, c) for c in per_item.column_names]
        )
        per_item = per_item.set_column(
            per_item.schema.get_field_index("correct"), "correct", pc.cast(per_item["correct"], pa.int64())
        )
        items.add(per_item.append_column("rejected_response", pa.array([0] * per_item.num_rows, pa.int64())))


def _count_tiers(table: pa.Table, into: dict[tuple[str, str], dict[str, int]]) -> None:
    """Judged rows per (model, task, confidence tier); rows without a tier (a model's) are not counted."""
    tiered = table.filter(pc.is_valid(table["confidence"]))
    if not tiered.num_rows:
        return
    grouped = tiered.group_by(["model", "task", "confidence"]).aggregate([("confidence", "count")])
    for m, t, tier, k in zip(
        *(grouped[c].to_pylist() for c in ("model", "task", "confidence", "confidence_count")), strict=True
    ):
        cell = into.setdefault((m, t), {})
        cell[tier] = cell.get(tier, 0) + k


def _count_reasons(nva: pa.Table, into: dict[tuple[str, str], dict[str, int]]) -> None:
    """[No valid answer] rows per (model, task, no_answer_reason); a row without a reason (written before
    reasons existed) counts as none_found."""
    if not nva.num_rows:
        return
    nva = nva.set_column(
        nva.schema.get_field_index("no_answer_reason"),
        "no_answer_reason",
        pc.fill_null(nva["no_answer_reason"], "none_found"),
    )
    grouped = nva.group_by(["model", "task", "no_answer_reason"]).aggregate([("nva", "count")])
    for m, t, why, k in zip(
        *(grouped[c].to_pylist() for c in ("model", "task", "no_answer_reason", "nva_count")), strict=True
    ):
        cell = into.setdefault((m, t), {})
        cell[why] = cell.get(why, 0) + k


def _count_rejects(rejects: Location | None, outcomes: Outcomes, items: _ItemCounter) -> None:
    files = _files(rejects)
    if not files:
        return
    assert rejects is not None
    names = ("model", "task", "question", "reason", "stage")
    dataset = pads.dataset(
        files, format="parquet", filesystem=rejects.fs, schema=pa.schema([(c, pa.string()) for c in names])
    )
    for batch in dataset.to_batches(columns=list(names)):
        df = batch.to_pandas()
        models = [m if isinstance(m, str) else UNKNOWN for m in df["model"]]
        tasks = [t if isinstance(t, str) else UNKNOWN for t in df["task"]]
        causes = [reject_cause(s, r) for s, r in zip(df["stage"], df["reason"], strict=True)]
        keyed: dict[tuple[str, str, str], int] = defaultdict(int)
        for m, t, q, cause in zip(models, tasks, df["question"], causes, strict=True):
            outcomes.cells[(m, t)][3 if cause == "record" else 4] += 1
            key = question_key(t, q)
            if cause == "response" and m != UNKNOWN and t != UNKNOWN and key is not None:
                keyed[(m, t, key)] += 1
        if keyed:
            ks = list(keyed)
            items.add(
                pa.table(
                    {
                        "model": [k[0] for k in ks],
                        "task": [k[1] for k in ks],
                        "question_key": [k[2] for k in ks],
                        "judged": pa.array([0] * len(ks), pa.int64()),
                        "correct": pa.array([0] * len(ks), pa.int64()),
                        "rejected_response": pa.array(list(keyed.values()), pa.int64()),
                    }
                )
            )


def scored(model: str, task: str, judged: int, rejected_response: int, rejects: str) -> int:
    """Records in a cell's accuracy: the judged ones, plus the response-caused rejects under
    `aggregate.rejects=wrong` (never for a row without a model or task: it is shown, not scored)."""
    counts = rejects == "wrong" and UNKNOWN not in (model, task)
    return judged + (rejected_response if counts else 0)


TASK_COLUMNS = [
    "model", "task", "input", "judged", "rejected", "rejected_record", "rejected_response", "n", "correct",
    "accuracy", "no_valid_answer_rate", "ci95_low", "ci95_high",
]  # fmt: skip
MODEL_COLUMNS = [
    "model", "tasks", "coverage", "input", "judged", "rejected", "rejected_record", "rejected_response", "n",
    "correct", "accuracy_micro", "accuracy_macro", "no_valid_answer_rate", "ci95_low", "ci95_high",
]  # fmt: skip


NO_ANSWER_PREFIX = "no_answer_"  # + a reason: that reason's share of the judged records


def no_answer_reasons(outcomes: Outcomes) -> list[str]:
    """The reason columns: every one of rules.NO_ANSWER_REASONS (a fixed schema), then any other reason
    the judgments carry."""
    from xfinder_ray.extractors.rules import NO_ANSWER_REASONS

    seen = {r for cell in outcomes.no_answer.values() for r in cell}
    return [*NO_ANSWER_REASONS, *sorted(seen - set(NO_ANSWER_REASONS))]


def _shares(counts: dict[str, int], reasons: list[str], judged: int) -> dict[str, float]:
    return {NO_ANSWER_PREFIX + r: counts.get(r, 0) / judged if judged else float("nan") for r in reasons}


TIERS = ("certain", "likely", "unsure")  # rules' confidence tiers (extractors/rules: Extraction)
TIER_PREFIX = "rules_"  # + a tier: the share of the judged records `rules` read at that tier
RANK_DIGITS = 12  # macro accuracies equal to this many digits are a tie (the same share, summed apart)


def _tier_shares(counts: dict[str, int], judged: int) -> dict[str, float]:
    return {TIER_PREFIX + t: counts.get(t, 0) / judged if judged else float("nan") for t in TIERS}


def build_tables(outcomes: Outcomes, rejects: str = "wrong") -> tuple[pd.DataFrame, pd.DataFrame]:
    """by_model_task and by_model. `n` is the records in the accuracy (judged, plus response-caused
    rejects under `rejects=wrong`); input = judged + rejected in every row; no_valid_answer_rate is
    over the judged records, and split by reason in the no_answer_<reason> columns (they sum to it);
    rules_<tier>: the share of the judged records `rules` (or the router) read at that confidence tier
    (a model's verdicts have none). by_model: `tasks` scored (n > 0), `coverage` = tasks / all tasks
    scored for any model, `rank` and `ranked` (rank_models); ranked models first, in rank order."""
    if rejects not in REJECT_POLICIES:
        raise ValueError(f"rejects must be one of {REJECT_POLICIES}, got {rejects!r}")
    reasons = no_answer_reasons(outcomes)
    rows = []
    for (model, task), (judged, correct, nva, rej_record, rej_response) in sorted(outcomes.cells.items()):
        n = scored(model, task, judged, rej_response, rejects)
        lo, hi = wilson(correct, n)
        rows.append(
            dict(
                model=model,
                task=task,
                input=judged + rej_record + rej_response,
                judged=judged,
                rejected=rej_record + rej_response,
                rejected_record=rej_record,
                rejected_response=rej_response,
                n=n,
                correct=correct,
                accuracy=correct / n if n else float("nan"),
                no_valid_answer_rate=nva / judged if judged else float("nan"),
                ci95_low=lo,
                ci95_high=hi,
                **_tier_shares(outcomes.confidence.get((model, task), {}), judged),
                **_shares(outcomes.no_answer.get((model, task), {}), reasons, judged),
            )
        )
    share_columns = [TIER_PREFIX + t for t in TIERS] + [NO_ANSWER_PREFIX + r for r in reasons]
    by_task = pd.DataFrame(rows, columns=TASK_COLUMNS + share_columns)
    all_tasks = {r["task"] for r in rows if r["n"] > 0}
    model_rows = [
        _model_row(model, g, len(all_tasks), share_columns) for model, g in by_task.groupby("model")
    ]
    by_model = rank_models(pd.DataFrame(model_rows, columns=MODEL_COLUMNS + share_columns))
    return by_task, by_model


def _model_row(model: str, g: pd.DataFrame, n_tasks: int, share_columns: list[str]) -> dict[str, Any]:
    """One model's by_model row from its by_model_task rows; shares of judged records re-weighted."""
    n, correct, judged = int(g["n"].sum()), int(g["correct"].sum()), int(g["judged"].sum())
    nva = float((g["no_valid_answer_rate"].fillna(0) * g["judged"]).sum())
    scored_tasks = g[g["n"] > 0]
    lo, hi = wilson(correct, n)
    return dict(
        model=model,
        tasks=len(scored_tasks),
        coverage=len(scored_tasks) / n_tasks if n_tasks else 0.0,
        input=int(g["input"].sum()),
        judged=judged,
        rejected=int(g["rejected"].sum()),
        rejected_record=int(g["rejected_record"].sum()),
        rejected_response=int(g["rejected_response"].sum()),
        n=n,
        correct=correct,
        accuracy_micro=correct / n if n else float("nan"),
        accuracy_macro=float(scored_tasks["accuracy"].mean()) if len(scored_tasks) else float("nan"),
        no_valid_answer_rate=round(nva) / judged if judged else float("nan"),
        ci95_low=lo,
        ci95_high=hi,
        **{
            c: round(float((g[c].fillna(0) * g["judged"]).sum())) / judged if judged else float("nan")
            for c in share_columns
        },
    )


def rank_models(by_model: pd.DataFrame) -> pd.DataFrame:
    """by_model with `ranked` and `rank` (after `model`), ranked models first in rank order, then the
    models scored on fewer tasks by macro, then (unknown). Ranked: a model (not (unknown)) scored on
    every task (coverage 1; a table without coverage / n counts as complete): a macro over fewer (maybe
    easier) tasks is not comparable. Rank: 1 + the ranked models with a higher macro accuracy, so equal
    macros share a rank (as the bootstrap's ranks do: significance.ranks_of); null when not ranked."""
    df = by_model.drop(columns=[c for c in ("rank", "ranked") if c in by_model]).reset_index(drop=True)
    coverage = df["coverage"] if "coverage" in df else pd.Series(1.0, index=df.index)
    scored_n = df["n"] if "n" in df else pd.Series(1, index=df.index)  # a bare table (old outputs)
    ranked = (df["model"] != UNKNOWN) & (scored_n > 0) & (coverage >= 1.0) & df["accuracy_macro"].notna()
    macro = df["accuracy_macro"].astype(float).round(RANK_DIGITS)
    points = macro[ranked].to_numpy()
    rank = [int((points > m).sum()) + 1 if r else None for m, r in zip(macro, ranked, strict=True)]
    df.insert(1, "rank", pd.array(rank, dtype="Int64"))
    df.insert(2, "ranked", ranked.to_numpy(dtype=bool))
    group = np.where(ranked, 0, np.where(df["model"] == UNKNOWN, 2, 1))
    order = df.assign(_g=group, _m=-macro.fillna(-1.0))
    order = order.sort_values(["_g", "_m", "model"], kind="stable")
    return df.loc[order.index].reset_index(drop=True)


def ranked_models(by_model: pd.DataFrame) -> list[str]:
    """The models the leaderboard ranks, best first (rank_models)."""
    df = by_model if "ranked" in by_model else rank_models(by_model)
    return list(df.loc[df["ranked"], "model"])


def tied(by_model: pd.DataFrame) -> set[str]:
    """The ranked models that share their rank with another."""
    df = by_model if "ranked" in by_model else rank_models(by_model)
    ranks = df.loc[df["ranked"], ["model", "rank"]]
    return set(ranks.loc[ranks["rank"].duplicated(keep=False), "model"])


def rank_label(rank: Any, tie: bool) -> str:
    """A rank as shown: `1`, `1=` when shared, `–` when not ranked."""
    return "–" if rank is None or pd.isna(rank) else f"{int(rank)}{'=' if tie else ''}"


def close_to_above(ranked: list[str], pairwise: pd.DataFrame | None) -> list[bool]:
    """The ≈ marks of the ranked models (in rank order): not significantly apart from the model just
    above (pairwise's Holm-adjusted p ≥ ALPHA). The first model, a pair pairwise does not have, or no
    pairwise at all: apart. leaderboard.md and report.html both mark ≈ with it."""
    p_holm: dict[frozenset[str], float] = {}
    if pairwise is not None:
        pairs = zip(pairwise["model_a"], pairwise["model_b"], pairwise["p_holm"], strict=True)
        p_holm = {frozenset((a, b)): p for a, b, p in pairs}
    return [
        i > 0 and bool(p_holm.get(frozenset((ranked[i - 1], model)), 0.0) >= sig.ALPHA)
        for i, model in enumerate(ranked)
    ]


CONFLICT_COLUMNS = [*GOLD_KEYS, "records", "example_model", "example_record_id"]


def _no_conflicts() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype="int64" if c == "records" else "string") for c in CONFLICT_COLUMNS}
    )


@dataclass
class Comparison:
    pairwise: pd.DataFrame
    ranks: pd.DataFrame
    resamples: int
    seed: int
    # questions (task, question_key) with more than one gold answer across records: one row per gold
    conflicts: pd.DataFrame = field(default_factory=lambda: _no_conflicts())

    @property
    def notes(self) -> list[str]:
        """One line on the conflicting gold answers, for the manifest and the CLI; [] when none."""
        return conflict_notes(self.conflicts)


def gold_conflicts(outcomes: Outcomes) -> pd.DataFrame:
    """The questions (same task and question_key) whose records carry more than one gold answer
    (correct_answer or key_answer_type): a data problem (a copy of the question fixed for some models
    and not others), one row per (question, gold) with its records and an example model / record_id."""
    golds = outcomes.golds
    if golds is None or not len(golds):
        return _no_conflicts()
    variants = golds.groupby(["task", "question_key"], dropna=False)["records"].transform("size")
    df = golds[variants > 1].copy()
    example = df["example"].fillna("").str.split(EXAMPLE_SEP, n=1, expand=True).reindex(columns=[0, 1])
    df["example_model"], df["example_record_id"] = example[0], example[1]
    df["records"] = df["records"].astype("int64")
    df = df.sort_values(
        ["task", "question_key", "records", "correct_answer"], ascending=[True, True, False, True]
    )
    return df[CONFLICT_COLUMNS].reset_index(drop=True)


def conflict_notes(conflicts: pd.DataFrame) -> list[str]:
    if not len(conflicts):
        return []
    questions = conflicts.groupby(["task", "question_key"], sort=False)
    (task, key), first = next(iter(questions))
    golds = "; ".join(
        f"{r.correct_answer!r} ({r.key_answer_type}) in {r.records} record(s), e.g. {r.example_record_id} "
        f"of {r.example_model}"
        for r in first.itertuples()
    )
    n = questions.ngroups
    return [
        f"{n} question(s) have different gold answers across records (accuracy/conflicts.parquet); left "
        f"out of the paired tests (≈, pairwise.parquet), still in accuracy. E.g. {task} question {key}: {golds}"
    ]


def item_matrix(outcomes: Outcomes, models: list[str], rejects: str) -> sig.Items:
    """Per model (in the order given) and question (sorted by task, key): records scored and correct."""
    df = outcomes.items
    df = df[df["model"].isin(models) & df["question_key"].notna() & (df["task"] != UNKNOWN)]
    n = df["judged"] + (df["rejected_response"] if rejects == "wrong" else 0)
    df = df.assign(n=n)[n > 0]
    by_question = df.groupby(["task", "question_key"], sort=True)
    cols = by_question.ngroup().to_numpy(dtype=np.int64)  # questions sorted by (task, key)
    question_tasks = by_question.size().index.get_level_values(0)
    tasks = sorted(set(question_tasks))
    task_of = pd.Categorical(question_tasks, categories=tasks).codes.astype(np.int64)
    rows = pd.Categorical(df["model"], categories=models).codes.astype(np.int64)
    shape = (len(models), len(question_tasks))
    n_mat, c_mat = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    np.add.at(n_mat, (rows, cols), df["n"].to_numpy(dtype=np.int64))
    np.add.at(c_mat, (rows, cols), df["correct"].to_numpy(dtype=np.int64))
    return sig.Items(models=list(models), tasks=tasks, task_of=task_of, n=n_mat, c=c_mat)


PAIR_COLUMNS = [
    "model_a", "model_b", "questions", "accuracy_a", "accuracy_b", "a_only", "b_only", "p_value", "p_holm",
    "significant", "test",
]  # fmt: skip
RANK_COLUMNS = ["model", "ranked", "rank", "rank_low", "rank_high", "accuracy_macro", "resamples", "seed"]


def compare_models(
    outcomes: Outcomes, by_model: pd.DataFrame, rejects: str = "wrong", resamples: int = 1000, seed: int = 0
) -> Comparison:
    """pairwise: every pair of models (in by_model's order), exact McNemar on the questions both
    answered, raw and Holm-adjusted p, leaving out the questions with conflicting gold answers (their
    verdicts do not compare: one model was judged against another gold). ranks: rank and ranked from
    by_model (rank_models), and the ranked models' 95% bootstrap rank interval over questions
    (`resamples` seeded resamples, every question, like the accuracy)."""
    by_model = by_model if "ranked" in by_model else rank_models(by_model)
    models = [m for m in by_model["model"] if m != UNKNOWN]
    conflicts = gold_conflicts(outcomes)
    paired = outcomes
    if len(conflicts):
        bad = pd.MultiIndex.from_frame(conflicts[["task", "question_key"]].drop_duplicates())
        keys = pd.MultiIndex.from_frame(outcomes.items[["task", "question_key"]])
        paired = replace(outcomes, items=outcomes.items[~keys.isin(bad)])
    ranks = _ranks(outcomes, by_model, rejects, resamples, seed)
    return Comparison(_pairwise(paired, models, rejects), ranks, resamples, seed, conflicts)


def _pairwise(outcomes: Outcomes, models: list[str], rejects: str) -> pd.DataFrame:
    answered, right = sig.item_outcomes(item_matrix(outcomes, models, rejects))
    pairs = []
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            shared, right_a, right_b, a_only, b_only = sig.paired_counts(answered, right, a, b)
            pairs.append(
                dict(
                    model_a=models[a],
                    model_b=models[b],
                    questions=shared,
                    accuracy_a=right_a / shared if shared else float("nan"),
                    accuracy_b=right_b / shared if shared else float("nan"),
                    a_only=a_only,
                    b_only=b_only,
                )
            )
    pairwise = pd.DataFrame(pairs, columns=PAIR_COLUMNS)
    pairwise["p_value"] = sig.mcnemar_exact_many(pairwise["a_only"], pairwise["b_only"])
    pairwise["p_holm"] = sig.holm(pairwise["p_value"].to_numpy(dtype=float))
    pairwise["significant"] = pairwise["p_holm"] < sig.ALPHA
    pairwise["test"] = "mcnemar-exact"
    return pairwise


def _ranks(
    outcomes: Outcomes, by_model: pd.DataFrame, rejects: str, resamples: int, seed: int
) -> pd.DataFrame:
    ranked = ranked_models(by_model)
    lows: dict[str, int] = {}
    highs: dict[str, int] = {}
    if ranked and resamples > 0:
        sub = item_matrix(outcomes, ranked, rejects)
        lo, hi = sig.rank_interval(sig.bootstrap_ranks(sub, resamples, seed))
        lows, highs = dict(zip(ranked, lo.tolist(), strict=True)), dict(zip(ranked, hi.tolist(), strict=True))
    rows = by_model[by_model["model"] != UNKNOWN]
    ranks = pd.DataFrame(
        {
            "model": rows["model"],
            "ranked": rows["ranked"].astype(bool),
            "rank": rows["rank"],
            "rank_low": [lows.get(m) for m in rows["model"]],
            "rank_high": [highs.get(m) for m in rows["model"]],
            "accuracy_macro": rows["accuracy_macro"],
            "resamples": resamples,
            "seed": seed,
        },
        columns=RANK_COLUMNS,
    ).reset_index(drop=True)
    for c in ("rank", "rank_low", "rank_high"):
        ranks[c] = ranks[c].astype("Int64")
    return ranks


def md_cell(text: str) -> str:
    """A model or task name as a Markdown table cell: a `|` in it (lighteval's `task|few_shot`, a
    model named after a path) would split the row."""
    return str(text).replace("|", "\\|")


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f}"


def leaderboard_markdown(
    by_task: pd.DataFrame,
    by_model: pd.DataFrame,
    extractor: str,
    comparison: Comparison | None = None,
    rejects: str = "wrong",
) -> str:
    scored_rows = by_task[(by_task["n"] > 0) & (by_task["task"] != UNKNOWN)]
    tasks = sorted(scored_rows["task"].unique())
    acc = {(r.model, r.task): r.accuracy for r in scored_rows.itertuples()}
    # imported runs (input.format lm-eval | opencompass): the framework's own accuracy in parentheses
    src = {}
    if "source_accuracy" in by_task:
        src = {(r.model, r.task): r.source_accuracy for r in by_task.itertuples() if r.source_n > 0}
    fw = "source_accuracy_macro" in by_model
    by_model = by_model if "ranked" in by_model else rank_models(by_model)
    lines = _leaderboard_head(extractor, len(tasks), rejects, comparison, bool(src))
    ranks = comparison.ranks.set_index("model") if comparison is not None else None

    def cell(key: tuple[str, str]) -> str:
        if key not in acc:
            return "–"
        return f"{100 * acc[key]:.1f}" + (f" ({100 * src[key]:.1f})" if key in src else "")

    def common(r: Any) -> list[str]:
        cells = [md_cell(r.model), _pct(r.accuracy_macro)]
        if fw:
            cells.append(_pct(r.source_accuracy_macro))
        cells.append(f"{_pct(r.accuracy_micro)} ({_pct(r.ci95_low)}–{_pct(r.ci95_high)})")
        cells += [str(r.n), f"{r.tasks}/{len(tasks)}", f"{r.rejected_record} / {r.rejected_response}"]
        return cells + [cell((r.model, t)) for t in tasks]

    tail = ["model", "macro", *(["framework macro"] if fw else []), "micro (95% CI)", "n", "coverage"]
    tail += ["rejected (record / response)", *map(md_cell, tasks)]
    ranked = set(ranked_models(by_model))
    head = ["rank", "rank 95%", "vs. above", *tail]
    if ranked:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    else:  # an empty table reads as a failure; say why there is none
        lines.append(
            f"No model was scored on all {len(tasks)} tasks, so none is ranked: the models are listed by "
            "macro accuracy over the tasks each has, below."
            if len(tasks)
            else "No records were scored, so no model is ranked (see rejects/ and the reasons printed)."
        )
    ties = tied(by_model)
    in_rank_order = [r for r in by_model.itertuples() if r.model in ranked]
    pairwise = comparison.pairwise if comparison is not None else None
    marks = close_to_above([r.model for r in in_rank_order], pairwise)
    for r, close in zip(in_rank_order, marks, strict=True):
        interval = "–"
        if ranks is not None and not pd.isna(ranks.loc[r.model, "rank_low"]):
            interval = f"{ranks.loc[r.model, 'rank_low']}–{ranks.loc[r.model, 'rank_high']}"
        rank = rank_label(r.rank, r.model in ties)
        lines.append("| " + " | ".join([rank, interval, "≈" if close else "", *common(r)]) + " |")
    fewer = [r for r in by_model.itertuples() if r.model not in ranked and r.model != UNKNOWN]
    lines += _listed_apart([common(r) for r in fewer], tail, len(tasks), by_model, bool(ranked))
    if ties:
        lines.append(
            "\nA rank with `=` (`1=`) is shared: the same macro accuracy (such models are listed by name)."
        )
    lines += tiers_markdown(by_model) + no_answer_markdown(by_model)
    if comparison is not None:
        lines += conflicts_markdown(comparison.conflicts)
    return "\n".join(lines) + "\n"


def _leaderboard_head(
    extractor: str, n_tasks: int, rejects: str, comparison: Comparison | None, framework: bool
) -> list[str]:
    note = " Per task: ours (the framework's own)." if framework else ""
    policy = (
        "response-caused ones count as wrong (`aggregate.rejects=wrong`)"
        if rejects == "wrong"
        else "response-caused ones are left out too (`aggregate.rejects=exclude`)"
    )
    # A verifier writes the verdict itself: say it judged, and that rules settled its certain rows.
    who = (
        f"Judge: `{extractor}` (a verifier; with `extractor.router=strict`, `rules` settles the rows it is certain of)"
        if extractor.startswith("verifier:")
        else f"Extractor: `{extractor}`"
    )
    lines = [
        f"# Leaderboard\n\n{who}. Accuracy in %; macro = mean over tasks; n = records "
        f"scored; coverage = tasks scored of {n_tasks}; rejected = record-caused / response-caused "
        f"rejects: record-caused ones are left out of accuracy, {policy}.{note}\n"
    ]
    if comparison is not None:
        lines.append(
            f"Rank interval: 95%, bootstrap over questions within tasks ({comparison.resamples} resamples, "
            f"seed {comparison.seed}). ≈: not significantly apart from the model above (exact McNemar on the "
            f"questions both answered, Holm-adjusted p ≥ {sig.ALPHA}; all pairs: accuracy/pairwise.parquet). "
            "The rank intervals are not adjusted for multiplicity, ≈ is (Holm), so a narrow interval "
            "can sit beside ≈.\n"
        )
    return lines


def _listed_apart(
    fewer: list[list[str]], head: list[str], n_tasks: int, by_model: pd.DataFrame, ranked_any: bool = True
) -> list[str]:
    """The sections under the ranked table: models scored on fewer tasks; rejects without a model."""
    lines = []
    if fewer:
        lines += [
            "",
            "## Scored on fewer tasks",
            "",
            (
                f"Not ranked: scored on fewer of the {n_tasks} tasks than the models above"
                if ranked_any
                else f"Not ranked: none was scored on all {n_tasks} tasks"
            )
            + ", so their macro (over the tasks they have) is not comparable.",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        lines += ["| " + " | ".join(cells) + " |" for cells in fewer]
    unknown = by_model[by_model["model"] == UNKNOWN]
    if len(unknown):
        u = unknown.iloc[0]
        lines += [
            "",
            f"Not attributed to a model (no readable model field): {int(u['rejected'])} rejected "
            f"({int(u['rejected_record'])} record-caused / {int(u['rejected_response'])} response-caused); "
            "see rejects/.",
        ]
    return lines


def no_answer_by_model(by_model: pd.DataFrame) -> list[tuple[str, int, float, list[tuple[str, float]]]]:
    """(model, judged, no valid answer rate, [(reason, share of judged)] largest first, only the reasons
    that occur) per model with judged records, in by_model's order."""
    reasons = [c.removeprefix(NO_ANSWER_PREFIX) for c in by_model.columns if c.startswith(NO_ANSWER_PREFIX)]
    out = []
    for r in by_model.to_dict("records"):
        if r["model"] == UNKNOWN or not r["judged"]:
            continue
        shares = [(why, float(r[NO_ANSWER_PREFIX + why])) for why in reasons]
        shares = sorted((x for x in shares if x[1] > 0), key=lambda x: -x[1])
        out.append((r["model"], int(r["judged"]), float(r["no_valid_answer_rate"]), shares))
    return out


def no_answer_markdown(by_model: pd.DataFrame) -> list[str]:
    """leaderboard.md's "No answer, by reason" section: per model, the share of its judged records
    extracted as [No valid answer], split by reason (only the reasons that occur)."""
    rows = no_answer_by_model(by_model)
    if not any(nva > 0 for _, _, nva, _ in rows):
        return []
    lines = [
        "",
        "## No answer, by reason",
        "",
        "Share of each model's judged records extracted as `[No valid answer]`, by why "
        "(`no_answer_reason` in judgments/; the reasons: docs/rules.md).",
        "",
    ]
    for model, judged, nva, shares in rows:
        why = ", ".join(f"{_pct(x)}% {reason}" for reason, x in shares) if shares else "none"
        lines.append(f"- {model}: {_pct(nva)}% of {judged} judged" + (f": {why}" if nva > 0 else ""))
    return lines


def tiers_by_model(by_model: pd.DataFrame) -> list[tuple[str, int, dict[str, float]]]:
    """(model, judged, {tier: share of judged}) per model with judged records and a rules_<tier>
    column, in by_model's order; [] when no verdict has a tier (a model extractor judged them all)."""
    if not all(TIER_PREFIX + t in by_model for t in TIERS):
        return []
    out = []
    for r in by_model.to_dict("records"):
        if r["model"] == UNKNOWN or not r["judged"]:
            continue
        out.append((r["model"], int(r["judged"]), {t: float(r[TIER_PREFIX + t]) for t in TIERS}))
    return out if any(sum(shares.values()) > 0 for *_, shares in out) else []


def tiers_markdown(by_model: pd.DataFrame) -> list[str]:
    """leaderboard.md's "Rules' confidence" section: per model, the share of its judged records that
    `rules` read at each tier; `unsure` is a guess worth a look (docs/rules.md)."""
    rows = tiers_by_model(by_model)
    if not rows:
        return []
    lines = [
        "",
        "## Rules' confidence",
        "",
        "Share of each model's judged records whose answer the model-free `rules` read as certain / likely / "
        "unsure (`confidence` in judgments/; a model extractor's verdicts have no tier). An `unsure` "
        "answer is rules' best guess: check those first (docs/rules.md).",
        "",
    ]
    for model, judged, shares in rows:
        tiers = " / ".join(_pct(shares[t]) for t in TIERS)
        lines.append(f"- {md_cell(model)}: {tiers}% certain / likely / unsure of {judged} judged")
    return lines


def conflicts_markdown(conflicts: pd.DataFrame) -> list[str]:
    """leaderboard.md's "Conflicting gold answers" section (accuracy/conflicts.parquet), or []."""
    if not len(conflicts):
        return []
    n = conflicts.groupby(["task", "question_key"]).ngroups
    lines = [
        "",
        "## Conflicting gold answers",
        "",
        f"{n} question(s) carry different gold answers in different records (a data problem: fix the "
        "input). They count in accuracy as given and are left out of the paired tests (≈). All in "
        "accuracy/conflicts.parquet; the first:",
        "",
        "| task | question_key | gold | type | records | e.g. |",
        "|---|---|---|---|---|---|",
    ]
    for r in conflicts.head(10).itertuples():
        lines.append(
            f"| {md_cell(r.task)} | {r.question_key} | {md_cell(r.correct_answer)} | {r.key_answer_type} | "
            f"{r.records} | {md_cell(r.example_record_id)} ({md_cell(r.example_model)}) |"
        )
    return lines


def write_table(loc: Location, name: str, df: pd.DataFrame, csv: bool = True) -> None:
    """A small driver-side table: <loc>/<name>.parquet (and .csv), each written whole (local: temp +
    rename; S3: one PUT)."""
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf)
    write_bytes_atomic(loc.join(f"{name}.parquet"), buf.getvalue())
    if csv:
        write_bytes_atomic(loc.join(f"{name}.csv"), df.to_csv(index=False).encode())


# Same parameters as leaderboard_markdown, which it calls: the tables and their rendering stay apart.
def write_tables(
    accuracy: Location,
    by_task: pd.DataFrame,
    by_model: pd.DataFrame,
    extractor: str,
    comparison: Comparison | None = None,
    rejects: str = "wrong",
) -> str:
    """by_model_task and by_model (.parquet, .csv), pairwise.parquet, ranks.parquet and conflicts.parquet
    (with a comparison), leaderboard.md; returns the leaderboard."""
    accuracy.fs.create_dir(accuracy.path, recursive=True)
    for name, df in (("by_model_task", by_task), ("by_model", by_model)):
        write_table(accuracy, name, df)
    if comparison is not None:
        write_table(accuracy, "pairwise", comparison.pairwise, csv=False)
        write_table(accuracy, "ranks", comparison.ranks, csv=False)
        write_table(accuracy, "conflicts", comparison.conflicts, csv=False)
    board = leaderboard_markdown(by_task, by_model, extractor, comparison, rejects)
    write_bytes_atomic(accuracy.join("leaderboard.md"), board.encode())
    return board
