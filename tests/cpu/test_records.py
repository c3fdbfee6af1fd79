import pytest

from xfinder_ray.records import (
    MATH_ANSWER_RANGE,
    InvalidRecord,
    check,
    parse_answer_range,
    range_repr,
    validate,
)


def rec(**over):
    base = {
        "record_id": "r1",
        "model": "m",
        "task": "MMLU",
        "key_answer_type": "alphabet_option",
        "question": "Q?",
        "llm_output": "The answer is B.",
        "standard_answer_range": [["A", "work"], ["B", "school building"]],
        "correct_answer": "B",
    }
    base.update(over)
    return base


@pytest.mark.parametrize(
    "value",
    [
        '[["A", "work"], ["B", "school building"]]',  # JSON
        "[['A', 'work'], ['B', 'school building']]",  # Python literal, as in xFinder's files
        [["A", "work"], ["B", "school building"]],
        [("A", "work"), ("B", "school building")],
    ],
)
def test_alphabet_range_forms(value):
    assert parse_answer_range(value, "alphabet_option") == [("A", "work"), ("B", "school building")]


def test_list_range_and_math_range():
    assert parse_answer_range('["Positive", "Negative"]', "categorical_label") == ["Positive", "Negative"]
    assert parse_answer_range("anything", "math") == MATH_ANSWER_RANGE
    assert parse_answer_range(None, "math") == MATH_ANSWER_RANGE


def test_range_repr_is_python_repr():
    assert (
        range_repr([("A", "work"), ("B", "school building")]) == "[['A', 'work'], ['B', 'school building']]"
    )
    assert range_repr(["it's", "no"]) == "[\"it's\", 'no']"


def test_range_parse_never_evaluates_code(tmp_path):
    target = tmp_path / "pwned"
    evil = f"__import__('os').system('touch {target}')"
    with pytest.raises(InvalidRecord, match="not a JSON or Python list literal"):
        parse_answer_range(evil, "short_text")
    assert not target.exists()


@pytest.mark.parametrize(
    "over, reason",
    [
        ({"question": None}, "field 'question' is null"),
        ({"key_answer_type": "essay"}, "unknown key_answer_type 'essay'"),
        ({"standard_answer_range": "[['A', 'work'"}, "not a JSON or Python list literal"),
        ({"standard_answer_range": ["A", "B"]}, "list of [letter, text] pairs"),
        ({"standard_answer_range": [["A", "x", "y"]]}, "list of [letter, text] pairs"),
        ({"correct_answer": "C"}, "correct_answer 'C' is not in standard_answer_range"),
        ({"llm_output": "x" * 1_000_001}, "longer than 1000000 characters"),
        ({"standard_answer_range": "[" + "1," * 60_000 + "]"}, "longer than 100000 characters"),
        ({"standard_answer_range": []}, "standard_answer_range is empty"),
        ({"model": ["a"]}, "field 'model' must be a string"),
    ],
)
def test_validation_reasons(over, reason):
    assert reason in check(rec(**over))


def test_missing_field_reason():
    r = rec()
    del r["correct_answer"]
    assert check(r) == "missing field 'correct_answer'"


def test_empty_output_is_valid_and_aliases_accepted():
    r = rec(llm_output="")
    r["model_name"] = r.pop("model")
    r["dataset"] = r.pop("task")
    v = validate(r)
    assert v.model == "m" and v.task == "MMLU" and v.llm_output == ""


def test_correct_answer_may_be_option_text_and_math_is_free():
    assert check(rec(correct_answer="school building")) is None
    assert (
        check(rec(key_answer_type="math", standard_answer_range=MATH_ANSWER_RANGE, correct_answer="3/4"))
        is None
    )
    assert "not in standard_answer_range" in check(
        rec(key_answer_type="short_text", standard_answer_range=["yes", "no"], correct_answer="maybe")
    )


def test_column_mapping():
    r = rec()
    r["resp"] = r.pop("llm_output")
    assert "missing field 'llm_output'" in check(r)
    assert check(r, columns={"llm_output": "resp"}) is None
