"""lm-evaluation-harness `--log_samples` output -> Samples.

lm-eval writes, per run, `<output_path>/<model_name_sanitized>/results_<date_id>.json` and one
`samples_<task>_<date_id>.jsonl` per task (loggers/evaluation_tracker.py; with `--output_path x.json`
the results file is `x_<date_id>.json` next to the samples). Each samples line is one document under
one filter: `doc_id`, `doc`, `target` (str), `arguments` ({"gen_args_0": {"arg_0": prompt, "arg_1":
gen_kwargs}}, a list of [prompt, gen_kwargs] before 0.4.3), `resps` ([[response, ...]] for
generate_until), `filtered_resps`, `filter`, `metrics` (names) and each metric's value.

Only `generate_until` tasks have response text. Log-likelihood tasks (`multiple_choice`,
`loglikelihood`, `loglikelihood_rolling`) are counted and reported as skipped. A task logged under
several filters (GSM8K: strict-match, flexible-extract) is one sample per document: the response is
the same; the verdict is taken from the requested filter, else the first one logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from xfinder_ray.importers.core import Found, ImportInputError, Sample, Skipped, list_tree, verdict_of
from xfinder_ray.storage import Location, resolve, uri_of

FRAMEWORK = "lm-eval"
DATE_ID = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_NAME = re.compile(rf"^samples_(?P<task>.+)_(?P<date>{DATE_ID})\.jsonl$")
RESULTS_NAME = re.compile(rf"^(?P<stem>.+)_(?P<date>{DATE_ID})\.json$")
GENERATE = "generate_until"
# lm-eval's own order for the model name in model_args (EvaluationTracker._get_model_name).
MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
QUESTION_FIELDS = ("question", "problem", "query", "input", "Question", "ctx", "sentence", "passage")


@dataclass
class SamplesFile:
    uri: str
    path: str
    fs: pafs.FileSystem
    task: str
    date_id: str | None
    results: dict[str, Any] | None
    results_uri: str | None


def _read_bytes(fs: pafs.FileSystem, path: str) -> bytes:
    with fs.open_input_stream(path) as f:
        return f.read()


def _results_of_dir(fs: pafs.FileSystem, directory: str, cache: dict[str, dict[str, tuple[str, Any]]]):
    """{date_id: (path, parsed results)} for the aggregated results files in `directory`."""
    if directory in cache:
        return cache[directory]
    found: dict[str, tuple[str, Any]] = {}
    for info in fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True)):
        name = info.path.rsplit("/", 1)[-1]
        m = RESULTS_NAME.match(name)
        if info.type != pafs.FileType.File or not m or name.startswith("samples_"):
            continue
        try:
            data = json.loads(_read_bytes(fs, info.path))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and ("configs" in data or "results" in data):
            found[m.group("date")] = (info.path, data)
    cache[directory] = found
    return found


def find_files(paths: list[str], storage: Any = None) -> Found[SamplesFile]:
    """Every samples_*.jsonl under `paths` (files or folders), each with its run's results file."""
    files: list[SamplesFile] = []
    notes: list[str] = []
    cache: dict[str, dict[str, tuple[str, Any]]] = {}
    for p in paths:
        loc = resolve(p, storage)
        listed = list_tree(loc, (".jsonl", ".json"))
        picked = []
        for path in listed:
            name = path.rsplit("/", 1)[-1]
            if name.startswith("samples_") and name.endswith(".jsonl"):
                picked.append(path)
            elif path == loc.path and RESULTS_NAME.match(name):  # a results file given by name: its samples
                directory = path.rsplit("/", 1)[0]
                date = RESULTS_NAME.match(name).group("date")
                picked.extend(
                    q
                    for q in list_tree(Location(loc.fs, directory, uri_of(loc, directory)), (".jsonl",))
                    if q.rsplit("/", 1)[-1].startswith("samples_") and q.endswith(f"_{date}.jsonl")
                )
        if not picked:
            raise ImportInputError(
                f"no lm-eval samples_<task>_<timestamp>.jsonl files under {p!r} "
                "(run lm_eval with --log_samples --output_path DIR)"
            )
        for path in picked:
            name = path.rsplit("/", 1)[-1]
            m = SAMPLES_NAME.match(name)
            task, date = (
                (m.group("task"), m.group("date")) if m else (name[len("samples_") : -len(".jsonl")], None)
            )
            directory = path.rsplit("/", 1)[0]
            res = _results_of_dir(loc.fs, directory, cache).get(date) if date else None
            uri = uri_of(loc, path)
            if res is None:
                notes.append(
                    f"{uri}: no results_{date or '<timestamp>'}.json beside it; the model name is taken "
                    "from the folder and the task type from the samples themselves"
                )
            files.append(
                SamplesFile(
                    uri,
                    path,
                    loc.fs,
                    task,
                    date,
                    res[1] if res else None,
                    uri_of(loc, res[0]) if res else None,
                )
            )
    return Found.unique(files, notes)


