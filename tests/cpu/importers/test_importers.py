"""Importing lm-evaluation-harness and OpenCompass outputs (xfinder_ray/importers, docs/importing.md).

The fixtures under tests/data/importers/ were written by the real tools, offline (README.md there):
lm-eval 0.4.13 (`--model dummy` and `--model hf` on the converted SmolLM2) over the local task YAMLs in
lm_eval_tasks/, and OpenCompass 0.5.4 (a base and a chat model; a partitioned dataset). Where lm-eval is
installed, the `slow` tests run its CLI again and import what it writes. Edge cases (malformed lines,
missing fields, other `details` shapes) are written here, following the tools' code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.s3_server import s3_server  # noqa: F401  (fixture)
from xfinder_ray import records
from xfinder_ray.importers import (
    ImportInputError,
    TaskMapError,
    add_source_accuracy,
    convert_inputs,
    import_files,
    load_task_map,
    source_accuracy,
)
from xfinder_ray.importers.lm_eval import display_name, last_user_turn, strip_fewshot
from xfinder_ray.importers.task_map import Unrecoverable, options_from_text, recover

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "importers"
LM_DUMMY = DATA / "lm_eval" / "dummy"
LM_SMOL = DATA / "lm_eval" / "smollm2"
SMOL = "models/SmolLM2-135M-Instruct"  # the model name lm-eval recorded for that run
OC_BASE = DATA / "opencompass" / "base"
OC_CHAT = DATA / "opencompass" / "chat"
TASKS = DATA / "lm_eval_tasks"
ALL_TASKS = [
    "gsm8k_mini",
    "mmlu_mini_generative",
    "arc_challenge_mini_gen",
    "arc_challenge_mini_mc",
    "boolq_mini_gen",
    "csqa_mini_text",
    "mytask_unknown",
]


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def by_id(path: Path) -> dict[str, dict]:
    return {r["record_id"]: r for r in rows(path)}


# --- the task map -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task, framework, entry, kat",
    [
        ("gsm8k", "lm-eval", "gsm8k", "math"),
        ("gsm8k_cot_zeroshot", "lm-eval", "gsm8k", "math"),
        ("hendrycks_math_algebra", "lm-eval", "math", "math"),
        ("minerva_math_prealgebra", "lm-eval", "math", "math"),
        ("math", "opencompass", "math", "math"),
        ("mmlu_flan_cot_zeroshot_abstract_algebra", "lm-eval", "mmlu", "alphabet_option"),
        ("lukaemon_mmlu_college_biology", "opencompass", "mmlu", "alphabet_option"),
        ("MMLU_Pro_biology", "lm-eval", "mmlu_pro", "alphabet_option"),
        ("ARC-c", "opencompass", "arc", "alphabet_option"),
        ("arc_challenge_chat", "lm-eval", "arc", "alphabet_option"),
        ("commonsense_qa", "opencompass", "commonsense_qa", "alphabet_option"),
        ("hellaswag", "opencompass", "hellaswag", "alphabet_option"),
        ("boolq", "lm-eval", "boolq", "categorical_label"),
        ("BoolQ", "opencompass", "boolq", "alphabet_option"),  # OpenCompass asks "A. Yes / B. No"
    ],
)
def test_shipped_task_map(task, framework, entry, kat):
    e = load_task_map().lookup(task, framework)
    assert e is not None and e.name == entry and e.key_answer_type == kat


def test_unknown_task_has_no_entry():
    assert load_task_map().lookup("triviaqa", "lm-eval") is None
    assert load_task_map().lookup("mytask", "opencompass") is None


def test_user_task_map_extends_and_overrides(tmp_path):
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "tasks:\n"
        "  mine:\n"
        "    match: ['mmlu_mine*', 'sentiment*']\n"
        "    key_answer_type: categorical_label\n"
        "    range: [positive, negative]\n"
        "  boolq:\n"
        "    range: ['true', 'false']\n"
        "    answer_map: {'0': 'false', '1': 'true'}\n"
    )
    tm = load_task_map(extra)
    # a new entry is tried before the shipped globs: mmlu_mine_x is not MMLU any more
    assert tm.lookup("mmlu_mine_x", "lm-eval").name == "mine"
    assert tm.lookup("mmlu_other", "lm-eval").name == "mmlu"
    boolq = tm.lookup("boolq_x", "lm-eval")  # merged field by field: match and type are kept
    assert boolq.key_answer_type == "categorical_label" and boolq.range == ["true", "false"]
    # a dict works too, with or without the `tasks:` key; later sources win
    tm2 = load_task_map([extra, {"mine": {"range": ["pos", "neg"]}}])
    assert tm2.lookup("sentiment_x", "lm-eval").range == ["pos", "neg"]
    assert tm2.sources[-1] == "<dict>"


def test_task_map_errors(tmp_path):
    with pytest.raises(TaskMapError, match="unknown key"):
        load_task_map({"x": {"key_answer_type": "math", "rnage": []}})
    with pytest.raises(TaskMapError, match="key_answer_type 'essay'"):
        load_task_map({"x": {"key_answer_type": "essay"}})
    with pytest.raises(TaskMapError, match="no key_answer_type"):
        load_task_map({"x": {"match": ["x*"]}})
    with pytest.raises(TaskMapError, match="list of glob"):
        load_task_map({"x": {"key_answer_type": "math", "match": "x*"}})
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [\n")
    with pytest.raises(TaskMapError, match="not valid YAML"):
        load_task_map(bad)
    with pytest.raises(TaskMapError, match="cannot read"):
        load_task_map(tmp_path / "missing.yaml")


# --- range and answer recovery ----------------------------------------------------------------------


def entry(task, framework="lm-eval", extra=None):
    return load_task_map(extra).lookup(task, framework)


def test_options_from_text():
    q = "Pick one.\nA. red\nB. blue\nC. green\nAnswer:"
    assert options_from_text(q) == [("A", "red"), ("B", "blue"), ("C", "green")]
    assert options_from_text("Q\n(A) x\n(B) y") == [("A", "x"), ("B", "y")]
    assert options_from_text("Q\nA) x\nB) y\nC: z") == [("A", "x"), ("B", "y"), ("C", "z")]
    # the last block wins (few-shot residue before it); a lone A line or a gap is no block
    q2 = "A. old\nB. older\n\nQuestion\nA. new\nB. newer\nD. skipped"
    assert options_from_text(q2) == [("A", "new"), ("B", "newer")]
    assert options_from_text("A. only one") is None
    assert options_from_text("Mr. A. Smith went home.") is None


def test_recover_alphabet_from_doc_fields():
    mmlu = entry("mmlu_generative_x")
    doc = {"question": "q", "choices": ["w", "x", "y", "z"], "answer": 2}
    rng, correct, how = recover(mmlu, doc, "q", "C")
    assert json.loads(rng) == [["A", "w"], ["B", "x"], ["C", "y"], ["D", "z"]] and correct == "C"
    assert recover(mmlu, doc, "q", "2")[1] == "C"  # an index
    assert recover(mmlu, doc, "q", "(c)")[1] == "C"  # a decorated letter
    assert recover(mmlu, doc, "q", "y")[1] == "C"  # the option's text
    arc = entry("arc_challenge_chat")
    doc = {"choices": {"label": ["1", "2", "3"], "text": ["a", "b", "c"]}}
    rng, correct, _ = recover(arc, doc, "q", "2")  # numeric labels are kept, "2" is a label not an index
    assert json.loads(rng) == [["1", "a"], ["2", "b"], ["3", "c"]] and correct == "2"
    gpqa = entry("gpqa_main_zeroshot")
    rng, correct, _ = recover(
        gpqa, {"choice1": "p", "choice2": "q", "choice3": "r", "choice4": "s"}, "Q", "(B)"
    )
    assert json.loads(rng)[1] == ["B", "q"] and correct == "B"


def test_recover_from_question_text_and_rejects():
    csqa = entry("csqa_x")
    rng, correct, how = recover(csqa, None, "Where?\nA. home\nB. school", "B")
    assert how == "question text" and correct == "B" and json.loads(rng) == [["A", "home"], ["B", "school"]]
    with pytest.raises(Unrecoverable, match="answer range not recoverable"):
        recover(csqa, None, "Where? No options here.", "B")
    with pytest.raises(Unrecoverable, match="not an option label"):
        recover(csqa, None, "Where?\nA. home\nB. school", "E")
    with pytest.raises(Unrecoverable, match="2 reference answers"):
        recover(csqa, None, "Where?\nA. home\nB. school", ["A", "B"])
    with pytest.raises(Unrecoverable, match="no correct answer"):
        recover(csqa, None, "Where?\nA. home\nB. school", None)
    no_text = entry("csqa_x", extra={"commonsense_qa": {"options_from_text": False}})
    with pytest.raises(Unrecoverable, match="answer range not recoverable"):
        recover(no_text, None, "Where?\nA. home\nB. school", "B")


def test_recover_math_and_categorical():
    gsm = entry("gsm8k")
    rng, correct, _ = recover(gsm, None, "q", "3 + 4 = 7\n#### 7")
    assert rng == records.MATH_ANSWER_RANGE and correct == "7"
    assert (
        recover(entry("minerva_math_algebra"), None, "q", r"so $\boxed{\frac{1}{2}}$.")[1] == r"\frac{1}{2}"
    )
    boolq = entry("boolq_gen")
    for raw, want in (("yes", "yes"), ("No", "no"), ("1", "yes"), ("0", "no"), (True, "yes")):
        rng, correct, _ = recover(boolq, None, "q", raw)
        assert json.loads(rng) == ["yes", "no"] and correct == want
    with pytest.raises(Unrecoverable, match="not in the range"):
        recover(boolq, None, "q", "maybe")


def test_strip_fewshot_and_model_names():
    prompt = (
        "Question: a?\nAnswer: 1\n\nQuestion: b?\nAnswer: 2\n\nQuestion: the real one\n\nwith a gap?\nAnswer:"
    )
    doc = {"question": "the real one\n\nwith a gap"}
    # cut before the document's own question even when the question holds the delimiter
    assert strip_fewshot(prompt, doc, 2, "\n\n") == "Question: the real one\n\nwith a gap?\nAnswer:"
    assert strip_fewshot(prompt, {}, 2, "\n\n") == "with a gap?\nAnswer:"  # no doc text: the last delimiter
    assert strip_fewshot(prompt, doc, 0, "\n\n") == prompt
    chatml = (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQ1?<|im_end|>\n<|im_start|>assistant\n"
        "A1<|im_end|>\n<|im_start|>user\nWhat is 2+2?\nA. 3\nB. 4<|im_end|>\n<|im_start|>assistant\n"
    )
    assert last_user_turn(chatml) == "What is 2+2?\nA. 3\nB. 4"
    llama3 = "<|start_header_id|>user<|end_header_id|>\n\nHi?<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
    assert last_user_turn(llama3) == "Hi?"
    assert last_user_turn("<s>[INST] one [/INST] a</s>[INST] two [/INST]") == "two"
    assert last_user_turn("no template here") is None
    assert display_name("/models/SmolLM2-135M-Instruct/") == "SmolLM2-135M-Instruct"
    assert display_name("meta-llama/Llama-3.1-8B") == "meta-llama/Llama-3.1-8B"


# --- lm-eval: files written by lm-eval 0.4.13 ---------------------------------------------------------


def check_report(rep):
    assert rep.read == rep.written + rep.rejected + rep.skipped
    out = Path(rep.output)
    assert len(rows(out / "records.parquet")) == rep.written
    assert len(rows(out / "_import" / "rejects.parquet")) == rep.rejected
    saved = json.loads((out / "_import" / "report.json").read_text())
    assert saved["read"] == rep.read and saved["written"] == rep.written
    for r in rows(out / "records.parquet"):  # every written record passes the job's own validation
        assert records.check(r) is None, r["record_id"]


def test_lm_eval_dummy_run(tmp_path):
    rep = import_files("lm-eval", [str(LM_DUMMY)], str(tmp_path / "imp"))
    check_report(rep)
    # 7 tasks: 16 written, 4 rejected (2 unknown task, 1 no options, 1 answer not an option), 3 skipped (mc)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (23, 16, 4, 3)
    assert [s["task"] for s in rep.skipped_tasks] == ["arc_challenge_mini_mc"]
    assert "output_type multiple_choice" in rep.skipped_tasks[0]["reason"]
    recs = by_id(tmp_path / "imp" / "records.parquet")
    gsm = recs["dummy::gsm8k_mini::0"]
    assert gsm["key_answer_type"] == "math" and gsm["correct_answer"] == "7" and gsm["llm_output"] == "lol"
    # 2-shot prompt: the examples are cut off; the verdict is from the first filter logged
    assert (
        gsm["question"].startswith("Question: Tom has 3 apples") and "Ann has 2 pens" not in gsm["question"]
    )
    assert gsm["source_judgment"] is False and gsm["source_metric"] == "exact_match/strict-match"
    assert (
        sum(r["task"] == "gsm8k_mini" for r in recs.values()) == 4
    )  # logged twice (two filters), imported once
    mmlu = recs["dummy::mmlu_mini_generative::2"]
    assert (
        json.loads(mmlu["standard_answer_range"])[2] == ["C", "Carbon dioxide"]
        and mmlu["correct_answer"] == "C"
    )
    arc = recs["dummy::arc_challenge_mini_gen::2"]
    assert json.loads(arc["standard_answer_range"])[0] == ["1", "Gas"] and arc["correct_answer"] == "3"
    assert recs["dummy::boolq_mini_gen::0"]["correct_answer"] == "yes"
    assert (
        recs["dummy::csqa_mini_text::1"]["standard_answer_range"]
        == '[["A", "spoon"], ["B", "scissors"], ["C", "pillow"]]'
    )
    rejects = {r["record_id"]: r for r in rows(tmp_path / "imp" / "_import" / "rejects.parquet")}
    assert (
        rejects["dummy::mytask_unknown::0"]["reason"]
        == "unknown task: no task_map entry matches 'mytask_unknown'"
    )
    assert rejects["dummy::csqa_mini_text::2"]["reason"].startswith("answer range not recoverable")
    assert "'E' is not an option label" in rejects["dummy::csqa_mini_text::3"]["reason"]
    assert rejects["dummy::csqa_mini_text::3"]["source_path"].endswith(".jsonl")
    assert {r["source_framework"] for r in rejects.values()} == {"lm-eval"}


def test_lm_eval_filter_choice_and_user_map(tmp_path):
    rep = import_files(
        "lm-eval",
        [str(LM_DUMMY)],
        str(tmp_path / "imp"),
        lm_eval_filter="flexible-extract",
        task_map={
            "mytask": {
                "match": ["mytask_*"],
                "key_answer_type": "short_text",
                "range": ["blue", "banana", "red"],
            }
        },
        model="my-model",
    )
    check_report(rep)
    assert (rep.written, rep.rejected) == (18, 2)  # the unknown task is known now
    recs = by_id(tmp_path / "imp" / "records.parquet")
    assert recs["my-model::gsm8k_mini::0"]["source_metric"] == "exact_match/flexible-extract"
    assert recs["my-model::mytask_unknown::1"]["correct_answer"] == "banana"


def test_reimport_keeps_unchanged_file(tmp_path):
    import_files("lm-eval", [str(LM_DUMMY)], str(tmp_path / "imp"))
    f = tmp_path / "imp" / "records.parquet"
    before = f.stat().st_mtime_ns
    import_files("lm-eval", [str(LM_DUMMY)], str(tmp_path / "imp"))
    assert f.stat().st_mtime_ns == before  # the job's input fingerprint (size, mtime) is unchanged
    import_files("lm-eval", [str(LM_DUMMY)], str(tmp_path / "imp"), model="other")
    assert f.stat().st_mtime_ns != before


def samples_dir(tmp_path: Path) -> Path:
    """A copy of the real dummy run with the gsm8k samples file damaged line by line."""
    run = tmp_path / "run"
    shutil.copytree(LM_DUMMY, run)
    (sample,) = run.glob("*/samples_gsm8k_mini_*.jsonl")
    lines = sample.read_text().splitlines()
    good = json.loads(lines[0])
    no_target = {k: v for k, v in good.items() if k != "target"} | {"doc_id": 10}
    no_resps = dict(good, doc_id=11, resps=[], filtered_resps=[])
    no_doc_id = {k: v for k, v in good.items() if k != "doc_id"}
    surrogate = dict(good, doc_id=12, resps=[["half a pair: \ud800"]])
    twice = dict(good)  # doc 0 under strict-match again
    sample.write_text(
        "\n".join(
            [
                *lines,
                "{broken",
                "[1, 2]",
                *(json.dumps(x) for x in (no_target, no_resps, no_doc_id, surrogate, twice)),
            ]
        )
        + "\n"
    )
    return run


def test_lm_eval_malformed_lines_are_rejects(tmp_path):
    rep = import_files("lm-eval", [str(samples_dir(tmp_path))], str(tmp_path / "imp"))
    check_report(rep)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (30, 16, 11, 3)
    reasons = sorted(r["reason"] for r in rows(tmp_path / "imp" / "_import" / "rejects.parquet"))
    assert any(r.startswith("line 9: not valid JSON") for r in reasons)
    assert "line 10: expected a JSON object, got list" in reasons
    assert "line 13: missing field 'doc_id'" in reasons
    assert "missing field 'target'" in reasons and "no response text in 'resps'" in reasons
    assert "field 'llm_output' is not valid UTF-8 (an escaped lone surrogate)" in reasons
    assert "line 15: doc_id 0 is logged twice under filter 'strict-match'" in reasons


def test_lm_eval_without_results_file(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(LM_DUMMY, run)
    for f in run.glob("*/results_*.json"):
        f.unlink()
    rep = import_files("lm-eval", [str(run)], str(tmp_path / "imp"))
    check_report(rep)
    # the task type is read from the samples; the model from the folder lm-eval wrote into
    assert (rep.written, rep.rejected, rep.skipped) == (16, 4, 3)
    assert {r["model"] for r in rows(tmp_path / "imp" / "records.parquet")} == {"ua0mbki8"}
    assert any("no results_" in n for n in rep.notes)
    assert "seen from the samples" in rep.skipped_tasks[0]["reason"]


def test_lm_eval_nothing_to_import(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportInputError, match="no lm-eval samples_"):
        import_files("lm-eval", [str(tmp_path / "empty")], str(tmp_path / "imp"))
    with pytest.raises(ImportInputError, match="does not exist"):
        import_files("lm-eval", [str(tmp_path / "nope")], str(tmp_path / "imp"))


@pytest.mark.skipif(not LM_SMOL.exists(), reason="no SmolLM2 lm-eval fixture")
def test_lm_eval_smollm2_run(tmp_path):
    rep = import_files("lm-eval", [str(LM_SMOL)], str(tmp_path / "imp"))
    check_report(rep)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (21, 16, 2, 3)
    recs = by_id(tmp_path / "imp" / "records.parquet")
    # pretrained=models/SmolLM2-135M-Instruct, a relative folder: it reads as a hub id (org/name) and is kept
    assert {r["model"] for r in recs.values()} == {SMOL}
    # --apply_chat_template with few-shot as turns: the question is the last user turn, nothing else
    gsm = recs[f"{SMOL}::gsm8k_mini::0"]
    assert (
        gsm["question"]
        == "Question: Tom has 3 apples and buys 4 more. How many apples does he have?\nAnswer:"
    )
    assert all("<|im_start|>" not in r["question"] for r in recs.values())
    # the framework's exact_match calls "B. 4" wrong for target "B": what re-scoring is for
    mmlu = recs[f"{SMOL}::mmlu_mini_generative::1"]
    assert mmlu["llm_output"] == "B. 4" and mmlu["correct_answer"] == "B" and mmlu["source_judgment"] is False


# --- OpenCompass: files written by OpenCompass 0.5.4 ------------------------------------------------------


def test_opencompass_base_run(tmp_path):
    (run,) = [p for p in OC_BASE.iterdir() if p.is_dir()]
    rep = import_files("opencompass", [str(run)], str(tmp_path / "imp"))
    check_report(rep)
    # lukaemon_mmlu_mini 3 + gsm8k_mini 2 written; mytask 1 rejected (unknown); ARC-c-mini 1 skipped (ppl)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (7, 5, 1, 1)
    assert rep.skipped_tasks[0]["task"] == "ARC-c-mini" and "ppl" in rep.skipped_tasks[0]["reason"]
    recs = by_id(tmp_path / "imp" / "records.parquet")
    m = recs["smollm2-135m-instruct::lukaemon_mmlu_mini::1"]
    assert m["key_answer_type"] == "alphabet_option" and m["correct_answer"] == "B"
    assert json.loads(m["standard_answer_range"]) == [["A", "3"], ["B", "4"], ["C", "5"], ["D", "22"]]
    assert m["source_judgment"] is True and m["source_metric"] == "details.correct"
    assert [recs[f"smollm2-135m-instruct::lukaemon_mmlu_mini::{i}"]["source_judgment"] for i in range(3)] == [
        False,
        True,
        True,
    ]
    g = recs["smollm2-135m-instruct::gsm8k_mini::1"]
    assert g["correct_answer"] == "24" and g["llm_output"] == "" and g["source_judgment"] is None
    assert any("no per-sample verdict" in n for n in rep.notes)  # AccEvaluator gives none


def test_opencompass_chat_run_with_partitions(tmp_path):
    (run,) = [p for p in OC_CHAT.iterdir() if p.is_dir()]
    # the predictions folder of a run works as well as the run folder
    rep = import_files("opencompass", [str(run / "predictions")], str(tmp_path / "imp"))
    check_report(rep)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (6, 6, 0, 0)
    recs = by_id(tmp_path / "imp" / "records.parquet")
    # commonsense_qa_mini_0.json / _1.json: one dataset, indexes continue across the parts
    ids = sorted(i for i in recs if "commonsense_qa_mini" in i)
    assert ids == [f"smollm2-135m-instruct-chat::commonsense_qa_mini::{i}" for i in range(4)]
    q = recs["smollm2-135m-instruct-chat::commonsense_qa_mini::2"]
    assert q["question"].startswith("Question: What falls from clouds?")  # the HUMAN turn of the chat
    assert q["correct_answer"] == "A" and q["source_judgment"] is False
    assert q["source_path"].endswith("commonsense_qa_mini_1.json")
    results = json.loads(
        (run / "results" / "smollm2-135m-instruct-chat" / "commonsense_qa_mini.json").read_text()
    )
    assert [recs[i]["source_judgment"] for i in ids] == [d["correct"][0] for d in results["details"]]


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_opencompass_edge_cases(tmp_path):
    """Shapes from the OpenCompass code that the runs above do not show (icl_base_inferencer.py,
    openicl_eval.py): details keyed by index with a bool `correct`, gold left out (falsy), several
    predictions per sample, `content` chat turns, a damaged file, a key that is not an index."""
    run = tmp_path / "outputs" / "default" / "20240101_000000"
    pred, res = run / "predictions" / "m", run / "results" / "m"
    write_json(
        pred / "ARC-e.json",
        {
            "0": {"origin_prompt": "Q1\nA. x\nB. y", "prediction": "B", "gold": "B"},
            "1": {"origin_prompt": [{"role": "user", "content": "Q2\nA. x\nB. y"}], "prediction": "A"},
            "2": {"origin_prompt": "Q3\nA. x\nB. y", "prediction": ["A", "B"], "gold": "A"},
            "3": {"origin_prompt": "Q4\nA. x\nB. y", "gold": "A"},
            "note": {"origin_prompt": "?", "prediction": "?"},
        },
    )
    write_json(
        res / "ARC-e.json",
        {
            "accuracy": 50.0,
            "details": {
                "type": "GEN",
                "0": {"predictions": "B", "references": "B", "correct": True},
                "1": {"predictions": "A", "references": "B", "correct": False},
                "2": {"predictions": "A", "references": "A", "correct": True},
            },
        },
    )
    write_json(pred / "gsm8k.json", ["not", "an", "object"])
    rep = import_files("opencompass", [str(tmp_path / "outputs")], str(tmp_path / "imp"))
    check_report(rep)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (6, 3, 3, 0)
    recs = by_id(tmp_path / "imp" / "records.parquet")
    assert recs["m::ARC-e::0"]["source_judgment"] is True
    one = recs["m::ARC-e::1"]  # gold from the details' reference; the user turn as the question
    assert (
        one["correct_answer"] == "B"
        and one["question"] == "Q2\nA. x\nB. y"
        and one["source_judgment"] is False
    )
    two = recs["m::ARC-e::2"]  # several predictions: the first, without a verdict
    assert two["llm_output"] == "A" and two["source_judgment"] is None
    reasons = {
        r["record_id"] or r["source_path"]: r["reason"]
        for r in rows(tmp_path / "imp" / "_import" / "rejects.parquet")
    }
    assert reasons["m::ARC-e::3"] == "no prediction text"
    assert reasons["m::ARC-e::note"].startswith("prediction key 'note' is not an index")
    assert "not an OpenCompass predictions file" in reasons["m::gsm8k::*"]
    assert any("several predictions" in n for n in rep.notes)


def test_opencompass_nothing_to_import(tmp_path):
    write_json(tmp_path / "results" / "m" / "x.json", {"accuracy": 1})
    with pytest.raises(ImportInputError, match="no OpenCompass predictions"):
        import_files("opencompass", [str(tmp_path)], str(tmp_path / "imp"))


# --- the CLI ---------------------------------------------------------------------------------------------


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "xfinder_ray", *args], capture_output=True, text=True, cwd=ROOT, timeout=180
    )


def test_cli_import(tmp_path):
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "tasks:\n  mytask:\n    match: ['mytask*']\n    key_answer_type: short_text\n    range: [blue, banana]\n"
    )
    p = cli("import", "lm-eval", str(LM_DUMMY), "--output", str(tmp_path / "imp"), "--task-map", str(extra))
    assert p.returncode == 0, p.stderr
    assert "read 23 samples from 7 file(s): 18 written, 2 rejected, 3 skipped" in p.stdout
    assert "SKIPPED 3 sample(s) of task 'arc_challenge_mini_mc'" in p.stderr
    assert "REJECTED 2 sample(s)" in p.stderr
    p = cli("import", "opencompass", str(tmp_path / "nope"), "--output", str(tmp_path / "imp2"))
    assert p.returncode == 1 and "does not exist" in p.stderr
    p = cli(
        "import",
        "lm-eval",
        str(LM_DUMMY),
        "--output",
        str(tmp_path / "imp3"),
        "--task-map",
        str(tmp_path / "x.yaml"),
    )
    assert p.returncode == 1 and "cannot read task map" in p.stderr
    assert cli("import", "--help").returncode == 0


# --- the job on imported records -----------------------------------------------------------------------


def score(out: Path, *inputs: str):
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    cfg = load_config(
        ROOT / "configs" / "local.yaml",
        [f"input={','.join(inputs)}", f"output={out}", "extractor.name=rules"],
    )
    return run(cfg)


def check_job(out: Path, imported: list[str], n: int):
    """Run the job on imported records; check counts and the framework's accuracy beside ours."""
    res = score(out, *imported)
    m = json.loads((out / "manifest.json").read_text())
    assert res.manifest["counts"] == m["counts"]
    assert m["counts"] == {"input": n, "judged": n, "rejected": 0}  # the importer already validated
    judged = pd.read_parquet(out / "judgments")
    src = source_accuracy(str(out / "judgments"), imported)
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet")
    by_model = pd.read_parquet(out / "accuracy" / "by_model.parquet")
    task, model = add_source_accuracy(by_task, by_model, src)
    recs = pd.concat([pd.read_parquet(p) for p in imported])
    withv = recs[recs["source_judgment"].notna()]
    assert int(task["source_n"].sum()) == len(withv) and int(task["source_correct"].sum()) == int(
        withv["source_judgment"].sum()
    )
    assert int(model["source_n"].sum()) == len(withv)
    assert len(judged) == n and set(judged["record_id"]) == set(recs["record_id"])
    return m, task, model


