"""The second opinion's own logic (stages/second_opinion.py) on sample records, without an engine: which
rows are asked, and how the second model's outputs are settled. The whole chain through the real vLLM
CPU engine is in tests/cpu/test_pipeline_vllm.py."""

from __future__ import annotations

import pandas as pd

from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.records import FIELDS, validate
from xfinder_ray.sample_data import read_sample
from xfinder_ray.stages.second_opinion import ASKED, ask_batch, second_opinion_stats, settle

CHECKPOINT = "xVerify-0.5B-I"


def values(column: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in column]


def judged_rows() -> pd.DataFrame:
    """Six records rules is certain of, as the first model left them: two judged as rules judges them,
    two the other way; one settled by the router, one the engine failed on (rejected)."""
    rows = [r for r in read_sample() if r["defect"] is None]
    sure = [r for r in rows if strict_answer(validate(r)) is not None][:6]
    df = pd.DataFrame([{k: r[k] for k in FIELDS} for r in sure]).assign(
        reject_reason=[None] * 5 + ["extraction failed: engine died"],
        routed=[False, False, False, False, True, False],
        raw_output=[f"first-{i}" for i in range(6)],
    )
    # rules' own verdicts on these rows, computed as the stage computes them
    rules = values(ask_batch(df.assign(judgment=[True] * 5 + [None]), math="math-verify")["rules_judgment"])
    return df.assign(judgment=[rules[0], rules[1], not rules[2], not rules[3], True, None])


def test_only_disagreements_are_asked():
    df = judged_rows()
    asked = ask_batch(df, math="math-verify")
    assert asked[ASKED].tolist() == [False, False, True, True, False, False]
    # rules' judgment on the rows the first model judged: not the routed row, not the rejected one
    assert asked["rules_judgment"].notna().tolist() == [True, True, True, True, False, False]
    assert values(asked["raw_output"]) == values(df["raw_output"])  # the first model's outputs untouched


def test_settle_records_the_verdict_and_makes_it_the_judgment():
    df = judged_rows()
    asked = ask_batch(df, math="math-verify")
    first = values(df["judgment"])
    # the second model's outputs for the two asked rows: a verdict, and a text that holds none
    done = settle(
        asked, ["[Correct]", "I think so"], checkpoint=CHECKPOINT, identity="verifier:x", decides=True
    )
    assert values(done["second_judgment"])[2:4] == [True, None]
    assert values(done["second_raw_output"]) == [None, None, "[Correct]", "I think so", None, None]
    assert values(done["second_judge"]) == [None, None, "verifier:x", "verifier:x", None, None]
    assert values(done["first_judgment"]) == [None, None, first[2], first[3], None, None]
    # decides: the verdict is the judgment; no verdict: the first judgment stands; other rows untouched
    assert values(done["judgment"]) == [first[0], first[1], True, first[3], first[4], None]
    assert values(done["raw_output"]) == values(df["raw_output"])
    assert second_opinion_stats(done) == {"asked": 2, "answered": 1, "overturned": int(first[2] is not True)}

    kept = settle(
        asked, ["[Correct]", "I think so"], checkpoint=CHECKPOINT, identity="verifier:x", decides=False
    )
    assert values(kept["judgment"]) == first and values(kept["second_judgment"])[2] is True


def test_an_engine_failure_leaves_the_first_judgment():
    df = judged_rows()
    asked = ask_batch(df, math="math-verify")
    done = settle(asked, [None, None], checkpoint=CHECKPOINT, identity="verifier:x", decides=True)
    assert values(done["judgment"]) == values(df["judgment"])
    assert (
        done["second_judgment"].isna().all()
        and done["reject_reason"].tolist() == df["reject_reason"].tolist()
    )
    assert second_opinion_stats(done) == {"asked": 2, "answered": 0, "overturned": 0}


def test_compassverifier_invalid_is_wrong_and_its_letters_are_read():
    df = judged_rows()
    asked = ask_batch(df, math="math-verify")
    done = settle(asked, ["A", "C"], checkpoint="CompassVerifier-3B", identity="verifier:cv", decides=True)
    assert values(done["second_judgment"])[2:4] == [True, False]  # A correct; C invalid: wrong


def test_set_without_a_model_judge_asks_nothing_and_says_why():
    from xfinder_ray.config import load_config
    from xfinder_ray.stages.second_opinion import build_second_opinion

    off = load_config("configs/local.yaml")
    assert build_second_opinion(off, None) == (None, [])
    on = load_config("configs/local.yaml", ["second_opinion.checkpoint=xVerify-0.5B-I"])
    # device None: xFinder's checkpoint is not on disk, the rules fallback runs and no model judge
    second, why_not = build_second_opinion(on, None)
    assert second is None and why_not == [
        "second_opinion is set, but no model judge runs (the rules fallback): none was asked"
    ]
