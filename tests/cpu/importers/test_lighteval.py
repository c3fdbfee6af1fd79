"""The lighteval importer (xfinder_ray/importers/lighteval.py, `input.format=lighteval`).

tests/data/importers/lighteval/ holds the output of real lighteval runs of SmolLM2-135M-Instruct over
small local tasks (README.md there): v0.13/ in the nested details schema (lighteval 0.13.0), v0.10/ in
the flat one used before v0.11 (lighteval 0.10.0). Broken files and rows are written here.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xfinder_ray import records
from xfinder_ray.importers import ImportInputError, import_files
from xfinder_ray.importers import lighteval as le
from xfinder_ray.importers.formats import FORMATS

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "importers" / "lighteval"
NEW = DATA / "v0.13"  # lighteval 0.13.0: doc / model_response / metric
OLD = DATA / "v0.10"  # lighteval 0.10.0: example / predictions / gold / metrics ...
MODEL = "SmolLM2-135M-Instruct"


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def details(run: Path) -> dict[str, Path]:
    """lighteval's task name (as in the file name) -> its details file."""
    out = {}
    for p in sorted(run.glob("details/*/*/details_*.parquet")):
        m = le.DETAILS_NAME.match(p.name)
        out[m.group("task")] = p
    return out


def results(run: Path) -> dict[str, dict]:
    """The `results` of every results_<date>.json of a run folder, merged (task -> metric -> value)."""
    merged: dict[str, dict] = {}
    for p in sorted(run.glob("results/*/results_*.json")):
        merged.update(json.loads(p.read_text())["results"])
    return merged


def check_all(rep, out: Path) -> list[dict]:
    assert rep.reconciles()
    recs = rows(out / "records.parquet")
    for r in recs:
        assert records.check(r) is None, r["record_id"]
        assert r["source_framework"] == "lighteval" and r["model"] == MODEL
    return recs


def test_registered():
    assert "lighteval" in FORMATS


def test_new_schema_run(tmp_path):
    rep = import_files("lighteval", [str(NEW)], str(tmp_path))
    recs = {r["record_id"]: r for r in check_all(rep, tmp_path)}
    raw = details(NEW)
    n_rows = {t: pq.ParquetFile(p).metadata.num_rows for t, p in raw.items()}
    # every row read; the log-likelihood task is skipped; 3 documents x 2 generations for pass@k
    assert rep.skipped == n_rows["arc_mini_ll|0"] == 5
    assert rep.read == sum(n_rows.values()) + n_rows["gsm8k_mini_pass|0"]
    assert (rep.written, rep.rejected) == (rep.read - rep.skipped, 0)
    assert [(s["task"], s["n"]) for s in rep.skipped_tasks] == [("arc_mini_ll:0", 5)]
    assert "log-likelihood" in rep.skipped_tasks[0]["reason"]
    for task in ("gsm8k_mini|1", "mmlu_mini_gen|0", "mcq_mini_text|0"):  # as in the file names
        for row in rows(raw[task]):
            doc, resp = row["doc"], row["model_response"]
            r = recs[f"{MODEL}::{le.task_name(task)}::{doc['id']}"]
            assert r["question"] == doc["query"] and "Ann has 2 pens" not in r["question"]  # no few-shot
            assert r["llm_output"] == resp["text_post_processed"][0] == resp["text"][0]
            assert (r["task"], r["source_task"], r["source_index"]) == (
                task.replace("|", ":"),
                r["task"],
                doc["id"],
            )
            assert r["source_path"] == str(raw[task])
            if task == "gsm8k_mini|1":  # one choice: the worked answer, `... #### 7`
                assert (r["key_answer_type"], r["standard_answer_range"]) == (
                    "math",
                    records.MATH_ANSWER_RANGE,
                )
                assert r["correct_answer"] == doc["choices"][0].rsplit("####", 1)[1].strip()
                assert r["source_metric"] == "extractive_match"  # first of extractive_match, em
                assert r["source_judgment"] is bool(row["metric"]["extractive_match"])
            else:
                letter = "ABCD"[doc["gold_index"]]
                assert (r["key_answer_type"], r["correct_answer"]) == ("alphabet_option", letter)
                pairs = json.loads(r["standard_answer_range"])
                assert [p[0] for p in pairs] == list("ABCD")
                if task == "mmlu_mini_gen|0":  # choices are the letters: the options come from the query
                    assert doc["choices"] == list("ABCD")
                    assert all(f"\n{a}) {t}" in doc["query"] for a, t in pairs)
                    assert r["source_metric"] == "extractive_match"
                else:  # choices are the option texts
                    assert [p[1] for p in pairs] == doc["choices"]
                    assert r["source_metric"] == "em"
                metric = r["source_metric"]
                assert r["source_judgment"] is bool(row["metric"][metric])
    assert any("metrics ['extractive_match', 'em']" in n and "'extractive_match'" in n for n in rep.notes)