def _name_from_args(args: Any) -> str | None:
    if isinstance(args, dict):
        for key in MODEL_ARG_KEYS:
            if args.get(key):
                return str(args[key])
    elif isinstance(args, str):
        for key in MODEL_ARG_KEYS:
            m = re.search(rf"(?:^|,)\s*{key}=([^,]+)", args)
            if m:
                return m.group(1).strip()
    return None


def display_name(name: str) -> str:
    """A local model folder is named by its last component; a hub id (org/name) is kept."""
    name = name.strip()
    if name.startswith(("/", "./", "../", "~")) or re.match(r"^[A-Za-z]:[\\/]", name):
        return re.split(r"[\\/]", name.rstrip("/\\"))[-1] or name
    return name


def model_name(f: SamplesFile) -> str:
    """--model, else (as lm-eval names runs) pretrained=/model=/path=... in model_args, else the model
    type (`dummy`, `hf`, ...), else `model_name`, else the folder lm-eval wrote into."""
    res = f.results or {}
    cfg = res.get("config") if isinstance(res.get("config"), dict) else {}
    name = _name_from_args(cfg.get("model_args"))
    if not name and isinstance(cfg.get("model"), str):
        name = cfg["model"]
    if not name and isinstance(res.get("model_name"), str):
        name = res["model_name"]
    if not name:
        parts = f.path.rsplit("/", 2)
        name = parts[-2] if len(parts) >= 2 else "unknown"
    return display_name(name)


def _task_config(f: SamplesFile) -> dict[str, Any]:
    configs = (f.results or {}).get("configs")
    cfg = configs.get(f.task) if isinstance(configs, dict) else None
    return cfg if isinstance(cfg, dict) else {}


def _n_shot(f: SamplesFile) -> int | None:
    shots = (f.results or {}).get("n-shot")
    value = shots.get(f.task) if isinstance(shots, dict) else None
    if value is None:
        value = _task_config(f).get("num_fewshot")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _position(key: str) -> int:
    tail = str(key).rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _arguments(sample: dict[str, Any]) -> list[list[Any]]:
    args = sample.get("arguments")
    if isinstance(args, dict):  # 0.4.3+: {"gen_args_0": {"arg_0": ..., "arg_1": ...}}
        return [
            [v[k] for k in sorted(v, key=_position)]
            for _, v in sorted(args.items(), key=lambda kv: _position(kv[0]))
            if isinstance(v, dict)
        ]
    if isinstance(args, list):
        return [a if isinstance(a, list) else [a] for a in args]
    return []


def looks_generative(sample: dict[str, Any]) -> bool | None:
    """From a sample alone: True for generate_until, False for log-likelihood, None if unclear."""
    args = _arguments(sample)
    if args:
        first = args[0]
        if len(first) >= 2 and isinstance(first[1], dict):
            return True
        if len(first) >= 2 and isinstance(first[1], str):
            return False
        if len(first) == 1:
            return False  # loglikelihood_rolling: the text alone
    resps = sample.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]:
        return isinstance(resps[0][0], str)
    return None


def strip_fewshot(prompt: str, doc: Any, n_shot: int | None, delimiter: str) -> str:
    """The prompt without its few-shot examples: cut at the last example delimiter before the document's
    own text (found through a question-like field), else at the last delimiter; unchanged for 0-shot."""
    if not n_shot or not delimiter or delimiter not in prompt:
        return prompt
    if isinstance(doc, dict):
        for name in QUESTION_FIELDS:
            value = doc.get(name)
            if isinstance(value, str) and len(value.strip()) >= 8:
                snippet = value.strip()[:80]
                pos = prompt.rfind(snippet)
                if pos >= 0:
                    cut = prompt.rfind(delimiter, 0, pos)
                    return prompt[cut + len(delimiter) :] if cut >= 0 else prompt
    return prompt.rsplit(delimiter, 1)[-1]


# The user turn of the chat templates lm-eval renders with --apply_chat_template, by family.
_USER_TURNS = (
    re.compile(r"<\|im_start\|>user[ \t]*\n(.*?)(?:<\|im_end\|>|$)", re.S),  # ChatML: Qwen, SmolLM, ...
    re.compile(r"<\|start_header_id\|>user<\|end_header_id\|>\s*(.*?)(?:<\|eot_id\|>|$)", re.S),  # Llama 3
    re.compile(r"<start_of_turn>user[ \t]*\n(.*?)(?:<end_of_turn>|$)", re.S),  # Gemma
    re.compile(r"<\|user\|>\s*(.*?)(?:<\|end\|>|</s>|$)", re.S),  # Phi-3, Zephyr
    re.compile(r"\[INST\]\s*(.*?)\s*\[/INST\]", re.S),  # Mistral, Llama 2
)