@pytest.mark.ray
def test_job_on_imported_lm_eval_and_opencompass(ray_local, tmp_path):
    lm = convert_inputs(
        [str(LM_SMOL if LM_SMOL.exists() else LM_DUMMY)], "lm-eval", None, str(tmp_path / "lm")
    )
    (run,) = [p for p in OC_CHAT.iterdir() if p.is_dir()]
    oc = convert_inputs([str(run)], "opencompass", None, str(tmp_path / "oc"))
    assert lm == [str(tmp_path / "lm" / "records.parquet")] and oc == [
        str(tmp_path / "oc" / "records.parquet")
    ]
    n = len(rows(Path(lm[0]))) + len(rows(Path(oc[0])))
    m, task, model = check_job(tmp_path / "out", lm + oc, n)
    assert set(model["model"]) == {
        SMOL if LM_SMOL.exists() else "dummy",
        "smollm2-135m-instruct-chat",
    }
    # the importer's own folder is skipped by the job's listing: the output folder as input reads records only
    res = score(tmp_path / "out2", str(tmp_path / "oc"))
    assert res.manifest["counts"]["input"] == len(rows(Path(oc[0])))


# --- the real tools, run again -------------------------------------------------------------------------


def lm_eval_available() -> bool:
    try:
        import lm_eval  # noqa: F401
    except ImportError:
        return False
    return True


