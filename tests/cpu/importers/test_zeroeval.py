"""The ZeroEval importer (xfinder_ray/importers/zeroeval.py, `input.format=zeroeval`).

tests/data/importers/zeroeval/ holds unmodified records of ZeroEval's published result files and what
ZeroEval's own scripts say about them (`zeroeval_own.json`, README.md there); bad records are written here.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from xfinder_ray import records
from xfinder_ray.importers import ImportInputError, import_files
from xfinder_ray.importers import zeroeval as ze
from xfinder_ray.importers.formats import FORMATS

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "importers" / "zeroeval"
RESULTS = DATA / "result_dirs"
OWN = json.loads((DATA / "zeroeval_own.json").read_text())
TASK = {"gsm": "GSM8K", "math-l5": "MATH-L5", "mmlu-redux": "MMLU-Redux"}
# ZeroEval's summaries show a few models under another name (eval_utils.py model_name_replacement).
SHOWN = {"Meta-Llama-3.1-405B-Instruct@hyperbolic": "Llama-3.1-405B-Inst@hyperbolic"}


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_registered():
    assert "zeroeval" in FORMATS


def test_import_slice(tmp_path):
    rep = import_files("zeroeval", [str(RESULTS)], str(tmp_path))
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (48, 48, 0, 0)
    assert rep.reconciles() and len(rep.files) == 8
    recs = {r["record_id"]: r for r in rows(tmp_path / "records.parquet")}
    assert len(recs) == 48
    for r in recs.values():
        assert records.check(r) is None
        assert r["source_framework"] == "zeroeval" and r["source_judgment"] is not None
    r = recs["gemma-2-2b-it::GSM8K::gsm8k-main-test-#0"]
    raw = json.loads((RESULTS / "gsm" / "gemma-2-2b-it.json").read_text())[0]
    assert r["llm_output"] == raw["output"][0] and r["question"] == raw["question"]
    assert raw["answer"] == "# 18" and r["correct_answer"] == "18"
    assert (r["key_answer_type"], r["standard_answer_range"]) == ("math", records.MATH_ANSWER_RANGE)
    assert (r["source_task"], r["source_metric"], r["source_index"]) == (
        "GSM8K",
        "math_eval.py",
        "gsm8k-main-test-#0",
    )
    math = [r for r in recs.values() if r["task"] == "MATH-L5"]
    assert len(math) == 18 and all(r["key_answer_type"] == "math" for r in math)
    mc = [r for r in recs.values() if r["task"] == "MMLU-Redux"]
    assert len(mc) == 12
    for r in mc:
        raw = next(
            x
            for x in json.loads((RESULTS / "mmlu-redux" / f"{r['model']}.json").read_text())
            if x["session_id"] == r["source_index"]
        )
        pairs = json.loads(r["standard_answer_range"])
        assert pairs == [[chr(65 + i), c] for i, c in enumerate(raw["choices"])]
        assert r["correct_answer"] == chr(65 + raw["choices"].index(raw["correct_answer"]))
        assert r["question"].startswith(raw["question"].strip() + "\nAnswer Choices: (A) ")
        assert r["source_metric"] == "mcqa_eval.py"


def test_verdicts_are_zeroeval_own(tmp_path):
    """source_judgment is what ZeroEval's own math_eval.py / mcqa_eval.py decided for each record, and
    the per-model accuracy over it is the figure its summaries print."""
    import_files("zeroeval", [str(RESULTS)], str(tmp_path))
    recs = rows(tmp_path / "records.parquet")
    folder = {v: k for k, v in TASK.items()}
    for r in recs:
        assert r["source_judgment"] == OWN["verdicts"][folder[r["task"]]][r["model"]][r["source_index"]], r[
            "record_id"
        ]
    df = pd.DataFrame(recs)
    for (task, model), g in df.groupby(["task", "model"]):
        own = OWN["accuracy"][folder[task]][SHOWN.get(model, model)]
        assert f"{100 * g['source_judgment'].mean():.2f}" == own["Acc"] and len(g) == own["Total"]


def test_zeroeval_scoring_port():
    s = ze.sanitize_math_answers
    assert s("$1,000$") == "1000" and s("3/4") == "0.75" and s("1/0") == "1/0" and s("x/2") == "x/2"
    # the model's text is never executed (math_eval.py eval()s it)
    assert s("__import__('os').getcwd()/2") == "__import__('os').getcwd()/2"
    assert s("(2^3)/4") == "0.25" and s("9**99999/2") == "9**99999/2"
    v = ze.math_verdict
    assert v("m", '{"reasoning": "r", "answer": "18"}', "18")
    assert v("m", 'text "answer": 18 more', "18")
    assert v("m", '{"answer": "28 + 9 = 37"}', "28")  # the first number counts
    assert not v("m", "The answer is 18.", "18")  # no JSON answer: not solved
    boxed = "so the result is $\\boxed{18}$"
    assert v("Meta-Llama-3.1-8B-Instruct", boxed, "18") and not v("gemma-2-2b-it", boxed, "18")
    m = ze.mcqa_verdict
    assert m("m", '{"answer": "C"}', "C") and m("m", '{"answer": "(C) text"}', "C")
    assert not m("m", '{"answer": "B"}', "C") and not m("m", "no json", "C")
    assert m("m", '{"answer": 3}', "C") is None  # ZeroEval's `in` on a number would raise


def write(folder: Path, name: str, data) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))


def test_rejects_with_reasons(tmp_path):
    src = tmp_path / "result_dirs"
    good_gsm = json.loads((RESULTS / "gsm" / "gemma-2-2b-it.json").read_text())[0]
    good_mc = json.loads((RESULTS / "mmlu-redux" / "Qwen2-72B-Instruct.json").read_text())[0]
    write(
        src / "gsm",
        "m1.json",
        [
            good_gsm,
            "not a record",
            {k: v for k, v in good_gsm.items() if k not in ("session_id", "id")},
            {**good_gsm, "session_id": "s2", "output": "no list"},
            {**good_gsm, "session_id": "s3", "output": []},
            {**good_gsm, "session_id": "s4", "answer": None},
            {**good_gsm, "session_id": "s5", "output": [good_gsm["output"][0]], "question": None},
            good_gsm,  # the same session_id twice
        ],
    )
    write(
        src / "mmlu-redux",
        "m1.json",
        [
            {**good_mc, "session_id": "a", "correct_answer": "not an option"},
            {**good_mc, "session_id": "b", "choices": None},
            # an older file's Python reprs are parsed
            {
                **good_mc,
                "session_id": "c",
                "output": repr(good_mc["output"]),
                "choices": repr(good_mc["choices"]),
            },
        ],
    )
    write(src / "math-l5", "broken.json", "{not json")
    write(src / "math-l5", "object.json", {"a": 1})
    write(src / "crux", "m1.json", [])  # another ZeroEval task: left out, with a note
    write(src, "gsm.summary.json", [])
    rep = import_files("zeroeval", [str(src)], str(tmp_path / "out"))
    assert rep.reconciles() and (rep.read, rep.written) == (13, 2)
    rej = {
        (r["model"], r["source_index"]): r["reason"]
        for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")
    }
    assert rej[("m1", "#1")] == "record is not an object"
    assert rej[("m1", "#2")] == "no session_id"
    assert rej[("m1", "s2")] == "`output` is not a list of generations"
    assert rej[("m1", "s3")] == "`output` has no first generation (text)"
    assert rej[("m1", "s4")] == "no reference `answer`"
    assert rej[("m1", "s5")] == "no `question` / `problem` text"
    assert rej[("m1", "gsm8k-main-test-#0")].startswith("duplicate record_id")
    assert rej[("m1", "a")] == "correct_answer 'not an option' is not one of the choices"
    assert rej[("m1", "b")] == "`choices` is not a list of option texts"
    assert rej[("broken", "*")].startswith("not a readable ZeroEval result file")
    assert rej[("object", "*")].startswith("not a ZeroEval result file (a dict")
    assert any("1 file(s) in crux/" in n for n in rep.notes)
    (ok,) = [r for r in rows(tmp_path / "out" / "records.parquet") if r["source_index"] == "c"]
    assert ok["llm_output"] == good_mc["output"][0] and ok["task"] == "MMLU-Redux"
    with pytest.raises(ImportInputError, match="no ZeroEval result files"):
        import_files("zeroeval", [str(src / "crux")], str(tmp_path / "none"))


def test_cli_import(tmp_path):
    import subprocess

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "xfinder_ray",
            "import",
            "zeroeval",
            str(RESULTS / "gsm"),
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    assert "zeroeval: read 18 samples from 3 file(s): 18 written, 0 rejected" in p.stdout


@pytest.mark.ray
def test_score_zeroeval_slice(ray_local, tmp_path):
    """`input.format=zeroeval`: import, judge under real Ray, ZeroEval's own accuracy beside ours."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    src = tmp_path / "result_dirs"
    shutil.copytree(RESULTS, src)
    out = tmp_path / "out"
    cfg = load_config(
        ROOT / "configs" / "local.yaml",
        [f"input={src}", "input.format=zeroeval", f"output={out}", "extractor.name=rules"],
    )
    m = run(cfg).manifest
    assert (m["import"]["framework"], m["import"]["written"], m["import"]["rejected"]) == ("zeroeval", 48, 0)
    assert m["counts"] == {"input": 48, "judged": 48, "rejected": 0}
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet")
    assert len(by_task) == 8 and set(by_task["task"]) == set(TASK.values())
    folder = {v: k for k, v in TASK.items()}
    for r in by_task.itertuples():
        own = OWN["accuracy"][folder[r.task]][SHOWN.get(r.model, r.model)]
        assert r.source_n == r.n == own["Total"] and f"{100 * r.source_accuracy:.2f}" == own["Acc"]
    assert "framework macro" in (out / "accuracy" / "leaderboard.md").read_text()
