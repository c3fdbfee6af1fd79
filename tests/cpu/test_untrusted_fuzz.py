"""Every record field is untrusted text: property tests over the whole per-record path, without Ray.

validate/check/parse_answer_range -> render_prompt -> parse_output | rules extractor -> judge, alone and composed,
on arbitrary text: any code point (lone surrogates and NUL included), control and bidi characters, stop strings and
prompt markers, Python/LaTeX/shell/template code meant to create a canary file, deep nesting, huge strings. Each
call raises nothing but its documented exceptions, returns the documented types, takes under BOUND_S, and the
canary never appears. judging/test_bounds.py already fuzzes judge() on math/text answers with fixed ranges; here
the range, the key_answer_type and the other functions are fuzzed too.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xfinder_ray.extractors import get_record_extractor
from xfinder_ray.judging import MATH_COMPARATORS, judge, warm_up
from xfinder_ray.parsing import MAX_PARSE_CHARS, parse_output
from xfinder_ray.prompts import (
    CHARS_PER_TOKEN,
    CHECKPOINTS,
    FORMATS,
    TRUNCATION_MARKER,
    RenderedPrompt,
    prompt_format,
    render,
    render_prompt,
)
from xfinder_ray.records import (
    FIELDS,
    KEY_ANSWER_TYPES,
    MATH_ANSWER_RANGE,
    MAX_FIELD_CHARS,
    NO_VALID_ANSWER,
    InvalidRecord,
    Record,
    check,
    correct_answer_in_range,
    parse_answer_range,
    range_repr,
    validate,
)

BOUND_S = 3.0  # per call; generous for a loaded 2-core machine (judge's own bound is ~2 s)
CANARY = Path(tempfile.gettempdir()) / f"xfinder_fuzz_canary_{os.getpid()}"
_C = str(CANARY)

# Strings that would create the canary if anything along the path evaluated, executed, rendered or shelled them.
CODE = [
    f"__import__('os').system('touch {_C}')",
    f"exec(\"open('{_C}', 'w').close()\")",
    f"eval(\"__import__('os').system('touch {_C}')\")",
    f"(lambda: __import__('os').system('touch {_C}'))()",
    f"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen'][0](['touch', '{_C}'])",
    f"__import__('pathlib').Path('{_C}').touch()",
    f"$(touch {_C})",
    f"`touch {_C}`",
    f"; touch {_C} #",
    f"{{{{ cycler.__init__.__globals__.os.system('touch {_C}') }}}}",
    f"\\immediate\\write18{{touch {_C}}}",
    f"\\input{{|touch {_C}}}",
    f"!!python/object/apply:os.system ['touch {_C}']",
    f"{{'a': 1, 'b': __import__('os').system('touch {_C}')}}",
    f"[__import__('os').system('touch {_C}')]",
    f"\\boxed{{__import__('os').system('touch {_C}')}}",
    f"$__import__('os').system('touch {_C}')$",
    "${oc.env:HOME}",
    "{'a': 1}",
    '{"a": [1, {"b": null}]}',
    "(1, 2)",
    "{1, 2}",
    "b'bytes'",
    "1e999999",
    "[1e999999]",
    "-" * 200 + "1",
    "[" + "9" * 5000 + "]",
    "lambda: 0",
    "sympy.sympify('x')",
]
FRAGMENTS = [
    "\\frac{", "}", "{", "\\frac{1}{\\frac{1}{\\frac{1}{2}}}", "\\sqrt{", "\\boxed{", "\\text{", "\\left(", "\\right)",
    "^", "_", "$", "$$", "\\(", "\\)", "\\[", "\\]", "[", "]", "(", ")", "'", '"', '"""', "\\", "\\\\", "\n", "\r",
    "\r\n", "\t", "\x00", "\x01", "\x1b[31m", "\x7f", "\x85", "\u2028", "\u200b", "\u202e", "\ufeff", "\ufffd",
    "\ud800", "\udfff", "\U0001f600", "e\u0301", "Ａ", "（Ｂ）", "：", "答案是", "ﬁ", "İ", "ß", "Σ", "<|im_end|>",
    "<|endoftext|>", "<|eot_id|>", "<|start_header_id|>", "</think>", "<think>", "Key extracted answer:", "Answer:",
    "The answer is ", "[No valid answer]", "no valid answer", "**", "####", "Question:", "A", "B", "(C)",
    "Option D", "1", "0.5", "-3", "1,000", "x^2", "{input}", "{system}", "{0}", "%s", "%(x)s", "{{", "}}",
    "\\u0000", "None", "nan",
]  # fmt: skip
_ANY_CHAR = st.characters(exclude_categories=())  # every code point, lone surrogates included
_SMALL = st.one_of(
    st.text(_ANY_CHAR, max_size=40),
    st.lists(
        st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(CODE), st.text(_ANY_CHAR, max_size=4)),
        max_size=12,
    ).map("".join),
)
_NESTED = st.builds(
    lambda pair, n, core: pair[0] * n + core + pair[1] * n,
    st.sampled_from(
        [
            ("(", ")"),
            ("[", "]"),
            ("{", "}"),
            ("\\frac{1}{", "}"),
            ("\\sqrt{", "}"),
            ("\\left(", "\\right)"),
            ("{'a': ", "}"),
            ("[[", "]]"),
            ("\\boxed{", "}"),
            ("$", "$"),
        ]
    ),  # fmt: skip
    st.integers(1, 3000),
    st.sampled_from(["1", "x", "", "A", CODE[0]]),
)
_HUGE = st.builds(
    lambda frag, n: frag * n,
    st.sampled_from(
        [
            "7",
            "x",
            "\\frac{1}{2}+",
            "{",
            "(",
            "[",
            "\\boxed{",
            "$",
            "A ",
            "not ",
            "Answer: ",
            "\x00",
            "\ud800",
            "答案是",
            "<|im_end|>",
            "The answer is B. ",
            CODE[0] + " ",
        ]
    ),  # fmt: skip
    st.integers(1_000, 60_000),
)
TEXT = st.one_of(_SMALL, _SMALL, _SMALL, _NESTED, _HUGE)
_NONBLANK = TEXT.map(lambda s: s if s.strip() else "?" + s)  # past the empty-field check, to reach the rest
_NAME = _SMALL.map(lambda s: "n" + s[:400])
KATS = st.one_of(
    st.sampled_from(KEY_ANSWER_TYPES),
    st.sampled_from([" math ", "MATH", "essay", "", "alphabet_option\x00", "short_text\ud800"]),
    st.text(_ANY_CHAR, max_size=10),
)
_LETTERS = st.one_of(
    st.sampled_from(list("ABCDEFGH")), st.text(_ANY_CHAR, min_size=1, max_size=3).filter(lambda s: s.strip())
)
_OPTIONS = st.lists(st.tuples(_LETTERS, _SMALL), min_size=1, max_size=6)
_CANDIDATES = st.lists(_SMALL, min_size=1, max_size=6)
RAW_RANGES = st.one_of(
    st.none(),
    TEXT,
    st.sampled_from(CODE),
    _CANDIDATES,
    _OPTIONS.map(lambda xs: [list(x) for x in xs]),
    _CANDIDATES.map(json.dumps),
    _OPTIONS.map(repr),
    _CANDIDATES.map(lambda xs: np.array(xs, dtype=object)),
    st.lists(
        st.one_of(st.integers(), st.floats(), st.none(), st.booleans(), _SMALL, st.lists(_SMALL, max_size=3)),
        max_size=5,
    ),
    st.dictionaries(_SMALL, _SMALL, max_size=3),
    st.integers(),
    st.floats(),
    st.just([]),
    st.just([["A", "x"]] * 1001),
    st.just([[" \x85", "blank letter"], ["B", "b"]]),
)
FIELD_VALUES = st.one_of(
    TEXT,
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
    st.lists(_SMALL, max_size=2),
    st.binary(max_size=8),
)
SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


