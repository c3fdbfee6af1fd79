"""ZeroEval (WildEval/ZeroEval) published result files -> Samples.

ZeroEval keeps one file per model and task, `result_dirs/<task>/<model>.json`: a JSON list of records
`{session_id, chat_history, model_input, output: [response, ...], generator, configs, dataset, id, ...}`
with the task's own fields: `question` + `answer` ("# 18") for `gsm`, `problem` + `answer` for
`math-l5`, `question` + `choices` (option texts) + `correct_answer` (the text of one of them) for
`mmlu-redux` (src/evaluation/math_eval.py and mcqa_eval.py read exactly these). Read here:

- `llm_output`: `output[0]`, the first generation (what ZeroEval scores); older MMLU-Redux files keep
  `output` / `choices` as Python list reprs, which are parsed (never evaluated).
- `task`: GSM8K, MATH-L5, MMLU-Redux (TASKS; the folder name, else the record's `dataset`);
  `record_id`: `<model>::<task>::<session_id>`; `model`: the file name without `.json`, as ZeroEval
  names it (its summaries then rename a few, `model_name_replacement`).
- GSM8K / MATH-L5: `math`, the reference `answer` with `#` removed (as math_eval.py does).
  MMLU-Redux: `alphabet_option`, the range `[["A", choice 0], ...]` from `choices`, the letter of
  `correct_answer` (its first position, `choices.index`, as mcqa_eval.py does); the question is written
  with its options (`...\\nAnswer Choices: (A) ... (B) ...`).
- `source_judgment`: ZeroEval's own verdict, computed by `verdict()` below, a line-by-line port of
  src/evaluation/eval_utils.py + math_eval.py / mcqa_eval.py (at 8c1485e), so the framework's accuracy
  is the one ZeroEval publishes: over every record of a file, a response it cannot parse counting as
  wrong. The one change: math_eval.py calls `eval()` on the model's answer when it contains `/`; here a
  bounded arithmetic evaluator over the same Python grammar does it (the model's text is never
  executed). Checked against ZeroEval's own scripts on all 89,493 records of the published files read
  in docs/examples/rescore_published.md: identical verdicts.

Other task folders (crux, zebra-grid, alpaca_eval, ...) are left out with a note: their answers are not
one key answer of the four kinds (zebra-grid: a whole grid; crux: code output).
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from xfinder_ray.importers.core import Found, ImportInputError, Sample, list_tree
from xfinder_ray.storage import resolve, uri_of

FRAMEWORK = "zeroeval"
# ZeroEval task folder -> task name; MCQA: the tasks scored by mcqa_eval.py.
TASKS = {"gsm": "GSM8K", "math-l5": "MATH-L5", "mmlu-redux": "MMLU-Redux"}
MCQA = frozenset({"mmlu-redux"})
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
METRIC = {False: "math_eval.py", True: "mcqa_eval.py"}


@dataclass
class ResultFile:
    uri: str
    path: str
    fs: pafs.FileSystem
    folder: str | None  # the ZeroEval task folder (gsm, math-l5, mmlu-redux), None for a lone file
    model: str  # the file name without .json: ZeroEval's model name


def find_files(paths: list[str], storage: Any = None) -> Found[ResultFile]:
    """Every <task>/<model>.json under `paths` whose folder is a task in TASKS (ZeroEval's result_dirs/,
    one task folder of it, or result files named one by one)."""
    notes: list[str] = []
    files: list[ResultFile] = []
    left_out: dict[str, int] = {}
    for p in paths:
        loc = resolve(p, storage)
        listed = list_tree(loc, (".json",))
        picked = 0
        for path in listed:
            parts = path.rsplit("/", 2)
            folder = parts[-2] if len(parts) >= 2 else ""
            name = parts[-1]
            if folder not in TASKS:
                if path != loc.path:  # summaries, other tasks' folders, legacy/
                    if not name.endswith(".summary.json") and not name.startswith("summary"):
                        left_out[folder] = left_out.get(folder, 0) + 1
                    continue
                folder = None  # a file named by itself: its task from the records' `dataset`
            files.append(ResultFile(uri_of(loc, path), path, loc.fs, folder, name[: -len(".json")]))
            picked += 1
        if not picked:
            raise ImportInputError(
                f"no ZeroEval result files <task>/<model>.json under {p!r} for the tasks "
                f"{', '.join(TASKS)} (pass ZeroEval's result_dirs/, a task folder or result files)"
            )
    if left_out:
        notes.append(
            "left out "
            + ", ".join(f"{n} file(s) in {f or '.'}/" for f, n in sorted(left_out.items()))
            + f": only the tasks {', '.join(TASKS)} are imported"
        )
    return Found(files, notes)


def _as_list(value: Any) -> Any:
    """A list, or the list an older file keeps as its Python repr (parsed, never evaluated)."""
    if isinstance(value, str) and value.startswith("["):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    return value


def read(found: Found[ResultFile], *, model: str | None = None, notes: list[str], **_) -> Iterator[Sample]:
    for f in found.files:
        yield from _read_file(f, model or f.model)


def _read_file(f: ResultFile, model: str) -> Iterator[Sample]:
    task = TASKS.get(f.folder or "", f.folder)
    try:
        with f.fs.open_input_stream(f.path) as fh:
            data = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        yield Sample(FRAMEWORK, f.uri, "*", model, task, problem=f"not a readable ZeroEval result file: {e}")
        return
    if not isinstance(data, list):
        yield Sample(
            FRAMEWORK, f.uri, "*", model, task,
            problem=f"not a ZeroEval result file (a {type(data).__name__}, expected a list of records)",
        )  # fmt: skip
        return
    for i, item in enumerate(data):
        yield _sample(f, model, i, item)


def _sample(f: ResultFile, model: str, i: int, item: Any) -> Sample:
    if not isinstance(item, dict):
        return Sample(
            FRAMEWORK, f.uri, f"#{i}", model, TASKS.get(f.folder or ""), problem="record is not an object"
        )
    folder = f.folder or str(item.get("dataset") or "")
    task = TASKS.get(folder, folder or None)
    sid = item.get("session_id", item.get("id"))
    index = f"#{i}" if sid is None else str(sid)
    s = Sample(FRAMEWORK, f.uri, index, model, task, metric=METRIC[folder in MCQA])
    if sid is None:
        s.problem = "no session_id"
        return s
    if folder not in TASKS:
        s.problem = f"dataset {folder!r} is not one of the imported ZeroEval tasks ({', '.join(TASKS)})"
        return s
    output = _as_list(item.get("output"))
    if not isinstance(output, list):
        s.problem = "`output` is not a list of generations"
        return s
    if not output or not isinstance(output[0], str):
        s.problem = "`output` has no first generation (text)" if not output else "`output[0]` is not text"
        return s
    s.response = output[0]
    if folder in MCQA:
        return _mcqa(s, item, f.model)
    return _math(s, item, f.model)


def _math(s: Sample, item: dict[str, Any], zeroeval_model: str) -> Sample:
    question = item.get("question", item.get("problem"))
    s.prompt = question if isinstance(question, str) else None
    answer = item.get("answer")
    if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
        s.problem = "no reference `answer`"
        return s
    s.target = str(answer).replace("#", "").strip()  # math_eval.py: item["answer"].replace("#", "").strip()
    if s.prompt is None:
        s.problem = "no `question` / `problem` text"
        return s
    s.verdict = math_verdict(zeroeval_model, s.response, s.target)
    return s


def _mcqa(s: Sample, item: dict[str, Any], zeroeval_model: str) -> Sample:
    choices = _as_list(item.get("choices"))
    correct = item.get("correct_answer")
    question = item.get("question")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
        s.problem = "`choices` is not a list of option texts"
        return s
    if len(choices) > len(LETTERS):
        s.problem = f"{len(choices)} choices; at most {len(LETTERS)} can be lettered"
        return s
    if not isinstance(question, str):
        s.problem = "no `question` text"
        return s
    s.prompt = (
        question.strip()
        + "\nAnswer Choices: "
        + " ".join(f"({LETTERS[i]}) {c}" for i, c in enumerate(choices))
    )
    if correct not in choices:
        s.problem = f"correct_answer {str(correct)[:80]!r} is not one of the choices"
        return s
    label = LETTERS[choices.index(correct)]  # mcqa_eval.py: the first option with that text
    s.target = label
    s.doc = {"choices": choices}
    s.verdict = mcqa_verdict(zeroeval_model, s.response, label)
    return s


# --- ZeroEval's own scoring: src/evaluation/eval_utils.py, math_eval.py, mcqa_eval.py (8c1485e) ---------


def model_specific_extraction(model_name: str, prediction_str: str) -> str | None:
    if "Llama-3.1" in model_name:
        if "boxed" in prediction_str[-30:]:
            match = re.search(r"\\boxed{([\w\d]+)}", prediction_str)
            if match:
                return match.group(1)
    return None


# A port of ZeroEval's src/evaluation/eval_utils.py:extract_values_from_json, branch for branch: its
# quoted / multi-line / unquoted fallbacks repeat one shape on purpose, so they are not folded.
def extract_values_from_json(
    json_string: str, keys: tuple[str, ...] = ("reasoning", "answer"), allow_no_quotes: bool = False
) -> dict[str, Any]:
    extracted_values: dict[str, Any] = {}
    for key in keys:
        pattern = f'"{key}"\\s*:\\s*"([^"]*?)"'
        match = re.search(pattern, json_string)
        if match:
            extracted_values[key] = match.group(1)
        else:
            pattern = f'"{key}"\\s*:\\s*"(.*?)"'
            match = re.search(pattern, json_string, re.DOTALL)
            if match:
                extracted_values[key] = match.group(1)
        if not match and allow_no_quotes:
            pattern = f'"{key}"\\s*:\\s*([^,\\s]*)'
            match = re.search(pattern, json_string)
            if match:
                extracted_values[key] = match.group(1)
            else:
                pattern = f"{key}\\s*:\\s*([^,\\s]*)"
                match = re.search(pattern, json_string)
                if match:
                    extracted_values[key] = match.group(1)
    return extracted_values


def extract_first_complete_json(s: str) -> Any:
    stack: list[int] = []
    first_json_start = None
    for i, char in enumerate(s):
        if char == "{":
            stack.append(i)
            if first_json_start is None:
                first_json_start = i
        elif char == "}":
            if stack:
                stack.pop()
                if not stack:
                    try:
                        return json.loads(s[first_json_start : i + 1].replace("\n", ""))
                    except (json.JSONDecodeError, RecursionError):
                        return None
    return None


_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitXor: operator.xor, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}  # fmt: skip
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_, ast.Invert: operator.inv}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip


class _NotArithmetic(Exception):
    pass


def _big(x: Any) -> bool:
    return isinstance(x, int) and x.bit_length() > 4096 or isinstance(x, str | bytes) and len(x) > 10_000


def _eval(node: ast.AST) -> Any:
    """What Python's eval() gives for constant arithmetic (what math_eval.py evaluates); anything that
    would need a name, a call or an attribute raises (eval would run it: here it is not run)."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, (ast.Pow, ast.LShift, ast.Mult)) and (_big(left) or _big(right)):
            raise _NotArithmetic("too large")
        if isinstance(node.op, ast.Pow) and isinstance(right, int) and abs(right) > 4096:
            raise _NotArithmetic("too large")
        if isinstance(node.op, ast.LShift) and isinstance(right, int) and right > 4096:
            raise _NotArithmetic("too large")
        out = _BINOPS[type(node.op)](left, right)
        if _big(out):
            raise _NotArithmetic("too large")
        return out
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _eval(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        value: Any = None
        for v in node.values:
            value = _eval(v)
            if isinstance(node.op, ast.And) and not value or isinstance(node.op, ast.Or) and value:
                return value
        return value
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e) for e in node.elts)
    raise _NotArithmetic(type(node).__name__)


