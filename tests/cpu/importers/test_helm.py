"""The HELM importer (xfinder_ray/importers/helm.py, `input.format=helm`).

tests/data/importers/helm/ holds run folders written by HELM itself (crfm-helm 0.5.16 run here,
offline, and three published run folders of the HELM repository; README.md there). Damaged files are
written here, in tmp_path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from xfinder_ray import records
from xfinder_ray.importers import ImportInputError, helm, import_files
from xfinder_ray.importers.formats import FORMATS

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "importers" / "helm"
RUNS = DATA / "benchmark_output" / "runs"
PUBLISHED = DATA / "published" / "runs" / "v3"
SMOL = "local/smollm2-135m-instruct"
MMLU = "mmlu:subject=astronomy,method=multiple_choice_joint"
MMLU_RUN = RUNS / "v1" / f"{MMLU},model=local_smollm2-135m-instruct"
GSM_RUN = RUNS / "v1" / "gsm:model=local_smollm2-135m-instruct"
CLS_RUN = RUNS / "v1" / "simple_classification:model=local_smollm2-135m-instruct"
SEP_RUN = RUNS / "v1" / "mmlu:subject=astronomy,method=multiple_choice_separate_original,model=simple_model1"
TRIALS_RUN = RUNS / "v2" / f"{MMLU},model=local_smollm2-135m-instruct"


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def load(path: Path):
    return json.loads(path.read_text())


def states(run: Path) -> list[dict]:
    return load(run / "scenario_state.json")["request_states"]


def test_registered():
    assert "helm" in FORMATS


def test_import_runs(tmp_path):
    rep = import_files("helm", [str(RUNS)], str(tmp_path))
    n_states = sum(len(states(r)) for r in (MMLU_RUN, GSM_RUN, CLS_RUN, TRIALS_RUN))
    # the separate_original run: 2 instances (4 request states each, one per option) skipped
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (n_states + 2, n_states, 0, 2)
    assert n_states == 6 + 4 + 6 + 6 and rep.reconciles() and len(rep.files) == 5
    (sk,) = rep.skipped_tasks
    assert sk["n"] == 2 and sk["task"] == "mmlu:subject=astronomy,method=multiple_choice_separate_original"
    assert sk["model"] == "simple/model1" and "multiple_choice_separate_original" in sk["reason"]
    assert "log-probability" in sk["reason"]
    assert len(states(SEP_RUN)) == 8
    recs = {r["record_id"]: r for r in rows(tmp_path / "records.parquet")}
    assert len(recs) == n_states
    for r in recs.values():
        assert records.check(r) is None
        assert r["source_framework"] == "helm" and r["source_judgment"] is not None
        assert r["model"] == SMOL


def test_multiple_choice_joint_fields(tmp_path):
    import_files("helm", [str(MMLU_RUN)], str(tmp_path))
    recs = {r["source_index"]: r for r in rows(tmp_path / "records.parquet")}
    raw = states(MMLU_RUN)
    assert len(recs) == len(raw) == 6
    for rs in raw:
        inst = rs["instance"]
        r = recs[inst["id"]]
        assert r["task"] == (MMLU if inst["split"] == "test" else f"{MMLU},split={inst['split']}")
        assert r["record_id"] == f"{SMOL}::{r['task']}::{inst['id']}"
        assert r["key_answer_type"] == "alphabet_option"
        assert r["llm_output"] == rs["result"]["completions"][0]["text"]
        assert json.loads(r["standard_answer_range"]) == [list(p) for p in rs["output_mapping"].items()]
        (gold,) = [ref["output"]["text"] for ref in inst["references"] if "correct" in ref["tags"]]
        assert rs["output_mapping"][r["correct_answer"]] == gold
        # the question as the model saw it, without the two few-shot examples
        prompt = rs["request"]["prompt"]
        assert r["question"].startswith(
            "The following are multiple choice questions (with answers) about astronomy."
        )
        assert r["question"].endswith(prompt[prompt.rindex("Question: ") :].strip())
        assert r["question"].count("Question: ") == 1 and prompt.count("Question: ") == 3
        assert r["source_metric"] == "exact_match (display_predictions.json)"
    assert {r["task"] for r in recs.values()} == {MMLU, f"{MMLU},split=valid"}


def test_trials_are_distinct_records(tmp_path):
    import_files("helm", [str(TRIALS_RUN)], str(tmp_path))
    recs = rows(tmp_path / "records.parquet")
    assert load(TRIALS_RUN / "run_spec.json")["adapter_spec"]["num_train_trials"] == 3
    want = {f"{rs['instance']['id']}#trial{rs['train_trial_index']}" for rs in states(TRIALS_RUN)}
    assert {r["source_index"] for r in recs} == want and len(want) == 6
    verdicts = {
        f"{p['instance_id']}#trial{p['train_trial_index']}": p["stats"]["exact_match"]
        for p in load(TRIALS_RUN / "display_predictions.json")
    }
    assert {r["source_index"]: float(r["source_judgment"]) for r in recs} == verdicts


def test_generation_math_and_classification(tmp_path):
    import_files("helm", [str(GSM_RUN), str(CLS_RUN)], str(tmp_path))
    recs = rows(tmp_path / "records.parquet")
    gsm = {r["source_index"]: r for r in recs if r["task"] == "gsm"}
    assert len(gsm) == 4
    for rs in states(GSM_RUN):
        r = gsm[rs["instance"]["id"]]
        (ref,) = rs["instance"]["references"]
        assert ref["output"]["text"].endswith(f"The answer is {r['correct_answer']}.")  # HELM's reference
        assert (r["key_answer_type"], r["standard_answer_range"]) == ("math", records.MATH_ANSWER_RANGE)
        assert r["llm_output"] == rs["result"]["completions"][0]["text"]
        assert r["question"] == "Q: " + rs["instance"]["input"]["text"] + "\nA:"
        assert r["source_metric"] == "final_number_exact_match (per_instance_stats.json)"
    cls = [r for r in recs if r["task"] == "simple_classification"]
    assert len(cls) == 6
    for r in cls:
        assert r["key_answer_type"] == "categorical_label"  # inferred: no task map entry
        assert json.loads(r["standard_answer_range"]) == ["Even", "Odd"]
        assert r["correct_answer"] == (
            "Even" if int(r["question"].split("Number: ")[1].split()[0]) % 2 == 0 else "Odd"
        )
        assert r["source_metric"] == "quasi_exact_match (per_instance_stats.json)"


def helm_means(run: Path, metric: str) -> dict[str, float]:
    """{split: mean} of `metric` in the run's stats.json, without perturbations: HELM's own figure."""
    return {
        s["name"]["split"]: s["mean"]
        for s in load(run / "stats.json")
        if s["name"]["name"] == metric and "perturbation" not in s["name"] and "sub_split" not in s["name"]
    }


@pytest.mark.parametrize("paths", [[RUNS], [PUBLISHED]], ids=["runs_here", "published"])
def test_source_accuracy_is_helm_own(tmp_path, paths):
    """Per run and split, the mean of the imported verdicts is the mean HELM wrote in stats.json."""
    import_files("helm", [str(p) for p in paths], str(tmp_path))
    df = pd.DataFrame(rows(tmp_path / "records.parquet"))
    df = df[df["source_judgment"].notna()]
    checked = 0
    for (path, task, metric), g in df.groupby(["source_path", "task", "source_metric"]):
        run = Path(path).parent
        split = task.split(",split=")[1] if ",split=" in task else "test"
        own = helm_means(run, metric.split(" ")[0])[split]
        assert g["source_judgment"].astype(float).mean() == pytest.approx(own), (run.name, task)
        checked += 1
    assert checked == (5 if paths == [RUNS] else 2)


def test_published_runs(tmp_path):
    rep = import_files("helm", [str(PUBLISHED)], str(tmp_path))
    assert (rep.read, rep.written, rep.rejected, rep.skipped) == (6, 4, 2, 0) and rep.reconciles()
    recs = {r["record_id"]: r for r in rows(tmp_path / "records.parquet")}
    r = recs["meta/llama-3-70b::bbq:subject=all,method=multiple_choice_joint::id58485"]
    (rs,) = [
        s
        for s in states(PUBLISHED / "bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-70b")
        if s["instance"]["id"] == "id58485"
    ]
    assert r["llm_output"] == " A" == rs["result"]["completions"][0]["text"]
    assert json.loads(r["standard_answer_range"]) == [
        ["A", "The Latino student"],
        ["B", "Cannot be determined"],
        ["C", "The White student"],
    ]
    assert r["correct_answer"] == "B" and r["source_judgment"] is False
    assert r["source_metric"] == "exact_match (per_instance_stats.json)"  # not in its display stats
    assert r["question"].startswith(
        "The following are multiple choice questions (with answers).\n\nPassage: A couple"
    )
    gpt = [r for r in recs.values() if r["model"] == "openai/gpt-4o-2024-05-13"]
    assert len(gpt) == 2 and all(r["source_judgment"] for r in gpt)
    rej = rows(tmp_path / "_import" / "rejects.parquet")
    assert {(r["task"], r["reason"]) for r in rej} == {
        ("anthropic_red_team", "no reference tagged `correct`")
    }
    assert any(
        "anthropic_red_team:model=meta_llama-3-8b: no HELM per-instance verdicts" in n for n in rep.notes
    )


def copy_run(src: Path, dest_root: Path) -> Path:
    dest = dest_root / src.name
    shutil.copytree(src, dest)
    return dest


def test_damaged_runs_are_rejects_with_reasons(tmp_path, monkeypatch):
    src = tmp_path / "runs"
    good = copy_run(TRIALS_RUN, src)
    # a corrupt scenario_state.json: one reject naming it, a note, nothing else from that run
    broken = src / "broken:model=x"
    broken.mkdir()
    (broken / "scenario_state.json").write_text('{"adapter_spec": {"method": "generation"}, "request_st')
    # not a scenario state
    (src / "other:model=x").mkdir()
    (src / "other:model=x" / "scenario_state.json").write_text("[1, 2]")
    # bad request states in an otherwise real run
    bad = copy_run(GSM_RUN, src / "sub")
    state = load(bad / "scenario_state.json")
    rs = state["request_states"]
    rs[0].pop("result")
    rs[1]["result"]["completions"] = []
    rs[1]["result"]["error"] = "rate limited"
    rs[2]["instance"]["references"][0]["tags"] = []
    rs[3]["instance"].pop("id")
    rs.append("not a request state")
    (bad / "scenario_state.json").write_text(json.dumps(state))
    (bad / "per_instance_stats.json").write_text("{truncated")  # no verdicts, a note
    # a run folder without scenario_state.json: a note
    (src / "empty:model=x").mkdir()
    (src / "empty:model=x" / "run_spec.json").write_text("{}")
    rep = import_files("helm", [str(src)], str(tmp_path / "out"))
    assert rep.reconciles() and (rep.read, rep.written, rep.rejected) == (6 + 2 + 5, 6, 7)
    rej = {
        (r["task"], r["source_index"]): r["reason"]
        for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")
    }
    assert rej[("broken", "*")].startswith("scenario_state.json: not valid JSON")
    assert rej[("other", "*")] == "not a HELM scenario_state.json (no `request_states` list)"
    ids = [s["instance"]["id"] for s in states(GSM_RUN)]
    assert rej[("gsm", ids[0])] == "request state has no `result` (the request was not run or failed)"
    assert rej[("gsm", ids[1])] == "result has no completion text (request error: rate limited)"
    assert rej[("gsm", ids[2])] == "no reference tagged `correct`"
    assert rej[("gsm", "#3")] == "instance has no `id`"
    assert rej[("gsm", "#4")] == "request state has no `instance`"
    notes = "\n".join(rep.notes)
    assert "broken:model=x/scenario_state.json: not valid JSON" in notes
    assert "empty:model=x: a HELM run folder without scenario_state.json" in notes
    # its display_predictions.json holds exact_match_indicator (HELM's classic schema): the verdicts
    assert (
        "per_instance_stats.json: not valid JSON" in notes
        and "verdicts (exact_match_indicator) from display" in notes
    )
    for r in rows(tmp_path / "out" / "records.parquet"):
        assert r["source_judgment"] is not None

    # over the size bound: not parsed, a reject and a note say so
    monkeypatch.setattr(helm, "MAX_JSON_BYTES", 10_000)
    rep = import_files("helm", [str(good)], str(tmp_path / "out2"))
    assert (rep.read, rep.written, rep.rejected) == (1, 0, 1)
    (r,) = rows(tmp_path / "out2" / "_import" / "rejects.parquet")
    assert "over the 0.00954 MiB bound" in r["reason"] and r["task"] == MMLU
    assert any("scenario_state.json" in n and "bound" in n for n in rep.notes)

    with pytest.raises(ImportInputError, match="no HELM run folders"):
        import_files("helm", [str(src / "empty:model=x")], str(tmp_path / "none"))


def test_joint_gold_by_text_several_correct_and_thinking(tmp_path):
    """Shapes the fixtures lack, written the way HELM writes them: shuffled output_mapping (gold by
    text), two references tagged correct, a reasoning model's separate `thinking`, a perturbation."""
    run = copy_run(TRIALS_RUN, tmp_path / "runs")
    state = load(run / "scenario_state.json")
    rs = state["request_states"]
    m = rs[0]["output_mapping"]
    rs[0]["output_mapping"] = dict(zip(m, reversed(list(m.values())), strict=True))
    for i, ref in enumerate(rs[1]["instance"]["references"]):
        ref["tags"] = ["correct"] if i < 2 else []
    rs[2]["result"]["completions"][0]["thinking"] = {"text": "Let me think. Saturn has rings."}
    rs[3]["instance"]["perturbation"] = {"name": "typo", "robustness": True, "fairness": False, "prob": 0.1}
    (run / "scenario_state.json").write_text(json.dumps(state))
    import_files("helm", [str(run)], str(tmp_path / "out"))
    recs = {r["source_index"]: r for r in rows(tmp_path / "out" / "records.parquet")}
    idx = [f"{s['instance']['id']}#trial{s['train_trial_index']}" for s in rs]
    r0 = recs[idx[0]]
    (gold,) = [ref["output"]["text"] for ref in rs[0]["instance"]["references"] if "correct" in ref["tags"]]
    assert rs[0]["output_mapping"][r0["correct_answer"]] == gold
    assert r0["correct_answer"] == list(m)[len(m) - 1 - list(m.values()).index(gold)]
    rej = {r["source_index"]: r["reason"] for r in rows(tmp_path / "out" / "_import" / "rejects.parquet")}
    assert rej[idx[1]] == "2 options are tagged `correct` (A, B); expected one"
    assert recs[idx[2]]["llm_output"] == rs[2]["result"]["completions"][0]["text"]  # thinking kept apart
    assert recs[idx[3]]["task"] == f"{MMLU},perturbation=typo"