def run_lm_eval(tmp_path: Path, *args: str) -> Path:
    work = tmp_path / "lm"
    shutil.copytree(TASKS, work / "tasks")
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "hf_datasets"),
        TOKENIZERS_PARALLELISM="false",
    )
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "lm_eval",
            *args,
            "--include_path",
            "tasks/",
            "--log_samples",
            "--output_path",
            "out/",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return work / "out"


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not lm_eval_available(), reason="lm-eval is not installed (pip install lm-eval==0.4.13)")
def test_real_lm_eval_dummy_then_job(ray_local, tmp_path):
    out = run_lm_eval(tmp_path, "--model", "dummy", "--tasks", ",".join(ALL_TASKS))
    rep = import_files("lm-eval", [str(out)], str(tmp_path / "imp"))
    check_report(rep)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (23, 16, 4, 3)
    check_job(tmp_path / "job", [rep.records], rep.written)


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not lm_eval_available(), reason="lm-eval is not installed (pip install lm-eval==0.4.13)")
def test_real_lm_eval_smollm2_then_job(ray_local, tmp_path):
    from xfinder_ray.devmodels import ensure_smollm2

    model = ensure_smollm2()
    tasks = [
        "gsm8k_mini",
        "mmlu_mini_generative",
        "arc_challenge_mini_gen",
        "boolq_mini_gen",
        "arc_challenge_mini_mc",
    ]
    out = run_lm_eval(
        tmp_path,
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--device",
        "cpu",
        "--apply_chat_template",
        "--tasks",
        ",".join(tasks),
        "--limit",
        "3",
    )
    rep = import_files("lm-eval", [str(out)], str(tmp_path / "imp"))
    check_report(rep)
    # limit 3: gsm8k 3 + mmlu 3 + arc 3 + boolq 3 written; arc mc 3 skipped
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (15, 12, 0, 3)
    recs = rows(Path(rep.records))
    assert {r["model"] for r in recs} == {model.name}
    assert all("<|im_start|>" not in r["question"] for r in recs) and any(
        r["llm_output"].strip() for r in recs
    )
    check_job(tmp_path / "job", [rep.records], rep.written)


