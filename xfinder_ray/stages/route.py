"""route (optional, `extractor.router: strict`): rows -> + `raw_output` and `extractor` for the valid
rows whose key answer is beyond doubt (extractors/router.py); those rows skip the prompt, the cache and
the model. Every other row passes through untouched.
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors.router import ROUTER_VERSION, strict_answer
from xfinder_ray.extractors.rules import CERTAIN
from xfinder_ray.records import FIELDS, validate

ROUTED_BY = f"router:{ROUTER_VERSION}"


def route_batch(batch: pd.DataFrame) -> pd.DataFrame:
    answers: list[str | None] = []
    for row, reason in zip(batch[list(FIELDS)].to_dict("records"), batch["reject_reason"], strict=True):
        answers.append(None if isinstance(reason, str) else strict_answer(validate(row)))
    return batch.assign(
        raw_output=answers,
        routed=[a is not None for a in answers],
        extractor=[ROUTED_BY if a is not None else None for a in answers],
        confidence=[CERTAIN if a is not None else None for a in answers],
    )