def last_user_turn(prompt: str) -> str | None:
    """The text of the last user turn of a rendered chat prompt, or None for an unknown template."""
    for pattern in _USER_TURNS:
        turns = pattern.findall(prompt)
        if turns:
            return turns[-1].strip("\n")
    return None


def question_of(prompt: str, doc: Any, f: SamplesFile, delimiter: str) -> str:
    """The question as the model saw it: the last user turn when lm-eval applied a chat template,
    without the few-shot examples (unless they were earlier turns: --fewshot_as_multiturn)."""
    res = f.results or {}
    multiturn = bool(res.get("fewshot_as_multiturn"))
    if res.get("chat_template"):
        turn = last_user_turn(prompt)
        if turn is not None:
            return turn if multiturn else strip_fewshot(turn, doc, _n_shot(f), delimiter)
    return strip_fewshot(prompt, doc, _n_shot(f), delimiter)


def _verdict(sample: dict[str, Any]) -> tuple[bool | None, str | None]:
    names = sample.get("metrics")
    if not isinstance(names, list):
        names = [k for k in ("exact_match", "acc", "em", "correct") if k in sample]
    for name in names:
        if not isinstance(name, str):  # a damaged `metrics` list (e.g. a nested list): not a metric name
            continue
        verdict = verdict_of(sample.get(name))
        if verdict is not None:
            return verdict, name
    return None, None


