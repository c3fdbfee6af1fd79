"""The Inspect AI importer (xfinder_ray/importers/inspect_ai.py, `input.format=inspect`).

tests/data/importers/inspect/ holds logs written by Inspect itself (README.md there): two runs of
SmolLM2-135M-Instruct through Inspect 0.3.285's `hf` provider on the local tasks in tasks/tasks.py
(run1_greedy: `.eval`, zstd entries; run2_sampled: `--log-format json`), and published logs from
Inspect's own test suite (published/: deflate `.eval` and a version-2 `.json`). Bad files are written here.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xfinder_ray import records
from xfinder_ray.importers import ImportInputError, import_files
from xfinder_ray.importers import inspect_ai as ia
from xfinder_ray.importers.formats import FORMATS

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "importers" / "inspect"
RUN1 = DATA / "run1_greedy"
RUN2 = DATA / "run2_sampled"
PUBLISHED = DATA / "published"
MODEL = "hf/SmolLM2-135M-Instruct"
# Inspect's `popularity` example task is in no task map entry: a user entry (yes / no labels).
POPULARITY = {"popularity": {"key_answer_type": "categorical_label", "range": ["Yes", "No"]}}


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# --- the raw logs, read here without the importer ------------------------------------------------------


def entry(path: Path, name: str) -> bytes:
    """One entry of an .eval ZIP: deflate through zipfile, zstd (method 93) through pyarrow."""
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as z:
        info = z.getinfo(name)
        if info.compress_type != 93:
            return z.read(name)
        fh.seek(info.header_offset)
        n, m = struct.unpack("<HH", fh.read(30)[26:30])
        fh.seek(info.header_offset + 30 + n + m)
        return pa.CompressedInputStream(pa.BufferReader(fh.read(info.compress_size)), "zstd").read()


def raw_log(path: Path) -> tuple[dict, list[dict]]:
    """(header, samples) of a log, as Inspect wrote them."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        return data, data.get("samples") or []
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.startswith("samples/")]
    return json.loads(entry(path, "header.json")), [json.loads(entry(path, n)) for n in names]


def own_accuracy(header: dict) -> float:
    return header["results"]["scores"][0]["metrics"]["accuracy"]["value"]


def logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in (".eval", ".json"))


# --- the real runs ---------------------------------------------------------------------------------------


def test_registered():
    assert "inspect" in FORMATS


@pytest.mark.parametrize("folder", [RUN1, RUN2], ids=["eval", "json"])
def test_import_real_run(folder, tmp_path):
    rep = import_files("inspect", [str(folder)], str(tmp_path))
    # trivia_mc: 5 questions x 2 epochs; arith_qa: 5; boolq_mini: 4
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (19, 19, 0, 0)
    assert rep.reconciles() and len(rep.files) == 3 and rep.notes == []
    recs = {r["record_id"]: r for r in rows(tmp_path / "records.parquet")}
    assert len(recs) == 19
    for r in recs.values():
        assert records.check(r) is None
        assert r["model"] == MODEL and r["source_framework"] == "inspect"
    for path in logs(folder):
        header, samples = raw_log(path)
        task = header["eval"]["task"]
        scorer = header["results"]["scores"][0]["name"]
        for s in samples:
            r = recs[f"{MODEL}::{task}::{s['id']}#epoch{s['epoch']}"]
            assert r["llm_output"] == s["output"]["completion"]
            assert r["source_index"] == f"{s['id']}#epoch{s['epoch']}" and r["source_path"] == str(path)
            assert r["source_metric"] == f"scores.{scorer}"
            assert r["source_judgment"] == {"C": True, "I": False}[s["scores"][scorer]["value"]]
            if s.get("choices"):
                letters = [chr(65 + i) for i in range(len(s["choices"]))]
                assert json.loads(r["standard_answer_range"]) == [
                    [x, c] for x, c in zip(letters, s["choices"], strict=True)
                ]
                assert r["key_answer_type"] == "alphabet_option" and r["correct_answer"] == s["target"]
                options = "\n".join(f"{x}) {c}" for x, c in zip(letters, s["choices"], strict=True))
                assert r["question"] == f"{s['input']}\n\n{options}"
                # the options as the model saw them (multiple_choice()'s template)
                assert r["question"].split("\n\n", 1)[1] in s["messages"][0]["content"]
            else:
                assert r["question"] == s["input"] and r["correct_answer"] == s["target"]
    by_task = {
        t: [r for r in recs.values() if r["task"] == t] for t in ("trivia_mc", "arith_qa", "boolq_mini")
    }
    # inferred from the structure (choices; match(numeric=True)) / from the task map (boolq*)
    assert {r["key_answer_type"] for r in by_task["trivia_mc"]} == {"alphabet_option"}
    assert {r["key_answer_type"] for r in by_task["arith_qa"]} == {"math"}
    assert {r["key_answer_type"] for r in by_task["boolq_mini"]} == {"categorical_label"}
    assert {r["standard_answer_range"] for r in by_task["boolq_mini"]} == {'["yes", "no"]'}
    # epochs are distinct records
    epochs = sorted(r["source_index"] for r in by_task["trivia_mc"])
    assert epochs == [f"q{i}#epoch{e}" for i in range(1, 6) for e in (1, 2)]


