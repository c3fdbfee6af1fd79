"""The row-stage helper every per-row stage is built with (after NeMo Curator's inputs()/outputs() and
datatrove's per-step stats).

A `RowStage` declares the columns it reads and writes, which rows it works on (by default the rows
not rejected so far), and what to count. The helper checks the declared columns, hands the stage only
its rows, passes every other row through in place (its declared outputs kept if set earlier, else
null), and marks the rows the stage rejects with its name in `rejected_by`. So "skip the rejected
rows" lives here, once.

Counting: each stage's `stats` function is applied by the output writer to the rows it writes
(stages/write.py), and the sums go into manifest.json under `stages`. Counting what was written,
rather than bumping a counter as a batch passes, keeps the figures exact when Ray retries a task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

REJECT_REASON = "reject_reason"
REJECTED_BY = "rejected_by"  # the stage that rejected the row; null for rows rejected while reading


def not_rejected(batch: pd.DataFrame) -> pd.Series:
    """The rows still in play: no stage has rejected them."""
    return batch[REJECT_REASON].isna()


def rejected_by(df: pd.DataFrame, stage: str) -> int:
    """How many of these rows `stage` rejected."""
    return int((df[REJECTED_BY] == stage).sum()) if REJECTED_BY in df else 0


@dataclass(frozen=True)
class RowStage:
    name: str
    reads: tuple[str, ...]  # columns the stage needs (besides reject_reason)
    writes: tuple[str, ...]  # columns every row leaves with (null where the stage did not run)
    fn: Callable[..., pd.DataFrame]  # its rows (index reset) -> the same rows, same order, plus `writes`
    rows: Callable[[pd.DataFrame], pd.Series] = not_rejected  # which rows it works on
    stats: Callable[[pd.DataFrame], dict[str, int]] | None = None  # applied to the written rows
    order_by: tuple[str, ...] = ()  # sort the batch by these first (stable), e.g. to group prompts

    def __call__(self, batch: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
        """The stage over one batch (Ray Data calls it with the map's fn_kwargs)."""
        missing = [c for c in (REJECT_REASON, *self.reads, *self.order_by) if c not in batch.columns]
        if missing:
            raise KeyError(
                f"stage {self.name!r} needs columns {missing}; the batch has {list(batch.columns)}"
            )
        if self.order_by:
            batch = batch.sort_values(list(self.order_by), kind="stable").reset_index(drop=True)
        if REJECTED_BY not in batch:
            batch = batch.assign(**{REJECTED_BY: None})
        mine = self.rows(batch).to_numpy(dtype=bool)
        ours = batch[mine].reset_index(drop=True)
        done = self.fn(ours, **kwargs) if len(ours) else ours.assign(**dict.fromkeys(self.writes))
        absent = [c for c in self.writes if c not in done.columns]
        if absent or len(done) != len(ours):
            raise ValueError(f"stage {self.name!r} must return its {len(ours)} rows with {list(self.writes)}")
        if REJECT_REASON not in self.writes and done[REJECT_REASON].notna().any():
            raise ValueError(f"stage {self.name!r} rejects rows but does not declare reject_reason in writes")
        if REJECT_REASON in self.writes:
            newly = done[REJECT_REASON].notna().to_numpy(dtype=bool) & ours[REJECTED_BY].isna().to_numpy(
                dtype=bool
            )
            done = done.assign(**{REJECTED_BY: ours[REJECTED_BY].where(~newly, self.name)})
        if mine.all():
            return done
        # Put the stage's columns back in place; every other column (and row order) is untouched.
        # Object arrays, not pd.concat: Ray hands some columns over in extension dtypes concat rejects.
        updates = {}
        for c in (*self.writes, REJECTED_BY):
            col = batch[c].to_numpy(dtype=object, na_value=None) if c in batch else np.full(len(batch), None)
            col = col.copy()
            col[mine] = done[c].to_numpy(dtype=object, na_value=None)
            updates[c] = col
        return batch.assign(**updates)


def row_stage(
    name: str,
    *,
    reads: tuple[str, ...],
    writes: tuple[str, ...],
    fn: Callable[..., pd.DataFrame],
    rows: Callable[[pd.DataFrame], pd.Series] = not_rejected,
    stats: Callable[[pd.DataFrame], dict[str, int]] | None = None,
    order_by: tuple[str, ...] = (),
) -> Callable[..., pd.DataFrame]:
    """A RowStage as a plain function named after the stage (so Ray Data's progress and dashboard show
    `MapBatches(validate)`), with the declaration at `.stage` and its counts at `.stats`."""
    spec = RowStage(name, reads, writes, fn, rows, stats, order_by)

    def run(batch: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
        return spec(batch, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.stage = spec  # type: ignore[attr-defined]
    run.stats = stats  # type: ignore[attr-defined]
    return run