@pytest.fixture(scope="module", autouse=True)
def _setup():
    CANARY.unlink(missing_ok=True)
    warm_up()  # the math worker's start is not a per-call cost
    yield
    assert not CANARY.exists(), "untrusted text was executed"


def timed(fn, *args, **kwargs) -> Any:
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        elapsed = time.perf_counter() - start
        assert elapsed < BOUND_S, f"{getattr(fn, '__name__', fn)} took {elapsed:.2f}s"
        assert not CANARY.exists(), f"{getattr(fn, '__name__', fn)} executed untrusted text"


def assert_range_type(answer_range: Any, kat: str) -> None:
    if kat == "math":
        assert answer_range == MATH_ANSWER_RANGE
    elif kat == "alphabet_option":
        assert isinstance(answer_range, list) and answer_range
        assert all(
            isinstance(p, tuple)
            and len(p) == 2
            and all(isinstance(x, str) for x in p)
            and p[0].strip() == p[0]
            for p in answer_range
        )
    else:
        assert (
            isinstance(answer_range, list) and answer_range and all(isinstance(x, str) for x in answer_range)
        )


def allowed_answers(kat: str, answer_range: Any) -> set[str] | None:
    """What an extractor/parser may return for a choice type (None: any string, for math)."""
    if kat == "math":
        return None
    if kat == "alphabet_option":
        return {letter for letter, _ in answer_range} | {NO_VALID_ANSWER}
    return set(answer_range) | {NO_VALID_ANSWER}