def _parse(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    try:
        obj = json.loads(line.decode("utf-8").removeprefix("\ufeff"), strict=False)
    except UnicodeDecodeError as e:
        return None, f"line is not valid UTF-8 (byte {e.start})"
    except ValueError as e:
        return None, f"not valid JSON ({getattr(e, 'msg', e)})"
    if not isinstance(obj, dict):
        return None, f"expected a JSON object, got {type(obj).__name__}"
    return obj, None


def read(
    found: Found[SamplesFile],
    *,
    model: str | None = None,
    lm_eval_filter: str | None = None,
    notes: list[str],
    **_,
) -> Iterator[Sample | Skipped]:
    for f in found.files:
        yield from _read_file(f, model or model_name(f), lm_eval_filter, notes)


@dataclass
class _Picked:
    """A samples file's lines grouped by document: one line per document, and the lines rejected."""

    chosen: dict[Any, dict[str, Any]]  # doc_id -> the line of the wanted filter, else the first logged
    order: list[Any]  # doc_ids in the order first logged
    filters_seen: list[str]
    bad: list[Sample]


def _filter_of(obj: dict[str, Any]) -> str:
    return obj.get("filter") if isinstance(obj.get("filter"), str) else "none"


def _bad_line(f: SamplesFile, model: str, lineno: int, problem: str) -> Sample:
    return Sample(FRAMEWORK, f.uri, f"line{lineno}", model, f.task, problem=f"line {lineno}: {problem}")


def _pick_lines(f: SamplesFile, model: str, data: bytes, wanted_filter: str | None) -> _Picked:
    """One line per document: the line of the wanted filter, else the first logged."""
    picked = _Picked({}, [], [], [])
    logged: set[tuple[Any, str]] = set()
    lines = [(i, line) for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    for lineno, line in lines:
        obj, problem = _parse(line)
        if obj is None:
            picked.bad.append(_bad_line(f, model, lineno, problem))
            continue
        doc_id = obj.get("doc_id")
        if doc_id is None or isinstance(doc_id, (dict, list, bool)):
            picked.bad.append(_bad_line(f, model, lineno, "missing field 'doc_id'"))
            continue
        flt = _filter_of(obj)
        if flt not in picked.filters_seen:
            picked.filters_seen.append(flt)
        if (doc_id, flt) in logged:  # one line per document and filter: another is a duplicate, not a sample
            twice = f"doc_id {doc_id!r} is logged twice under filter {flt!r}"
            picked.bad.append(_bad_line(f, model, lineno, twice))
            continue
        logged.add((doc_id, flt))
        if doc_id not in picked.chosen:
            picked.order.append(doc_id)
            picked.chosen[doc_id] = obj
        elif wanted_filter is not None and flt == wanted_filter:
            picked.chosen[doc_id] = obj
    return picked


def _note_filters(
    f: SamplesFile, model: str, wanted_filter: str | None, filters_seen: list[str], notes: list[str]
) -> None:
    """Say which filter's verdicts are used when a task is logged under several."""
    if len(filters_seen) <= 1:
        return
    used = wanted_filter if wanted_filter in filters_seen else filters_seen[0]
    if wanted_filter is not None and wanted_filter not in filters_seen:
        notes.append(
            f"{f.uri}: filter {wanted_filter!r} not logged (have {filters_seen}); verdicts from {used!r}"
        )
    notes.append(
        f"task {f.task!r} ({model}) is logged under filters {filters_seen}: one sample per document, "
        f"the framework's verdict from filter {used!r}"
    )


def _first_response(obj: dict[str, Any]) -> tuple[str | None, int]:
    """The first response text of a generate_until line (None if absent), and how many were logged."""
    resps = obj.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list):
        first = resps[0][0] if resps[0] and isinstance(resps[0][0], str) else None
        return first, len(resps[0])
    return None, 0


def _document_sample(
    f: SamplesFile, model: str, doc_id: Any, obj: dict[str, Any], delimiter: str
) -> tuple[Sample, int]:
    """The Sample of one document's chosen line, and its number of responses (repeats: > 1)."""
    args = _arguments(obj)
    prompt = args[0][0] if args and args[0] and isinstance(args[0][0], str) else None
    doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else None
    response, n_resps = _first_response(obj)
    verdict, metric = _verdict(obj)
    if metric:
        metric = f"{metric}/{_filter_of(obj)}"
    if n_resps > 1:
        verdict = None  # the framework scored all the repeats together; we import the first
    problem = None
    if prompt is None:
        problem = "no prompt in 'arguments'"
    elif response is None:
        problem = "no response text in 'resps'"
    elif "target" not in obj:
        problem = "missing field 'target'"
    sample = Sample(
        framework=FRAMEWORK,
        path=f.uri,
        index=str(doc_id),
        model=model,
        task=f.task,
        prompt=question_of(prompt, doc, f, delimiter) if prompt is not None else None,
        response=response,
        target=obj.get("target"),
        doc=doc,
        verdict=verdict,
        metric=metric,
        problem=problem,
    )
    return sample, n_resps


def _generative_samples(
    f: SamplesFile, model: str, picked: _Picked, output_type: str | None, delimiter: str, notes: list[str]
) -> Iterator[Sample | Skipped]:
    """A Sample per document; with no output_type known, log-likelihood lines are counted as skipped."""
    skipped_here = 0
    repeats_noted = False
    for doc_id in picked.order:
        obj = picked.chosen[doc_id]
        if output_type is None and looks_generative(obj) is False:
            skipped_here += 1
            continue
        sample, n_resps = _document_sample(f, model, doc_id, obj, delimiter)
        if n_resps > 1 and not repeats_noted:
            notes.append(
                f"task {f.task!r} ({model}) has {n_resps} responses per document (repeats): the first is "
                "imported, without the framework's verdict (it covers all of them)"
            )
            repeats_noted = True
        yield sample
    if skipped_here:
        yield Skipped(
            FRAMEWORK, f.uri, model, f.task, skipped_here,
            "log-likelihood samples (no results file names the output_type; seen from the samples): "
            "no response text to re-score",
        )  # fmt: skip


def _read_file(
    f: SamplesFile, model: str, wanted_filter: str | None, notes: list[str]
) -> Iterator[Sample | Skipped]:
    cfg = _task_config(f)
    output_type = cfg.get("output_type") if isinstance(cfg.get("output_type"), str) else None
    delimiter = cfg.get("fewshot_delimiter") if isinstance(cfg.get("fewshot_delimiter"), str) else "\n\n"
    try:
        data = _read_bytes(f.fs, f.path)
    except OSError as e:
        yield Sample(FRAMEWORK, f.uri, "*", model, f.task, problem=f"cannot read the file: {e}")
        return
    picked = _pick_lines(f, model, data, wanted_filter)
    yield from picked.bad
    _note_filters(f, model, wanted_filter, picked.filters_seen, notes)
    if output_type is not None and output_type != GENERATE:
        if picked.order:
            yield Skipped(
                FRAMEWORK, f.uri, model, f.task, len(picked.order),
                f"output_type {output_type}: scored by log-likelihood, so there is no response text to "
                "re-score (only generate_until tasks can be imported)",
            )  # fmt: skip
        return
    yield from _generative_samples(f, model, picked, output_type, delimiter, notes)


__all__ = [
    "Found",
    "SamplesFile",
    "display_name",
    "find_files",
    "last_user_turn",
    "model_name",
    "question_of",
    "read",
    "strip_fewshot",
]
