"""aggregate without Ray: the tables from small hand-made judgments/ and rejects/, the reject policy both
ways, the coverage flag, and the statistics (exact McNemar, Holm, the rank bootstrap) checked against
scipy / statsmodels on known cases."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from xfinder_ray import significance as sig
from xfinder_ray.config import ConfigError, load_config
from xfinder_ray.extractors.rules import NO_ANSWER_REASONS
from xfinder_ray.records import MAX_FIELD_CHARS, NO_VALID_ANSWER, check
from xfinder_ray.stages.aggregate import (
    UNKNOWN,
    build_tables,
    compare_models,
    count_outcomes,
    item_matrix,
    leaderboard_markdown,
    question_key,
    reject_cause,
    wilson,
    write_tables,
)
from xfinder_ray.stages.inventory import MAX_LINE_BYTES
from xfinder_ray.stages.read import _parse_line
from xfinder_ray.stages.write import JUDGMENT_SCHEMA, REJECT_SCHEMA, _table
from xfinder_ray.storage import resolve

from .helpers import record

scipy_stats = pytest.importorskip("scipy.stats")
sm_contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
sm_multitest = pytest.importorskip("statsmodels.stats.multitest")


def judgment(model: str, task: str, q: int, right: bool) -> dict:
    return dict(
        record_id=f"{model}-{task}-{q}",
        model=model,
        task=task,
        question_key=question_key(task, f"question {q}"),
        judgment=right,
        extracted_answer="A",
    )


def reject(model, task, q, reason: str, stage: str) -> dict:
    return dict(
        record_id=f"rej-{model}-{task}-{q}-{stage}",
        model=model,
        task=task,
        question=None if q is None else f"question {q}",
        reason=reason,
        stage=stage,
    )


def outcomes_of(tmp_path, judgments: list[dict], rejects: list[dict]):
    (tmp_path / "judgments").mkdir()
    (tmp_path / "rejects").mkdir()
    pq.write_table(
        _table(pd.DataFrame(judgments), JUDGMENT_SCHEMA), tmp_path / "judgments" / "part-a.parquet"
    )
    if rejects:
        pq.write_table(_table(pd.DataFrame(rejects), REJECT_SCHEMA), tmp_path / "rejects" / "part-a.parquet")
    return count_outcomes(resolve(str(tmp_path / "judgments")), resolve(str(tmp_path / "rejects")))


@pytest.fixture
def small(tmp_path):
    # a: 3/4 right on t1, 2/2 on t2, one extraction failure on t1 (response) and a null question (record)
    # b: 2/4 on t1, 1/2 on t2; one unreadable line with no model at all
    js = [judgment("a", "t1", q, q != 0) for q in range(4)] + [judgment("a", "t2", q, True) for q in range(2)]
    js += [judgment("b", "t1", q, q < 2) for q in range(4)] + [
        judgment("b", "t2", q, q == 0) for q in range(2)
    ]
    rs = [
        reject("a", "t1", 4, "extraction failed: engine error", "judge"),
        reject("a", "t1", None, "field 'question' is null", "validate"),
        reject(None, None, None, "not valid JSON (Expecting value)", "read"),
    ]
    return outcomes_of(tmp_path, js, rs)


# ---- which rejects are whose ------------------------------------------------------------------------


def test_reject_cause_follows_the_reasons_the_stages_write():
    base = record(1)
    oversized = check({**base, "llm_output": "x" * (MAX_FIELD_CHARS["llm_output"] + 1)})
    assert reject_cause("validate", oversized) == "response"
    assert reject_cause("read", "field 'llm_output' is not valid UTF-8") == "response"
    long_line = _parse_line(b"{" + b" " * MAX_LINE_BYTES + b"}")["reject_reason"]
    assert reject_cause("read", long_line) == "response"
    assert reject_cause("judge", "extraction failed: prompt too long") == "response"
    for reason in (
        check({**base, "question": None}),
        check({k: v for k, v in base.items() if k != "task"}),
        check({**base, "standard_answer_range": "[oops"}),
        check({**base, "correct_answer": "Z"}),
        check({**base, "llm_output": None}),  # a null response is missing data, not an answer
        _parse_line(b"{broken")["reject_reason"],
        "duplicate record_id 'r1' (first at in.jsonl row 0)",
    ):
        assert reason and reject_cause("read", reason) == "record" == reject_cause("validate", reason), reason


def test_question_key_pairs_the_same_question_across_models():
    assert question_key("t", "q") == question_key("t", "q") and len(question_key("t", "q")) == 16
    assert question_key("t", "q") != question_key("u", "q") and question_key("t", None) is None


# ---- the tables ---------------------------------------------------------------------------------------


def test_every_record_is_in_the_tables_and_response_rejects_count_as_wrong(small):
    by_task, by_model = build_tables(small, "wrong")
    assert (by_task["input"] == by_task["judged"] + by_task["rejected"]).all()
    assert (by_task["rejected"] == by_task["rejected_record"] + by_task["rejected_response"]).all()
    assert int(by_model["input"].sum()) == 12 + 3  # every judgment and every reject
    a = by_task.set_index(["model", "task"]).loc[("a", "t1")]
    assert (a["input"], a["judged"], a["rejected_record"], a["rejected_response"]) == (6, 4, 1, 1)
    assert (a["n"], a["correct"], a["accuracy"]) == (5, 3, 3 / 5)  # the failed extraction is wrong
    assert a["no_valid_answer_rate"] == 0.0
    m = by_model.set_index("model")
    assert m.loc["a", "accuracy_macro"] == pytest.approx((3 / 5 + 1) / 2)
    assert m.loc["a", "accuracy_micro"] == pytest.approx(5 / 7)
    assert (m.loc["a", "tasks"], m.loc["a", "coverage"]) == (2, 1.0)
    # the unreadable line is shown under "(unknown)", never scored
    u = m.loc[UNKNOWN]
    assert (u["input"], u["rejected_record"], u["n"], u["tasks"]) == (1, 1, 0, 0)
    assert list(by_model["model"]) == ["a", "b", UNKNOWN]  # by macro accuracy, unscored last


def test_exclude_policy_leaves_response_rejects_out_but_shows_them(small):
    by_task, _ = build_tables(small, "exclude")
    a = by_task.set_index(["model", "task"]).loc[("a", "t1")]
    assert (a["input"], a["rejected_response"], a["n"], a["accuracy"]) == (6, 1, 4, 3 / 4)
    with pytest.raises(ValueError):
        build_tables(small, "ignore")


def test_a_model_on_fewer_tasks_is_flagged_and_ranked_apart(tmp_path):
    # c answered one question of one task, right: 100% macro, but not ranked first
    js = [judgment(m, t, q, (q + ord(m)) % 3 != 0) for m in "ab" for t in ("t1", "t2") for q in range(30)]
    js.append(judgment("c", "t1", 0, True))
    outcomes = outcomes_of(tmp_path, js, [])
    by_task, by_model = build_tables(outcomes)
    # by_model is in leaderboard order: the ranked models first, then c (the best macro, unranked) ...
    assert list(by_model["model"]) == ["a", "b", "c"] and list(by_model["ranked"]) == [True, True, False]
    assert by_model.set_index("model").loc["c", "accuracy_macro"] == 1.0 and pd.isna(by_model.loc[2, "rank"])
    assert by_model.set_index("model").loc["c", "coverage"] == 0.5
    comparison = compare_models(outcomes, by_model, resamples=200, seed=1)
    ranks = comparison.ranks.set_index("model")
    assert not ranks.loc["c", "ranked"] and pd.isna(ranks.loc["c", "rank"])
    assert sorted(ranks.loc[["a", "b"], "rank"]) == [1, 1]  # 20 of 30 each on both tasks: a tie
    board = leaderboard_markdown(by_task, by_model, "rules", comparison)
    ranked, fewer = board.split("## Scored on fewer tasks")
    assert "| 1= |" in ranked and "| c |" not in ranked  # ... but the leaderboard ranks it apart
    assert "| c | 100.0 |" in fewer and "1/2" in fewer


def test_write_tables_writes_pairwise_and_ranks(small, tmp_path):
    by_task, by_model = build_tables(small)
    comparison = compare_models(small, by_model, resamples=50, seed=0)
    board = write_tables(resolve(str(tmp_path / "acc")), by_task, by_model, "rules", comparison)
    pairwise = pd.read_parquet(tmp_path / "acc" / "pairwise.parquet")
    ranks = pd.read_parquet(tmp_path / "acc" / "ranks.parquet")
    assert list(pairwise[["model_a", "model_b"]].itertuples(index=False, name=None)) == [("a", "b")]
    assert set(ranks["model"]) == {"a", "b"} and ranks["ranked"].all()
    assert "rank 95%" in board and "Not attributed to a model" in board
    assert (tmp_path / "acc" / "leaderboard.md").read_text() == board


def test_no_answers_are_split_by_reason_and_shown_in_the_leaderboard(tmp_path):
    # a: 10 judged on t1 (2 truncated, 1 loop), 10 on t2 (1 truncated, 1 with no reason: written before
    # reasons existed, counted as none_found); b: 10 on each, no [No valid answer] at all
    def nva(model, task, q, reason):
        return {
            **judgment(model, task, q, False),
            "extracted_answer": NO_VALID_ANSWER,
            "no_answer_reason": reason,
        }

    js = [nva("a", "t1", 0, "truncated"), nva("a", "t1", 1, "truncated"), nva("a", "t1", 2, "loop")]
    js += [judgment("a", "t1", q, True) for q in range(3, 10)]
    js += [nva("a", "t2", 0, "truncated"), nva("a", "t2", 1, None)]
    js += [judgment("a", "t2", q, True) for q in range(2, 10)]
    js += [judgment("b", t, q, q % 2 == 0) for t in ("t1", "t2") for q in range(10)]
    outcomes = outcomes_of(tmp_path, js, [reject("a", "t1", 11, "extraction failed: engine error", "judge")])
    assert outcomes.no_answer == {
        ("a", "t1"): {"truncated": 2, "loop": 1},
        ("a", "t2"): {"truncated": 1, "none_found": 1},
    }
    by_task, by_model = build_tables(outcomes)
    columns = [f"no_answer_{r}" for r in NO_ANSWER_REASONS]
    for table in (by_task, by_model):
        assert set(columns) <= set(table.columns)  # every reason, a fixed schema
        assert np.allclose(table[columns].sum(axis=1), table["no_valid_answer_rate"])  # they add up
    assert (by_task["input"] == by_task["judged"] + by_task["rejected"]).all()
    t = by_task.set_index(["model", "task"])
    assert t.loc[("a", "t1"), "no_answer_truncated"] == 0.2 and t.loc[("a", "t1"), "no_answer_loop"] == 0.1
    m = by_model.set_index("model")
    assert (m.loc["a", "no_answer_truncated"], m.loc["a", "no_answer_loop"]) == (3 / 20, 1 / 20)
    assert m.loc["a", "no_answer_none_found"] == 1 / 20 and m.loc["a", "no_valid_answer_rate"] == 5 / 20
    assert (m.loc["b", columns] == 0).all()
    board = leaderboard_markdown(by_task, by_model, "rules")
    assert "Extractor: `rules`." in board
    # a verifier's board says it judged (it writes the verdict; nothing is extracted and compared)
    judged_by = leaderboard_markdown(
        by_task, by_model, "verifier:xVerify-0.5B-I@x:tokenizer:plain:strip:auto"
    )
    assert "Judge: `verifier:xVerify-0.5B-I@x:tokenizer:plain:strip:auto` (a verifier;" in judged_by
    assert "Extractor:" not in judged_by
    section = board.split("## No answer, by reason")[1]
    assert "- a: 25.0% of 20 judged: 15.0% truncated, 5.0% loop, 5.0% none_found" in section
    assert "- b: 0.0% of 20 judged\n" in section and "hedged" not in section  # only reasons that occur
    # no [No valid answer] anywhere: no section
    (tmp_path / "clean").mkdir()
    _, clean = build_tables(outcomes_of(tmp_path / "clean", [judgment("b", "t1", 0, True)], []))
    assert "No answer, by reason" not in leaderboard_markdown(by_task, clean, "rules")


def test_aggregate_config_is_validated():
    cfg = load_config(None, ["input=x", "output=y"])
    assert (cfg.aggregate.rejects, cfg.aggregate.seed, cfg.aggregate.bootstrap) == ("wrong", 0, 1000)
    assert (
        load_config(None, ["input=x", "output=y", "aggregate.rejects=exclude"]).aggregate.rejects == "exclude"
    )
    for bad in (
        "aggregate.rejects=ignore",
        "aggregate.bootstrap=-1",
        "aggregate.seed=-3",
        "aggregate.sead=1",
    ):
        with pytest.raises(ConfigError, match="aggregate"):
            load_config(None, ["input=x", "output=y", bad])


# ---- the statistics against scipy / statsmodels -------------------------------------------------------

KNOWN_TABLES = [  # [[both right, a only], [b only, both wrong]]
    [[10, 0], [0, 10]],
    [[5, 3], [3, 5]],
    [[101, 121], [59, 33]],  # statsmodels' and Agresti's textbook example
    [[0, 1], [9, 0]],
    [[794, 86], [150, 570]],  # Agresti (2002), the presidential approval ratings
    [[0, 2000], [2100, 0]],
    [[3, 47], [48, 2]],
]


@pytest.mark.parametrize("table", KNOWN_TABLES)
def test_exact_mcnemar_equals_statsmodels_and_scipy(table):
    a_only, b_only = table[0][1], table[1][0]
    ours = sig.mcnemar_exact(a_only, b_only)
    assert ours == pytest.approx(
        sm_contingency.mcnemar(np.array(table), exact=True).pvalue, rel=1e-9, abs=1e-300
    )
    if a_only + b_only:
        binom = scipy_stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
        assert ours == pytest.approx(binom, rel=1e-9, abs=1e-300)
    else:
        assert ours == 1.0


def test_exact_mcnemar_equals_exact_integer_arithmetic_at_large_n():
    # Reference: 2 * sum_{j <= k} C(n, j) / 2^n in integers, exact, then one rounding to float.
    for a_only, b_only in ((0, 1), (3, 4), (4_950, 5_050), (1_900, 2_100), (10, 3_000)):
        n, k = a_only + b_only, min(a_only, b_only)
        tail = sum(math.comb(n, j) for j in range(k + 1))
        want = min(1.0, float(Fraction(2 * tail, 2**n)))
        assert sig.mcnemar_exact(a_only, b_only) == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_vectorised_mcnemar_equals_scipy_binomtest_on_a_grid():
    # The job computes every pair's p-value in one call; each must be binomtest's.
    a, b = np.meshgrid(np.arange(0, 40), np.arange(0, 40))
    a = np.concatenate([a.ravel(), [4_950, 1_900, 10, 0, 2_000]])
    b = np.concatenate([b.ravel(), [5_050, 2_100, 3_000, 7, 2_000]])
    got = sig.mcnemar_exact_many(a, b)
    for x, y, p in zip(a.tolist(), b.tolist(), got.tolist(), strict=True):
        want = 1.0 if x + y == 0 else scipy_stats.binomtest(x, x + y, 0.5).pvalue
        assert p == pytest.approx(want, rel=1e-9, abs=1e-300), (x, y)
    assert sig.mcnemar_exact_many(np.array([], dtype=int), np.array([], dtype=int)).shape == (0,)


def test_wilson_equals_statsmodels_and_holds_the_estimate():
    from statsmodels.stats.proportion import proportion_confint

    for c, n in ((0, 10), (10, 10), (3, 7), (50, 100), (1, 1000), (999, 1000)):
        lo, hi = proportion_confint(c, n, alpha=0.05, method="wilson")
        assert wilson(c, n) == pytest.approx((lo, hi), abs=1e-12)
    for n in range(1, 120):
        for c in range(n + 1):
            lo, hi = wilson(c, n)
            assert lo <= c / n <= hi
    assert wilson(0, 7)[0] == 0.0 and wilson(7, 7)[1] == 1.0  # exact at the edges, not a hair past


def test_holm_equals_statsmodels():
    p = [0.01, 0.04, 0.03, 0.2, 0.001, 0.04, 1.0]
    want = sm_multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(sig.holm(p), want, rtol=1e-12)
    assert len(sig.holm([])) == 0


def test_pairwise_is_mcnemar_on_the_questions_both_answered(tmp_path):
    # a and b share 60 questions of t1 (b also answers 10 more, which a did not see)
    rng = np.random.default_rng(7)
    right_a, right_b = rng.random(60) < 0.7, rng.random(70) < 0.5
    js = [judgment("a", "t1", q, bool(right_a[q])) for q in range(60)]
    js += [judgment("b", "t1", q, bool(right_b[q])) for q in range(70)]
    outcomes = outcomes_of(tmp_path, js, [])
    _, by_model = build_tables(outcomes)
    pair = compare_models(outcomes, by_model, resamples=0).pairwise.iloc[0]
    assert (pair["model_a"], pair["model_b"], pair["questions"]) == ("a", "b", 60)
    rb = right_b[:60]
    table = [
        [int((right_a & rb).sum()), int((right_a & ~rb).sum())],
        [int((~right_a & rb).sum()), int((~right_a & ~rb).sum())],
    ]
    assert (pair["a_only"], pair["b_only"]) == (table[0][1], table[1][0])
    assert pair["accuracy_a"] == pytest.approx(right_a.mean()) and pair["accuracy_b"] == pytest.approx(
        rb.mean()
    )
    assert pair["p_value"] == pytest.approx(
        sm_contingency.mcnemar(np.array(table), exact=True).pvalue, rel=1e-9
    )
    assert (
        pair["p_holm"] == pair["p_value"] and pair["test"] == "mcnemar-exact"
    )  # one pair: nothing to adjust


def bootstrap_case(tmp_path):
    rng = np.random.default_rng(3)
    skills = {"m1": 0.8, "m2": 0.78, "m3": 0.6, "m4": 0.4}
    js = [
        judgment(m, t, q, bool(rng.random() < s))
        for m, s in skills.items()
        for t, size in (("t1", 80), ("t2", 40))
        for q in range(size)
    ]
    outcomes = outcomes_of(tmp_path, js, [])
    _, by_model = build_tables(outcomes)
    return outcomes, by_model


def test_rank_bootstrap_is_seeded(tmp_path):
    outcomes, by_model = bootstrap_case(tmp_path)
    items = item_matrix(outcomes, list(by_model["model"]), "wrong")
    one, again = sig.bootstrap_ranks(items, 300, seed=11), sig.bootstrap_ranks(items, 300, seed=11)
    other = sig.bootstrap_ranks(items, 300, seed=12)
    assert one.shape == (300, 4) and (one == again).all() and not (one == other).all()
    first = compare_models(outcomes, by_model, resamples=300, seed=11).ranks
    pd.testing.assert_frame_equal(first, compare_models(outcomes, by_model, resamples=300, seed=11).ranks)


def test_rank_interval_contains_the_point_rank(tmp_path):
    outcomes, by_model = bootstrap_case(tmp_path)
    ranks = compare_models(outcomes, by_model, resamples=500, seed=0).ranks
    assert list(ranks["rank"]) == [1, 2, 3, 4]
    assert (ranks["rank_low"] <= ranks["rank"]).all() and (ranks["rank"] <= ranks["rank_high"]).all()
    # the close pair overlaps; the clearly weakest model is last in (nearly) every resample
    assert ranks.loc[0, "rank_high"] >= 2 and ranks.loc[3, "rank_low"] >= 3


def test_point_macro_equals_the_unweighted_resample(tmp_path):
    outcomes, by_model = bootstrap_case(tmp_path)
    items = item_matrix(outcomes, list(by_model["model"]), "wrong")
    np.testing.assert_allclose(sig.macro_accuracy(items), by_model["accuracy_macro"].to_numpy(), rtol=1e-12)
    ones = [np.ones((1, int((items.task_of == t).sum()))) for t in range(len(items.tasks))]
    np.testing.assert_allclose(sig.macro_accuracy(items, ones)[0], by_model["accuracy_macro"].to_numpy())


def test_no_ranked_model_is_one_sentence_not_an_empty_table():
    from xfinder_ray.stages.aggregate import Outcomes

    items = pd.DataFrame({"model": [], "task": [], "question_key": [], "judged": [], "correct": []})
    # each model scored on one of the two tasks: none on all of them
    partial = Outcomes({("m1", "t1"): [2, 1, 0, 0, 0], ("m2", "t2"): [2, 2, 0, 0, 0]}, items)
    by_task, by_model = build_tables(partial)
    board = leaderboard_markdown(by_task, by_model, "rules")
    assert "| rank | rank 95% |" not in board
    assert "No model was scored on all 2 tasks, so none is ranked" in board
    assert "Not ranked: none was scored on all 2 tasks" in board and "| m1 |" in board and "| m2 |" in board
    nothing = Outcomes({(UNKNOWN, UNKNOWN): [0, 0, 0, 3, 0]}, items)
    by_task, by_model = build_tables(nothing)
    board = leaderboard_markdown(by_task, by_model, "rules")
    assert "| rank |" not in board and "No records were scored, so no model is ranked" in board
    # one model on both tasks: the ranked table is back, and the others are "fewer than the models above"
    full = Outcomes({**partial.cells, ("m3", "t1"): [2, 2, 0, 0, 0], ("m3", "t2"): [2, 1, 0, 0, 0]}, items)
    by_task, by_model = build_tables(full)
    board = leaderboard_markdown(by_task, by_model, "rules")
    assert "| rank | rank 95% |" in board and "No model was scored" not in board
    assert "than the models above" in board


def test_a_pipe_in_a_model_or_task_name_does_not_split_the_leaderboard_row():
    from xfinder_ray.stages.aggregate import Outcomes

    items = pd.DataFrame({"model": [], "task": [], "question_key": [], "judged": [], "correct": []})
    outcomes = Outcomes({("org|m", "gsm8k|5"): [4, 3, 0, 0, 0], ("m2", "gsm8k|5"): [4, 1, 0, 0, 0]}, items)
    by_task, by_model = build_tables(outcomes)
    board = leaderboard_markdown(by_task, by_model, "rules")
    table = [line for line in board.splitlines() if line.startswith("| ")]
    header_cells = len(table[0].replace("\\|", "").split("|"))
    assert all(len(line.replace("\\|", "").split("|")) == header_cells for line in table)
    assert "gsm8k\\|5" in table[0] and any("org\\|m" in line for line in table)


# ---- #25: one ranking (ties, rank/ranked in by_model), rules' tiers, conflicting gold answers ----------


def test_by_model_carries_the_ranking_with_ties_the_unranked_and_unknown_last(tmp_path):
    # a and b: 3 of 4 right on each task (a tie); d: 1 of 4; c: one task only (unranked, best macro)
    js = [judgment(m, t, q, q != 0) for m in "ab" for t in ("t1", "t2") for q in range(4)]
    js += [judgment("d", t, q, q == 0) for t in ("t1", "t2") for q in range(4)]
    js.append(judgment("c", "t1", 0, True))
    outcomes = outcomes_of(tmp_path, js, [reject(None, None, None, "not valid JSON (x)", "read")])
    by_task, by_model = build_tables(outcomes)
    assert list(by_model["model"]) == ["a", "b", "d", "c", UNKNOWN]
    assert by_model["rank"].tolist()[:3] == [1, 1, 3] and by_model["rank"].isna().tolist()[3:] == [True, True]
    assert by_model["ranked"].tolist() == [True, True, True, False, False]
    comparison = compare_models(outcomes, by_model, resamples=100, seed=0)
    ranks = comparison.ranks.set_index("model")
    assert UNKNOWN not in ranks.index and ranks.loc[["a", "b", "d"], "rank"].tolist() == [1, 1, 3]
    board = leaderboard_markdown(by_task, by_model, "rules", comparison)
    assert [
        line.split(" | ")[0]
        for line in board.splitlines()
        if line.startswith("| 1") or line.startswith("| 3")
    ] == [
        "| 1=",
        "| 1=",
        "| 3",
    ]
    assert "A rank with `=` (`1=`) is shared" in board
    by_task2, _ = build_tables(outcomes)
    write_tables(resolve(str(tmp_path / "acc")), by_task2, by_model, "rules", comparison)
    csv = pd.read_csv(tmp_path / "acc" / "by_model.csv")
    assert list(csv.columns[:3]) == ["model", "rank", "ranked"] and csv["rank"].tolist()[:3] == [1, 1, 3]


def test_rules_tiers_are_shares_of_the_judged_records(tmp_path):
    def tiered(model, task, q, tier):
        return {**judgment(model, task, q, True), "confidence": tier}

    js = [tiered("a", "t1", 0, "certain"), tiered("a", "t1", 1, "unsure"), tiered("a", "t1", 2, "unsure")]
    js += [tiered("a", "t2", 0, "likely"), tiered("a", "t2", 1, None)]  # None: a model's verdict
    js += [tiered("b", t, q, None) for t in ("t1", "t2") for q in range(2)]
    outcomes = outcomes_of(tmp_path, js, [])
    assert outcomes.confidence == {("a", "t1"): {"certain": 1, "unsure": 2}, ("a", "t2"): {"likely": 1}}
    by_task, by_model = build_tables(outcomes)
    m = by_model.set_index("model")
    assert (m.loc["a", "rules_certain"], m.loc["a", "rules_likely"], m.loc["a", "rules_unsure"]) == (
        1 / 5,
        1 / 5,
        2 / 5,
    )
    assert by_task.set_index(["model", "task"]).loc[("a", "t1"), "rules_unsure"] == 2 / 3
    assert (m.loc["b", ["rules_certain", "rules_likely", "rules_unsure"]] == 0).all()
    board = leaderboard_markdown(by_task, by_model, "rules")
    assert "- a: 20.0 / 20.0 / 40.0% certain / likely / unsure of 5 judged" in board
    # a run judged wholly by a model: no tiers, no section
    (tmp_path / "model").mkdir()
    _, untiered = build_tables(outcomes_of(tmp_path / "model", [tiered("b", "t1", 0, None)], []))
    assert "Rules' confidence" not in leaderboard_markdown(by_task, untiered, "xfinder:x")


def test_a_question_with_two_gold_answers_is_reported_and_left_out_of_the_paired_tests(tmp_path):
    # 10 questions; on q0 model a's copy says gold B, b's and c's say A: a's right answer there is no win
    def graded(model, q, right, gold="A"):
        return {
            **judgment(model, "t1", q, right),
            "correct_answer": gold,
            "key_answer_type": "alphabet_option",
        }

    js = [graded("a", 0, True, gold="B")] + [graded("a", q, True) for q in range(1, 10)]
    js += [graded("b", q, q != 0) for q in range(10)] + [graded("c", q, q != 0) for q in range(10)]
    outcomes = outcomes_of(tmp_path, js, [])
    by_task, by_model = build_tables(outcomes)
    comparison = compare_models(outcomes, by_model, resamples=0)
    conflicts = comparison.conflicts
    assert conflicts[["correct_answer", "records", "example_model"]].values.tolist() == [
        ["A", 2, "b"],
        ["B", 1, "a"],
    ]
    assert set(conflicts["question_key"]) == {question_key("t1", "question 0")}
    pair = comparison.pairwise.set_index(["model_a", "model_b"]).loc[("a", "b")]
    assert (pair["questions"], pair["a_only"], pair["b_only"]) == (9, 0, 0)  # q0 left out
    assert by_model.set_index("model").loc["a", "accuracy_micro"] == 1.0  # still in accuracy
    (note,) = comparison.notes
    assert note.startswith("1 question(s) have different gold answers") and "'B' (alphabet_option)" in note
    board = write_tables(resolve(str(tmp_path / "acc")), by_task, by_model, "rules", comparison)
    assert (
        "## Conflicting gold answers" in board and "| t1 |" in board.split("## Conflicting gold answers")[1]
    )
    written = pd.read_parquet(tmp_path / "acc" / "conflicts.parquet")
    assert len(written) == 2 and written["records"].tolist() == [2, 1]
    # the same gold in every copy: nothing to report, an empty conflicts.parquet with its columns
    (tmp_path / "clean").mkdir()
    clean = outcomes_of(tmp_path / "clean", [graded("a", 0, True), graded("b", 0, False)], [])
    _, clean_model = build_tables(clean)
    assert compare_models(clean, clean_model, resamples=0).notes == []
