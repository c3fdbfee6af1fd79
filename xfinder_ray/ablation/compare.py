"""The comparison tables, from the wide records table (one row per input row; fanout.py).

Pure pandas, no Ray: accuracy per model x task per extractor x comparator, agreement between
extractors, model ranks per task (and over all tasks), Kendall tau-b between the extractors'
rankings, the largest rank shifts, accuracy against labels (when the input has them) and the rows
most worth a human look (disagreements; the xFinder extractions the model was least sure of).
"""

from __future__ import annotations

import itertools
import json
import math

import pandas as pd

from xfinder_ray.ablation.fanout import extracted_col, extraction_ok_col, judgment_col
from xfinder_ray.ablation.model import is_model_extractor, logprob_col, raw_col
from xfinder_ray.records import FIELDS, NO_VALID_ANSWER

ALL_TASKS = "(all tasks)"  # the task name of the overall ranking: macro accuracy over the model's tasks


def accuracy_table(wide: pd.DataFrame, extractors: list[str], comparators: list[str]) -> pd.DataFrame:
    """extractor, comparator, model, task, n, correct, accuracy, no_valid_answer_rate."""
    parts = []
    for e in extractors:
        for c in comparators:
            j = wide[judgment_col(e, c)]
            judged = wide[j.notna()]
            df = pd.DataFrame(
                {
                    "model": judged["model"],
                    "task": judged["task"],
                    "correct": judged[judgment_col(e, c)].astype(bool),
                    "nva": judged[extracted_col(e)] == NO_VALID_ANSWER,
                }
            )
            g = df.groupby(["model", "task"], sort=True)
            t = g.agg(n=("correct", "size"), correct=("correct", "sum"), nva=("nva", "sum")).reset_index()
            t.insert(0, "comparator", c)
            t.insert(0, "extractor", e)
            parts.append(t)
    out = pd.concat(parts, ignore_index=True)
    out["correct"] = out["correct"].astype(int)
    out["accuracy"] = out["correct"] / out["n"]
    out["no_valid_answer_rate"] = out.pop("nva") / out["n"]
    return out


def agreement_table(wide: pd.DataFrame, extractors: list[str], comparators: list[str]) -> pd.DataFrame:
    """For each comparator and ordered pair of extractors: the share of rows both judged that got the
    same judgment (`agreement`), and the share with the same extraction (`same_extraction`)."""
    rows = []
    for c in comparators:
        for a, b in itertools.product(extractors, repeat=2):
            ja, jb = wide[judgment_col(a, c)], wide[judgment_col(b, c)]
            both = ja.notna() & jb.notna()
            n = int(both.sum())
            same = int((ja[both].astype(bool) == jb[both].astype(bool)).sum())
            same_x = int((wide.loc[both, extracted_col(a)] == wide.loc[both, extracted_col(b)]).sum())
            rows.append(
                {
                    "comparator": c,
                    "extractor_a": a,
                    "extractor_b": b,
                    "n": n,
                    "same_judgment": same,
                    "agreement": same / n if n else math.nan,
                    "same_extraction": same_x / n if n else math.nan,
                }
            )
    return pd.DataFrame(rows)


def agreement_matrix(agreement: pd.DataFrame, comparator: str, extractors: list[str]) -> pd.DataFrame:
    sub = agreement[agreement["comparator"] == comparator]
    return sub.pivot(index="extractor_a", columns="extractor_b", values="agreement").loc[
        extractors, extractors
    ]


def rank_table(accuracy: pd.DataFrame) -> pd.DataFrame:
    """extractor, comparator, task, model, accuracy, rank (1 = best; ties share the average rank).

    Per task from that task's accuracy, and for ALL_TASKS from the model's macro accuracy."""
    overall = (
        accuracy.groupby(["extractor", "comparator", "model"], sort=True)["accuracy"].mean().reset_index()
    )
    # a mean of fractions carries float noise (1/8 summed in another order is not 1/8): two models with
    # the same macro accuracy would get ranks 6 and 7, not the tie 6.5
    overall["accuracy"] = overall["accuracy"].round(12)
    overall["task"] = ALL_TASKS
    both = pd.concat(
        [accuracy[["extractor", "comparator", "task", "model", "accuracy"]], overall], ignore_index=True
    )
    both["rank"] = both.groupby(["extractor", "comparator", "task"])["accuracy"].rank(
        ascending=False, method="average"
    )
    return both.sort_values(["comparator", "task", "extractor", "rank", "model"]).reset_index(drop=True)