def test_repeated_generations_are_distinct_records(tmp_path):
    rep = import_files("lighteval", [str(NEW)], str(tmp_path))
    recs = check_all(rep, tmp_path)
    (path,) = [p for t, p in details(NEW).items() if t == "gsm8k_mini_pass|0"]
    raw = rows(path)
    got = {r["source_index"]: r for r in recs if r["task"] == "gsm8k_mini_pass:0"}
    assert len(got) == sum(len(row["model_response"]["text"]) for row in raw) == 6
    for row in raw:
        for k, text in enumerate(row["model_response"]["text"]):
            r = got[f"{row['doc']['id']}#sample{k}"]
            assert r["llm_output"] == text and r["question"] == row["doc"]["query"]
            # lighteval's pass@k covers both generations: no per-record verdict
            assert r["source_judgment"] is None and r["source_metric"] is None
    assert any("2 generations per document" in n for n in rep.notes)


@pytest.mark.parametrize("run, n_tasks", [(NEW, 3), (OLD, 2)], ids=["v0.13", "v0.10"])
def test_source_accuracy_is_lightevals_own(tmp_path, run, n_tasks):
    """Over the imported records, the framework's verdicts give the figure lighteval's results file
    reports for the task and metric (no sample is rejected, so they are the same samples)."""
    rep = import_files("lighteval", [str(run)], str(tmp_path))
    df = pd.DataFrame(check_all(rep, tmp_path))
    own = results(run)
    checked = 0
    for task, g in df[df["source_judgment"].notna()].groupby("source_task"):
        (metric,) = set(g["source_metric"])
        key = next(k for k in own if le.task_name(k) == task)
        assert metric == next(m for m in own[key] if not m.endswith("_stderr"))
        assert g["source_judgment"].astype(float).mean() == pytest.approx(own[key][metric]), task
        assert len(g) == pq.ParquetFile(details(run)[key]).metadata.num_rows
        checked += 1
    assert checked == n_tasks


def test_old_flat_schema_run(tmp_path):
    rep = import_files("lighteval", [str(OLD)], str(tmp_path))
    recs = {r["record_id"]: r for r in check_all(rep, tmp_path)}
    raw = details(OLD)
    assert set(raw) == {"community|arc_mini_ll|0", "community|gsm8k_mini|1", "community|mmlu_mini_gen|0"}
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (14, 9, 0, 5)
    assert [s["task"] for s in rep.skipped_tasks] == ["arc_mini_ll:0"]  # suite `community|` dropped
    for i, row in enumerate(rows(raw["community|gsm8k_mini|1"])):
        r = recs[f"{MODEL}::gsm8k_mini:1::#{i}"]
        assert r["question"] == row["example"] and r["llm_output"] == row["predictions"][0]
        assert r["correct_answer"] == row["gold"][0].rsplit("####", 1)[1].strip()
        assert r["key_answer_type"] == "math"
        # the struct keeps `em` first; the results file reports extractive_match first: that one counts
        assert list(row["metrics"]) == ["em", "extractive_match"]
        assert r["source_metric"] == "extractive_match"
        assert r["source_judgment"] is bool(row["metrics"]["extractive_match"])
    for i, row in enumerate(rows(raw["community|mmlu_mini_gen|0"])):
        r = recs[f"{MODEL}::mmlu_mini_gen:0::#{i}"]
        # flat generative rows keep no choices, only gold ["D"]: the options are the query's lines
        assert row["choices"] == [] and r["correct_answer"] == row["gold"][0]
        assert r["key_answer_type"] == "alphabet_option" and r["question"] == row["example"]
        pairs = json.loads(r["standard_answer_range"])
        assert [p[0] for p in pairs] == list("ABCD") and all(
            f"\n{a}) {t}" in row["example"] for a, t in pairs
        )


