"""validate: rows -> the same rows with `reject_reason` set for every record that cannot be judged."""

from __future__ import annotations

import pandas as pd

from xfinder_ray.records import FIELDS, check


def validate_batch(batch: pd.DataFrame) -> pd.DataFrame:
    reasons = []
    for row, prior in zip(batch[list(FIELDS)].to_dict("records"), batch["reject_reason"], strict=True):
        reasons.append(prior if isinstance(prior, str) else check(row))
    return batch.assign(reject_reason=reasons)


def valid_only(batch: pd.DataFrame) -> pd.DataFrame:
    return batch[batch["reject_reason"].isna()].reset_index(drop=True)


def invalid_only(batch: pd.DataFrame) -> pd.DataFrame:
    return batch[batch["reject_reason"].notna()].reset_index(drop=True)
