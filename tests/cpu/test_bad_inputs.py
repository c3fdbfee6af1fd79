"""The real scoring job on the bad-input corpus (tests/bad_inputs.py, issue #5).

One job runs over the whole corpus with `input.on_bad_file=skip`: it must finish, reconcile
`input = judged + rejected`, give every case exactly its expected judged and rejected rows (located
by source_file, source_row) with the expected reasons, list exactly the unreadable files as skipped,
and table exactly the judged rows. Each file-level case then runs alone with `on_bad_file=fail`:
BadInputFile naming the file, and no manifest.json.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path, PurePosixPath

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.bad_inputs import (
    CASE_NAMES,
    FILE_LEVEL_CASES,
    JSONL_SUFFIXES,
    case_paths,
    input_paths,
    matches,
    write_corpus,
)
from xfinder_ray.config import load_config
from xfinder_ray.pipeline import run

CONFIG = "configs/local.yaml"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-inputs") / "corpus"
    return root, {c.name: c for c in write_corpus(root)}


def score(paths: list[str], out: Path, *extra: str):
    return run(
        load_config(CONFIG, [f"input={','.join(paths)}", f"output={out}", "extractor.name=rules", *extra])
    )


def where(source_file: str) -> tuple[str, str]:
    """(case, file name) of an output row's source_file (a path or a file:// / s3:// URI)."""
    p = PurePosixPath(str(source_file))
    return p.parent.name, p.name


@pytest.fixture(scope="module")
def corpus_run(ray_local, corpus, tmp_path_factory):
    root, cases = corpus
    out = tmp_path_factory.mktemp("bad-inputs-out") / "out"
    try:
        res = score(input_paths(root, list(cases.values())), out, "input.on_bad_file=skip")
    except Exception as e:  # one short failure for every test that needs the run, not 50 tracebacks
        lines = [line for line in str(e).splitlines() if line.strip()]
        pytest.fail(
            f"the job did not finish on the corpus: {type(e).__name__}: {lines[-1] if lines else ''}", False
        )
    judgments = pd.read_parquet(out / "judgments")
    rejects = pd.read_parquet(out / "rejects")
    for df in (judgments, rejects):
        df["case"] = [where(s)[0] for s in df["source_file"]]
        df["file"] = [where(s)[1] for s in df["source_file"]]
    return res, out, judgments, rejects


# ----------------------------------------------------------------------------------- the corpus


def test_corpus_has_at_least_25_kinds(corpus):
    _, cases = corpus
    assert len(cases) >= 25 and sorted(cases) == CASE_NAMES
    assert all(c.kind and c.expected and c.files for c in cases.values())
    assert FILE_LEVEL_CASES == sorted(n for n, c in cases.items() if c.file_level)
    for c in cases.values():
        assert c.n_judged >= 1, f"{c.name}: every case carries good rows"
        assert len(c.judged_rows) == c.n_judged and len(c.row_reasons) == c.n_rejected


def rows_in(path: Path) -> int:
    """Rows of a data file as pyarrow / gzip see them (Parquet footer; non-blank JSONL lines)."""
    if not path.name.endswith(JSONL_SUFFIXES):
        return pq.ParquetFile(path).metadata.num_rows
    data = path.read_bytes()
    data = gzip.decompress(data) if path.name.endswith(".gz") else data
    return sum(1 for line in data.split(b"\n") if line.strip())


def test_corpus_files_are_what_they_say(corpus):
    """Read back without the job: row counts, unreadable files, the corrupt page."""
    root, cases = corpus
    for c in cases.values():
        for name in c.bad_files:
            with pytest.raises(Exception):  # noqa: B017 - any error: the file cannot be read
                rows_in(root / c.name / name)
        good = [n for n in c.inputs if n not in c.bad_files]
        assert sum(rows_in(root / c.name / n) for n in good) == c.n_rows, c.name
    pf = pq.ParquetFile(root / "corrupt-row-group" / "pages.parquet")
    assert [pf.metadata.row_group(i).num_rows for i in range(3)] == [4, 4, 4]
    assert pf.read_row_group(0).num_rows == pf.read_row_group(2).num_rows == 4
    with pytest.raises(OSError, match="(?i)thrift|page"):
        pf.read_row_group(1)
    assert pq.ParquetFile(root / "parquet-schema-only" / "zero-rows.parquet").metadata.num_rows == 0
    assert (root / "empty-jsonl-0-byte" / "empty.jsonl").stat().st_size == 0


# ------------------------------------------------------------------- one job over the whole corpus