def _fraction_value(answer: str) -> str | None:
    """math_eval.py: `str(float(eval(answer)))`, or None where that raises."""
    try:
        return str(float(_eval(ast.parse(answer.lstrip(" \t"), mode="eval"))))
    except Exception:  # noqa: BLE001 -- math_eval.py: a bare `except: pass`
        return None


def sanitize_math_answers(answer: str) -> str:
    answer = answer.replace("$", "").strip()
    answer = answer.replace(",", "")
    if "/" in answer:
        value = _fraction_value(answer)
        if value is not None:
            answer = value
    return answer


_FIRST_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def math_verdict(model: str, prediction_str: str, correct_answer: str) -> bool:
    """math_eval.py eval_model, one item: True when the first numbers of the two answers are equal."""
    prediction_json = extract_first_complete_json(prediction_str)
    if prediction_json is None or "answer" not in prediction_json:
        prediction_json = extract_values_from_json(prediction_str, allow_no_quotes=True)
    if prediction_json is None or "answer" not in prediction_json:
        tried = model_specific_extraction(model, prediction_str)
        if not tried:
            return False  # "No answer extracted": counted in the total, not solved
        prediction_json["answer"] = tried
    model_answer = sanitize_math_answers(str(prediction_json["answer"]))
    correct_answer = sanitize_math_answers(correct_answer)
    a = _FIRST_NUMBER.search(model_answer)
    b = _FIRST_NUMBER.search(correct_answer)
    return bool(a and b and float(a.group()) == float(b.group()))


def mcqa_verdict(model: str, prediction_str: str, label: str) -> bool | None:
    """mcqa_eval.py eval_model, one item (None: an answer of a type its test cannot take, where
    ZeroEval's script would stop with a TypeError)."""
    prediction_json = extract_first_complete_json(prediction_str)
    if prediction_json is None or "answer" not in prediction_json:
        prediction_json = extract_values_from_json(prediction_str, allow_no_quotes=True)
    if (
        prediction_json is None
        or "answer" not in prediction_json
        or prediction_json["answer"] is None
        or prediction_json["answer"] == ""
    ):
        tried = model_specific_extraction(model, prediction_str)
        if not tried:
            return False  # no answer: skipped by the script but still in its total
        prediction_json["answer"] = tried
    model_answer = prediction_json["answer"]
    try:
        return bool(model_answer == label or f"{label})" in model_answer)
    except TypeError:
        return None
