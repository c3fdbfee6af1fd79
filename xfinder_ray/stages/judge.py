"""parse + judge: rows with `raw_output` -> + `extracted_answer`, `judgment`, `no_answer_reason`.

For model extractors the raw generation is parsed into the answer range first; `rules` returns a
key answer already. `no_answer_reason` is null for an answer; for [No valid answer] it is the reason
the extractor gave (`rules`, the router), else `rules`' reason when `rules` finds no answer either,
else "none_found" (extractors.rules_no_answer_reason). A row whose extraction failed (`extract_error`) becomes a reject with the reason;
rows rejected earlier pass through. A math comparison stopped by one of its bounds (time, crash,
size) is a "not equivalent" verdict; the row says which bound in `comparison_bound` (counted in the
manifest, not written to judgments/).
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors import rules_no_answer_reason
from xfinder_ray.judging import judge
from xfinder_ray.judging.math_equiv import bound_counts
from xfinder_ray.parsing import parse_output
from xfinder_ray.records import NO_VALID_ANSWER, parse_answer_range
from xfinder_ray.stages.rows import rejected_by, row_stage

# math_equiv.bound_counts(), in order -> the name a row's `comparison_bound` gets when that bound stopped it.
BOUND_NAMES = ("timeout", "crash", "busy", "size_cap")
_bound_hits = bound_counts  # this process's counts of math comparisons stopped by a bound


def _no_answer_reason(
    key: str, given: object, kat: str, rng: object, question: str, output: str
) -> str | None:
    """None for an answer; for [No valid answer] the extractor's reason, or rules' (see the docstring)."""
    if key != NO_VALID_ANSWER:
        return None
    if isinstance(given, str) and given:
        return given
    return rules_no_answer_reason(kat, question, output, rng)


def _judge(rows: pd.DataFrame, *, math: str, parse: bool) -> pd.DataFrame:
    extracted, verdicts, reasons, bounds, why = [], [], [], [], []
    errors = rows["extract_error"] if "extract_error" in rows else [None] * len(rows)
    given = rows["no_answer_reason"] if "no_answer_reason" in rows else [None] * len(rows)
    for kat, rng, raw, correct, err, said, question, output in zip(
        rows["key_answer_type"],
        rows["standard_answer_range"],
        rows["raw_output"],
        rows["correct_answer"],
        errors,
        given,
        rows["question"],
        rows["llm_output"],
        strict=True,
    ):
        if isinstance(err, str) and err:
            extracted.append(None)
            verdicts.append(None)
            reasons.append(f"extraction failed: {err[:500]}")
            bounds.append(None)
            why.append(None)
            continue
        answer_range = parse_answer_range(rng, kat)
        key = parse_output(raw, kat, answer_range) if parse else raw
        before = _bound_hits() if kat == "math" else None
        verdicts.append(judge(kat, answer_range, key, correct, math=math))
        # Which bound (if any) stopped this comparison: a bounded "not equivalent" verdict.
        hit = None
        if before is not None:
            hit = next((n for n, a, b in zip(BOUND_NAMES, before, _bound_hits(), strict=True) if b > a), None)
        extracted.append(key)
        reasons.append(None)
        bounds.append(hit)
        why.append(_no_answer_reason(key, said, kat, answer_range, question, output))
    return rows.assign(
        extracted_answer=extracted,
        judgment=verdicts,
        reject_reason=reasons,
        comparison_bound=bounds,
        no_answer_reason=why,
    )


def _stats(df: pd.DataFrame) -> dict[str, int]:
    judged = df["judgment"].notna() if "judgment" in df else pd.Series(False, index=df.index)
    bounds = df["comparison_bound"] if "comparison_bound" in df else pd.Series(None, index=df.index)
    out = {
        "judged": int(judged.sum()),
        "correct": int((judged & (df["judgment"] == True)).sum()) if "judgment" in df else 0,  # noqa: E712
        "rejected": rejected_by(df, "judge"),
    }
    out.update({f"comparison_{name}": int((bounds == name).sum()) for name in BOUND_NAMES})
    return out


judge_batch = row_stage(
    "judge",
    reads=(
        "key_answer_type",
        "standard_answer_range",
        "raw_output",
        "correct_answer",
        "question",
        "llm_output",
    ),
    writes=("extracted_answer", "judgment", "comparison_bound", "reject_reason", "no_answer_reason"),
    fn=_judge,
    stats=_stats,
)
