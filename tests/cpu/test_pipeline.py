"""End to end with the `rules` extractor on local files: counts reconcile, tables match judgments."""

import json
import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xfinder_ray.config import ConfigError, load_config
from xfinder_ray.pipeline import OutputExists, run
from xfinder_ray.stages.aggregate import UNKNOWN, question_key, wilson

pytestmark = pytest.mark.ray

KINDS = [
    (
        "alphabet_option",
        json.dumps([["A", "red"], ["B", "blue"], ["C", "green"]]),
        "B",
        ["The sky is blue, so the answer is (B).", "I think C.", "Answer: A", "Hmm.", ""],
    ),
    (
        "categorical_label",
        json.dumps(["Positive", "Negative"]),
        "Positive",
        ["The review is Positive.", "Sentiment: Negative", "I cannot tell."],
    ),
    (
        "math",
        "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality",
        "0.5",
        [r"So the result is $\boxed{\frac{1}{2}}$.", "#### 0.5", "The answer is 2.", "The answer is 1/2."],
    ),
]


def make_rows(n: int, seed: int = 0) -> list[dict]:
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        kat, rng, correct, outs = KINDS[i % len(KINDS)]
        rows.append(
            dict(
                record_id=f"r{i:06d}",
                model=f"model-{rnd.randrange(4)}",
                task=f"task-{kat}",
                key_answer_type=kat,
                question=f"Question {i % 97}?",
                llm_output=rnd.choice(outs),
                standard_answer_range=rng,
                correct_answer=correct,
            )
        )
    bad = [
        dict(rows[0], record_id="bad-null", question=None),
        dict(rows[0], record_id="bad-type", key_answer_type="essay"),
        dict(rows[0], record_id="bad-range", standard_answer_range="[['A', 'red'"),
        dict(rows[0], record_id="bad-answer", correct_answer="Z"),
    ]
    return rows + bad


def write_parquet(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)


def score(tmp_path, *extra):
    cfg = load_config("configs/local.yaml", [f"output={tmp_path / 'out'}", "extractor.name=rules", *extra])
    return run(cfg)