def test_helpers():
    assert helm.task_of("mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt-4o") == (
        "mmlu:subject=anatomy,method=multiple_choice_joint"
    )
    assert (
        helm.task_of("gsm:model=a_b,model_deployment=c/d") == "gsm" and helm.task_of("simple1") == "simple1"
    )
    assert helm.final_number("12 * 2 = 24 The answer is 1,024.") == "1024"
    assert helm.final_number("no number") is None


def test_cli_import(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "import", "helm", str(PUBLISHED), "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    assert "helm: read 6 samples from 3 file(s): 4 written, 2 rejected, 0 skipped" in p.stdout


@pytest.mark.ray
def test_score_helm_runs(ray_local, tmp_path):
    """`input.format=helm`: import, judge under real Ray, HELM's own accuracy beside ours."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    src = tmp_path / "runs"
    shutil.copytree(RUNS / "v1", src)
    out = tmp_path / "out"
    cfg = load_config(
        ROOT / "configs" / "local.yaml",
        [f"input={src}", "input.format=helm", f"output={out}", "extractor.name=rules"],
    )
    m = run(cfg).manifest
    assert (m["import"]["framework"], m["import"]["written"], m["import"]["skipped"]) == ("helm", 16, 2)
    assert m["counts"] == {"input": 16, "judged": 16, "rejected": 0}
    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet")
    assert set(by_task["task"]) == {MMLU, f"{MMLU},split=valid", "gsm", "simple_classification"}
    for r in by_task.itertuples():
        folder = {MMLU: MMLU_RUN, f"{MMLU},split=valid": MMLU_RUN, "gsm": GSM_RUN}.get(r.task, CLS_RUN)
        metric = {"gsm": "final_number_exact_match", "simple_classification": "quasi_exact_match"}.get(
            r.task, "exact_match"
        )
        split = "valid" if r.task.endswith("split=valid") else "test"
        assert r.source_n == r.n and r.source_accuracy == pytest.approx(helm_means(folder, metric)[split])