@st.composite
def raw_rows(draw) -> dict[str, Any]:
    """A record as read from a file: mostly well-formed with untrusted text, sometimes broken in one field."""
    kat = draw(st.sampled_from(KEY_ANSWER_TYPES))
    if kat == "alphabet_option":
        rng: Any = draw(_OPTIONS)
        correct = draw(st.sampled_from([letter for letter, _ in rng] + [text for _, text in rng]))
        rng = [list(p) for p in rng]
    elif kat == "math":
        rng, correct = MATH_ANSWER_RANGE, draw(_NONBLANK)
    else:
        rng = draw(_CANDIDATES)
        correct = draw(st.sampled_from(rng))
        if not correct.strip():
            rng = [*rng, "x" + correct]
            correct = rng[-1]
    encode = draw(st.sampled_from([json.dumps, repr, lambda x: x]))
    row: dict[str, Any] = {
        "record_id": draw(_NAME),
        "model": draw(_NAME),
        "task": draw(_NAME),
        "key_answer_type": kat,
        "question": draw(_NONBLANK),
        "llm_output": draw(TEXT),
        "standard_answer_range": encode(rng) if kat != "math" else rng,
        "correct_answer": correct,
    }
    mutation = draw(st.sampled_from(["none", "none", "drop", "replace", "alias", "extra"]))
    name = draw(st.sampled_from(FIELDS))
    if mutation == "drop":
        del row[name]
    elif mutation == "replace":
        row[name] = draw(
            st.one_of(FIELD_VALUES, RAW_RANGES) if name == "standard_answer_range" else FIELD_VALUES
        )
    elif mutation == "alias":
        for canonical, alias in (("model", "model_name"), ("task", "dataset"), ("record_id", "id")):
            row[alias] = row.pop(canonical)
    else:
        row[draw(_SMALL)] = draw(FIELD_VALUES)
    return row


# ------------------------------------------------------------------------------------------------ records


@settings(max_examples=200, **SETTINGS)
@given(row=raw_rows())
def test_validate_and_check_agree_and_only_raise_invalid_record(row: dict[str, Any]) -> None:
    reason = timed(check, row)
    try:
        rec = timed(validate, row)
    except InvalidRecord as e:
        assert reason == str(e) and isinstance(reason, str) and reason
        assert len(reason) < 1000  # written to every reject row
        return
    assert reason is None and isinstance(rec, Record)
    for name in ("record_id", "model", "task", "question", "llm_output", "correct_answer"):
        value = getattr(rec, name)
        assert isinstance(value, str) and len(value) <= MAX_FIELD_CHARS[name]
    assert rec.key_answer_type in KEY_ANSWER_TYPES
    assert_range_type(rec.answer_range, rec.key_answer_type)
    assert correct_answer_in_range(rec.correct_answer, rec.answer_range, rec.key_answer_type)


