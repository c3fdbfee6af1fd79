"""Resume from an unfinished output, the run fingerprint, duplicate record_ids, and the extraction cache.

The crash here is simulated by taking a committed output apart (manifest and some part files
removed), which is exactly what a killed job leaves behind: whole part files, no manifest. The real
kills (driver, replica, S3 server) are in test_faults.py.
"""

import json
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cpu.test_pipeline import make_rows
from xfinder_ray.config import load_config
from xfinder_ray.pipeline import OutputExists, run
from xfinder_ray.resume import RUN_FILE

pytestmark = [pytest.mark.ray]


def write_input(folder, rows, files=3):
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-len(rows) // files)
    for i in range(files):
        # small row groups: several read shards per file
        pq.write_table(
            pa.Table.from_pylist(rows[i * step : (i + 1) * step]),
            folder / f"part-{i}.parquet",
            row_group_size=700,
        )


def score(inp, out, *extra):
    return run(
        load_config("configs/local.yaml", [f"input={inp}", f"output={out}", "extractor.name=rules", *extra])
    )


def read_output(out):
    cols = lambda df: df.drop(columns=[c for c in ("extractor",) if c in df])  # noqa: E731
    j = (
        cols(pd.read_parquet(out / "judgments"))
        .sort_values(["source_file", "source_row"])
        .reset_index(drop=True)
    )
    r = (
        cols(pd.read_parquet(out / "rejects"))
        .sort_values(["source_file", "source_row"])
        .reset_index(drop=True)
    )
    return j, r


def test_resume_finishes_an_unfinished_output_exactly(ray_local, tmp_path):
    rows = make_rows(6000, seed=3)
    write_input(tmp_path / "in", rows)
    full = score(tmp_path / "in", tmp_path / "full")
    assert full.manifest["resume"] == {"resumed": False, "rows_done_before": 0, "rows_this_run": 6004}

    # A crashed run: some parts written, no manifest, no tables.
    crashed = tmp_path / "crashed"
    score(tmp_path / "in", crashed)
    os.remove(crashed / "manifest.json")
    parts = sorted((crashed / "judgments").glob("part-*.parquet"))
    for p in parts[::2]:
        os.remove(p)
    (crashed / "accuracy" / "by_model_task.csv").unlink()
    kept = sum(pq.read_metadata(p).num_rows for p in (crashed / "judgments").glob("part-*.parquet"))
    kept += sum(pq.read_metadata(p).num_rows for p in (crashed / "rejects").glob("part-*.parquet"))

    again = score(tmp_path / "in", crashed)
    assert again.manifest["resume"] == {
        "resumed": True,
        "rows_done_before": kept,
        "rows_this_run": 6004 - kept,
    }
    assert again.manifest["counts"] == full.manifest["counts"]
    j1, r1 = read_output(tmp_path / "full")
    j2, r2 = read_output(crashed)
    pd.testing.assert_frame_equal(j1, j2)
    pd.testing.assert_frame_equal(r1, r2)
    for name in ("by_model_task.csv", "by_model.csv"):
        assert (tmp_path / "full" / "accuracy" / name).read_text() == (
            crashed / "accuracy" / name
        ).read_text()
    assert j2.duplicated(["source_file", "source_row"]).sum() == 0


def test_a_finished_rerun_reads_nothing_and_a_different_job_is_refused(ray_local, tmp_path):
    write_input(tmp_path / "in", make_rows(1500, seed=4), files=1)
    out = tmp_path / "out"
    score(tmp_path / "in", out)
    os.remove(out / "manifest.json")  # crashed between the last part and the commit
    again = score(tmp_path / "in", out)
    assert again.manifest["resume"]["rows_this_run"] == 0 and again.manifest["counts"]["input"] == 1504

    os.remove(out / "manifest.json")
    # An unfinished run of a different job is refused unless output.overwrite=true (then it starts over).
    with pytest.raises(OutputExists, match="differs in: comparator"):
        score(tmp_path / "in", out, "judge.math=xfinder-compat", "output.overwrite=false")
    fresh = score(tmp_path / "in", out, "judge.math=xfinder-compat", "output.overwrite=true")
    assert fresh.manifest["resume"]["resumed"] is False
    assert json.loads((out / RUN_FILE).read_text())["comparator"] == "xfinder-compat"

    # Changing an input file changes the fingerprint too: no silent mix of old and new rows.
    os.remove(out / "manifest.json")
    write_input(tmp_path / "in", make_rows(1400, seed=5), files=1)
    with pytest.raises(OutputExists, match="differs in: comparator, input"):
        score(tmp_path / "in", out, "output.overwrite=false")


def test_duplicate_record_ids_first_occurrence_wins(ray_local, tmp_path):
    rows = make_rows(300, seed=6)[:300]
    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows + [rows[5], rows[5]]), folder / "a.parquet")  # twice more in a
    pq.write_table(pa.Table.from_pylist([rows[7], dict(rows[9], llm_output="other")]), folder / "b.parquet")
    res = score(folder, tmp_path / "out")
    assert res.manifest["counts"] == {"input": 304, "judged": 300, "rejected": 4}
    assert res.manifest["duplicates_rejected"] == 4
    j, r = read_output(tmp_path / "out")
    assert j["record_id"].is_unique and len(j) == 300
    assert sorted(r["record_id"]) == sorted(
        [rows[5]["record_id"]] * 2 + [rows[7]["record_id"], rows[9]["record_id"]]
    )
    assert r["reason"].str.startswith("duplicate record_id: first occurrence is ").all()
    first = j.set_index("record_id").loc[rows[9]["record_id"]]
    assert first["source_file"].endswith("a.parquet") and first["source_row"] == 9
    table = pd.read_csv(tmp_path / "out" / "accuracy" / "by_model_task.csv")
    assert table["n"].sum() == 300
