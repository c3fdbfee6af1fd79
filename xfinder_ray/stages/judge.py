"""parse + judge: rows with `raw_output` -> + `extracted_answer`, `judgment`.

For model extractors the raw generation is parsed into the answer range first; `rules` returns a
key answer already. A row whose extraction failed (`extract_error`) becomes a reject with the reason;
rows rejected earlier pass through.
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.judging import judge
from xfinder_ray.parsing import parse_output
from xfinder_ray.records import parse_answer_range


def judge_batch(batch: pd.DataFrame, *, math: str, parse: bool) -> pd.DataFrame:
    extracted, verdicts, reasons = [], [], []
    errors = batch["extract_error"] if "extract_error" in batch else [None] * len(batch)
    for kat, rng, raw, correct, err, prior in zip(
        batch["key_answer_type"],
        batch["standard_answer_range"],
        batch["raw_output"],
        batch["correct_answer"],
        errors,
        batch["reject_reason"],
        strict=True,
    ):
        if isinstance(prior, str):
            extracted.append(None)
            verdicts.append(None)
            reasons.append(prior)
            continue
        if isinstance(err, str) and err:
            extracted.append(None)
            verdicts.append(None)
            reasons.append(f"extraction failed: {err[:500]}")
            continue
        answer_range = parse_answer_range(rng, kat)
        key = parse_output(raw, kat, answer_range) if parse else raw
        extracted.append(key)
        verdicts.append(judge(kat, answer_range, key, correct, math=math))
        reasons.append(None)
    return batch.assign(extracted_answer=extracted, judgment=verdicts, reject_reason=reasons)
