"""The embedded sample dataset: deterministic, complete, consistent with its gold labels and with records.check."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from fractions import Fraction

import pyarrow.parquet as pq
import pytest

from xfinder_ray import sample_data as sd
from xfinder_ray.records import FIELDS, MATH_ANSWER_RANGE, NO_VALID_ANSWER, check


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return sd.generate()


@pytest.fixture(scope="module")
def valid(rows) -> list[dict]:
    return [r for r in rows if r["defect"] is None]


def test_deterministic_and_seeded(rows):
    assert sd.generate() == rows
    other = sd.generate(seed=1)
    assert len(other) == len(rows)
    assert [r["llm_output"] for r in other] != [r["llm_output"] for r in rows]
    small = sd.generate(n_questions_per_task=2)
    assert len([r for r in small if r["defect"] is None]) == 2 * len(sd.TASKS) * len(sd.MODELS)


def test_too_many_questions_is_an_error():
    with pytest.raises(ValueError, match="questions"):
        sd.generate(n_questions_per_task=sd.max_questions_per_task() + 1)


def test_counts_by_model_task_and_type(rows, valid):
    n = sd.DEFAULT_QUESTIONS_PER_TASK
    assert 1900 <= len(rows) <= 2200
    assert len(sd.MODELS) == 8 and len(sd.TASKS) == 8
    per_cell = Counter((r["model"], r["task"]) for r in valid)
    assert set(per_cell.values()) == {n}
    assert len(per_cell) == len(sd.MODELS) * len(sd.TASKS)
    per_type = Counter(r["key_answer_type"] for r in valid)
    tasks_per_type = Counter(t.key_answer_type for t in sd.TASKS)
    assert per_type == {k: v * n * len(sd.MODELS) for k, v in tasks_per_type.items()}
    assert set(per_type) == {"alphabet_option", "short_text", "categorical_label", "math"}


def test_schema_and_ids(rows):
    assert all(list(r) == [*FIELDS, *sd.EXTRA_FIELDS] for r in rows)
    ids = [r["record_id"] for r in rows]
    assert len(set(ids)) == len(ids)
    for r in rows:
        for name in FIELDS:
            assert r[name] is None or isinstance(r[name], str), (name, r)


def test_every_model_answers_the_same_questions(valid):
    by_q: dict[str, list[dict]] = defaultdict(list)
    for r in valid:
        by_q[r["question_id"]].append(r)
    for qid, group in by_q.items():
        assert sorted(r["model"] for r in group) == sorted(m.name for m in sd.MODELS), qid
        assert len({(r["question"], r["standard_answer_range"], r["correct_answer"]) for r in group}) == 1, (
            qid
        )
    assert len({r["question"] for r in valid}) == len(by_q)  # questions are distinct within the sample


def test_answer_ranges(valid):
    for r in valid:
        kat = r["key_answer_type"]
        if kat == "math":
            assert r["standard_answer_range"] == MATH_ANSWER_RANGE
            continue
        rng = json.loads(r["standard_answer_range"])
        if kat == "alphabet_option":
            assert [p[0] for p in rng] == list("ABCD")
            assert r["correct_answer"] in "ABCD"
        else:
            assert all(isinstance(c, str) for c in rng) and r["correct_answer"] in rng
    # Option shuffling: the correct letter is not always the same.
    letters = Counter(r["correct_answer"] for r in valid if r["key_answer_type"] == "alphabet_option")
    assert len(letters) == 4


def test_every_response_kind_present_per_type(valid):
    seen: dict[str, set[str]] = defaultdict(set)
    for r in valid:
        seen[r["key_answer_type"]].add(r["response_kind"])
    for kat, weights in sd.KIND_WEIGHTS.items():
        assert seen[kat] == set(weights), (kat, set(weights) - seen[kat])


def test_phenomena_visible_in_text(valid):
    outs = [r["llm_output"] for r in valid]

    def some(pred) -> bool:
        return any(pred(o) for o in outs)

    assert some(lambda o: "\\boxed{" in o)
    assert some(lambda o: re.search(r"^#### ", o, re.M))
    assert some(lambda o: re.search(r"\*\*[A-D]\*\*", o))
    assert some(lambda o: "The answer is" in o and o.rstrip().endswith("."))
    assert some(lambda o: "答案" in o)
    assert some(lambda o: "Wait, actually" in o or "Wait, I made a mistake" in o)
    assert some(lambda o: re.search(r"\n\nQ: .+\nA: ", o, re.S))
    assert some(lambda o: "is incorrect, so" in o)
    assert some(lambda o: o.strip() == "")
    # Equivalent math formats: the key answer is written differently from the ground truth and judged correct.
    eq = [
        r
        for r in valid
        if r["key_answer_type"] == "math"
        and r["gold_judgment"]
        and r["gold_key_answer"] != r["correct_answer"]
    ]
    assert len(eq) >= 20
    assert (
        sum("," in r["gold_key_answer"] and "," not in r["correct_answer"] for r in eq) >= 3
    )  # 1,000 vs 1000
    assert sum("\\frac" in r["correct_answer"] + r["gold_key_answer"] for r in eq) >= 3  # \frac{2}{5} vs 0.4
    assert any(r["response_kind"] == "equiv_format" for r in eq)


def test_gold_labels_follow_the_annotation_rules(valid):
    for r in valid:
        kind, gold, out = r["response_kind"], r["gold_key_answer"], r["llm_output"]
        if kind in sd.NO_ANSWER_KINDS:
            assert gold == NO_VALID_ANSWER and r["gold_judgment"] is False, r
            continue
        assert gold != NO_VALID_ANSWER
        kat = r["key_answer_type"]
        if kat == "math":
            assert gold in out, r  # the key answer is the response's own final answer, as written
            continue
        rng = json.loads(r["standard_answer_range"])
        keys = [p[0] for p in rng] if kat == "alphabet_option" else rng
        assert gold in keys, r
        assert r["gold_judgment"] == (gold == r["correct_answer"]), r
        if kat == "alphabet_option" and kind == "option_text":
            text = dict(rng)[gold]
            assert text in out and not re.search(rf"\b{gold}\b[.)]", out), r
        elif (
            kind == "repetition_loop"
        ):  # the first answer is the key answer; later turns answer other questions
            first_line = out.split("\n", 1)[0].strip().casefold()
            assert first_line.endswith((gold.casefold(), gold.casefold() + ".")), r
        else:
            assert gold.casefold() in out.casefold(), r


def _number(text: str) -> Fraction | None:
    """A small parser for the numeric formats the sample uses (enough to check its own labels)."""
    t = text.replace(",", "").replace("$", "").replace("\\dfrac", "\\frac").strip()
    m = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", t)
    if m:
        return Fraction(int(m[2]), int(m[3])) * (-1 if m[1] else 1)
    m = re.fullmatch(r"(-?\d+)/(\d+)", t)
    if m:
        return Fraction(int(m[1]), int(m[2]))
    try:
        return Fraction(t)
    except ValueError:
        return None


def test_math_judgments_match_values(valid):
    checked = 0
    for r in valid:
        if r["key_answer_type"] != "math" or r["gold_key_answer"] == NO_VALID_ANSWER:
            continue
        got, want = _number(r["gold_key_answer"]), _number(r["correct_answer"])
        if got is None or want is None:
            continue
        assert (got == want) == r["gold_judgment"], r
        checked += 1
    assert checked > 300


def test_leaderboard_ranks_models(valid):
    correct: dict[str, list[bool]] = defaultdict(list)
    for r in valid:
        correct[r["model"]].append(r["gold_judgment"])
    acc = {m: sum(v) / len(v) for m, v in correct.items()}
    ranked = sorted(acc, key=acc.get, reverse=True)
    names = [m.name for m in sd.MODELS]
    assert ranked[0] == names[0] and ranked[-1] == names[-1]
    assert acc[names[0]] - acc[names[-1]] > 0.25
    skill = {m.name: m.skill for m in sd.MODELS}
    for a in names:  # clearly different skills come out in order
        for b in names:
            if skill[a] - skill[b] >= 0.5:
                assert acc[a] > acc[b], (a, b, acc)


def test_bad_records_are_exactly_the_rejected_ones(rows):
    bad = [r for r in rows if r["defect"] is not None]
    assert 0.005 <= len(bad) / len(rows) <= 0.02
    assert Counter(r["defect"] for r in bad).keys() == set(sd.DEFECTS)
    expected = {
        "null_question": r"field 'question' is null",
        "unknown_key_answer_type": r"unknown key_answer_type",
        "unparseable_range": r"not a JSON or Python list literal",
        "correct_not_in_range": r"is not in standard_answer_range",
    }
    # Checked on the Parquet round trip too: that is what the pipeline reads.
    for row in [*rows, *sd.read_sample()]:
        reason = check(row)
        if row["defect"] is None:
            assert reason is None, (reason, row)
        else:
            assert reason is not None and re.search(expected[row["defect"]], reason), (reason, row)
            assert row["gold_key_answer"] is None and row["gold_judgment"] is None


def test_shipped_file_equals_a_fresh_generation(rows):
    assert sd.SAMPLE_PATH.exists(), "run: python -m xfinder_ray.sample_data"
    assert sd.SAMPLE_PATH.stat().st_size < 1_000_000
    table = pq.read_table(sd.SAMPLE_PATH)
    assert table.schema.equals(sd.SCHEMA)
    assert table.to_pylist() == rows, "the shipped sample drifted: python -m xfinder_ray.sample_data"
    meta = pq.ParquetFile(sd.SAMPLE_PATH).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_cli_writes_sample_and_synthetic(tmp_path, capsys):
    out = tmp_path / "s.parquet"
    assert sd.main(["--out", str(out), "--questions-per-task", "2"]) == 0
    assert pq.read_table(out).num_rows == len(sd.generate(2))
    assert sd.main(["--out", str(tmp_path / "syn"), "--rows", "1000", "--rows-per-file", "400"]) == 0
    parts = sorted((tmp_path / "syn").glob("part-*.parquet"))
    assert [pq.read_metadata(p).num_rows for p in parts] == [400, 400, 200]
    assert "wrote" in capsys.readouterr().out


def test_synthetic_tables():
    tables = list(sd.iter_synthetic_tables(250_000, rows_per_table=100_000, seed=3))
    assert [t.num_rows for t in tables] == [100_000, 100_000, 50_000]
    assert all(t.schema.equals(sd.SCHEMA) for t in tables)
    ids = [i for t in tables for i in t.column("record_id").to_pylist()]
    assert len(set(ids)) == len(ids) == 250_000
    again = next(sd.iter_synthetic_tables(1_000, rows_per_table=1_000, seed=3))
    assert again.equals(tables[0].slice(0, 1_000))
    first = tables[0]
    defects = first.column("defect").null_count
    assert 0.005 < (first.num_rows - defects) / first.num_rows < 0.02
    assert len(set(first.column("model").to_pylist())) == len(sd.MODELS)
    assert len(set(first.column("task").to_pylist())) == len(sd.TASKS)
    assert sd.synthesize(10, seed=3).num_rows == 10
    assert sd.synthesize(0).num_rows == 0


def test_synthetic_rows_validate_like_the_sample():
    t = sd.synthesize(3_000, seed=1)
    for row in t.to_pylist():
        assert (check(row) is None) == (row["defect"] is None), row
