"""A corpus of bad inputs for the scoring job (issue #5), and what the job must do with each.

`write_corpus(root)` writes one folder per kind, `root/<case-name>/`, each with a few good rows next
to the bad ones, and returns a `Case` per folder saying what the job must make of it: how many rows
it counts as input, which rows are judged, which are rejected and with what reason, and which files
cannot be read at all (listed in the manifest's `skipped_files` with `input.on_bad_file=skip`,
`BadInputFile` with `fail`). Rows are located by (file name, source_row): the 0-based row index in
a Parquet file, the 0-based physical line index in a JSON Lines file (blank lines are not rows, but
they are counted as lines).

Every good row has a corpus-wide unique record_id (`<case>/<n>`) and `task` = the case name, so one
job can run over the whole corpus and be checked per case.
"""

from __future__ import annotations

import functools
import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from xfinder_ray.records import FIELDS, MATH_ANSWER_RANGE

# A wanted substring of a reject reason (matched case-insensitively), or alternatives: any one of them.
Want = str | tuple[str, ...]

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")

ALPHA_RANGE = [["A", "red"], ["B", "blue"], ["C", "green"], ["D", "white"]]
CAT_RANGE = ["Positive", "Negative"]


@dataclass(frozen=True)
class Case:
    name: str  # the folder under the corpus root
    kind: str  # what is in the files, in words (the docs table)
    expected: str  # what the job must do with it, in words (the docs table)
    files: tuple[str, ...]  # every file written into the folder, data or not
    n_rows: int  # input rows the job counts (rows of unreadable whole files count 0)
    n_rejected: int
    reason_contains: tuple[Want, ...] = ()  # every reject reason of this case contains each of these
    row_reasons: dict[tuple[str, int], tuple[Want, ...]] = field(default_factory=dict)  # per rejected row
    judged_rows: frozenset[tuple[str, int]] = frozenset()  # exactly the rows that are judged
    file_level: bool = False  # holds a file that cannot be read at all
    bad_files: tuple[str, ...] = ()  # those files: skipped (on_bad_file=skip) or BadInputFile (fail)
    inputs: tuple[str, ...] = ()  # the data files the job reads (what list_files finds), bad ones included

    @property
    def n_judged(self) -> int:
        return self.n_rows - self.n_rejected


def matches(reason: str, want: Want) -> bool:
    alternatives = (want,) if isinstance(want, str) else want
    return any(w.lower() in reason.lower() for w in alternatives)


# ------------------------------------------------------------------------------------------- rows


def good(case: str, i: int, kat: str = "", **over: Any) -> dict[str, Any]:
    """A valid record: alphabet_option and categorical_label in turn (or `kat`), id `<case>/<i>`."""
    kat = kat or ("alphabet_option", "categorical_label")[i % 2]
    if kat == "alphabet_option":
        rng, correct, out = json.dumps(ALPHA_RANGE), "B", "The sky is blue, so the answer is (B)."
    elif kat == "categorical_label":
        rng, correct, out = json.dumps(CAT_RANGE), "Positive", "The review is Positive."
    else:
        rng, correct, out = MATH_ANSWER_RANGE, "0.5", r"So the result is $\boxed{\frac{1}{2}}$."
    row = dict(
        record_id=f"{case}/{i}",
        model=("model-a", "model-b")[i % 2],
        task=case,
        key_answer_type=kat,
        question=f"Question {i} of {case}?",
        llm_output=out,
        standard_answer_range=rng,
        correct_answer=correct,
    )
    row.update(over)
    return row


def without(row: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in names}


OK = None  # the row is judged
BLANK = "blank"  # a blank JSONL line: not a row


