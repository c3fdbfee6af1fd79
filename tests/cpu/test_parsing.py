import pytest

from xfinder_ray.parsing import clean_output, match_candidate, parse_output
from xfinder_ray.records import NO_VALID_ANSWER

ABC = [("A", "work"), ("B", "school building"), ("C", "home")]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("B", "B"),
        ("(b)", "B"),
        ("B.", "B"),
        ("B)", "B"),
        ("**C**", "C"),
        ("Option A", "A"),
        ("school building", "B"),
        ("  School Building. ", "B"),
        ("B. school building", "B"),
        ("B. home", NO_VALID_ANSWER),  # letter and another option's text contradict
        ("D", NO_VALID_ANSWER),
        ("the library", NO_VALID_ANSWER),
        ("", NO_VALID_ANSWER),
        ("[No valid answer]", NO_VALID_ANSWER),
        ("no valid answer", NO_VALID_ANSWER),
        ('"A"<|im_end|>\nAssistant: B', "A"),
        ("Key extracted answer: C", "C"),
        ("A<|eot_id|>", "A"),
    ],
)
def test_alphabet(raw, expected):
    assert parse_output(raw, "alphabet_option", ABC) == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("positive", "Positive"),
        ("'Negative'.", "Negative"),
        ("NEGATIVE!", "Negative"),
        ("neutral", NO_VALID_ANSWER),
        ("Positive sentiment overall", NO_VALID_ANSWER),
    ],
)
def test_labels_map_to_exact_candidate(raw, expected):
    assert parse_output(raw, "categorical_label", ["Positive", "Negative"]) == expected


def test_short_text_is_case_and_punctuation_insensitive():
    assert match_candidate("short_text", ["New York City", "Paris"], "new  york city.") == "New York City"


@pytest.mark.parametrize(
    "raw, expected",
    [
        (r"\frac{3}{4}", r"\frac{3}{4}"),
        ("270.", "270"),
        (" x = 3 ", "x = 3"),
        ("1,000", "1,000"),
        ("", NO_VALID_ANSWER),
    ],
)
def test_math_kept_as_written(raw, expected):
    assert parse_output(raw, "math", "a(n) number") == expected


def test_very_long_output_is_bounded():
    out = clean_output("A" * 1_000_000)
    assert len(out) <= 4000
    assert parse_output("word " * 200_000, "alphabet_option", ABC) == NO_VALID_ANSWER