@pytest.mark.parametrize("folder", [RUN1, RUN2, PUBLISHED], ids=["eval", "json", "published"])
def test_source_accuracy_is_inspect_own(folder, tmp_path):
    """Per log, the share of True verdicts is the accuracy in the log's own results."""
    import_files("inspect", [str(folder)], str(tmp_path), task_map=POPULARITY)
    df = pd.DataFrame(rows(tmp_path / "records.parquet"))
    checked = 0
    for path in logs(folder):
        header, samples = raw_log(path)
        if not header["results"]["scores"]:  # scored by no scorer: no verdicts
            assert df[df["source_path"] == str(path)]["source_judgment"].isna().all()
            continue
        g = df[df["source_path"] == str(path)]
        assert len(g) == len(samples) and g["source_judgment"].notna().all()
        assert g["source_judgment"].mean() == pytest.approx(own_accuracy(header)), path.name
        checked += 1
    assert checked == len(logs(folder)) - (folder == PUBLISHED)


def test_published_logs(tmp_path):
    """Inspect's own test logs: deflate .eval (schema 2), a .json log, inspect_evals/mmlu_0_shot, epochs."""
    rep = import_files("inspect", [str(PUBLISHED)], str(tmp_path))
    assert rep.reconciles() and (rep.read, rep.written, rep.rejected) == (16, 1, 15)
    (mmlu,) = rows(tmp_path / "records.parquet")
    _, (s,) = raw_log(PUBLISHED / "mmlu-summary-choices.eval")
    assert mmlu["task"] == "mmlu_0_shot" and mmlu["model"] == "openai/gpt-4o"  # inspect_evals/ prefix dropped
    assert mmlu["key_answer_type"] == "alphabet_option" and mmlu["correct_answer"] == s["target"] == "A"
    assert mmlu["llm_output"] == "ANSWER: C" and mmlu["source_judgment"] is False
    assert rep.reject_reasons == {"unknown task: no task_map entry matches …": 15}
    # with a task map entry for `popularity`, every sample is a record
    rep = import_files("inspect", [str(PUBLISHED)], str(tmp_path / "b"), task_map=POPULARITY)
    assert (rep.read, rep.written, rep.rejected) == (16, 16, 0)
    recs = {r["record_id"]: r for r in rows(tmp_path / "b" / "records.parquet")}
    streaming = [r for r in recs.values() if r["model"] == "azureai/Meta-Llama-3-1-405B-Instruct-jqf"]
    assert sorted(r["source_index"] for r in streaming) == ["1#epoch1", "1#epoch2", "2#epoch1", "2#epoch2"]
    # an older log without output.completion: the message text; the target " Yes" is the label Yes
    r = recs["ollama/llama3.1::popularity::1#epoch1"]
    assert r["llm_output"] == "No" and r["correct_answer"] == "Yes" and r["source_judgment"] is False
    # a log scored by no scorer: records without a framework verdict
    unscored = [r for r in recs.values() if r["model"] == "openai/gpt-4o-mini"]
    assert len(unscored) == 10 and all(r["source_judgment"] is None for r in unscored)


# --- unit pieces ----------------------------------------------------------------------------------------