class _Folder:
    """Writes the files of one case and keeps the expected outcome of every row it writes."""

    def __init__(self, root: Path, name: str):
        self.name = name
        self.dir = root / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.files: list[str] = []
        self.inputs: list[str] = []
        self.bad: list[str] = []
        self.n_rows = 0
        self.row_reasons: dict[tuple[str, int], tuple[Want, ...]] = {}
        self.judged: set[tuple[str, int]] = set()

    def _row(self, fname: str, index: int, outcome: Any) -> None:
        self.n_rows += 1
        if outcome is OK:
            self.judged.add((fname, index))
        else:
            self.row_reasons[(fname, index)] = outcome if isinstance(outcome, tuple) else (outcome,)

    def parquet(
        self,
        fname: str,
        rows: list[tuple[dict[str, Any], Any]],
        schema: pa.Schema | None = None,
        **write_kwargs: Any,
    ) -> Path:
        """rows: (row, OK | wanted reason substrings)."""
        table = pa.Table.from_pylist([r for r, _ in rows], schema=schema)
        return self.table(fname, table, [o for _, o in rows], **write_kwargs)

    def table(self, fname: str, table: pa.Table, outcomes: list[Any], **write_kwargs: Any) -> Path:
        path = self.dir / fname
        pq.write_table(table, path, **write_kwargs)
        self.files.append(fname)
        self.inputs.append(fname)
        for i, outcome in enumerate(outcomes):
            self._row(fname, i, outcome)
        return path

    def jsonl(
        self, fname: str, lines: list[tuple[Any, Any]], *, newline: bytes = b"\n", final_newline: bool = True
    ) -> Path:
        """lines: (dict -> json.dumps | str | bytes, OK | wanted reason substrings | BLANK)."""
        raw: list[bytes] = []
        for i, (line, outcome) in enumerate(lines):
            if isinstance(line, dict):
                line = json.dumps(line)
            raw.append(line.encode() if isinstance(line, str) else line)
            if outcome != BLANK:
                self._row(fname, i, outcome)
        data = newline.join(raw) + (newline if final_newline and raw else b"")
        path = self.dir / fname
        path.write_bytes(gzip.compress(data, mtime=0) if fname.endswith(".gz") else data)
        self.files.append(fname)
        self.inputs.append(fname)
        return path

    def bad_file(self, fname: str, data: bytes) -> Path:
        """A data file that cannot be read at all: its rows are not input."""
        path = self.dir / fname
        path.write_bytes(data)
        self.files.append(fname)
        self.inputs.append(fname)
        self.bad.append(fname)
        return path

    def ignored(self, fname: str, data: bytes) -> Path:
        """A file the job must not read (hidden, `_`-prefixed, or not a data suffix)."""
        path = self.dir / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files.append(fname)
        return path

    def case(self, kind: str, expected: str, reason_contains: tuple[Want, ...] = ()) -> Case:
        return Case(
            name=self.name,
            kind=kind,
            expected=expected,
            files=tuple(self.files),
            n_rows=self.n_rows,
            n_rejected=len(self.row_reasons),
            reason_contains=reason_contains,
            row_reasons=dict(self.row_reasons),
            judged_rows=frozenset(self.judged),
            file_level=bool(self.bad),
            bad_files=tuple(self.bad),
            inputs=tuple(self.inputs),
        )


def _goods(f: _Folder, start: int = 0, n: int = 2) -> list[tuple[dict[str, Any], Any]]:
    return [(good(f.name, i), OK) for i in range(start, start + n)]


# ------------------------------------------------------------------------------------------- kinds

# name -> (writer, whether the case holds a file that cannot be read at all)
KINDS: dict[str, tuple[Callable[[_Folder], Case], bool]] = {}


def kind(
    name: str, file_level: bool = False
) -> Callable[[Callable[[_Folder], Case]], Callable[[_Folder], Case]]:
    def register(make: Callable[[_Folder], Case]) -> Callable[[_Folder], Case]:
        assert name not in KINDS, name
        KINDS[name] = (make, file_level)
        return make

    return register


REQUIRED = (
    "record_id",
    "key_answer_type",
    "question",
    "llm_output",
    "standard_answer_range",
    "correct_answer",
)


def _missing_column(f: _Folder, col: str) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.parquet(
        "missing.parquet",
        [(without(good(f.name, i), col), ("missing field", f"'{col}'")) for i in (10, 11, 12)],
    )
    return f.case(
        f"Parquet file without the `{col}` column (next to a file with it)",
        f"every row of that file rejected: missing field '{col}'",
        ("missing field",),
    )


for _col in REQUIRED:
    kind(f"missing-{_col}")(functools.partial(_missing_column, col=_col))