@settings(max_examples=200, **SETTINGS)
@given(value=RAW_RANGES, kat=KATS)
def test_parse_answer_range_types_or_invalid_record(value: Any, kat: str) -> None:
    try:
        parsed = timed(parse_answer_range, value, kat)
    except InvalidRecord as e:
        assert str(e)
        return
    assert kat in KEY_ANSWER_TYPES
    assert_range_type(parsed, kat)
    assert isinstance(timed(range_repr, parsed), str)


def test_fields_that_cannot_be_strings_are_invalid_records() -> None:
    """Values whose str() fails (an int past Python's digit limit) are rejected, not raised as ValueError."""
    base = {
        "record_id": "r1",
        "model": "m",
        "task": "t",
        "key_answer_type": "short_text",
        "question": "q",
        "llm_output": "a",
        "standard_answer_range": ["a", "b"],
        "correct_answer": "a",
    }
    for name in ("record_id", "question", "llm_output", "correct_answer"):
        row = dict(base, **{name: 10**5000})
        with pytest.raises(InvalidRecord, match=name):
            validate(row)
        assert isinstance(check(row), str)


# ------------------------------------------------------------------------------------------------ prompts


def _char_tokenizer(text: str) -> list[int]:
    return [ord(c) for c in text]


def _char_detokenizer(ids: list[int]) -> str:
    return "".join(map(chr, ids))


@settings(max_examples=150, **SETTINGS)
@given(
    question=TEXT,
    llm_output=TEXT,
    answer_range=st.one_of(st.just(MATH_ANSWER_RANGE), _CANDIDATES, _OPTIONS),
    checkpoint=st.sampled_from(CHECKPOINTS),
    fmt=st.sampled_from(FORMATS),
    budget=st.integers(1, 4000),
    exact=st.booleans(),
)
def test_render_prompt_keeps_untrusted_text_literal(
    question: str, llm_output: str, answer_range: Any, checkpoint: str, fmt: str, budget: int, exact: bool
) -> None:
    tok = dict(tokenizer=_char_tokenizer, detokenizer=_char_detokenizer) if exact else {}
    out = timed(
        render_prompt,
        question,
        llm_output,
        answer_range,
        checkpoint=checkpoint,
        fmt=fmt,
        max_prompt_tokens=budget,
        **tok,
    )
    assert isinstance(out, RenderedPrompt) and isinstance(out.prompt, str) and isinstance(out.truncated, bool)
    # Braces, {input}/{system} and code in the record stay literal: the question is always there verbatim,
    # the range as rendered, and the response whole unless the prompt was cut.
    assert f'Question: """{question}"""' in out.prompt
    assert f"Answer range: {range_repr(answer_range)}\n\n" in out.prompt
    if not out.truncated:
        assert f'Output sentences: """{llm_output}"""' in out.prompt
    else:
        assert TRUNCATION_MARKER in out.prompt
    assert out.prompt.endswith(("<|Bot|>:", "<|start_header_id|>assistant<|end_header_id|>\n\n"))
    # Within budget whenever the budget can hold the prompt without the response.
    fixed = len(render(prompt_format(checkpoint, fmt), question, "", answer_range)) + len(TRUNCATION_MARKER)
    size = len(out.prompt)
    limit = budget if exact else int(budget * CHARS_PER_TOKEN)
    assert size <= (max(limit, fixed) if out.truncated else limit)
    assert out.prompt_tokens == (size if exact else None)


@settings(max_examples=60, **SETTINGS)
@given(
    checkpoint=st.one_of(st.sampled_from(CHECKPOINTS), _SMALL),
    fmt=st.one_of(st.sampled_from(FORMATS), _SMALL),
)
def test_render_prompt_rejects_unknown_names_with_value_error(checkpoint: str, fmt: str) -> None:
    try:
        out = render_prompt("q", "o", ["a"], checkpoint=checkpoint, fmt=fmt)
    except ValueError:
        return
    assert checkpoint in CHECKPOINTS and fmt in FORMATS and isinstance(out.prompt, str)