def test_value_to_float_is_inspect_accuracy_mapping():
    v = ia.value_to_float
    assert (v("C"), v("I"), v("P"), v("N")) == (1.0, 0.0, 0.5, 0.0)
    assert (v(1), v(0), v(True), v(False), v(0.25)) == (1.0, 0.0, 1.0, 0.0, 0.25)
    assert (v("yes"), v("TRUE"), v("No"), v("false"), v("0.5"), v("1")) == (1.0, 1.0, 0.0, 0.0, 0.5, 1.0)
    assert (v("c"), v("whatever"), v("nan")) == (0.0, 0.0, 0.0)  # Inspect: a warning, then 0
    assert v([1, 0]) is None and v({"a": 1}) is None


def test_texts_and_reasoning_blocks():
    blocks = [
        {"type": "reasoning", "reasoning": "Let me think: 12 + 7 = 19.", "signature": "x"},
        {"type": "text", "text": "ANSWER: 19"},
        {"type": "image", "image": "data:..."},
    ]
    assert ia.content_text(blocks) == "ANSWER: 19"
    assert (
        ia.response_text({"choices": [{"message": {"role": "assistant", "content": blocks}}]}) == "ANSWER: 19"
    )
    assert ia.response_text({"completion": "final", "choices": [{"message": {"content": blocks}}]}) == "final"
    assert ia.response_text({"choices": []}) is None and ia.response_text(None) is None
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "earlier turn"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]},
    ]
    assert ia.question_text(chat) == "What is 2+2?" and ia.question_text([{"role": "system"}]) is None
    assert ia.question_text("attachment://abc", {"abc": "the text"}) == "the text"
    assert ia.task_name({"task": "inspect_evals/gpqa_diamond"}) == "gpqa_diamond"


# --- edge cases, written from a real sample -------------------------------------------------------------


def json_log(path: Path, samples: list, **header) -> None:
    data, _ = raw_log(next(RUN2.glob("*arith-qa*.json")))
    data = {**data, **header, "samples": samples}
    path.write_text(json.dumps(data))


