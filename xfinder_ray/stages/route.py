"""route (optional, `extractor.router: strict`): rows -> + `raw_output` and `extractor` for the valid
rows whose key answer is beyond doubt (extractors/router.py); those rows skip the prompt, the cache and
the model. Every other row passes through untouched.
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors.router import ROUTER_VERSION, strict_answer
from xfinder_ray.extractors.rules import CERTAIN
from xfinder_ray.records import FIELDS, validate
from xfinder_ray.stages.cache import flag
from xfinder_ray.stages.rows import row_stage

ROUTED_BY = f"router:{ROUTER_VERSION}"


def _route(rows: pd.DataFrame) -> pd.DataFrame:
    answers = [strict_answer(validate(row)) for row in rows[list(FIELDS)].to_dict("records")]
    return rows.assign(
        raw_output=answers,
        routed=[a is not None for a in answers],
        extractor=[ROUTED_BY if a is not None else None for a in answers],
        confidence=[CERTAIN if a is not None else None for a in answers],
    )


def _stats(df: pd.DataFrame) -> dict[str, int]:
    return {"routed": int(flag(df["routed"], True).sum()) if "routed" in df else 0}


route_batch = row_stage(
    "route",
    reads=FIELDS,
    writes=("raw_output", "routed", "extractor", "confidence"),
    fn=_route,
    stats=_stats,
)
