"""validate: rows -> the same rows with `reject_reason` set for every record that cannot be judged."""

from __future__ import annotations

import pandas as pd

from xfinder_ray.records import FIELDS, check
from xfinder_ray.stages.rows import rejected_by, row_stage


def _validate(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(reject_reason=[check(row) for row in rows[list(FIELDS)].to_dict("records")])


def _stats(df: pd.DataFrame) -> dict[str, int]:
    return {"rejected": rejected_by(df, "validate")}


validate_batch = row_stage("validate", reads=FIELDS, writes=("reject_reason",), fn=_validate, stats=_stats)


def valid_only(batch: pd.DataFrame) -> pd.DataFrame:
    return batch[batch["reject_reason"].isna()].reset_index(drop=True)


def invalid_only(batch: pd.DataFrame) -> pd.DataFrame:
    return batch[batch["reject_reason"].notna()].reset_index(drop=True)
