"""`xfinder-ray diff` / output.compare_to: flips with reasons, paired tests, rank moves, the scheduled
runs' `previous` resolver. The job-level test scores the shipped sample twice for real (Ray)."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from xfinder_ray.config import ConfigError
from xfinder_ray.diff import diff_runs, previous_run, resolve_compare_to
from xfinder_ray.significance import mcnemar_exact

ROOT = Path(__file__).resolve().parents[2]


def test_mcnemar_exact_by_hand():
    # b=1, c=9: P(X <= 1) for Bin(10, 1/2) = (C(10,0) + C(10,1)) / 2^10 = 11/1024; two-sided: 22/1024
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024, abs=1e-15)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    # b=0, c=5: 2 * 1/32
    assert mcnemar_exact(0, 5) == pytest.approx(1 / 16)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(4, 4) == 1.0 and mcnemar_exact(3, 4) == 1.0
    # the log-space branch (n > 2000) continues the exact one
    exact = 2 * sum(math.comb(2400, i) for i in range(1150 + 1)) / 2**2400
    assert mcnemar_exact(1150, 1250) == pytest.approx(exact, rel=1e-9)


def test_mcnemar_exact_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(1, 9), (7, 20), (30, 31), (0, 12), (300, 360)]:
        expected = stats.binomtest(min(b, c), b + c, 0.5).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


# --- synthetic committed outputs (no Ray) ---------------------------------------------------------


def _judgment(
    rid, model, task, extracted, judgment, gold="A", extractor="rules:rules-2", comparator="math-verify"
):
    return dict(
        record_id=rid,
        model=model,
        task=task,
        key_answer_type="alphabet_option",
        correct_answer=gold,
        extracted_answer=extracted,
        judgment=judgment,
        extractor=extractor,
        comparator=comparator,
    )


def _output(path: Path, rows: list[dict], comparator: str = "math-verify") -> str:
    (path / "judgments").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), path / "judgments" / "part-0.parquet")
    df = pd.DataFrame(rows)
    by_model = (
        df.groupby("model")
        .agg(accuracy_micro=("judgment", "mean"))
        .assign(accuracy_macro=lambda d: d["accuracy_micro"])
        .sort_values("accuracy_macro", ascending=False)
        .reset_index()
    )
    (path / "accuracy").mkdir()
    pq.write_table(
        pa.Table.from_pandas(by_model, preserve_index=False), path / "accuracy" / "by_model.parquet"
    )
    manifest = {"status": "committed", "counts": {"judged": len(rows)}, "comparator": comparator}
    (path / "manifest.json").write_text(json.dumps({**manifest, "extractor": rows[0]["extractor"]}))
    return str(path)


def test_diff_reasons_deltas_and_rank_moves(tmp_path):
    old = [
        _judgment("r1", "m1", "t", "A", True),  # -> comparator flip
        _judgment("r2", "m1", "t", "A", True),  # -> gold changed: input
        _judgment("r3", "m1", "t", "B", False),  # -> another extractor: extractor
        _judgment("r4", "m1", "t", "A", True),  # -> same extractor, other answer: extraction
        _judgment("r5", "m1", "t", "A", True),  # unchanged
        _judgment("r6", "m1", "t", "A", True),  # removed
        _judgment("s1", "m2", "t", "B", False),
        _judgment("s2", "m2", "t", "B", False),
    ]
    new = [
        _judgment("r1", "m1", "t", "A", False, comparator="xfinder-compat"),
        _judgment("r2", "m1", "t", "A", False, gold="C"),
        _judgment("r3", "m1", "t", "A", True, extractor="xfinder:qwen"),
        _judgment("r4", "m1", "t", "C", False),
        _judgment("r5", "m1", "t", "A", True),
        _judgment("r7", "m1", "t", "A", True),  # added
        _judgment("s1", "m2", "t", "A", True),
        _judgment("s2", "m2", "t", "A", True),
    ]
    result = diff_runs(_output(tmp_path / "old", old), _output(tmp_path / "new", new, "xfinder-compat"))
    reasons = dict(zip(result.flips["record_id"], result.flips["reason"], strict=True))
    assert reasons == {
        "r1": "comparator",
        "r2": "input",
        "r3": "extractor",
        "r4": "extraction",
        "s1": "extraction",
        "s2": "extraction",
    }
    r3 = result.flips.set_index("record_id").loc["r3"]
    assert (r3.extracted_answer_old, r3.extracted_answer_new, r3.direction) == ("B", "A", "wrong->right")
    s = result.summary
    assert (s["common"], s["added"], s["removed"], s["flips"]) == (7, 1, 1, 6)
    assert s["flips"] <= s["common"]
    m = result.models.set_index("model")
    assert (m.loc["m1", "lost"], m.loc["m1", "gained"], m.loc["m1", "common"]) == (3, 1, 5)
    assert m.loc["m1", "delta"] == pytest.approx(-2 / 5)
    assert m.loc["m1", "p_value"] == pytest.approx(mcnemar_exact(3, 1))
    # m1 was first (5/6 vs 0/2), is second now (3/5 vs 2/2): one up for m2, one down for m1
    assert (m.loc["m2", "rank_old"], m.loc["m2", "rank_new"], m.loc["m2", "rank_move"]) == (2, 1, 1)
    assert m.loc["m1", "rank_move"] == -1
    assert list(result.models["model"]) == ["m2", "m1"]  # in the new run's rank order
    written = pd.read_parquet(tmp_path / "new" / "diff" / "flips.parquet")
    assert len(written) == 6 and (tmp_path / "new" / "diff" / "rank_moves.png").stat().st_size > 5000
    md = (tmp_path / "new" / "diff.md").read_text()
    assert "| 1 | ↑1 | m2 |" in md and "comparator 1" in md and "extraction 3" in md


def test_diff_refuses_an_uncommitted_side(tmp_path):
    from xfinder_ray.cli import main

    committed = _output(tmp_path / "a", [_judgment("r1", "m", "t", "A", True)])
    (tmp_path / "b").mkdir()
    assert main(["diff", committed, str(tmp_path / "b")]) == 1
    with pytest.raises(ConfigError, match="not a committed"):
        resolve_compare_to(str(tmp_path / "b"), str(tmp_path / "c"), None)
    with pytest.raises(ConfigError, match="output.path itself"):
        resolve_compare_to(committed, committed + "/", None)


def test_previous_resolves_the_newest_committed_earlier_sibling(tmp_path):
    one = [_judgment("r1", "m", "t", "A", True)]
    _output(tmp_path / "2026-11-28", one)
    _output(tmp_path / "2026-11-29", one)
    (tmp_path / "2026-11-30").mkdir()  # started, never committed (a failed run): skipped
    _output(tmp_path / "2026-12-02", one)  # later than the run asking: never its "previous"
    me = str(tmp_path / "2026-12-01") + "/"  # the manifests' trailing slash
    assert previous_run(me) == str(tmp_path / "2026-11-29")
    assert resolve_compare_to("previous", me, None) == str(tmp_path / "2026-11-29")
    assert previous_run(str(tmp_path / "2026-11-28")) is None  # the first run: nothing to compare
    assert resolve_compare_to("previous", str(tmp_path / "2026-11-28"), None) is None
    assert resolve_compare_to(None, me, None) is None


@pytest.mark.parametrize("where", ["raycronjob.yaml", "rayjob-ephemeral.yaml"])
def test_scheduled_runs_compare_with_the_previous_one(where):
    """The RayCronJob and the CronJob fallback (which creates rayjob-ephemeral.yaml) pass
    output.compare_to=previous next to their dated output."""
    from xfinder_ray.config import load_config

    doc = yaml.safe_load((ROOT / "cluster" / "kuberay" / where).read_text())
    spec = doc["spec"].get("jobTemplate", doc["spec"])
    argv = shlex.split(spec["entrypoint"].replace("$(date -u +%Y-%m-%d)", "2026-11-30"))
    cfg = load_config(str(ROOT / "configs" / "cluster.yaml"), argv[4:])
    assert cfg.output.compare_to == "previous" and cfg.output.path.endswith("/2026-11-30/")


# --- two real runs of the demo -------------------------------------------------------------------


@pytest.mark.ray
def test_two_demo_runs_with_different_comparators(ray_local, tmp_path):
    from xfinder_ray.cli import main
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import run

    def score(day: str, comparator: str, *extra: str):
        overrides = [f"output={tmp_path / day}", "extractor.name=rules", f"judge.comparator={comparator}"]
        return run(load_config("configs/local.yaml", [*overrides, *extra]))

    first = score("2026-11-29", "math-verify", "compare_to=previous")  # the first run: nothing to compare
    assert any("nothing compared" in n for n in first.notes)
    assert not (tmp_path / "2026-11-29" / "diff.md").exists()
    second = score("2026-11-30", "xfinder-compat", "compare_to=previous")
    assert any("verdict flips" in n for n in second.notes)
    new = tmp_path / "2026-11-30"
    flips = pd.read_parquet(new / "diff" / "flips.parquet")
    models = pd.read_parquet(new / "diff" / "models.parquet")
    assert len(flips) > 0 and set(flips["reason"]) == {"comparator"}
    assert (flips["extracted_answer_old"] == flips["extracted_answer_new"]).all()
    assert set(flips["comparator_old"]) == {"math-verify"} and set(flips["comparator_new"]) == {
        "xfinder-compat"
    }
    judged = first.manifest["counts"]["judged"]
    assert models["common"].sum() == judged and len(flips) <= judged
    assert (models["lost"] + models["gained"]).sum() == len(flips)
    assert (new / "diff" / "rank_moves.png").stat().st_size > 5000 and (new / "report.html").exists()
    # the CLI on the same two outputs, elsewhere: the same flips
    assert main(["diff", str(tmp_path / "2026-11-29"), str(new), "--out", str(tmp_path / "cli")]) == 0
    again = pd.read_parquet(tmp_path / "cli" / "diff" / "flips.parquet")
    assert again.equals(flips)
    assert "comparator" in (tmp_path / "cli" / "diff.md").read_text()


# --- #25: the leaderboard's ranking in the diff; every input change ---------------------------------------


def _scored_output(path: Path, rows: list[dict], unattributed: int = 0) -> str:
    """A committed output whose accuracy/ is what the job writes (count_outcomes -> build_tables ->
    compare_models -> write_tables), with `unattributed` rejects that have no model."""
    from xfinder_ray.stages.aggregate import (
        build_tables,
        compare_models,
        count_outcomes,
        question_key,
        write_tables,
    )
    from xfinder_ray.stages.write import JUDGMENT_SCHEMA, REJECT_SCHEMA, _table
    from xfinder_ray.storage import resolve

    for folder in ("judgments", "rejects"):
        (path / folder).mkdir(parents=True)
    rows = [{**r, "question_key": question_key(r["task"], r.get("question", r["record_id"]))} for r in rows]
    pq.write_table(_table(pd.DataFrame(rows), JUDGMENT_SCHEMA), path / "judgments" / "part-0.parquet")
    if unattributed:
        bad = [{"record_id": None, "reason": "not valid JSON (x)", "stage": "read"}] * unattributed
        pq.write_table(_table(pd.DataFrame(bad), REJECT_SCHEMA), path / "rejects" / "part-0.parquet")
    outcomes = count_outcomes(resolve(str(path / "judgments")), resolve(str(path / "rejects")))
    by_task, by_model = build_tables(outcomes)
    comparison = compare_models(outcomes, by_model, resamples=20)
    write_tables(resolve(str(path / "accuracy")), by_task, by_model, "rules:rules-2", comparison)
    manifest = {"status": "committed", "counts": {"judged": len(rows)}, "comparator": "math-verify"}
    (path / "manifest.json").write_text(json.dumps({**manifest, "extractor": "rules:rules-2"}))
    return str(path)


def _model_rows(model: str, marks: dict[str, str], gold: dict[str, str] | None = None) -> list[dict]:
    """One record per question of each task: answer A for '1', C for '0', judged against the gold (A,
    or `gold`'s for that "task-q")."""
    out = []
    for task, row in marks.items():
        for q, mark in enumerate(row):
            answer, right = ("A", "A") if mark == "1" else ("C", "A")
            right = (gold or {}).get(f"{task}-{q}", right)
            rid = f"{task}-{q}-{model}"
            out.append(
                {
                    **_judgment(rid, model, task, answer, answer == right, gold=right),
                    "question": f"{task} q{q}",
                }
            )
    return out


def test_the_diff_ranks_as_the_leaderboards_do_in_both_directions(tmp_path):
    # old: r 5/6 (rank 1), p 4/6 (2), s 1/6 (3); q on t1 only (3/3: the best macro, not ranked); one
    # reject without a model. new: q on both tasks (rank 1), p 2, s 3, r on t1 only (not ranked); the
    # gold of t2-0 moves A -> B for p (its A turns wrong: an input flip) and s (C: wrong both times)
    fixed = {"t2-0": "B"}
    old = _model_rows("p", {"t1": "110", "t2": "101"}) + _model_rows("r", {"t1": "111", "t2": "011"})
    old += _model_rows("s", {"t1": "100", "t2": "000"}) + _model_rows("q", {"t1": "111"})
    new = _model_rows("p", {"t1": "110", "t2": "101"}, fixed) + _model_rows("r", {"t1": "111"})
    new += _model_rows("s", {"t1": "100", "t2": "000"}, fixed) + _model_rows("q", {"t1": "111", "t2": "111"})
    a = _scored_output(tmp_path / "old", old, unattributed=1)
    b = _scored_output(tmp_path / "new", new, unattributed=2)
    forward = diff_runs(a, b, str(tmp_path / "fwd"))
    m = forward.models.set_index("model")
    assert list(forward.models["model"]) == ["q", "p", "s", "r"]  # no (unknown): never ranked nor listed
    assert "(unknown)" not in forward.markdown
    for side, run in (("old", a), ("new", b)):  # the ranks are each run's ranks.parquet and leaderboard's
        ranks = pd.read_parquet(Path(run) / "accuracy" / "ranks.parquet").set_index("model")
        board = (Path(run) / "accuracy" / "leaderboard.md").read_text().split("## Scored on fewer")[0]
        for model in m.index:
            shown = ranks.loc[model, "rank"] if ranks.loc[model, "ranked"] else None
            assert (pd.isna(m.loc[model, f"rank_{side}"]) and shown is None) or m.loc[
                model, f"rank_{side}"
            ] == shown
            assert (f"| {model} |" in board) == (shown is not None) and (
                shown is None or f"| {shown} |" in board
            )
    assert (m.loc["p", "rank_move"], m.loc["s", "rank_move"]) == (0, 0)
    assert (m.loc["q", "rank_note"], m.loc["r", "rank_note"]) == (
        "ranked now",
        "not ranked now (fewer tasks)",
    )
    assert m.loc["p", ["lost", "gained", "common"]].tolist() == [1, 0, 6] and str(m["lost"].dtype) == "int64"
    assert "| 2 | = | p | 66.7 | 50.0 | 66.7 | 50.0 | -16.7 | 1 | 0 |" in forward.markdown  # integers (P1)
    changes = forward.input_changes
    assert dict(zip(changes["record_id"], changes["flipped"], strict=True)) == {
        "t2-0-p": True,
        "t2-0-s": False,
    }
    assert "| t2-0-p | input | A | A | A → B | right->wrong |" in forward.markdown
    assert "| s | t2 | t2-0-s | correct_answer | A → B | wrong->wrong |" in forward.markdown
    assert "Inputs changed: 2 records (correct_answer: 2)" in forward.markdown
    written = pd.read_parquet(tmp_path / "fwd" / "diff" / "input_changes.parquet")
    assert written[["correct_answer_old", "correct_answer_new"]].values.tolist() == [["A", "B"], ["A", "B"]]
    backward = diff_runs(b, a, str(tmp_path / "back"))
    back = backward.models.set_index("model")
    assert list(backward.models["model"]) == ["r", "p", "s", "q"]
    assert (back.loc["q", "rank_note"], back.loc["r", "rank_note"]) == (
        "not ranked now (fewer tasks)",
        "ranked now",
    )
    assert "| 1 | ranked now | r |" in backward.markdown and "B → A" in backward.markdown
    assert len(backward.input_changes) == 2


def test_a_model_ranked_in_one_run_only_has_no_move(tmp_path):
    # old: x (2/2 on both tasks), y (1/2 on both), z on t1 only; new: z on both (best), y on t1 only
    old = _model_rows("x", {"t1": "11", "t2": "11"}) + _model_rows("y", {"t1": "10", "t2": "10"})
    old += _model_rows("z", {"t1": "11"})
    new = _model_rows("x", {"t1": "11", "t2": "10"}) + _model_rows("y", {"t1": "10"})
    new += _model_rows("z", {"t1": "11", "t2": "11"}) + _model_rows("w", {"t1": "00", "t2": "00"})
    result = diff_runs(_scored_output(tmp_path / "o", old, 1), _scored_output(tmp_path / "n", new, 1))
    m = result.models.set_index("model")
    assert list(result.models["model"]) == ["z", "x", "w", "y"]  # ranked in new by rank, then the rest
    assert (m.loc["z", "rank_new"], m.loc["x", "rank_old"], m.loc["x", "rank_new"]) == (1, 1, 2)
    assert (
        m.loc["x", "rank_move"] == -1
        and pd.isna(m.loc["z", "rank_move"])
        and pd.isna(m.loc["y", "rank_move"])
    )
    assert pd.isna(m.loc["z", "rank_old"]) and pd.isna(m.loc["y", "rank_new"])  # not ranked there
    assert (m.loc["z", "rank_note"], m.loc["y", "rank_note"], m.loc["w", "rank_note"]) == (
        "ranked now",
        "not ranked now (fewer tasks)",
        "new",
    )
    md = result.markdown
    assert "| 1 | ranked now | z |" in md and "| 2 | ↓1 | x |" in md and "| 3 | new | w |" in md
    not_ranked = md.split("### Not ranked in the new run")[1]
    assert "| not ranked now (fewer tasks) | y |" in not_ranked
    assert "| new | w | – | 0.0 | – | – | – | – | – | – |" in md  # a new model: "–", not 0.0 (P1)