# ------------------------------------------------------------------------------------------------ parsing


@settings(max_examples=200, **SETTINGS)
@given(
    raw=st.one_of(TEXT, st.none()),
    kat=st.sampled_from(KEY_ANSWER_TYPES),
    candidates=_CANDIDATES,
    options=_OPTIONS,
)
def test_parse_output_returns_a_range_member_or_no_valid_answer(raw, kat, candidates, options) -> None:
    answer_range = {"math": MATH_ANSWER_RANGE, "alphabet_option": options}.get(kat, candidates)
    answer_range = parse_answer_range(answer_range, kat)  # the parsed form the pipeline passes
    out = timed(parse_output, raw, kat, answer_range)
    assert isinstance(out, str)
    allowed = allowed_answers(kat, answer_range)
    if allowed is None:
        assert len(out) <= MAX_PARSE_CHARS
    else:
        assert out in allowed, (out, answer_range)


# ------------------------------------------------------------------------------------------------ rules


RULES = get_record_extractor("rules")


@settings(max_examples=150, **SETTINGS)
@given(
    question=TEXT,
    llm_output=TEXT,
    kat=st.sampled_from(KEY_ANSWER_TYPES),
    candidates=_CANDIDATES,
    options=_OPTIONS,
)
def test_rules_extractor_returns_a_range_member_or_no_valid_answer(
    question, llm_output, kat, candidates, options
):
    answer_range = parse_answer_range(
        {"math": MATH_ANSWER_RANGE, "alphabet_option": options}.get(kat, candidates), kat
    )
    correct = answer_range[0][0] if kat == "alphabet_option" else "1" if kat == "math" else answer_range[0]
    rec = Record("r", "m", "t", kat, question, llm_output, answer_range, correct)
    out = timed(RULES, rec)
    assert isinstance(out, str)
    allowed = allowed_answers(kat, answer_range)
    if allowed is not None:
        assert out in allowed, (out, answer_range)


# ------------------------------------------------------------------------------------------------ judging


@settings(max_examples=150, **SETTINGS)
@given(
    kat=KATS,
    raw_range=RAW_RANGES,
    extracted=st.one_of(TEXT, st.none(), st.integers()),
    correct=st.one_of(TEXT, st.none(), st.floats()),
    comparator=st.sampled_from(MATH_COMPARATORS),
)
def test_judge_on_untrusted_ranges_and_types(kat, raw_range, extracted, correct, comparator) -> None:
    """A bool, or InvalidRecord exactly when the key_answer_type or the range is unusable."""
    try:
        parse_answer_range(raw_range, kat)
        range_ok = True
    except InvalidRecord:
        range_ok = False
    try:
        verdict = timed(judge, kat, raw_range, extracted, correct, math=comparator)
    except InvalidRecord:
        assert not range_ok
        return
    assert range_ok and isinstance(verdict, bool)
    if isinstance(extracted, str) and extracted.strip().casefold() == NO_VALID_ANSWER.casefold():
        assert verdict is False


@settings(max_examples=40, **SETTINGS)
@given(name=_SMALL)
def test_judge_unknown_comparator_is_a_value_error(name: str) -> None:
    try:
        judge("short_text", ["a"], "a", "a", math=name)
    except InvalidRecord:  # a ValueError too, but not this one
        pytest.fail("InvalidRecord for a comparator name")
    except ValueError as e:
        assert "comparator" in str(e)
        return
    assert name in MATH_COMPARATORS


_PLAIN = st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,18}[A-Za-z0-9]", fullmatch=True).filter(
    lambda s: " ".join(s.split()).casefold() != "no valid answer"
)