def test_rules_end_to_end_local(ray_local, tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    rows = make_rows(3000)
    write_parquet(inp / "a.parquet", rows[:1500])
    write_parquet(inp / "b.parquet", rows[1500:])
    ctx = ray_local.data.DataContext.get_current()
    ctx.max_map_retries = 0  # Ray started by the caller (this fixture), not by init_ray
    res = score(tmp_path, f"input={inp}")
    # run() gives the sink's map tasks storage-error retries whoever started Ray
    assert ctx.max_map_retries == 3 and "AWS Error NETWORK_CONNECTION" in ctx.retried_map_errors
    out = tmp_path / "out"
    m = json.loads((out / "manifest.json").read_text())
    assert m["counts"] == {"input": 3004, "judged": 3000, "rejected": 4}
    assert m["extractor"].startswith("rules:") and m["status"] == "committed"
    # Per-stage counts over the written rows reconcile with the totals.
    stages = m["stages"]
    assert list(stages) == ["read", "validate", "extract", "judge"]
    assert stages["read"]["rows"] == 3004
    assert stages["read"]["rejected"] + stages["validate"]["rejected"] + stages["judge"]["rejected"] == 4
    assert stages["extract"] == {"extracted": 3000, "errors": 0}
    assert stages["judge"]["judged"] == 3000
    assert stages["judge"]["correct"] == int(pd.read_parquet(out / "judgments")["judgment"].sum())

    judgments = pd.read_parquet(out / "judgments")
    rejects = pd.read_parquet(out / "rejects")
    assert set(rejects["stage"]) <= {"read", "validate", "judge"}
    assert (rejects["stage"] == "validate").sum() == stages["validate"]["rejected"]
    assert len(judgments) == 3000 and judgments["record_id"].is_unique
    assert set(judgments["record_id"]) | set(rejects["record_id"]) == {r["record_id"] for r in rows}
    reasons = dict(zip(rejects["record_id"], rejects["reason"], strict=True))
    assert "null" in reasons["bad-null"] and "unknown key_answer_type" in reasons["bad-type"]
    assert "not a JSON or Python list literal" in reasons["bad-range"] and "not in" in reasons["bad-answer"]
    assert (judgments["extractor"] == m["extractor"]).all()
    assert set(judgments["confidence"]) <= {"certain", "likely", "unsure"}
    assert (
        judgments.loc[judgments["confidence"] == "certain", "extracted_answer"] != "[No valid answer]"
    ).all()

    # The written tables equal tables recomputed from the written judgments.
    table = pd.read_csv(out / "accuracy" / "by_model_task.csv")
    again = (
        judgments.groupby(["model", "task"])
        .agg(n=("judgment", "size"), correct=("judgment", "sum"))
        .reset_index()
    )
    merged = table.merge(again, on=["model", "task"], suffixes=("", "_re"))
    assert len(merged) == len(table) == len(again)
    assert (merged["n"] == merged["n_re"]).all() and (merged["correct"] == merged["correct_re"]).all()
    by_model = pd.read_csv(out / "accuracy" / "by_model.csv")
    for r in by_model.itertuples():
        g = table[table["model"] == r.model]
        assert r.accuracy_micro == pytest.approx(g["correct"].sum() / g["n"].sum())
        assert r.accuracy_macro == pytest.approx(g["accuracy"].mean())
    # Every record is in the tables: input = judged + rejected, per model and in all.
    assert (by_model["input"] == by_model["judged"] + by_model["rejected"]).all()
    assert int(by_model["input"].sum()) == 3004 and int(by_model["judged"].sum()) == 3000
    assert (int(by_model["rejected_record"].sum()), int(by_model["rejected_response"].sum())) == (4, 0)
    assert (by_model["n"] == by_model["judged"]).all() and (by_model["coverage"] == 1.0).all()
    # Judgments carry the item; every pair of models is tested on it, and every model gets a rank interval.
    keys = {r["record_id"]: question_key(r["task"], r["question"]) for r in rows}
    assert (judgments["question_key"] == judgments["record_id"].map(keys)).all()
    pairwise = pd.read_parquet(out / "accuracy" / "pairwise.parquet")
    ranks = pd.read_parquet(out / "accuracy" / "ranks.parquet")
    assert len(pairwise) == 6 and (pairwise["test"] == "mcnemar-exact").all()
    assert (pairwise["p_holm"] >= pairwise["p_value"]).all() and (pairwise["questions"] > 0).all()
    assert list(ranks["model"]) == list(by_model["model"]) and list(ranks["rank"]) == [1, 2, 3, 4]
    assert ((ranks["rank_low"] <= ranks["rank"]) & (ranks["rank"] <= ranks["rank_high"])).all()
    board = (out / "accuracy" / "leaderboard.md").read_text()
    assert "| rank | rank 95% | vs. above | model |" in board and "Scored on fewer tasks" not in board
    assert res.leaderboard == board and res.leaderboard.startswith("# Leaderboard")

    # Rules got the obvious ones right: "(B)" for B, boxed 1/2 for 0.5.
    j = judgments.set_index("record_id")
    src = {r["record_id"]: r for r in rows}
    for rid in j.index[:300]:
        if src[rid]["llm_output"] == "The sky is blue, so the answer is (B).":
            assert j.loc[rid, "extracted_answer"] == "B" and j.loc[rid, "judgment"]


def test_jsonl_input_with_malformed_lines(ray_local, tmp_path):
    rows = make_rows(30)
    lines = [json.dumps(r) for r in rows] + ["{broken", "[1, 2]"]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    score(tmp_path, f"input={tmp_path / 'in.jsonl'}")
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["counts"] == {"input": 36, "judged": 30, "rejected": 6}
    reasons = set(pd.read_parquet(tmp_path / "out" / "rejects")["reason"])
    assert any("not valid JSON" in r for r in reasons) and "expected a JSON object, got list" in reasons
    # the two lines without a model are in the tables, under "(unknown)", never scored
    by_model = pd.read_csv(tmp_path / "out" / "accuracy" / "by_model.csv").set_index("model")
    assert int(by_model["input"].sum()) == 36
    assert (by_model.loc[UNKNOWN, "rejected_record"], by_model.loc[UNKNOWN, "n"]) == (2, 0)
    assert "Not attributed to a model" in (tmp_path / "out" / "accuracy" / "leaderboard.md").read_text()


def test_column_mapping_and_committed_output(ray_local, tmp_path):
    rows = [{("resp" if k == "llm_output" else k): v for k, v in r.items()} for r in make_rows(20)[:20]]
    write_parquet(tmp_path / "in.parquet", rows)
    score(tmp_path, f"input={tmp_path / 'in.parquet'}", "input.columns.llm_output=resp")
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]["judged"] == 20
    with pytest.raises(OutputExists):
        score(tmp_path, f"input={tmp_path / 'in.parquet'}", "output.overwrite=false")