@pytest.mark.ray
def test_corpus_job_reconciles(corpus, corpus_run):
    _, cases = corpus
    res, out, judgments, rejects = corpus_run
    counts = res.manifest["counts"]
    assert counts["input"] == counts["judged"] + counts["rejected"]
    assert counts == {
        "input": sum(c.n_rows for c in cases.values()),
        "judged": sum(c.n_judged for c in cases.values()),
        "rejected": sum(c.n_rejected for c in cases.values()),
    }
    assert (len(judgments), len(rejects)) == (counts["judged"], counts["rejected"])
    assert json.loads((out / "manifest.json").read_text())["counts"] == counts
    # Every row comes from a case file, once; judged record_ids are unique; every reject says why.
    assert set(judgments["case"]) | set(rejects["case"]) <= set(cases)
    for df in (judgments, rejects):
        assert df["source_row"].notna().all()
        assert not df.duplicated(["source_file", "source_row"]).any()
    assert judgments["record_id"].is_unique
    assert rejects["reason"].map(lambda r: isinstance(r, str) and r.strip() != "").all()


@pytest.mark.ray
def test_corpus_job_lists_skipped_files(corpus, corpus_run):
    _, cases = corpus
    res = corpus_run[0]
    skipped = res.manifest["skipped_files"]
    assert all(isinstance(s["error"], str) and s["error"] for s in skipped), skipped
    assert sorted(where(s["file"]) for s in skipped) == sorted(
        (c.name, f) for c in cases.values() for f in c.bad_files
    )


@pytest.mark.ray
def test_corpus_job_tables_count_judged(corpus, corpus_run):
    _, cases = corpus
    res, out, judgments, _ = corpus_run
    table = pd.read_csv(out / "accuracy" / "by_model_task.csv")
    assert table["judged"].sum() == res.manifest["counts"]["judged"]
    assert table["input"].sum() == res.manifest["counts"]["input"]  # every record, judged or rejected
    judged = table[table["judged"] > 0]  # the "(unknown)" row holds unreadable lines: rejects only
    assert judged.groupby("task")["judged"].sum().to_dict() == {
        c.name: c.n_judged for c in cases.values() if c.n_judged
    }
    again = judgments.groupby(["model", "task"]).agg(correct=("judgment", "sum")).reset_index()
    merged = judged.merge(again, on=["model", "task"], suffixes=("", "_re"))
    assert len(merged) == len(judged) and (merged["correct"] == merged["correct_re"]).all()


@pytest.mark.ray
@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_outcome(name, corpus, corpus_run):
    _, cases = corpus
    case = cases[name]
    _, _, judgments, rejects = corpus_run
    j = judgments[judgments["case"] == name]
    r = rejects[rejects["case"] == name]
    assert {(f, int(i)) for f, i in zip(j["file"], j["source_row"], strict=True)} == set(case.judged_rows)
    got = {(f, int(i)): reason for f, i, reason in zip(r["file"], r["source_row"], r["reason"], strict=True)}
    assert set(got) == set(case.row_reasons), got
    assert (len(j), len(r)) == (case.n_judged, case.n_rejected)
    for key, reason in got.items():
        wanted = (*case.reason_contains, *case.row_reasons[key])
        assert all(matches(reason, w) for w in wanted), (key, reason, wanted)
    if name.startswith("duplicate-ids"):
        assert j["record_id"].is_unique and set(r["record_id"]) <= set(j["record_id"])


# ------------------------------------------------------------------------ on_bad_file=fail


@pytest.mark.parametrize("name", FILE_LEVEL_CASES)
@pytest.mark.ray
def test_bad_file_fails_the_job(name, corpus, ray_local, tmp_path):
    from xfinder_ray.stages.read import BadInputFile

    root, cases = corpus
    case = cases[name]
    out = tmp_path / "out"
    with pytest.raises(BadInputFile) as e:
        score(case_paths(root, case), out, "input.on_bad_file=fail")
    for bad in case.bad_files:
        assert str(root / name / bad) in str(e.value)
    assert not (out / "manifest.json").exists()


@pytest.mark.ray
def test_on_bad_file_defaults_to_fail(corpus, ray_local, tmp_path):
    from xfinder_ray.stages.read import BadInputFile

    root, cases = corpus
    with pytest.raises(BadInputFile, match="garbage.parquet"):
        score(case_paths(root, cases["random-bytes-parquet"]), tmp_path / "out")
    assert not (tmp_path / "out" / "manifest.json").exists()
