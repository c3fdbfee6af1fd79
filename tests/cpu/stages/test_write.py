"""write (stages/write.py), without a Ray cluster: judged rows and rejects to their tables, each
stage's counts over the written rows, retried tasks overwriting their own files."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pyarrow.parquet as pq

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.extractors.rules import NO_ANSWER_REASONS
from xfinder_ray.stages.extract import extract_stats, record_batch
from xfinder_ray.stages.judge import judge_batch
from xfinder_ray.stages.read import read_stats
from xfinder_ray.stages.validate import validate_batch
from xfinder_ray.stages.write import JUDGMENT_SCHEMA, OutputSink, PartsSink
from xfinder_ray.storage import resolve


def _judged_batch() -> pd.DataFrame:
    df = batch(
        record(0),
        record(1, correct_answer=None),
        record(2, llm_output="It is (B)."),
        record(3),
        record(4, llm_output="Hmm, maybe A, or perhaps C; hard to say."),  # rules: [No valid answer]
    )
    df.loc[3, "reject_reason"] = "duplicate record_id"  # as the read stage marks it
    df = validate_batch(df)
    df = record_batch(df, name="rules")
    return judge_batch(df, math="math-verify", parse=False)


def _sink(tmp_path) -> OutputSink:
    out = resolve(str(tmp_path / "out"))
    stats = {
        "read": read_stats,
        "validate": validate_batch.stats,
        "extract": extract_stats,
        "judge": judge_batch.stats,
    }
    sink = OutputSink(out.join("judgments"), out.join("rejects"), "rules:rules-2", "math-verify", None, stats)
    sink.on_write_start()
    return sink


def test_rows_go_to_their_tables_with_the_stage_that_rejected_them(tmp_path):
    sink = _sink(tmp_path)
    result = sink.write([_judged_batch()], None)
    sink.on_write_complete(SimpleNamespace(write_returns=[result, result]))
    judged = pq.read_table(tmp_path / "out" / "judgments").to_pandas()
    rejects = pq.read_table(tmp_path / "out" / "rejects").to_pandas().sort_values("source_row")
    assert sorted(judged["record_id"]) == ["r0", "r2", "r4"]
    judged = judged.sort_values("record_id").reset_index(drop=True)
    assert list(judged["judgment"]) == [True, False, False]
    assert set(judged["extractor"]) == {"rules:rules-2"}
    # no_answer_reason: null for answers, rules' reason for the [No valid answer]
    assert (
        judged["no_answer_reason"][:2].isna().all() and judged.loc[2, "no_answer_reason"] in NO_ANSWER_REASONS
    )
    assert pq.read_schema(next((tmp_path / "out" / "judgments").glob("*.parquet"))).remove_metadata() == (
        JUDGMENT_SCHEMA
    )
    assert list(rejects["stage"]) == ["validate", "read"]
    assert "comparison_bound" not in judged and "rejected_by" not in judged  # internal columns
    # Counts per stage over the written rows, summed over write tasks (two identical ones here).
    assert sink.counts["judged"] == 6 and sink.counts["rejected"] == 4
    assert sink.stage_counts["read"] == {"rows": 10, "rejected": 2}
    assert sink.stage_counts["validate"] == {"rejected": 2}
    assert sink.stage_counts["extract"] == {"extracted": 6, "errors": 0}
    assert sink.stage_counts["judge"]["judged"] == 6 and sink.stage_counts["judge"]["correct"] == 2


def test_a_retried_write_overwrites_its_own_file(tmp_path):
    sink = _sink(tmp_path)
    sink.write([_judged_batch()], None)
    sink.write([_judged_batch()], None)  # the same rows again, as a retried task writes them
    assert len(list((tmp_path / "out" / "judgments").glob("part-*.parquet"))) == 1
    assert pq.read_table(tmp_path / "out" / "judgments").num_rows == 3


def test_parts_sink_keeps_a_fixed_schema_and_position_keyed_names(tmp_path):
    import pyarrow as pa

    schema = pa.schema([("source_file", pa.string()), ("source_row", pa.int64()), ("v", pa.string())])
    sink = PartsSink(resolve(str(tmp_path / "records")), schema)
    sink.on_write_start()
    block = pd.DataFrame({"source_row": [0, 1], "v": [None, None], "extra": [1, 2], "source_file": "f"})
    assert sink.write([block], None) == 2
    assert sink.write([block], None) == 2
    files = list((tmp_path / "records").glob("part-*.parquet"))
    assert len(files) == 1
    assert pq.read_schema(files[0]).remove_metadata() == schema