# --- S3 in, S3 out ---------------------------------------------------------------------------------------


@pytest.mark.s3
def test_import_from_and_to_s3(s3_server, tmp_path):  # noqa: F811
    from xfinder_ray.config import StorageConfig

    fs = s3_server.pyarrow_fs()
    bucket = s3_server.make_bucket("imports")
    for local in [*LM_SMOL.rglob("*"), *OC_CHAT.rglob("*")]:
        if local.is_file():
            with fs.open_output_stream(f"{bucket}/runs/{local.relative_to(DATA)}") as f:
                f.write(local.read_bytes())
    storage = StorageConfig(
        endpoint_url=s3_server.endpoint_url,
        access_key_id=s3_server.access_key,
        secret_access_key=s3_server.secret_key,
        region="us-east-1",
    )
    rep = import_files("lm-eval", [f"s3://{bucket}/runs/lm_eval/"], f"s3://{bucket}/imp/lm", storage=storage)
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (21, 16, 2, 3)
    assert rep.records == f"s3://{bucket}/imp/lm/records.parquet"
    assert all(u.startswith(f"s3://{bucket}/runs/lm_eval/") for u in rep.files)
    (paths,) = [
        convert_inputs(
            [f"s3://{bucket}/runs/opencompass/chat"],
            "opencompass",
            None,
            f"s3://{bucket}/imp/oc",
            storage=storage,
        )
    ]
    assert paths == [f"s3://{bucket}/imp/oc/records.parquet"]
    recs = pq.read_table(f"{bucket}/imp/oc/records.parquet", filesystem=fs).to_pylist()
    assert len(recs) == 6 and recs[0]["source_path"].startswith(f"s3://{bucket}/runs/opencompass/chat/")
    report = json.loads(fs.open_input_stream(f"{bucket}/imp/lm/_import/report.json").read())
    assert report["written"] == 16
    # re-importing the same files leaves the object alone
    before = fs.get_file_info(f"{bucket}/imp/lm/records.parquet").mtime
    import_files("lm-eval", [f"s3://{bucket}/runs/lm_eval/"], f"s3://{bucket}/imp/lm", storage=storage)
    assert fs.get_file_info(f"{bucket}/imp/lm/records.parquet").mtime == before