@settings(max_examples=80, **SETTINGS)
@given(
    candidates=st.lists(_PLAIN, min_size=1, max_size=5, unique_by=lambda s: " ".join(s.split()).casefold()),
    pick=st.integers(0, 4),
    noise=st.sampled_from(["", "<|im_end|>junk", "\n", " ", "<|endoftext|>" + CODE[0]]),
    comparator=st.sampled_from(MATH_COMPARATORS),
    kat=st.sampled_from(["short_text", "categorical_label"]),
)
def test_a_clean_answer_survives_parsing_and_is_judged_correct(
    candidates, pick, noise, comparator, kat
) -> None:
    correct = candidates[pick % len(candidates)]
    answer_range = parse_answer_range(json.dumps(candidates), kat)
    key = timed(parse_output, correct + noise, kat, answer_range)
    assert key == correct
    assert timed(judge, kat, json.dumps(candidates), key, correct, math=comparator) is True


# ------------------------------------------------------------------------------------------------ composed


@settings(max_examples=120, **SETTINGS)
@given(
    row=raw_rows(),
    model_text=st.one_of(
        TEXT, st.sampled_from(["{correct}", "Key extracted answer: {correct}<|im_end|>", "{prompt_tail}"])
    ),
    checkpoint=st.sampled_from(CHECKPOINTS),
    fmt=st.sampled_from(FORMATS),
    comparator=st.sampled_from(MATH_COMPARATORS),
)
def test_composed_record_path(row, model_text, checkpoint, fmt, comparator) -> None:
    """validate -> render_prompt -> (a model's text) -> parse_output -> judge, and validate -> rules -> judge."""
    try:
        rec = timed(validate, row)
    except InvalidRecord:
        assert isinstance(check(row), str)
        return
    rendered = timed(
        render_prompt, rec.question, rec.llm_output, rec.answer_range, checkpoint=checkpoint, fmt=fmt
    )
    assert isinstance(rendered.prompt, str)
    raw = model_text.replace("{correct}", rec.correct_answer).replace("{prompt_tail}", rendered.prompt[-300:])
    allowed = allowed_answers(rec.key_answer_type, rec.answer_range)
    for key in (timed(parse_output, raw, rec.key_answer_type, rec.answer_range), timed(RULES, rec)):
        assert isinstance(key, str)
        if allowed is not None:
            assert key in allowed
        verdict = timed(
            judge, rec.key_answer_type, rec.answer_range, key, rec.correct_answer, math=comparator
        )
        assert isinstance(verdict, bool)
        if (
            rec.key_answer_type != "math"
        ):  # (a math verdict may be a timeout's False; the range plays no part)
            # The raw range from the file gives the same verdict as the parsed one.
            raw_range = row.get("standard_answer_range")
            raw_verdict = timed(
                judge, rec.key_answer_type, raw_range, key, rec.correct_answer, math=comparator
            )
            assert raw_verdict is verdict


# ------------------------------------------------------------------------------------------------ the CLI


def test_cli_record_commands_survive_lone_surrogates() -> None:
    """JSON escapes like "\\ud800" decode to lone surrogates: the line is processed and the output is valid JSON
    (escaped) instead of a UnicodeEncodeError that stops the command before the next lines."""
    from xfinder_ray import cli

    rows = [
        {
            "record_id": "1",
            "model": "m\ud800",
            "task": "t",
            "key_answer_type": "short_text",
            "question": "q\udfff" + CODE[0],
            "llm_output": "The answer is a.\ud800",
            "standard_answer_range": ["a", "b\ud800"],
            "correct_answer": "a",
            "extracted_answer": "a\ud800",
        },
        {"record_id": "2", "question": None},
    ]
    stdin = io.StringIO("".join(json.dumps(r) + "\n" for r in rows))
    for name in ("validate", "prompt", "extract", "judge"):
        stdin.seek(0)
        buf = io.BytesIO()
        stdout = io.TextIOWrapper(buf, encoding="utf-8", newline="\n")
        stderr = io.StringIO()
        args = cli.build_parser().parse_args([name])
        cli.run_lines(args.make(args), stdin, stdout, stderr)
        stdout.flush()
        lines = buf.getvalue().decode("utf-8").splitlines()
        assert len(lines) == 2, (name, lines, stderr.getvalue())
        first = json.loads(lines[0])
        assert first["question"] == rows[0]["question"] and first["model"] == "m\ud800"  # kept exactly
    assert not CANARY.exists()
