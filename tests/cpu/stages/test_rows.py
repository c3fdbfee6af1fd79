"""The row-stage helper (xfinder_ray/stages/rows.py): declared columns checked, rows not in play passed
through in place, rejections marked with the stage's name. No Ray."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from xfinder_ray.stages.rows import REJECTED_BY, row_stage


def _values(column: pd.Series) -> list:
    """The column's values with every null as None (pandas may infer a string dtype with NaN)."""
    return [None if pd.isna(v) else v for v in column]


def _frame(n: int = 4, reasons=None) -> pd.DataFrame:
    return pd.DataFrame(
        {"x": list(range(n)), "reject_reason": reasons or [None] * n, "note": [f"n{i}" for i in range(n)]}
    )


def _double(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(y=rows["x"] * 2)


def test_a_stage_sees_only_its_rows_and_the_others_pass_through_in_place():
    seen = []

    def spy(rows):
        seen.extend(rows["x"])
        return _double(rows)

    stage = row_stage("double", reads=("x",), writes=("y",), fn=spy)
    out = stage(_frame(reasons=[None, "bad", None, "worse"]))
    assert seen == [0, 2]
    assert list(out["x"]) == [0, 1, 2, 3]  # order kept
    assert _values(out["y"]) == [0, None, 4, None]
    assert list(out["note"]) == ["n0", "n1", "n2", "n3"]  # untouched columns untouched
    assert _values(out["reject_reason"]) == [None, "bad", None, "worse"]


def test_outputs_set_by_an_earlier_stage_are_kept_on_rows_passed_through():
    stage = row_stage("double", reads=("x",), writes=("y",), fn=_double)
    df = _frame(reasons=[None, "bad", None, None]).assign(y=[9, 8, 7, 6])
    assert list(stage(df)["y"]) == [0, 8, 4, 6]


def test_rows_the_stage_rejects_carry_its_name_and_earlier_rejects_keep_theirs():
    def reject_odd(rows):
        return rows.assign(reject_reason=[("odd" if x % 2 else None) for x in rows["x"]])

    first = row_stage("read-ish", reads=("x",), writes=("reject_reason",), fn=lambda r: r)
    stage = row_stage("parity", reads=("x",), writes=("reject_reason",), fn=reject_odd)
    out = stage(first(_frame(n=5, reasons=[None, None, None, None, "unreadable"])))
    assert _values(out["reject_reason"]) == [None, "odd", None, "odd", "unreadable"]
    assert _values(out[REJECTED_BY]) == [None, "parity", None, "parity", None]


def test_missing_declared_columns_name_the_stage():
    stage = row_stage("double", reads=("x", "z"), writes=("y",), fn=_double)
    with pytest.raises(KeyError, match=r"'double' needs columns \['z'\]"):
        stage(_frame())


def test_a_stage_that_drops_rows_or_its_columns_is_an_error():
    with pytest.raises(ValueError, match="must return its 4 rows"):
        row_stage("lossy", reads=("x",), writes=("y",), fn=lambda r: _double(r).head(2))(_frame())
    with pytest.raises(ValueError, match="must return"):
        row_stage("silent", reads=("x",), writes=("y",), fn=lambda r: r)(_frame())


def test_order_by_sorts_the_whole_batch_first():
    stage = row_stage("double", reads=("x",), writes=("y",), fn=_double, order_by=("key",))
    df = _frame(reasons=[None, "bad", None, None]).assign(key=["d", "a", "c", "b"])
    out = stage(df)
    assert list(out["key"]) == ["a", "b", "c", "d"]
    assert _values(out["y"]) == [None, 6, 4, 0]


def test_arrow_backed_columns_as_ray_hands_them_over():
    table = pa.table({"x": [1, 2, 3], "reject_reason": pa.array([None, "bad", None], pa.string())})
    df = table.to_pandas(types_mapper=pd.ArrowDtype)
    out = row_stage("double", reads=("x",), writes=("y",), fn=_double)(df)
    assert _values(out["y"]) == [2, None, 6]


def test_the_stage_is_a_function_named_after_it_with_its_declaration():
    def count(df):
        return {"rows": len(df)}

    stage = row_stage("double", reads=("x",), writes=("y",), fn=_double, stats=count)
    assert stage.__name__ == "double"  # Ray Data shows MapBatches(double)
    assert stage.stage.reads == ("x",) and stage.stage.writes == ("y",)
    assert stage.stats(_frame()) == {"rows": 4}


def test_a_stage_that_rejects_without_declaring_it_is_an_error():
    # Otherwise its reject reasons would be lost on batches where other rows pass through.
    def reject_all(rows):
        return rows.assign(y=0, reject_reason="no")

    with pytest.raises(ValueError, match="does not declare reject_reason"):
        row_stage("sneaky", reads=("x",), writes=("y",), fn=reject_all)(_frame())