def eval_log(path: Path, members: dict[str, object]) -> None:
    """An .eval written the way Inspect before zstd wrote it (deflate entries)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in members.items():
            z.writestr(name, value if isinstance(value, (str, bytes)) else json.dumps(value))


def test_bad_samples_are_rejects(tmp_path):
    header, samples = raw_log(next(RUN2.glob("*arith-qa*.json")))
    good = samples[0]
    src = tmp_path / "logs"
    src.mkdir()
    reasoning = {
        **good,
        "id": "r1",
        "output": {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "reasoning", "reasoning": "12 + 7 is 19"},
                            {"type": "text", "text": "The answer is 19."},
                        ],
                    }
                }
            ]
        },
    }
    chat_input = {**good, "id": "c1", "input": [{"role": "user", "content": "What is 12 + 7?"}]}
    json_log(
        src / "bad.json",
        [
            good,
            "not a sample",
            {k: v for k, v in good.items() if k != "id"},
            {**good, "id": "e1", "error": {"message": "RuntimeError: model crashed", "traceback": "..."}},
            {**good, "id": "o1", "output": {"model": "m", "choices": []}},
            {**good, "id": "q1", "input": None},
            {**good, "id": "p1", "scores": {"match": {"value": "P"}}},
            {**good, "id": "n1", "scores": {"match": {"value": "N"}}},
            {**good, "id": "d1", "scores": {"match": {"value": {"a": 1}}}},
            {**good, "id": "m1", "choices": ["x", 3]},
            {**good, "id": "m2", "choices": [str(i) for i in range(27)], "target": "A"},
            reasoning,
            chat_input,
            good,  # the same id and epoch twice
        ],
    )
    rep = import_files("inspect", [str(src)], str(tmp_path / "out"))
    assert rep.reconciles() and (rep.read, rep.written, rep.rejected) == (14, 6, 8)
    rej = {r["source_index"]: r["reason"] for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")}
    assert rej["#1"] == "sample is not an object"
    assert rej["#2"] == "no sample id"
    assert rej["e1#epoch1"] == "the sample ended in an error: RuntimeError: model crashed"
    assert rej["o1#epoch1"] == "no response text in `output`"
    assert rej["q1#epoch1"] == "no question text in `input`"
    assert rej["m1#epoch1"] == "`choices` is not a list of option texts"
    assert rej["m2#epoch1"] == "27 choices; at most 26 can be lettered"
    assert rej["1#epoch1"].startswith("duplicate record_id")
    recs = {r["source_index"]: r for r in rows(tmp_path / "out" / "records.parquet")}
    assert recs["r1#epoch1"]["llm_output"] == "The answer is 19."  # reasoning block left out
    assert recs["c1#epoch1"]["question"] == "What is 12 + 7?"
    assert recs["n1#epoch1"]["source_judgment"] is False  # N counts 0 in Inspect's accuracy
    assert recs["p1#epoch1"]["source_judgment"] is None and recs["d1#epoch1"]["source_judgment"] is None
    assert any("1 sample(s) scored between 0 and 1" in n for n in rep.notes)
    assert any("1 sample(s) with a list or mapping score value" in n for n in rep.notes)
    assert header["eval"]["task"] == "arith_qa"


def test_corrupt_and_unfinished_files(tmp_path, monkeypatch):
    src = tmp_path / "logs"
    src.mkdir()
    run1 = next(RUN1.glob("*trivia-mc*.eval"))
    header, samples = raw_log(run1)
    # a real zstd .eval with one sample entry damaged: that sample is rejected, the others read
    damaged = src / "damaged.eval"
    shutil.copy(run1, damaged)
    with zipfile.ZipFile(damaged) as z:
        info = z.getinfo("samples/q3_epoch_1.json")
    data = bytearray(damaged.read_bytes())
    n, m = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    at = info.header_offset + 30 + n + m + info.compress_size // 2
    data[at : at + 8] = bytes(b ^ 0xFF for b in data[at : at + 8])
    damaged.write_bytes(bytes(data))
    (src / "notzip.eval").write_bytes(b"PK\x03\x04 but not a zip")
    (src / "truncated.eval").write_bytes(run1.read_bytes()[:5000])
    eval_log(src / "noheader.eval", {"samples/1_epoch_1.json": samples[0]})
    eval_log(
        src / "unfinished.eval",
        {"_journal/start.json": {"version": 2, "eval": header["eval"], "plan": header["plan"]},
         "samples/u1_epoch_1.json": {**samples[0], "id": "u1"}, "samples/u2_epoch_1.json": "{not json"},
    )  # fmt: skip
    eval_log(src / "nosamples.eval", {"header.json": header})
    eval_log(src / "badheader.eval", {"header.json": "[1, 2]"})
    (src / "broken.json").write_text('{"version": 2, "eval": {')
    json_log(src / "big.json", samples)
    json_log(src / "cancelled.json", [], status="cancelled")
    (src / "logs.json").write_text('{"some-log.eval": {}}')  # the log folder's listing: not a log
    monkeypatch.setattr(ia, "MAX_JSON_LOG_BYTES", (src / "big.json").stat().st_size - 1)
    rep = import_files("inspect", [str(src)], str(tmp_path / "out"))
    assert rep.reconciles()
    rej = {
        (Path(r["source_path"]).name, r["source_index"]): r["reason"]
        for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")
    }
    assert rej[("damaged.eval", "q3#epoch1")].startswith("entry 'samples/q3_epoch_1.json'")
    assert rej[("notzip.eval", "*")].startswith("not a readable Inspect .eval log (ZIP archive)")
    assert rej[("truncated.eval", "*")].startswith("not a readable Inspect .eval log (ZIP archive)")
    assert rej[("noheader.eval", "*")] == "no header.json or _journal/start.json: not an Inspect .eval log"
    assert rej[("badheader.eval", "*")] == "the header has no `eval` spec (not an Inspect log)"
    assert rej[("unfinished.eval", "u2#epoch1")].startswith("samples/u2_epoch_1.json is not valid JSON")
    assert rej[("broken.json", "*")].startswith("not a readable Inspect JSON log: the file is not valid JSON")
    assert rej[("big.json", "*")].startswith("JSON log of ")
    for name in (
        "notzip.eval",
        "truncated.eval",
        "noheader.eval",
        "badheader.eval",
        "broken.json",
        "big.json",
    ):
        assert any(n.startswith(f"{src / name}: skipped: ") for n in rep.notes), name
    recs = rows(tmp_path / "out" / "records.parquet")
    assert sorted(r["source_index"] for r in recs if r["source_path"].endswith("damaged.eval")) == sorted(
        f"q{i}#epoch{e}" for i in range(1, 6) for e in (1, 2) if (i, e) != (3, 1)
    )
    assert [r["source_index"] for r in recs if r["source_path"].endswith("unfinished.eval")] == ["u1#epoch1"]
    assert any("unfinished.eval: no header.json (an unfinished run)" in n for n in rep.notes)
    assert any("nosamples.eval: no samples logged" in n for n in rep.notes)
    assert any("cancelled.json: status 'cancelled'" in n for n in rep.notes)
    assert "left out 1 .json file(s) that are not Inspect logs" in rep.notes
    with pytest.raises(ImportInputError, match="no Inspect logs"):
        import_files("inspect", [str(DATA / "tasks")], str(tmp_path / "none"))


def test_oversized_entry_is_a_reject(tmp_path, monkeypatch):
    path = next(RUN1.glob("*trivia-mc*.eval"))
    with zipfile.ZipFile(path) as z:
        sizes = sorted(i.file_size for i in z.infolist() if i.filename.startswith("samples/"))
    bound = sizes[4]  # half of the 10 sample entries are larger
    monkeypatch.setattr(ia, "MAX_ENTRY_BYTES", bound)
    rep = import_files("inspect", [str(path)], str(tmp_path))
    assert rep.reconciles() and rep.written + rep.rejected == 10
    assert rep.rejected == sum(s > bound for s in sizes) > 0
    reasons = {r["reason"] for r in rows(tmp_path / "_import" / "rejects.parquet")}
    assert all(f"bytes (bound {bound})" in r for r in reasons)


def test_cli_import(tmp_path):
    import subprocess

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "xfinder_ray",
            "import",
            "inspect",
            str(RUN1),
            str(RUN2),
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    # the two runs share model, task and sample ids: the second occurrence of each is a duplicate
    assert "inspect: read 38 samples from 6 file(s): 19 written, 19 rejected" in p.stdout


@pytest.mark.ray
def test_score_inspect_run(ray_local, tmp_path):
    """`input.format=inspect`: import, judge under real Ray, Inspect's own accuracy beside ours."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    src = tmp_path / "logs"
    shutil.copytree(RUN1, src)
    out = tmp_path / "out"
    cfg = load_config(
        ROOT / "configs" / "local.yaml",
        [f"input={src}", "input.format=inspect", f"output={out}", "extractor.name=rules"],
    )
    m = run(cfg).manifest
    assert (m["import"]["framework"], m["import"]["written"], m["import"]["rejected"]) == ("inspect", 19, 0)
    assert m["counts"] == {"input": 19, "judged": 19, "rejected": 0}
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet").set_index("task")
    for path in logs(src):
        header, samples = raw_log(path)
        r = by_task.loc[header["eval"]["task"]]
        assert r["source_n"] == r["n"] == len(samples)
        assert r["source_accuracy"] == pytest.approx(own_accuracy(header))


