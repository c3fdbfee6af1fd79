"""parse + judge: rows with `raw_output` -> + `extracted_answer`, `judgment`, `no_answer_reason`.

For model extractors the raw generation is parsed into the answer range first; `rules` returns a
key answer already. `no_answer_reason` is null for an answer; for [No valid answer] it is the reason
the extractor gave (`rules`, the router), else `rules`' reason when `rules` finds no answer either,
else "none_found" (extractors.rules_no_answer_reason). A row whose extraction failed (`extract_error`) becomes a reject with the reason;
rows rejected earlier pass through. A math comparison stopped by one of its bounds (time, crash,
size) is a "not equivalent" verdict; the row says which bound in `comparison_bound` (counted in the
manifest, not written to judgments/).

With a verifier judge (`verifier`: its checkpoint; docs/judges.md) `raw_output` is the verifier's text
and the verdict is the judgment: correct/incorrect; a response it calls invalid (CompassVerifier's C)
is wrong as [No valid answer] with the type as the reason; an output that is no verdict is a reject
("verifier gave no verdict: ..."). Rows the router settled are judged as above.
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors import rules_no_answer_reason
from xfinder_ray.judging import judge
from xfinder_ray.judging.math_equiv import bound_counts
from xfinder_ray.parsing import parse_output
from xfinder_ray.records import NO_VALID_ANSWER, parse_answer_range
from xfinder_ray.stages.cache import flag
from xfinder_ray.stages.rows import rejected_by, row_stage
from xfinder_ray.verifiers import parse_verdict
from xfinder_ray.verifiers.verdict import CORRECT, INVALID

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


# CompassVerifier's types of an invalid response (its verdict C) -> our no-answer reasons.
VERIFIER_NO_ANSWER = {"INCOMPLETE": "truncated", "REPETITIVE": "loop", "REFUSAL": "refusal"}
NO_VERDICT = "verifier gave no verdict"  # a reject reason's start (response-caused: stages/aggregate.py)


def from_verdict(checkpoint: str, raw: str) -> tuple[str | None, bool | None, str | None, str | None]:
    """(extracted_answer, judgment, reject reason, no-answer reason) from a verifier's output. A
    response it calls invalid (CompassVerifier's C) is wrong with no answer, with the type as the
    reason; an output that is no verdict at all is a reject with the text, never a silent "wrong"."""
    v = parse_verdict(checkpoint, raw)
    if not v.parsed:
        return None, None, f"{NO_VERDICT}: {raw[:300]!r}", None
    if v.verdict == INVALID:
        return NO_VALID_ANSWER, False, None, VERIFIER_NO_ANSWER.get(v.detail or "", "none_found")
    return "", v.verdict == CORRECT, None, None


def _judge(rows: pd.DataFrame, *, math: str, parse: bool, verifier: str | None = None) -> pd.DataFrame:
    extracted, verdicts, reasons, bounds, why = [], [], [], [], []
    errors = rows["extract_error"].tolist() if "extract_error" in rows else [None] * len(rows)
    given = rows["no_answer_reason"].tolist() if "no_answer_reason" in rows else [None] * len(rows)
    # With a verifier judge, the rows the router settled carry rules' answer; the others a verdict.
    by_verdict = None
    # A verdict's log-probability (the engine's, or the cache's): its confidence in judgments/.
    logprobs = [None if pd.isna(v) else float(v) for v in rows.get("logprob", [None] * len(rows))]
    confidence: list[float | None] = [None] * len(rows)
    if verifier:
        routed = flag(rows["routed"], True) if "routed" in rows else pd.Series(False, index=rows.index)
        by_verdict = (~routed).tolist()
    for i, (kat, rng, raw, correct, err, said, question, output) in enumerate(
        zip(
            *(
                rows[c].tolist()  # lists: iterating an Arrow-backed column is ~5x slower
                for c in ("key_answer_type", "standard_answer_range", "raw_output", "correct_answer")
            ),
            errors,
            given,
            rows["question"].tolist(),
            rows["llm_output"].tolist(),
            strict=True,
        )
    ):
        if isinstance(err, str) and err:
            extracted.append(None)
            verdicts.append(None)
            reasons.append(f"extraction failed: {err[:500]}")
            bounds.append(None)
            why.append(None)
            continue
        if by_verdict is not None and by_verdict[i]:
            key, verdict, reason, no_answer = from_verdict(verifier, raw)
            extracted.append(key)
            verdicts.append(verdict)
            reasons.append(reason)
            bounds.append(None)
            why.append(no_answer)
            confidence[i] = logprobs[i] if verdict is not None else None
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
        verdict_logprob=confidence,
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
    writes=(
        "extracted_answer",
        "judgment",
        "comparison_bound",
        "reject_reason",
        "no_answer_reason",
        "verdict_logprob",
    ),
    fn=_judge,
    stats=_stats,
)