def test_without_results_file(tmp_path):
    """Details alone: model from the folder, verdict metric from the sample's own metric struct."""
    src = tmp_path / "src"
    shutil.copytree(OLD / "details", src / "details")
    rep = import_files("lighteval", [str(src)], str(tmp_path / "out"))
    recs = check_all(rep, tmp_path / "out")
    assert any("no results_" in n for n in rep.notes)
    gsm = [r for r in recs if r["task"] == "gsm8k_mini:1"]
    assert len(gsm) == 4 and {r["source_metric"] for r in gsm} == {"em"}
    assert any("'em' (the first in the sample's metrics)" in n for n in rep.notes)


def test_results_file_given_by_name(tmp_path):
    res = sorted(NEW.glob("results/*/results_*.json"))[0]  # the first run: 4 tasks
    date = le.RESULTS_NAME.match(res.name).group("date")
    rep = import_files("lighteval", [str(res)], str(tmp_path))
    assert rep.files and all(date in f for f in rep.files)
    assert rep.reconciles() and rep.written == 14 and rep.skipped == 5


def test_streams_batches(tmp_path, monkeypatch):
    """A details file is read batch by batch (never whole), through many row groups."""
    (src,) = [p for t, p in details(NEW).items() if t == "gsm8k_mini|1"]
    big = pa.concat_tables([pq.read_table(src)] * 50)  # the same 4 documents 50 times
    folder = tmp_path / "src" / "details" / "m" / "2025-01-01T00-00-00.000000"
    folder.mkdir(parents=True)
    pq.write_table(big, folder / "details_gsm8k_mini|1_2025-01-01T00-00-00.000000.parquet", row_group_size=16)

    def no_whole_read(*a, **k):
        raise AssertionError("the whole file was read at once")

    monkeypatch.setattr(pq.ParquetFile, "read", no_whole_read)
    monkeypatch.setattr(le, "BATCH_ROWS", 7)
    rep = import_files("lighteval", [str(tmp_path / "src")], str(tmp_path / "out"))
    assert rep.reconciles() and (rep.read, rep.written, rep.rejected) == (200, 4, 196)
    assert all(k.startswith("duplicate record_id") for k in rep.reject_reasons)


def _new_row(
    id_, query="Question: 1+1?\nAnswer:", text=("2",), choices=(" 2",), gold_index=(0,), score=1.0, post=None
):
    return {
        "doc": {"query": query, "choices": list(choices), "gold_index": list(gold_index), "id": id_},
        "model_response": {
            "text": list(text),
            "text_post_processed": list(text if post is None else post),
            "reasonings": [None] * len(text),
            "logprobs": [],
        },
        "metric": {"extractive_match": score},
    }