def kendall_tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b of two paired score lists (ties in either are allowed); NaN when undefined
    (fewer than two items, or one list constant)."""
    if len(x) != len(y):
        raise ValueError("kendall_tau_b needs two lists of the same length")
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue  # tied in both: counts in neither tie term of tau-b's denominator
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    # n0 - n1 = concordant + discordant + ties_y, n0 - n2 = concordant + discordant + ties_x
    denom = math.sqrt((concordant + discordant + ties_y) * (concordant + discordant + ties_x))
    return (concordant - discordant) / denom if denom else math.nan


def tau_table(ranks: pd.DataFrame, extractors: list[str]) -> pd.DataFrame:
    """comparator, task, extractor_a, extractor_b (a before b in config order), n_models, tau_b."""
    rows = []
    for (c, task), sub in ranks.groupby(["comparator", "task"], sort=True):
        wide = sub.pivot(index="model", columns="extractor", values="rank")
        for a, b in itertools.combinations([e for e in extractors if e in wide.columns], 2):
            pair = wide[[a, b]].dropna()
            rows.append(
                {
                    "comparator": c,
                    "task": task,
                    "extractor_a": a,
                    "extractor_b": b,
                    "n_models": len(pair),
                    "tau_b": kendall_tau_b(pair[a].tolist(), pair[b].tolist()),
                }
            )
    return pd.DataFrame(
        rows, columns=["comparator", "task", "extractor_a", "extractor_b", "n_models", "tau_b"]
    )


def rank_flips(ranks: pd.DataFrame, extractors: list[str], limit: int) -> pd.DataFrame:
    """The largest moves of a model's rank between two extractors (same comparator and task)."""
    rows = []
    for (c, task), sub in ranks.groupby(["comparator", "task"], sort=True):
        r = sub.pivot(index="model", columns="extractor", values="rank")
        acc = sub.pivot(index="model", columns="extractor", values="accuracy")
        for a, b in itertools.combinations([e for e in extractors if e in r.columns], 2):
            for model in r.index:
                ra, rb = r.at[model, a], r.at[model, b]
                if pd.isna(ra) or pd.isna(rb) or ra == rb:
                    continue
                rows.append(
                    {
                        "comparator": c,
                        "task": task,
                        "model": model,
                        "extractor_a": a,
                        "rank_a": ra,
                        "accuracy_a": acc.at[model, a],
                        "extractor_b": b,
                        "rank_b": rb,
                        "accuracy_b": acc.at[model, b],
                        "shift": rb - ra,
                    }
                )
    cols = ["comparator", "task", "model", "extractor_a", "rank_a", "accuracy_a"]
    cols += ["extractor_b", "rank_b", "accuracy_b", "shift"]
    out = pd.DataFrame(rows, columns=cols)
    if out.empty:
        return out
    out = out.assign(size=out["shift"].abs()).sort_values(
        ["size", "comparator", "task", "model"], ascending=[False, True, True, True], kind="stable"
    )
    # the limit applies per comparator: comparators often agree, and one would crowd out the others
    return out.drop(columns="size").groupby("comparator", sort=False).head(limit).reset_index(drop=True)


def _tag_lists(tags: pd.Series) -> list[list[str]]:
    return [json.loads(t) if isinstance(t, str) else [] for t in tags]