@kind("missing-model-and-task")
def missing_model_task(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.parquet(
        "no-model-no-task.parquet",
        [
            (without(good(f.name, i), "model", "task"), ("missing field", ("'model'", "'task'")))
            for i in (10, 11)
        ],
    )
    f.parquet(
        "only-id-and-output.parquet",
        [({"record_id": f"{f.name}/{i}", "llm_output": "B"}, "missing field") for i in (20, 21)],
    )
    return f.case(
        "Parquet files lacking several columns at once (model+task; all but record_id+llm_output)",
        "every row of those files rejected: missing field",
        ("missing field",),
    )


@kind("no-known-columns")
def no_known_columns(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.parquet("other.parquet", [({"foo": i, "bar": "x"}, "missing field") for i in range(3)])
    return f.case(
        "Parquet file none of whose columns is a record field (`foo`, `bar`)",
        "every row rejected (missing field), none lost although no column is read",
        ("missing field",),
    )


@kind("column-aliases")
def column_aliases(f: _Folder) -> Case:
    rows = []
    for i in range(3):
        r = good(f.name, i)
        rows.append(
            (
                {
                    "id": r["record_id"],
                    "model_name": r["model"],
                    "dataset": r["task"],
                    **without(r, "record_id", "model", "task"),
                },
                OK,
            )
        )
    f.parquet("aliases.parquet", rows)
    return f.case(
        "the xfinder package's column names (`id`, `model_name`, `dataset`)",
        "all judged (control)",
    )


@kind("null-fields")
def null_fields(f: _Folder) -> Case:
    rows = _goods(f)
    for j, name in enumerate(FIELDS):
        rows.append((good(f.name, 10 + j, **{name: None}), ("null", f"'{name}'")))
    f.parquet("nulls.parquet", rows)
    return f.case(
        "Parquet: one row per field with that field null (all 8 fields)",
        "those rows rejected: field 'X' is null",
        ("null",),
    )


@kind("null-fields-jsonl")
def null_fields_jsonl(f: _Folder) -> Case:
    lines: list[tuple[Any, Any]] = [(good(f.name, 0), OK), (good(f.name, 1), OK)]
    for j, name in enumerate(REQUIRED):
        lines.append((good(f.name, 10 + j, **{name: None}), ("null", f"'{name}'")))
    lines.append((without(good(f.name, 30), "question"), ("missing field", "'question'")))
    f.jsonl("nulls.jsonl", lines)
    return f.case(
        "JSONL: JSON `null` in each required field; one line without the `question` key",
        "those lines rejected: field 'X' is null / missing field 'question'",
        (("null", "missing field"),),
    )


@kind("numbers-as-text")
def numbers_as_text(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    cat = json.dumps(["1", "2", "3"])
    f.parquet(
        "int-ids-and-answers.parquet",
        [
            (
                good(
                    f.name,
                    0,
                    "categorical_label",
                    record_id=900001,
                    standard_answer_range=cat,
                    correct_answer=2,
                    llm_output="The answer is 2.",
                ),
                OK,
            ),
            (
                good(
                    f.name,
                    0,
                    "categorical_label",
                    record_id=900002,
                    standard_answer_range=cat,
                    correct_answer=3,
                    llm_output="The answer is 1.",
                ),
                OK,
            ),
        ],
    )
    f.parquet(
        "float-answers.parquet",
        [(good(f.name, i, "math", correct_answer=0.5), OK) for i in (20, 21)],
    )
    return f.case(
        "int64 record_id and correct_answer columns; float64 correct_answer for math",
        "all judged: numbers are accepted as their text (900001, '2', '0.5')",
    )


@kind("bool-fields")
def bool_fields(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    want = ("must be a string", "bool")
    f.parquet("question-bool.parquet", [(good(f.name, i, question=i % 2 == 0), want) for i in (10, 11)])
    f.parquet("llm_output-bool.parquet", [(good(f.name, 20, llm_output=True), want)])
    f.parquet("record_id-bool.parquet", [(good(f.name, 30, record_id=False), want)])
    return f.case(
        "bool columns where text is expected (question, llm_output, record_id)",
        "those rows rejected: field 'X' must be a string, got bool",
        want,
    )


@kind("nested-fields")
def nested_fields(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    want = "must be a string"
    f.parquet(
        "question-list.parquet", [(good(f.name, i, question=["what", "is", "it?"]), want) for i in (10, 11)]
    )
    f.parquet("llm_output-struct.parquet", [(good(f.name, 20, llm_output={"text": "B", "score": 1.0}), want)])
    f.parquet("llm_output-list.parquet", [(good(f.name, 30, llm_output=["The answer", "is B"]), want)])
    f.parquet("correct_answer-list.parquet", [(good(f.name, 40, correct_answer=["B"]), want)])
    return f.case(
        "list and struct columns for question, llm_output, correct_answer",
        "those rows rejected: field 'X' must be a string (never judged as JSON text)",
        (want,),
    )


@kind("range-as-list-column")
def range_list_column(f: _Folder) -> Case:
    f.parquet(
        "alpha.parquet",
        [(good(f.name, i, "alphabet_option", standard_answer_range=ALPHA_RANGE), OK) for i in (0, 2)],
    )
    f.parquet(
        "cat.parquet",
        [(good(f.name, i, "categorical_label", standard_answer_range=CAT_RANGE), OK) for i in (1, 3)],
    )
    return f.case(
        "standard_answer_range as a Parquet list column (list<list<string>>, list<string>)",
        "all judged (control: a list column is a valid range)",
    )


@kind("binary-column")
def binary_column(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    rows = [good(f.name, i, llm_output=b"The answer is (B).") for i in (10, 11)]
    schema = pa.Table.from_pylist([good(f.name, 0)]).schema
    schema = schema.set(schema.get_field_index("llm_output"), pa.field("llm_output", pa.binary()))
    f.parquet("binary.parquet", [(r, ("must be a string", ("binary", "bytes"))) for r in rows], schema=schema)
    return f.case(
        "llm_output as a binary (BYTE_ARRAY without UTF8 annotation) column",
        "those rows rejected: field 'llm_output' must be a string, got binary",
        ("must be a string",),
    )


@kind("wrong-types-jsonl")
def wrong_types_jsonl(f: _Folder) -> Case:
    cat = json.dumps(["1", "2", "3"])
    want = "must be a string"
    lines: list[tuple[Any, Any]] = [
        (good(f.name, 0), OK),
        (good(f.name, 1, record_id=910001), OK),
        (good(f.name, 2, record_id=12345678901234567890), OK),  # beyond int64
        (good(f.name, 3, "categorical_label", standard_answer_range=cat, correct_answer=2), OK),
        (good(f.name, 4, "math", correct_answer=0.5), OK),
        (good(f.name, 5, "alphabet_option", standard_answer_range=ALPHA_RANGE), OK),  # a JSON array range
        (good(f.name, 10, llm_output={"text": "B"}), want),
        (good(f.name, 11, question=["a", "b"]), want),
        (good(f.name, 12, key_answer_type=True), (want, "bool")),
        (good(f.name, 13, correct_answer=["B"]), want),
    ]
    f.jsonl("mixed.jsonl", lines)
    return f.case(
        "JSONL with numbers (incl. > int64), objects, arrays and booleans where text is expected",
        "numbers judged as text; objects/arrays/booleans rejected: must be a string",
        (want,),
    )


@kind("unknown-key-answer-type")
def unknown_kat(f: _Folder) -> Case:
    rows = _goods(f)
    rows += [(good(f.name, 10, key_answer_type="essay"), "unknown key_answer_type")]
    rows += [(good(f.name, 11, key_answer_type="multiple_choice"), "unknown key_answer_type")]
    rows += [(good(f.name, 12, key_answer_type=""), ("key_answer_type", "empty"))]
    f.parquet("kat.parquet", rows)
    return f.case(
        "key_answer_type `essay`, `multiple_choice`, empty",
        "those rows rejected: unknown key_answer_type (empty: field is empty)",
        ("key_answer_type",),
    )


@kind("unparseable-range")
def unparseable_range(f: _Folder) -> Case:
    want = "not a JSON or Python list literal"
    bad = ["[['A', 'red'", "not a list", "__import__('os').system('true')", "[" * 5000 + "]" * 5000]
    rows = _goods(f) + [
        (good(f.name, 10 + j, "alphabet_option", standard_answer_range=b), want) for j, b in enumerate(bad)
    ]
    f.parquet("ranges.parquet", rows)
    return f.case(
        "standard_answer_range that is not a literal: cut off, prose, a call expression, 5000-deep nesting",
        "those rows rejected: not a JSON or Python list literal (nothing evaluated)",
        (want,),
    )


@kind("empty-range")
def empty_range(f: _Folder) -> Case:
    rows = _goods(f) + [
        (good(f.name, 10, standard_answer_range="[]"), ("standard_answer_range", "empty")),
        (good(f.name, 11, "categorical_label", standard_answer_range=""), "standard_answer_range"),
        (good(f.name, 12, standard_answer_range="   "), "standard_answer_range"),
    ]
    f.parquet("ranges.parquet", rows)
    f.parquet(
        "empty-list-column.parquet",
        [
            (
                good(f.name, 20, "categorical_label", standard_answer_range=[]),
                ("standard_answer_range", "empty"),
            )
        ],
        schema=pa.Table.from_pylist([good(f.name, 20, standard_answer_range=["x"])]).schema,
    )
    return f.case(
        'standard_answer_range `[]`, `""`, blank, and an empty list column',
        "those rows rejected: standard_answer_range is empty / not a list literal",
        ("standard_answer_range",),
    )


@kind("huge-range")
def huge_range(f: _Folder) -> Case:
    long_text = json.dumps(["x" * 50 + str(i) for i in range(2100)])  # > 100k characters
    many = [str(i) for i in range(1500)]  # > 1000 items, < 100k characters
    rows = _goods(f) + [
        (
            good(
                f.name,
                10,
                "categorical_label",
                standard_answer_range=long_text,
                correct_answer="x" * 50 + "0",
            ),
            ("standard_answer_range", "longer than"),
        ),
        (
            good(f.name, 11, "categorical_label", standard_answer_range=json.dumps(many), correct_answer="7"),
            ("standard_answer_range", "more than 1000 items"),
        ),
    ]
    f.parquet("ranges.parquet", rows)
    f.parquet(
        "list-column.parquet",
        [
            (
                good(f.name, 20, "categorical_label", standard_answer_range=many, correct_answer="7"),
                ("standard_answer_range", "more than 1000 items"),
            )
        ],
    )
    return f.case(
        "standard_answer_range over 100,000 characters; 1,500 items (as text and as a list column)",
        "those rows rejected: longer than 100000 characters / more than 1000 items",
        ("standard_answer_range",),
    )


@kind("answer-not-in-range")
def answer_not_in_range(f: _Folder) -> Case:
    want = "not in standard_answer_range"
    rows = _goods(f) + [
        (good(f.name, 10, "alphabet_option", correct_answer="E"), want),
        (good(f.name, 11, "categorical_label", correct_answer="Neutral"), want),
        (good(f.name, 12, "alphabet_option", correct_answer="blue"), OK),  # the option text is fine
        (good(f.name, 13, "alphabet_option", correct_answer=" b "), OK),  # case and spaces
    ]
    f.parquet("answers.parquet", rows)
    return f.case(
        "correct_answer `E` with options A-D; a label not among the labels",
        "those rows rejected: correct_answer is not in standard_answer_range (option text, `b` accepted)",
        (want,),
    )


@kind("wrong-shape-range")
def wrong_shape_range(f: _Folder) -> Case:
    bad = [
        ("alphabet_option", '{"A": 1}'),
        ("alphabet_option", '[["A"]]'),
        ("alphabet_option", "[1, 2]"),
        ("alphabet_option", '[["A", "red"], ["B", 2]]'),
        ("alphabet_option", '[["", "red"]]'),
        ("alphabet_option", '"A"'),
        ("categorical_label", "[1, 2]"),
        ("categorical_label", '[["Positive"], ["Negative"]]'),
    ]
    rows = _goods(f) + [
        (good(f.name, 10 + j, kat, standard_answer_range=rng), "standard_answer_range")
        for j, (kat, rng) in enumerate(bad)
    ]
    f.parquet("ranges.parquet", rows)
    return f.case(
        'valid JSON of the wrong shape: `{"A": 1}`, `[["A"]]`, `[1, 2]`, non-string text, empty letter, a bare string',
        "those rows rejected: standard_answer_range must be a list (of [letter, text] pairs / of strings)",
        ("standard_answer_range",),
    )


@kind("huge-llm-output")
def huge_llm_output(f: _Folder) -> Case:
    tail = " The answer is (B)."
    exact = "x" * (1_000_000 - len(tail)) + tail
    f.parquet(
        "outputs.parquet",
        [
            (good(f.name, 0, "alphabet_option", llm_output=exact), OK),  # exactly the 1,000,000 limit
            (good(f.name, 1, "alphabet_option", llm_output=exact + "x"), ("llm_output", "longer than")),
            (good(f.name, 2, "alphabet_option", llm_output="é" * (1_000_000 - len(tail)) + tail), OK),  # 2 MB
            (good(f.name, 3), OK),
        ],
    )
    f.jsonl(
        "outputs.jsonl",
        [
            (good(f.name, 10, "alphabet_option", llm_output=exact), OK),
            (good(f.name, 11, "alphabet_option", llm_output="y" * 2_100_000), "longer than"),
            (good(f.name, 12), OK),
        ],
    )
    return f.case(
        "llm_output of exactly 1,000,000 characters (ASCII; 2-byte UTF-8), 1,000,001 characters; a 2.1 MB JSONL line",
        "up to the limit judged; beyond it rejected: longer than 1000000 characters / line longer than 2000000 bytes",
        ("longer than",),
    )


@kind("invalid-utf8-jsonl")
def invalid_utf8_jsonl(f: _Folder) -> Case:
    want = (("utf-8", "utf8"),)
    ok = json.dumps(good(f.name, 1)).encode()
    f.jsonl(
        "bytes.jsonl",
        [
            (good(f.name, 0), OK),
            (json.dumps(good(f.name, 10, llm_output="caf@ B")).encode().replace(b"caf@", b"caf\xe9"), want),
            (
                json.dumps(good(f.name, 11, question="Q\u20ac?")).encode().replace(b"\\u20ac", b"\xe2\x82"),
                want,
            ),
            (b"\xff\xfe" + json.dumps(good(f.name, 12)).encode(), want),
            (ok, OK),
        ],
    )
    return f.case(
        "JSONL lines with invalid UTF-8: a Latin-1 byte, a cut multi-byte sequence, a UTF-16 BOM",
        "those lines rejected: not valid UTF-8; the other lines judged",
        want,
    )


@kind("invalid-utf8-parquet")
def invalid_utf8_parquet(f: _Folder) -> Case:
    rows = [good(f.name, i) for i in range(3)]
    table = pa.Table.from_pylist(rows)
    raw = [r["llm_output"].encode() for r in rows]
    raw[1] = b"caf\xe9, so (B)"
    table = table.set_column(
        table.schema.get_field_index("llm_output"), "llm_output", pa.array(raw, pa.binary()).view(pa.string())
    )
    f.table("strings.parquet", table, [OK, ("utf-8", "'llm_output'"), OK])
    return f.case(
        "Parquet string column holding invalid UTF-8 in one row (as a non-Arrow writer can produce)",
        "that row rejected: field 'llm_output' is not valid UTF-8; the other rows judged",
        ("utf-8",),
    )


@kind("lone-surrogate-jsonl")
def lone_surrogate_jsonl(f: _Folder) -> Case:
    line = json.dumps(good(f.name, 10, llm_output="@@ The answer is (B).")).replace("@@", "\\ud800")
    f.jsonl(
        "surrogate.jsonl",
        [(good(f.name, 0), OK), (line, (("utf-8", "surrogate", "unicode"),)), (good(f.name, 1), OK)],
    )
    return f.case(
        "JSONL line with a lone surrogate escape `\\ud800` (valid JSON syntax, not valid Unicode)",
        "that line rejected with a reason (not written as text Arrow cannot hold, no crash)",
        (("utf-8", "surrogate", "unicode"),),
    )


@kind("control-chars")
def control_chars(f: _Folder) -> Case:
    rows = _goods(f) + [
        (
            good(
                f.name,
                10,
                "alphabet_option",
                record_id=f"{f.name}/\x00nul",
                question="Which\x00 colour\x01 is\x1b[31m the sky?\x7f",
                llm_output="\x07The answer is (B).\x00",
            ),
            OK,
        ),
        (good(f.name, 11, llm_output="\x00"), OK),
        (good(f.name, 12, "alphabet_option", correct_answer="B\x00"), "not in standard_answer_range"),
        (good(f.name, 13, key_answer_type="math\x00"), "unknown key_answer_type"),
    ]
    f.parquet("controls.parquet", rows)
    return f.case(
        "NUL, BEL, ESC, DEL inside record_id, question, llm_output; `B\\x00` as correct_answer, "
        "`math\\x00` as key_answer_type",
        "the NUL/BEL/ESC/DEL rows judged (control characters are text, never stripped); so `B\\x00` is "
        "not in the range and `math\\x00` is an unknown key_answer_type: those two rejected",
        (("unknown key_answer_type", "not in standard_answer_range"),),
    )


@kind("control-chars-jsonl")
def control_chars_jsonl(f: _Folder) -> Case:
    escaped = good(f.name, 10, "alphabet_option", question="Q\x00\x1b?", llm_output="\x00The answer is (B).")
    raw_line = json.dumps(good(f.name, 11, "alphabet_option", llm_output="@@")).replace(
        "@@", "The\x01 answer\x1f is\t(B).\r"
    )
    f.jsonl("controls.jsonl", [(good(f.name, 0), OK), (escaped, OK), (raw_line, OK), (good(f.name, 1), OK)])
    return f.case(
        "JSONL: escaped `\\u0000`/`\\u001b`, and raw 0x01, 0x1f, TAB, CR bytes inside strings",
        "all judged (control characters in strings are text; only LF ends a line)",
    )


@kind("unicode-line-separators-jsonl")
def unicode_line_separators(f: _Folder) -> Case:
    lines: list[tuple[Any, Any]] = [(good(f.name, 0), OK)]
    for j, sep in enumerate(["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]):
        row = good(f.name, 10 + j, "alphabet_option", llm_output="@@")
        lines.append(
            (json.dumps(row, ensure_ascii=False).replace("@@", f"First line{sep}The answer is (B)."), OK)
        )
    lines.append((good(f.name, 1), OK))
    f.jsonl("separators.jsonl", lines)
    return f.case(
        "JSONL strings holding raw U+2028, U+2029, U+0085, VT, FF, FS, GS, RS (line breaks to str.splitlines)",
        "all judged, one row per LF-terminated line",
    )


@kind("crlf-jsonl")
def crlf_jsonl(f: _Folder) -> Case:
    f.jsonl("crlf.jsonl", [(good(f.name, i), OK) for i in range(4)], newline=b"\r\n", final_newline=False)
    return f.case("JSONL with CRLF line endings and no final newline", "all judged")


@kind("utf8-bom-jsonl")
def utf8_bom_jsonl(f: _Folder) -> Case:
    first = b"\xef\xbb\xbf" + json.dumps(good(f.name, 0)).encode()
    f.jsonl("bom.jsonl", [(first, OK), (good(f.name, 1), OK), (good(f.name, 2), OK)])
    return f.case(
        "JSONL starting with a UTF-8 byte order mark (as Windows tools write it)",
        "all judged: the BOM is not part of the first record",
    )


@kind("malformed-jsonl")
def malformed_jsonl(f: _Folder) -> Case:
    obj = "JSON object"
    lines: list[tuple[Any, Any]] = [
        (good(f.name, 0), OK),
        ("", BLANK),
        ("{broken", "not valid JSON"),
        ("   ", BLANK),
        ("[1, 2]", obj),
        ("42", obj),
        ("null", obj),
        ('"just a string"', obj),
        ("\t", BLANK),
        (json.dumps(good(f.name, 10)) + " trailing", "not valid JSON"),
        (json.dumps(good(f.name, 11)) + json.dumps(good(f.name, 12)), "not valid JSON"),  # two on one line
        (good(f.name, 1), OK),
        ("", BLANK),
        (
            '{"record_id": "malformed-jsonl/99", "model": "model-a", "ques',
            "not valid JSON",
        ),  # cut off, no newline
    ]
    f.jsonl("malformed.jsonl", lines, final_newline=False)
    return f.case(
        "JSONL: broken JSON, arrays/numbers/null/strings instead of objects, blank and whitespace lines, "
        "trailing garbage, two objects on one line, a cut-off last line without newline",
        "blank lines ignored (not rows); every other bad line rejected: not valid JSON / expected a JSON object",
        (("not valid JSON", obj),),
    )


@kind("empty-parquet-0-byte", file_level=True)
def empty_parquet(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.bad_file("empty.parquet", b"")
    return f.case("a 0-byte `.parquet` file", "file cannot be read: skipped (listed) / BadInputFile")


@kind("empty-jsonl-0-byte")
def empty_jsonl(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.jsonl("empty.jsonl", [])
    f.jsonl("blank-lines.jsonl", [("", BLANK), ("  ", BLANK), ("", BLANK)])
    return f.case(
        "a 0-byte `.jsonl` file; a `.jsonl` file of blank lines",
        "read as 0 rows (an empty JSONL file is valid); not skipped",
    )


@kind("parquet-schema-only")
def parquet_schema_only(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.table("zero-rows.parquet", pa.Table.from_pylist([good(f.name, 0)]).slice(0, 0), [])
    return f.case("a Parquet file with the full schema and 0 rows", "read as 0 rows; not skipped")


@kind("truncated-parquet", file_level=True)
def truncated_parquet(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    whole = f.dir / "whole.tmp"
    pq.write_table(pa.Table.from_pylist([good(f.name, i) for i in range(10, 40)]), whole)
    data = whole.read_bytes()
    whole.unlink()
    f.bad_file("truncated.parquet", data[: len(data) // 2])
    return f.case(
        "a Parquet file cut to half its bytes (no footer)",
        "file cannot be read: skipped (its rows not counted) / BadInputFile",
    )


@kind("random-bytes-parquet", file_level=True)
def random_bytes_parquet(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.bad_file("garbage.parquet", random.Random(5).randbytes(4096))
    return f.case("4 KiB of random bytes named `.parquet`", "file cannot be read: skipped / BadInputFile")


@kind("corrupt-row-group")
def corrupt_row_group(f: _Folder) -> Case:
    # Three row groups of 4 rows; the page header of `llm_output` in row group 1 overwritten.
    rows = [good(f.name, i) for i in range(12)]
    outcomes = [OK] * 4 + [("row group",)] * 4 + [OK] * 4
    path = f.table(
        "pages.parquet",
        pa.Table.from_pylist(rows),
        outcomes,
        row_group_size=4,
        use_dictionary=False,
        compression="zstd",
    )
    md = pq.ParquetFile(path).metadata
    col = md.row_group(1).column(md.schema.names.index("llm_output"))
    data = bytearray(path.read_bytes())
    start = col.data_page_offset
    data[start : start + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return f.case(
        "a Parquet file whose middle row group has a corrupted data page (footer intact)",
        "the 4 rows of that row group rejected (reason names the row group); the other 8 judged; file not skipped",
        ("row group",),
    )


@kind("schema-drift")
def schema_drift(f: _Folder) -> Case:
    f.parquet("a.parquet", _goods(f))
    # b: record_id int64, the range as a list column, model dictionary-encoded, an extra column
    b_rows = [
        good(
            f.name,
            0,
            "categorical_label",
            record_id=920001 + i,
            standard_answer_range=CAT_RANGE,
            extra=i * 1.5,
        )
        for i in range(2)
    ]
    b = pa.Table.from_pylist(b_rows)
    b = b.set_column(b.schema.get_field_index("model"), "model", b.column("model").dictionary_encode())
    f.table("b.parquet", b, [OK, OK])
    # c: no question column, llm_output as large_string, columns in another order
    c_rows = [without(good(f.name, 20 + i), "question") for i in range(2)]
    c = pa.Table.from_pylist(c_rows)
    c = c.set_column(
        c.schema.get_field_index("llm_output"), "llm_output", c.column("llm_output").cast(pa.large_string())
    )
    c = c.select(list(reversed(c.column_names)))
    f.table("c.parquet", c, [("missing field", "'question'")] * 2)
    return f.case(
        "three Parquet files in one folder with different column sets, orders and types "
        "(int64 id, list range, dictionary and large_string columns, an extra column, no question column)",
        "read file by file: type drift judged as text, the file without `question` rejected: missing field",
        ("missing field",),
    )


@kind("duplicate-ids-within-file")
def duplicates_within(f: _Folder) -> Case:
    dup = "duplicate record_id"
    rows = [
        (good(f.name, 1), OK),
        (good(f.name, 2), OK),
        (good(f.name, 1, llm_output="Answer: C"), dup),
        (good(f.name, 3), OK),
        (good(f.name, 1, llm_output="Answer: D"), dup),
    ]
    f.parquet("dups.parquet", rows)
    return f.case(
        "the same record_id three times in one file (different responses)",
        "first occurrence judged; the later two rejected: duplicate record_id",
        (dup,),
    )


@kind("duplicate-ids-across-files")
def duplicates_across(f: _Folder) -> Case:
    dup = "duplicate record_id"
    f.parquet("a.parquet", [(good(f.name, 1), OK), (good(f.name, 2), OK)])
    f.parquet("b.parquet", [(good(f.name, 2, llm_output="Answer: C"), dup), (good(f.name, 3), OK)])
    f.jsonl("c.jsonl", [(good(f.name, 4), OK), (good(f.name, 1, llm_output="Answer: D"), dup)])
    return f.case(
        "the same record_ids in two Parquet files and a JSONL file of one folder",
        "first occurrence (sorted paths, then rows) judged; later ones rejected: duplicate record_id",
        (dup,),
    )


@kind("truncated-gzip-jsonl", file_level=True)
def truncated_gzip(f: _Folder) -> Case:
    f.jsonl("good.jsonl.gz", [(good(f.name, i), OK) for i in range(2)])
    body = "\n".join(json.dumps(good(f.name, i)) for i in range(10, 60)).encode() + b"\n"
    data = gzip.compress(body, mtime=0)
    f.bad_file("truncated.jsonl.gz", data[: len(data) // 2])
    return f.case(
        "a gzip'ed JSONL file cut to half its bytes (next to a whole one)",
        "file cannot be read: skipped, none of its lines counted / BadInputFile",
    )


@kind("not-gzip-jsonl-gz", file_level=True)
def not_gzip(f: _Folder) -> Case:
    f.parquet("good.parquet", _goods(f))
    f.bad_file("plain.jsonl.gz", (json.dumps(good(f.name, 10)) + "\n").encode())
    return f.case("plain JSONL text named `.jsonl.gz`", "file cannot be read: skipped / BadInputFile")


@kind("ignored-files")
def ignored_files(f: _Folder) -> Case:
    f.parquet("part-00000.parquet", _goods(f))
    f.ignored("_SUCCESS", b"")
    f.ignored(".part-00000.parquet.crc", b"\x00\x01")
    f.ignored(".hidden.parquet", b"not parquet")
    f.ignored("_temporary/0/part-00001.parquet", b"half-written")
    f.ignored("notes.txt", b"hello")
    f.ignored("data.csv", b"record_id,question\n1,2\n")
    return f.case(
        "a Spark-style output folder: `_SUCCESS`, `.crc`, hidden and `_temporary/` files, `.txt`, `.csv`",
        "only part-00000.parquet read; nothing else read, counted or listed as skipped",
    )


def write_corpus(root: Path) -> list[Case]:
    """Write every kind under `root/<case-name>/`; the cases, in name order."""
    root.mkdir(parents=True, exist_ok=True)
    cases = []
    for name in CASE_NAMES:
        make, file_level = KINDS[name]
        case = make(_Folder(root, name))
        assert case.name == name and case.file_level == file_level, (name, case.file_level)
        cases.append(case)
    return cases


CASE_NAMES = sorted(KINDS)
FILE_LEVEL_CASES = sorted(name for name, (_, file_level) in KINDS.items() if file_level)


def input_paths(root: Path, cases: list[Case]) -> list[str]:
    """The job's `input.paths` for these cases under `root`: the root (Parquet found under it) and every
    JSONL file by name (format detection is per input path; a file listed twice is read once)."""
    jsonl = [str(root / c.name / n) for c in cases for n in c.inputs if n.endswith(JSONL_SUFFIXES)]
    return [str(root), *jsonl]


def case_paths(root: Path, case: Case) -> list[str]:
    """The data files of one case, by name."""
    return [str(root / case.name / n) for n in case.inputs]


def markdown_table(cases: list[Case]) -> str:
    lines = ["| kind | what is in the file | expected outcome |", "|---|---|---|"]
    for c in cases:
        lines.append(f"| `{c.name}` | {c.kind} | {c.expected} |")
    return "\n".join(lines)


if __name__ == "__main__":  # print the docs table
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(markdown_table(write_corpus(Path(tmp))))