def test_bad_files_and_rows(tmp_path):
    run = tmp_path / "run" / "details" / "m" / "2025-01-01T00-00-00.1"
    run.mkdir(parents=True)
    name = "details_{}_2025-01-01T00-00-00.1.parquet"
    (run / name.format("broken|0")).write_bytes(b"PAR1 this is not parquet")
    pq.write_table(pa.table({"a": [1]}), run / name.format("other|0"))
    bad = [
        _new_row("ok"),
        _new_row("no_text", text=()),
        _new_row("no_query", query=""),
        _new_row("out_of_range", choices=("A", "B"), gold_index=(5,)),
        _new_row("two_golds", choices=("x", "y", "z"), gold_index=(0, 2)),
        _new_row("no_gold", choices=()),
        _new_row("half", score=0.5),
        _new_row("think", text=("<think>1+1 is 2</think>The answer is 2",), post=("The answer is 2",)),
    ]
    pq.write_table(pa.Table.from_pylist(bad), run / name.format("gsm8k_bad|0"))
    # the flat schema, with values kept as Python reprs (parsed as literals, never evaluated)
    old = [
        {
            "example": "Question: 2+2?\nAnswer:",
            "predictions": "['4']",
            "gold": "[' 4']",
            "metrics": "{'qem': 1}",
        },
        {"example": "Q", "predictions": "[__import__('os').system('x')]", "gold": "[' 4']", "metrics": "{}"},
    ]
    pq.write_table(pa.Table.from_pylist(old), run / name.format("harness|gsm8k|5"))
    rep = import_files("lighteval", [str(tmp_path / "run")], str(tmp_path / "out"))
    assert rep.reconciles() and (rep.read, rep.written) == (12, 4)
    rej = {
        (r["source_task"], r["source_index"]): r["reason"]
        for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")
    }
    assert rej[("broken:0", "*")].startswith("not a readable Parquet file")
    assert rej[("other:0", "*")].startswith("not a lighteval details file")
    assert rej[("gsm8k_bad:0", "no_text")].startswith("no generated text")
    assert rej[("gsm8k_bad:0", "no_query")].startswith("no query text")
    assert rej[("gsm8k_bad:0", "out_of_range")] == "gold_index 5 is out of range for 2 choice(s)"
    assert rej[("gsm8k_bad:0", "two_golds")].startswith("several gold answers (gold_index [0, 2])")
    assert rej[("gsm8k_bad:0", "no_gold")].startswith("no gold answer")
    assert rej[("gsm8k:5", "#1")].startswith("generated text is not a list of strings")
    assert any("broken|0" in n and "not a readable Parquet file, left out" in n for n in rep.notes)
    assert any("other|0" in n and "not a lighteval details file" in n for n in rep.notes)
    recs = {r["source_index"]: r for r in rows(tmp_path / "out" / "records.parquet")}
    assert recs["ok"]["source_judgment"] is True and recs["ok"]["correct_answer"] == "2"
    assert recs["half"]["source_judgment"] is None  # a score of 0.5 is no verdict
    assert recs["think"]["llm_output"] == "The answer is 2"  # reasoning tags removed, as lighteval scored it
    old_ok = recs["#0"]
    assert (old_ok["task"], old_ok["llm_output"], old_ok["correct_answer"]) == ("gsm8k:5", "4", "4")
    assert (old_ok["source_judgment"], old_ok["source_metric"]) == (True, "qem")
    with pytest.raises(ImportInputError, match="no lighteval details"):
        import_files("lighteval", [str(tmp_path / "out")], str(tmp_path / "none"))


def test_names():
    assert le.task_name("lighteval|gsm8k|5") == "gsm8k:5"
    assert le.task_name("gsm8k|0") == "gsm8k:0"
    assert le.task_name("harness|hendrycksTest-anatomy|5") == "hendrycksTest-anatomy:5"


def test_cli_import(tmp_path):
    import subprocess

    p = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "import", "lighteval", str(OLD), "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    assert "lighteval: read 14 samples from 3 file(s): 9 written, 0 rejected, 5 skipped" in p.stdout