def labelled_accuracy(wide: pd.DataFrame, extractors: list[str], comparators: list[str]) -> pd.DataFrame:
    """Against the labels: extractor, comparator, group_by (all | key_answer_type | tag), group, n,
    extraction_correct, extraction_accuracy, judgment_n, judgment_correct, judgment_accuracy.

    Extraction accuracy does not depend on the comparator (it repeats); rows without a gold key
    answer, rejected rows and extraction errors are not counted."""
    rows = []
    tags = _tag_lists(wide["tags"]) if "tags" in wide else [[] for _ in range(len(wide))]
    for e in extractors:
        ok = wide[extraction_ok_col(e)]
        for c in comparators:
            j = wide[judgment_col(e, c)]
            gold_j = wide["gold_judgment"]
            labelled = ok.notna() & j.notna()
            groups: list[tuple[str, str, pd.Series]] = [("all", "all", labelled)]
            for kat in sorted(wide.loc[labelled, "key_answer_type"].unique()):
                groups.append(("key_answer_type", kat, labelled & (wide["key_answer_type"] == kat)))
            all_tags = sorted({t for i, ts in enumerate(tags) if labelled.iat[i] for t in ts})
            for tag in all_tags:
                has = pd.Series([tag in ts for ts in tags], index=wide.index)
                groups.append(("tag", tag, labelled & has))
            for by, name, mask in groups:
                n = int(mask.sum())
                xc = int(ok[mask].astype(bool).sum())
                jm = mask & gold_j.notna()
                jn = int(jm.sum())
                jc = int((j[jm].astype(bool) == gold_j[jm].astype(bool)).sum())
                rows.append(
                    {
                        "extractor": e,
                        "comparator": c,
                        "group_by": by,
                        "group": name,
                        "n": n,
                        "extraction_correct": xc,
                        "extraction_accuracy": xc / n if n else math.nan,
                        "judgment_n": jn,
                        "judgment_correct": jc,
                        "judgment_accuracy": jc / jn if jn else math.nan,
                    }
                )
    return pd.DataFrame(rows)


# The record and its labels, as review rows show them.
REVIEW_BASE = (*FIELDS, "gold_key_answer", "gold_judgment", "tags", "source_file", "source_row")


def review_table(wide: pd.DataFrame, extractors: list[str], comparator: str, limit: int) -> pd.DataFrame:
    """Valid rows on which the extractors disagree, the most contested first: a split judgment
    (ranked by the size of the minority) before the same judgment from different extractions."""
    jcols = [judgment_col(e, comparator) for e in extractors]
    xcols = [extracted_col(e) for e in extractors]
    valid = wide[wide["reject_reason"].isna()]
    j = valid[jcols]
    n_true = (j == True).sum(axis=1)  # noqa: E712 - elementwise on an object frame
    n_false = (j == False).sum(axis=1)  # noqa: E712
    distinct = valid[xcols].nunique(axis=1, dropna=True)
    minority = pd.concat([n_true, n_false], axis=1).min(axis=1)
    keep = (minority > 0) | (distinct > 1)
    out = valid.loc[keep, [c for c in REVIEW_BASE if c in valid.columns]].copy()
    out["disagreement"] = ["judgment" if m > 0 else "extraction" for m in minority[keep]]
    out["n_correct"] = n_true[keep].astype(int)
    out["n_wrong"] = n_false[keep].astype(int)
    out["minority"] = minority[keep].astype(int)
    out["distinct_extractions"] = distinct[keep].astype(int)
    for e in extractors:
        out[extracted_col(e)] = valid.loc[keep, extracted_col(e)]
        out[judgment_col(e, comparator)] = valid.loc[keep, judgment_col(e, comparator)]
        if is_model_extractor(e):
            out[logprob_col(e)] = valid.loc[keep, logprob_col(e)]
    out["comparator"] = comparator
    out = out.sort_values(
        ["minority", "distinct_extractions", "record_id"], ascending=[False, False, True], kind="stable"
    )
    return out.head(limit).reset_index(drop=True)


def low_confidence_table(
    wide: pd.DataFrame, extractors: list[str], comparator: str, limit: int
) -> pd.DataFrame:
    """Per xFinder extractor, the `limit` judged rows with the lowest log-probability of the raw output
    the key answer was parsed from (the model's least confident extractions), lowest first: the
    record, the extraction, the raw output, the log-probability and the judgment."""
    parts = []
    for e in extractors:
        lp = wide[logprob_col(e)]
        rows = wide[wide[extracted_col(e)].notna() & lp.notna()]
        rows = rows.assign(_lp=rows[logprob_col(e)].astype(float)).sort_values(
            ["_lp", "record_id"], kind="stable"
        )
        rows = rows.head(limit)
        df = rows[[c for c in REVIEW_BASE if c in rows.columns]].copy()
        df.insert(0, "extractor", e)
        df["extracted"] = rows[extracted_col(e)]
        df["raw_output"] = rows[raw_col(e)]
        df["logprob"] = rows["_lp"]
        df["judgment"] = rows[judgment_col(e, comparator)].astype(bool)
        df["comparator"] = comparator
        parts.append(df)
    cols = ["extractor", *REVIEW_BASE, "extracted", "raw_output", "logprob", "judgment", "comparator"]
    if not parts:
        return pd.DataFrame(columns=cols)
    return pd.concat(parts, ignore_index=True)