@pytest.mark.parametrize(
    "task",
    [
        "inspect_evals/gpqa_diamond",
        "piqa",
        "winogrande",
        "race_h",
        "hellaswag",
        "arc_challenge",
        "mmlu_5_shot",
    ],
)
def test_shipped_entries_take_inspect_choices(task, tmp_path):
    """Task map entries that name other frameworks' option fields (gpqa: choice1..4, piqa: sol1/sol2)
    still get their range from an Inspect sample: the options are in the question as A) ... lines."""
    header, samples = raw_log(next(RUN2.glob("*trivia-mc*.json")))
    (tmp_path / "log.json").write_text(
        json.dumps({**header, "eval": {**header["eval"], "task": task}, "samples": samples[:2]})
    )
    rep = import_files("inspect", [str(tmp_path / "log.json")], str(tmp_path / "out"))
    assert (rep.written, rep.rejected) == (2, 0)
    for r, s in zip(rows(tmp_path / "out" / "records.parquet"), samples[:2], strict=True):
        assert r["task"] == task.rsplit("/", 1)[-1] and r["key_answer_type"] == "alphabet_option"
        assert json.loads(r["standard_answer_range"]) == [
            [chr(65 + i), c] for i, c in enumerate(s["choices"])
        ]
        assert r["correct_answer"] == s["target"]