@pytest.mark.ray
def test_score_lighteval_run(ray_local, tmp_path):
    """`input.format=lighteval`: import, judge under real Ray, lighteval's own accuracy beside ours."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    out = tmp_path / "out"
    cfg = load_config(
        ROOT / "configs" / "local.yaml",
        [f"input={NEW}", "input.format=lighteval", f"output={out}", "extractor.name=rules"],
    )
    m = run(cfg).manifest
    assert (m["import"]["framework"], m["import"]["written"], m["import"]["skipped"]) == ("lighteval", 20, 5)
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet").set_index("task")
    own = results(NEW)
    for raw in ("gsm8k_mini|1", "mmlu_mini_gen|0", "mcq_mini_text|0"):
        metric = next(k for k in own[raw] if not k.endswith("_stderr"))
        assert by_task.loc[le.task_name(raw), "source_accuracy"] == pytest.approx(own[raw][metric])
    assert by_task.loc["gsm8k_mini_pass:0", "source_n"] == 0  # no per-generation verdicts


# --- published by others: a lighteval 0.13.0 output tree from evaleval/every_eval_ever (README.md) -----

PUBLISHED = DATA / "published" / "lighteval_smoke"  # DIR/details/<model>/<date>/, DIR/results/<model>/
SQUAD_V2 = {"squad_v2": {"match": ["squad_v2*"], "key_answer_type": "short_text", "range": ["Colonizing empires", "Economist"]}}  # fmt: skip


def test_published_run(tmp_path):
    """lighteval's built-in squad_v2 (generative, `em`) and anli:r1 (log-likelihood, `acc`) through its
    DummyModel, as published: the log-likelihood task is skipped, squad_v2 (free-text QA, no shipped
    task-map entry) is rejected by name unless a task map gives its range, and then lighteval's own `em`
    is what the records' verdicts average to."""
    # the model is named `org/name`: one folder more than details() / results() look through
    raw = {
        le.DETAILS_NAME.match(p.name).group("task"): p
        for p in PUBLISHED.glob("details/*/*/*/details_*.parquet")
    }
    assert set(raw) == {"anli:r1|0", "squad_v2|0"}
    (res,) = PUBLISHED.glob("results/*/*/results_*.json")
    own = json.loads(res.read_text())["results"]
    n_rows = {t: pq.ParquetFile(p).metadata.num_rows for t, p in raw.items()}

    rep = import_files("lighteval", [str(PUBLISHED)], str(tmp_path / "default"))
    assert rep.reconciles() and rep.read == rep.written + rep.rejected + rep.skipped
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (
        4,
        0,
        n_rows["squad_v2|0"],
        n_rows["anli:r1|0"],
    )
    assert rep.reject_reasons == {"unknown task: no task_map entry matches …": 2}
    (skip,) = rep.skipped_tasks
    assert (skip["model"], skip["task"], skip["n"]) == ("eee-smoke/dummy-model", "anli:r1:0", 2)
    assert skip["reason"].startswith("log-likelihood samples (no generated text")
    for row in rows(raw["anli:r1|0"]):  # what makes them log-likelihood rows in the raw file
        assert row["model_response"]["text"] == [] and len(row["model_response"]["logprobs"]) == 3
        assert row["doc"]["sampling_methods"] == ["LOGPROBS"]

    out = tmp_path / "mapped"
    rep = import_files("lighteval", [str(PUBLISHED)], str(out), task_map=SQUAD_V2)
    assert rep.reconciles() and (rep.read, rep.written, rep.rejected, rep.skipped) == (4, 2, 0, 2)
    recs = {r["record_id"]: r for r in rows(out / "records.parquet")}
    assert len(recs) == n_rows["squad_v2|0"]
    for row in rows(raw["squad_v2|0"]):
        doc, resp = row["doc"], row["model_response"]
        r = recs[f"eee-smoke/dummy-model::squad_v2:0::{doc['id']}"]  # model: config_general.model_name
        assert records.check(r) is None
        assert (r["source_framework"], r["model"]) == ("lighteval", "eee-smoke/dummy-model")
        assert r["task"] == r["source_task"] == "squad_v2:0"
        assert r["source_index"] == doc["id"] and r["source_path"] == str(raw["squad_v2|0"])
        assert r["question"] == doc["query"]
        assert r["llm_output"] == resp["text_post_processed"][0] == resp["text"][0] == "random baseline"
        # one choice, gold_index kept as a list [0]: the reference text, stripped
        assert doc["gold_index"] == [0] and r["correct_answer"] == doc["choices"][0].strip()
        assert r["key_answer_type"] == "short_text"
        # `metric` is an int64 struct here (0), not a float: still a verdict
        assert (r["source_metric"], r["source_judgment"]) == ("em", bool(row["metric"]["em"]))
    judged = [r["source_judgment"] for r in recs.values()]
    assert sum(judged) / len(judged) == pytest.approx(own["squad_v2|0"]["em"]) == 0.0
