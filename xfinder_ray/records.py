"""The canonical record, answer-range parsing and validation.

Every field of a record is untrusted text: nothing here evaluates it, and every parse is bounded.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NO_VALID_ANSWER = "[No valid answer]"
MATH_ANSWER_RANGE = (
    "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality"
)
KEY_ANSWER_TYPES = ("alphabet_option", "short_text", "categorical_label", "math")

# The canonical columns, in output order.
FIELDS = (
    "record_id",
    "model",
    "task",
    "key_answer_type",
    "question",
    "llm_output",
    "standard_answer_range",
    "correct_answer",
)
# Other names for the same fields: the xfinder package's own files and the shared dev data.
FIELD_ALIASES = {
    "model_name": "model",
    "dataset": "task",
    "id": "record_id",
}

# Size bounds: a response this long is not a response, and a bigger range literal is not a range.
MAX_FIELD_CHARS = {
    "record_id": 512,
    "model": 512,
    "task": 512,
    "key_answer_type": 64,
    "question": 200_000,
    "llm_output": 1_000_000,
    "correct_answer": 10_000,
}
MAX_RANGE_CHARS = 100_000
MAX_RANGE_ITEMS = 1_000

AnswerRange = str | list[str] | list[tuple[str, str]]


class InvalidRecord(ValueError):
    """A record that cannot be judged; the message is the reason written to rejects."""


def canonicalize(raw: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Rename a raw row's fields to the canonical names, keeping every other field as it is.

    `columns` maps canonical name -> source name (the config's `input.columns`); the xfinder
    package's names (`model_name`, `dataset`) are accepted without it.
    """
    out = dict(raw)
    for alias, canonical in FIELD_ALIASES.items():
        if canonical not in out and alias in out:
            out[canonical] = out[alias]
    for canonical, source in (columns or {}).items():
        if source in raw:
            out[canonical] = raw[source]
    return out


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        # literal_eval evaluates literals only (no names, calls or attributes); size bounded above.
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise InvalidRecord(
            f"standard_answer_range is not a JSON or Python list literal: {type(e).__name__}"
        ) from None


def parse_answer_range(value: Any, key_answer_type: str) -> AnswerRange:
    """Parse `standard_answer_range` for its key_answer_type.

    Returns the fixed math range string for math, a list of candidate strings for short_text and
    categorical_label, and a list of (letter, text) pairs for alphabet_option.
    """
    if key_answer_type == "math":
        # The math range is fixed: xFinder always shows the same type description.
        return MATH_ANSWER_RANGE
    if key_answer_type not in KEY_ANSWER_TYPES:
        raise InvalidRecord(
            f"unknown key_answer_type {key_answer_type!r}; expected one of {', '.join(KEY_ANSWER_TYPES)}"
        )
    if value is None:
        raise InvalidRecord("standard_answer_range is missing")
    if isinstance(value, str):
        if len(value) > MAX_RANGE_CHARS:
            raise InvalidRecord(f"standard_answer_range is longer than {MAX_RANGE_CHARS} characters")
        value = _literal(value.strip())
    if hasattr(value, "tolist"):  # numpy arrays from Parquet/Arrow
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise InvalidRecord(f"standard_answer_range must be a list, got {type(value).__name__}")
    if not value:
        raise InvalidRecord("standard_answer_range is empty")
    if len(value) > MAX_RANGE_ITEMS:
        raise InvalidRecord(f"standard_answer_range has more than {MAX_RANGE_ITEMS} items")
    items = [v.tolist() if hasattr(v, "tolist") else v for v in value]
    if key_answer_type == "alphabet_option":
        pairs: list[tuple[str, str]] = []
        for item in items:
            if (
                not isinstance(item, (list, tuple))
                or len(item) != 2
                or not all(isinstance(x, str) for x in item)
                or not item[0].strip()
            ):
                raise InvalidRecord(
                    "alphabet_option standard_answer_range must be a list of [letter, text] pairs"
                )
            pairs.append((item[0].strip(), item[1]))
        return pairs
    if not all(isinstance(x, str) for x in items):
        raise InvalidRecord(f"{key_answer_type} standard_answer_range must be a list of strings")
    return list(items)


def range_repr(answer_range: AnswerRange) -> str:
    """Render a range as xFinder saw it in training: the fixed math string, or a Python repr."""
    if isinstance(answer_range, str):
        return answer_range
    return repr([list(x) if isinstance(x, tuple) else x for x in answer_range])


def _norm(text: str) -> str:
    return " ".join(text.strip().rstrip(".").split()).casefold()


def correct_answer_in_range(correct: str, answer_range: AnswerRange, key_answer_type: str) -> bool:
    if key_answer_type == "math":
        return True
    target = _norm(correct)
    if key_answer_type == "alphabet_option":
        return any(target in (_norm(letter), _norm(text)) for letter, text in answer_range)
    return any(target == _norm(c) for c in answer_range)


@dataclass(frozen=True)
class Record:
    record_id: str
    model: str
    task: str
    key_answer_type: str
    question: str
    llm_output: str
    answer_range: AnswerRange
    correct_answer: str


def validate(raw: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> Record:
    """Return a Record, or raise InvalidRecord with the reason."""
    row = canonicalize(raw, columns)
    values: dict[str, Any] = {}
    for name in FIELDS:
        if name not in row:
            raise InvalidRecord(f"missing field {name!r}")
        value = row[name]
        if value is None or (isinstance(value, float) and value != value):  # NaN: pandas' null
            # An empty response is a real outcome (judged [No valid answer]); a null one is missing data.
            raise InvalidRecord(f"field {name!r} is null")
        if name == "standard_answer_range":
            values[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InvalidRecord(f"field {name!r} must be a string, got {type(value).__name__}")
        try:
            value = str(value)
        except ValueError:  # an int past sys.get_int_max_str_digits() (4300 digits) cannot be printed
            raise InvalidRecord(f"field {name!r} is longer than {MAX_FIELD_CHARS[name]} characters") from None
        if len(value) > MAX_FIELD_CHARS[name]:
            raise InvalidRecord(f"field {name!r} is longer than {MAX_FIELD_CHARS[name]} characters")
        if name not in ("llm_output",) and not value.strip():
            raise InvalidRecord(f"field {name!r} is empty")
        values[name] = value
    kat = values["key_answer_type"].strip()
    answer_range = parse_answer_range(values["standard_answer_range"], kat)
    correct = values["correct_answer"]
    if not correct_answer_in_range(correct, answer_range, kat):
        raise InvalidRecord(f"correct_answer {correct[:80]!r} is not in standard_answer_range")
    return Record(
        record_id=values["record_id"],
        model=values["model"],
        task=values["task"],
        key_answer_type=kat,
        question=values["question"],
        llm_output=values["llm_output"],
        answer_range=answer_range,
        correct_answer=correct,
    )


def check(raw: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> str | None:
    """The reason a record is invalid, or None when it is valid."""
    try:
        validate(raw, columns)
    except InvalidRecord as e:
        return str(e)
    return None