@pytest.mark.ray
def test_score_reads_framework_outputs_directly(ray_local, tmp_path):
    """`input.format: lm-eval` re-scores a run in one command: import, judge, both accuracies side by side."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import OutputExists, run

    out = tmp_path / "out"

    def job(*extra: str):
        overrides = [f"input={LM_DUMMY}", "input.format=lm-eval", f"output={out}", "extractor.name=rules"]
        return run(load_config(ROOT / "configs" / "local.yaml", [*overrides, *extra]))

    res = job()
    m = res.manifest
    imp = m["import"]
    assert (imp["framework"], imp["read"], imp["written"], imp["rejected"], imp["skipped"]) == (
        "lm-eval",
        23,
        16,
        4,
        3,
    )
    # the import's rejects are its own table; the job judges every imported record
    assert m["counts"] == {"input": 16, "judged": 16, "rejected": 0}
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet")
    recs = rows(out / "_imported" / "records.parquet")
    with_verdict = [r for r in recs if r["source_judgment"] is not None]
    assert int(by_task["source_n"].sum()) == len(with_verdict) > 0
    assert int(by_task["source_correct"].sum()) == sum(r["source_judgment"] for r in with_verdict)
    board = (out / "accuracy" / "leaderboard.md").read_text()
    assert "framework macro" in board and "ours (the framework's own)" in board
    # The import's 4 rejects count in the tables as record-caused, in their own (model, task) cells:
    # csqa_mini_text was scored on 2 of its 4 samples, and the unknown task is a row with none judged.
    import_rejects = rows(out / "_imported" / "_import" / "rejects.parquet")
    assert int(by_task["rejected_record"].sum()) == len(import_rejects) == 4
    assert (by_task["input"] == by_task["judged"] + by_task["rejected"]).all()
    assert int(by_task["input"].sum()) == imp["written"] + imp["rejected"]
    for (model, task), got in by_task.set_index(["model", "task"])["rejected_record"].items():
        assert got == sum(1 for r in import_rejects if (r["model"], r["task"]) == (model, task))
    csqa = by_task[by_task["task"] == "csqa_mini_text"].iloc[0]
    assert (csqa["judged"], csqa["rejected_record"]) == (2, 2)
    # a committed output is not re-imported over
    with pytest.raises(OutputExists):
        job("output.overwrite=false")
    # an unfinished run resumes: the re-import leaves the unchanged records file as it was
    (out / "manifest.json").unlink()
    again = job("output.overwrite=false")
    assert again.manifest["resume"]["rows_done_before"] == 16
    assert again.manifest["counts"] == m["counts"]


def test_lm_eval_damaged_metrics_list_is_not_a_crash():
    # A `metrics` list holding a list (hand-edited or damaged output) used to raise TypeError out of
    # the reader; such entries are not metric names and are passed over.
    from xfinder_ray.importers.lm_eval import _verdict

    assert _verdict({"metrics": [["acc"], "acc"], "acc": 1}) == (True, "acc")
    assert _verdict({"metrics": [{"a": 1}], "acc": 1}) == (None, None)
