"""route (optional, `extractor.router: strict`): rows -> + `raw_output` and `extractor` for the valid
rows whose key answer is beyond doubt (extractors/router.py); those rows skip the prompt, the cache and
the model. A settled [No valid answer] (a `certain` one) keeps `rules`' `no_answer_reason`. Every other
row passes through untouched.
"""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors.router import ROUTER_VERSION, strict_extraction
from xfinder_ray.records import FIELDS, validate
from xfinder_ray.stages.cache import flag
from xfinder_ray.stages.rows import row_stage

ROUTED_BY = f"router:{ROUTER_VERSION}"


def _route(rows: pd.DataFrame) -> pd.DataFrame:
    settled = [strict_extraction(validate(row)) for row in rows[list(FIELDS)].to_dict("records")]
    return rows.assign(
        raw_output=[e.answer if e is not None else None for e in settled],
        routed=[e is not None for e in settled],
        extractor=[ROUTED_BY if e is not None else None for e in settled],
        confidence=[e.confidence if e is not None else None for e in settled],
        no_answer_reason=[e.no_answer_reason if e is not None else None for e in settled],
    )


def _stats(df: pd.DataFrame) -> dict[str, int]:
    return {"routed": int(flag(df["routed"], True).sum()) if "routed" in df else 0}


route_batch = row_stage(
    "route",
    reads=FIELDS,
    writes=("raw_output", "routed", "extractor", "confidence", "no_answer_reason"),
    fn=_route,
    stats=_stats,
)