def test_any_registered_record_extractor_scores_the_job(ray_local, tmp_path):
    # A RegEx baseline as the job's extractor: a framework's own reading of the same responses.
    inp = tmp_path / "in"
    inp.mkdir()
    rows = make_rows(200)
    write_parquet(inp / "a.parquet", rows)
    res = score(tmp_path, f"input={inp}", "extractor.name=lm-eval")
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["counts"] == {"input": 204, "judged": 200, "rejected": 4}
    assert m["extractor"].startswith("lm-eval:lm-eval@") and res is not None
    judgments = pd.read_parquet(tmp_path / "out" / "judgments")
    assert judgments["confidence"].isna().all()  # only rules rates its extractions
    # "The sky is blue, so the answer is (B)." is read by lm-eval's multiple-choice filter as B.
    sky = judgments[judgments["record_id"].isin([r["record_id"] for r in rows if "(B)" in r["llm_output"]])]
    assert len(sky) and (sky["extracted_answer"] == "B").all()


def test_rerunning_a_job_gives_identical_judgments(ray_local, tmp_path):
    # Reproducible verdicts: the same input and config give the same judgments and tables.
    inp = tmp_path / "in"
    inp.mkdir()
    write_parquet(inp / "a.parquet", make_rows(600, seed=3))
    outputs = []
    for name in ("first", "second"):
        cfg = load_config(
            "configs/local.yaml", [f"input={inp}", f"output={tmp_path / name}", "extractor.name=rules"]
        )
        run(cfg)
        j = pd.read_parquet(tmp_path / name / "judgments").sort_values("record_id").reset_index(drop=True)
        m = json.loads((tmp_path / name / "manifest.json").read_text())
        timing = ("wall_time_s", "records_per_s", "started_at", "config")
        outputs.append(
            (
                j,
                (tmp_path / name / "accuracy" / "by_model_task.csv").read_text(),
                {k: v for k, v in m.items() if k not in timing},
            )
        )
    (j1, t1, m1), (j2, t2, m2) = outputs
    pd.testing.assert_frame_equal(j1, j2)
    assert t1 == t2 and m1 == m2


def test_comparator_key_and_its_deprecated_alias():
    assert load_config("configs/local.yaml", ["output=/tmp/o"]).judge.comparator == "math-verify"
    cfg = load_config("configs/local.yaml", ["output=/tmp/o", "judge.comparator=xfinder-compat"])
    assert cfg.judge.comparator == "xfinder-compat"
    old = load_config("configs/local.yaml", ["output=/tmp/o", "judge.math=xfinder-compat"])
    assert old.judge.comparator == "xfinder-compat" and old.judge.math is None
    with pytest.raises(ConfigError, match="judge.comparator"):
        load_config("configs/local.yaml", ["output=/tmp/o", "judge.comparator=exact"])


def test_config_errors_are_clear():
    with pytest.raises(ConfigError, match="Did you mean: 'name'"):
        load_config("configs/local.yaml", ["extractor.nme=rules"])
    with pytest.raises(ConfigError, match="xfinder.replicas"):
        load_config("configs/local.yaml", ["xfinder.replicas=many"])
    with pytest.raises(ConfigError, match="extractor.name='regex'"):
        load_config("configs/local.yaml", ["extractor.name=regex"])
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("configs/nope.yaml")


def test_verifier_config_defaults_and_errors():
    cfg = load_config(
        "configs/local.yaml", ["output=/tmp/o", "extractor.name=compassverifier", "verifier.cot=true"]
    )
    v = cfg.verifier
    assert (v.checkpoint, v.model_source, v.variant) == (
        "CompassVerifier-3B",
        "opencompass/CompassVerifier-3B",
        "tokenizer",
    )
    assert v.max_tokens == 2048  # room for the CoT analysis before the boxed verdict
    x = load_config("configs/local.yaml", ["output=/tmp/o", "extractor.name=xverify"]).verifier
    assert (x.checkpoint, x.max_tokens) == ("xVerify-0.5B-I", 16)
    with pytest.raises(ConfigError, match="is a compassverifier checkpoint, not xverify"):
        load_config(
            "configs/local.yaml", ["extractor.name=xverify", "verifier.checkpoint=CompassVerifier-7B"]
        )
    with pytest.raises(ConfigError, match="verifier.cot=true needs a CompassVerifier"):
        load_config("configs/local.yaml", ["extractor.name=xverify", "verifier.cot=true"])
    with pytest.raises(ConfigError, match="verifier.variant='xverify-repo'"):
        load_config("configs/local.yaml", ["extractor.name=compassverifier", "verifier.variant=xverify-repo"])
    with pytest.raises(ConfigError, match="verifier.checkpoint='xVerify-70B-I'"):
        load_config("configs/local.yaml", ["extractor.name=xverify", "verifier.checkpoint=xVerify-70B-I"])


def test_wilson_interval():
    lo, hi = wilson(0, 10)
    assert lo == 0 and 0.25 < hi < 0.35
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
