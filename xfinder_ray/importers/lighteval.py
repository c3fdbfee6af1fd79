"""Hugging Face lighteval `--save-details` output -> Samples.

lighteval (`lighteval accelerate|vllm|endpoint ... --save-details --output-dir DIR`) writes, per run,
`DIR/results/<model_name>/results_<date>.json` and one Parquet file per task,
`DIR/details/<model_name>/<date>/details_<task>_<date>.parquet` (logging/evaluation_tracker.py;
`<task>` is `task|few_shot`, `suite|task|few_shot` before 0.12; `<model_name>` may be `org/name`). The
Open LLM Leaderboard v1 details archive keeps the same files as `<date>/details_harness|<task>|<n>_<date>.parquet`
beside `results_<date>.json`. The details come in two schemas, told apart from the file's own columns:

- since v0.11, one row per document with three struct columns: `doc` (lighteval's `Doc`: `query`,
  `choices`, `gold_index`, `instruction`, `id`, `sampling_methods`, `specific`, ...), `model_response`
  (`ModelResponse`: `text` (a list, one item per generation), `text_post_processed` (the text with
  reasoning tags removed), `reasonings`, `logprobs`, input / output tokens, truncated / padded token
  counts) and `metric` (a struct of metric name -> that document's score);
- before it, flat columns (`Detail` in logging/info_loggers.py): `example` (the query), `instruction`,
  `full_prompt` (with the few-shot examples), `predictions` (generated texts, or (logprob, is_greedy)
  pairs for log-likelihood tasks), `gold` (the gold texts of generative tasks), `choices` and
  `gold_index` (multiple-choice metrics only), `metrics` (name -> score), `specifics`, ... Values kept as
  Python reprs by some writers (`"['text']"`, `"{'acc': 1}"`) are parsed as literals, bounded in size,
  never evaluated.

Read, one row group batch at a time (pyarrow `iter_batches`, only the columns used):

- `llm_output`: the generation as lighteval scored it: `model_response.text_post_processed` (reasoning
  tags removed) when present, else `model_response.text` (old schema: `predictions`). A separate
  reasoning (`model_response.reasonings`) is not prepended. Several generations per document
  (`num_samples` > 1, e.g. pass@k) are one record each, index `<id>#sample<k>` (k = position in `text`),
  without the framework's verdict: lighteval's score covers all of them together (a note says so).
- `question`: `doc.query` (old schema: `example`): the document's own query, without the few-shot
  examples lighteval adds around it; `doc.instruction` is put before it when the query does not already
  hold it (as lighteval's prompt manager does).
- the answer, from the structure: two or more `choices` with one `gold_index` are multiple choice
  (`alphabet_option`). lighteval's generative multiple-choice tasks (gpqa:diamond, mmlu_pro, ...) keep
  the letters as choices and the option texts in the query: the correct answer is the gold letter and
  the range comes from the query's option lines; when the choices are option texts, the range is
  `[[A, choice 0], ...]` and the answer the letter of `gold_index`. One choice (old schema: one `gold`)
  is the reference text (gsm8k keeps the worked answer, `... #### 72`); it is `math` when the task's
  verdict metric is a math one (`extractive_match`, `math_pass@k`, ...), else the task map decides. Old
  generative multiple-choice rows keep only `gold` (`["C"]`): a single letter that is an option line of
  the query is `alphabet_option`. A task-map entry overrides all of this.
- `source_judgment`: lighteval's own score of that sample, `metric[<name>]` (old schema `metrics`): 1 /
  1.0 / true -> True, 0 -> False, anything else (an F1 of 0.5) -> no verdict. With several metrics the
  verdict is the first one the run's results file reports for the task (`results.<task>` in order), else
  the first in the sample's metric struct; `source_metric` names it.
- `task`: from the file name, `task|few_shot` written as lighteval's results table shows it, `task:few_shot`
  (`gsm8k:5`; a leading suite, `lighteval|` / `harness|` ..., dropped; `source_task` is the same);
  `model`: `--model`, else `config_general.model_name` of the results file, else the folder between
  `details/` and the date; `record_id`: `<model>::<task>::<doc.id>` (old schema: `#<row>`, the row in the
  file).

Log-likelihood rows (no generated text: `model_response.text` empty with `logprobs`, or `predictions` of
numbers) are counted and reported as skipped: there is no response to re-score. A file that is not
Parquet, or not a details file, or that breaks while being read, is a reject with the reason and a note
naming it; a bad row is a reject with its row number.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from xfinder_ray.importers.core import (
    Found,
    ImportInputError,
    NotJson,
    OverBound,
    Sample,
    Skipped,
    list_tree,
    load_json,
    verdict_of,
)
from xfinder_ray.importers.lm_eval import display_name
from xfinder_ray.importers.task_map import LETTERS, options_from_text
from xfinder_ray.storage import Location, resolve, uri_of

FRAMEWORK = "lighteval"
DATE_ID = r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?"
DETAILS_NAME = re.compile(rf"^details_(?P<task>.+)_(?P<date>{DATE_ID})\.parquet$")
RESULTS_NAME = re.compile(rf"^results_(?P<date>{DATE_ID})\.json$")
BATCH_ROWS = 256  # rows per batch read: a details file is never read whole
MAX_RESULTS_BYTES = 64 << 20  # a results file is a summary: larger is not one
MAX_LITERAL_CHARS = 1_000_000  # a Python-repr value parsed as a literal, at most this long
# The columns read (the rest, e.g. token ids and few-shot documents, is never loaded).
DOC_FIELDS = ("query", "choices", "gold_index", "instruction", "id", "sampling_methods")
RESPONSE_FIELDS = ("text", "text_post_processed", "logprobs")
OLD_COLUMNS = ("example", "instruction", "predictions", "gold", "choices", "gold_index", "metrics")
# Verdict metrics scored on a math answer: with one reference text, the task is `math`.
MATH_METRICS = re.compile(r"extractive_match|expr_gold|latex_gold|math", re.I)


@dataclass
class DetailsFile:
    uri: str
    path: str
    fs: pafs.FileSystem
    task: str  # as lighteval names it in the file name (and the results file)
    date: str | None
    folder_model: str | None  # the folder between details/ and the date, as lighteval wrote it
    results: dict[str, Any] | None
    results_uri: str | None


def task_name(raw: str) -> str:
    """lighteval's `task|few_shot` (`suite|task|few_shot` before 0.12: the suite is dropped) as its own
    results table shows it, `task:few_shot` (a `|` would split a Markdown table's cell)."""
    parts = raw.split("|")
    return ":".join(parts[1:] if len(parts) == 3 else parts)


def _layout(path: str, date: str | None) -> tuple[str | None, str | None]:
    """(output dir, model folder) for DIR/details/<model>/<date>/file, else (None, None)."""
    directory = path.rsplit("/", 1)[0]
    if date is None or directory.rsplit("/", 1)[-1] != date:
        return None, None
    run_dir = directory.rsplit("/", 1)[0]
    i = run_dir.rfind("/details/")
    if i < 0:
        return None, None
    return run_dir[:i], run_dir[i + len("/details/") :] or None


def _load_results(fs: pafs.FileSystem, path: str) -> tuple[dict[str, Any] | None, str | None]:
    """A results file, parsed, or (None, why not)."""
    try:
        info = fs.get_file_info(path)
        if info.type != pafs.FileType.File:
            return None, None
        data = load_json(fs, path, MAX_RESULTS_BYTES, info=info)
    except OverBound:
        return None, f"larger than {MAX_RESULTS_BYTES >> 20} MiB"
    except NotJson as e:
        return None, f"{type(e.cause).__name__}: {e.cause}"
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        return None, "no `results` mapping"
    return data, None


def _results_for(
    loc: Location,
    path: str,
    date: str | None,
    layout: tuple[str | None, str | None],
    cache: dict[str, Any],
    notes: list[str],
) -> tuple[dict[str, Any] | None, str | None]:
    """The run's results_<date>.json: DIR/results/<model>/ (lighteval's layout: `_layout(path, date)`),
    else beside the details file or one folder up (the leaderboard archive's layout)."""
    if date is None:
        return None, None
    directory = path.rsplit("/", 1)[0]
    out_dir, model = layout
    name = f"results_{date}.json"
    candidates = [f"{out_dir}/results/{model}/{name}"] if out_dir is not None and model else []
    candidates += [f"{directory}/{name}", f"{directory.rsplit('/', 1)[0]}/{name}"]
    for candidate in candidates:
        if candidate not in cache:
            data, problem = _load_results(loc.fs, candidate)
            if problem:
                notes.append(f"{uri_of(loc, candidate)}: not a usable lighteval results file ({problem})")
            cache[candidate] = data
        if cache[candidate] is not None:
            return cache[candidate], uri_of(loc, candidate)
    return None, None


def _details_of_results(loc: Location, path: str) -> list[str]:
    """The details files of a results file named by itself (DIR/results/<model>/results_<date>.json)."""
    m = RESULTS_NAME.match(path.rsplit("/", 1)[-1])
    i = path.rfind("/results/")
    if not m or i < 0:
        return []
    model = path[i + len("/results/") :].rsplit("/", 1)[0]
    folder = f"{path[:i]}/details/{model}/{m.group('date')}"
    try:
        listed = list_tree(Location(loc.fs, folder, uri_of(loc, folder)), (".parquet",))
    except ImportInputError:
        return []
    return [p for p in listed if p.rsplit("/", 1)[-1].startswith("details_")]


def find_files(paths: list[str], storage: Any = None) -> Found[DetailsFile]:
    """Every details_<task>_<date>.parquet under `paths` (files or folders), each with its run's results
    file where there is one."""
    files: list[DetailsFile] = []
    notes: list[str] = []
    cache: dict[str, Any] = {}
    for p in paths:
        loc = resolve(p, storage)
        listed = list_tree(loc, (".parquet", ".json"))
        picked = [
            path
            for path in listed
            if path.endswith(".parquet") and path.rsplit("/", 1)[-1].startswith("details_")
        ]
        if not picked and len(listed) == 1 and listed[0] == loc.path:
            picked = _details_of_results(loc, loc.path)
        if not picked:
            raise ImportInputError(
                f"no lighteval details_<task>_<date>.parquet files under {p!r} "
                "(run lighteval with --save-details --output-dir DIR)"
            )
        for path in picked:
            name = path.rsplit("/", 1)[-1]
            m = DETAILS_NAME.match(name)
            task, date = (
                (m.group("task"), m.group("date")) if m else (name[len("details_") : -len(".parquet")], None)
            )
            layout = _layout(path, date)
            results, results_uri = _results_for(loc, path, date, layout, cache, notes)
            uri = uri_of(loc, path)
            if results is None:
                notes.append(
                    f"{uri}: no results_{date or '<date>'}.json found for it; the model name comes from "
                    "the folder and the verdict metric from the sample's own metric columns"
                )
            files.append(DetailsFile(uri, path, loc.fs, task, date, layout[1], results, results_uri))
    return Found.unique(files, notes)


def model_name(f: DetailsFile) -> str:
    """config_general.model_name of the results file, else the folder lighteval named after the model,
    else the folder above the date folder. A local model path is named by its last component."""
    cfg = (f.results or {}).get("config_general")
    name = cfg.get("model_name") if isinstance(cfg, dict) else None
    if not isinstance(name, str) or not name.strip():
        name = f.folder_model
    if not name:  # no details/ folder: the folder above the date folder, else the file's own folder
        folders = f.path.split("/")[:-1]
        if f.date and len(folders) >= 2 and folders[-1] == f.date:
            folders.pop()
        name = folders[-1] if folders and folders[-1] else None
    return display_name(name) if name else "unknown"


def _task_results(f: DetailsFile) -> dict[str, Any]:
    results = (f.results or {}).get("results")
    if not isinstance(results, dict):
        return {}
    for key in (f.task, task_name(f.task)):
        if isinstance(results.get(key), dict):
            return results[key]
    return {}


def metric_order(f: DetailsFile) -> list[str]:
    """The task's metrics in the order the results file reports them (stderr entries left out)."""
    return [k for k in _task_results(f) if isinstance(k, str) and not k.endswith("_stderr")]


def _literal(value: Any) -> Any:
    """A Python-repr list / dict kept as text (older writers), parsed; anything else unchanged."""
    if isinstance(value, str) and value[:1] in "[{(" and len(value) <= MAX_LITERAL_CHARS:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return value
    return value


@dataclass
class _Row:
    """One details row in the terms of both schemas."""

    index: str
    query: Any
    instruction: Any
    texts: Any
    loglikelihood: bool
    choices: Any
    gold_index: Any
    gold: Any  # old schema: the gold texts
    metrics: Any


def _new_row(item: dict[str, Any], row: int) -> _Row:
    doc = item.get("doc") if isinstance(item.get("doc"), dict) else {}
    resp = item.get("model_response") if isinstance(item.get("model_response"), dict) else {}
    texts = resp.get("text")
    post = resp.get("text_post_processed")
    if isinstance(post, list) and isinstance(texts, list) and len(post) == len(texts) and post:
        if all(isinstance(t, str) for t in post):
            texts = post
    methods = doc.get("sampling_methods")
    generative_asked = isinstance(methods, list) and any("GENERATIVE" in str(m) for m in methods)
    loglik = (not texts) and (
        bool(resp.get("logprobs")) or (isinstance(methods, list) and not generative_asked)
    )
    doc_id = doc.get("id")
    index = str(doc_id) if isinstance(doc_id, (str, int)) and str(doc_id) != "" else f"#{row}"
    return _Row(
        index, doc.get("query"), doc.get("instruction"), texts, loglik,
        doc.get("choices"), doc.get("gold_index"), None, item.get("metric"),
    )  # fmt: skip


def _old_row(item: dict[str, Any], row: int) -> _Row:
    predictions = _literal(item.get("predictions"))
    loglik = (
        isinstance(predictions, list)
        and bool(predictions)
        and all(not isinstance(p, str) for p in predictions)
    )
    return _Row(
        f"#{row}", item.get("example"), item.get("instruction"), None if loglik else predictions, loglik,
        _literal(item.get("choices")), _literal(item.get("gold_index")), _literal(item.get("gold")),
        _literal(item.get("metrics")),
    )  # fmt: skip


def _letters(choices: list[str]) -> bool:
    """Choices that are the letters A, B, C, ... themselves (lighteval's generative MC convention)."""
    return len(choices) <= len(LETTERS) and all(c.strip() == LETTERS[i] for i, c in enumerate(choices))


def _choices(value: Any) -> list[str] | None:
    if isinstance(value, str) and value.isalpha() and value.isupper():  # "ABCD..." (mmlu_pro keeps a str)
        return list(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(c, str) for c in value):
        return list(value)
    return None


def _gold_indices(value: Any) -> list[int] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return list(value)
    return None


@dataclass
class _Task:
    """What one details file's rows share: names, the verdict metric, counts for notes."""

    f: DetailsFile
    model: str
    task: str
    order: list[str]
    used_metric: str | None = None
    metrics_seen: list[str] = field(default_factory=list)
    repeats_noted: bool = False
    loglik: int = 0


def _pick_metric(t: _Task, metrics: Any) -> tuple[str | None, Any]:
    if not isinstance(metrics, Mapping) or not metrics:
        return None, None
    names = [k for k in metrics if isinstance(k, str)]
    if not t.metrics_seen:
        t.metrics_seen = names
    for name in t.order:
        if name in metrics:
            return name, metrics[name]
    return (names[0], metrics[names[0]]) if names else (None, None)


def _question(r: _Row) -> str | None:
    query = r.query
    if not isinstance(query, str) or not query.strip():
        return None
    instruction = r.instruction
    if isinstance(instruction, str) and instruction.strip() and instruction.strip() not in query:
        return instruction + query  # lighteval's prompt manager: instruction + query
    return query


def _answer(s: Sample, r: _Row, metric: str | None) -> None:
    """Set target / doc / key_answer_type (or problem) from choices + gold_index, else gold."""
    choices, golds = _choices(r.choices), _gold_indices(r.gold_index)
    if choices is not None and golds is not None:
        if len(golds) != 1:
            s.problem = f"several gold answers (gold_index {golds[:10]}); one reference answer is needed"
            return
        g = golds[0]
        if not 0 <= g < len(choices):
            s.problem = f"gold_index {g} is out of range for {len(choices)} choice(s)"
            return
        if len(choices) == 1:
            s.target = choices[0]
        elif _letters(choices):  # the option texts are in the query
            s.target, s.key_answer_type = choices[g].strip(), "alphabet_option"
            return
        elif len(choices) > len(LETTERS):
            s.problem = f"{len(choices)} choices; at most {len(LETTERS)} can be lettered"
            return
        else:
            s.doc = {"choices": [c.strip() for c in choices]}
            s.target, s.key_answer_type = LETTERS[g], "alphabet_option"
            return
    else:
        gold = r.gold
        if isinstance(gold, str):
            gold = [gold]
        if not (isinstance(gold, (list, tuple)) and gold and all(isinstance(x, str) for x in gold)):
            s.problem = "no gold answer (doc.choices + gold_index, or gold)"
            return
        if len(gold) != 1:
            s.problem = f"{len(gold)} gold answers; one reference answer is needed"
            return
        s.target = gold[0]
        letter = gold[0].strip()
        if len(letter) == 1 and letter in LETTERS and s.prompt:
            options = options_from_text(s.prompt)
            if options and letter in {label for label, _ in options}:
                s.key_answer_type = "alphabet_option"
                return
    if metric and MATH_METRICS.search(metric):
        s.key_answer_type = "math"


def _samples(t: _Task, r: _Row, notes: list[str]) -> Iterator[Sample]:
    base = Sample(FRAMEWORK, t.f.uri, r.index, t.model, t.task)
    texts = r.texts
    if texts is None or texts == [] or texts == "":
        base.problem = "no generated text (model_response.text / predictions is empty)"
        yield base
        return
    if not isinstance(texts, list) or not all(isinstance(x, str) for x in texts):
        base.problem = f"generated text is not a list of strings ({type(texts).__name__})"
        yield base
        return
    base.prompt = _question(r)
    if base.prompt is None:
        base.problem = "no query text (doc.query / example)"
        yield base
        return
    metric, value = _pick_metric(t, r.metrics)
    if metric and t.used_metric is None:
        t.used_metric = metric
    _answer(base, r, metric)
    if len(texts) == 1:
        base.response = texts[0]
        base.verdict = verdict_of(value)
        base.metric = metric if base.verdict is not None else None
        yield base
        return
    if not t.repeats_noted:
        notes.append(
            f"task {t.task!r} ({t.model}) has {len(texts)} generations per document: each is a record "
            "(<id>#sample<k>), without the framework's verdict (its score covers them together)"
        )
        t.repeats_noted = True
    for k, text in enumerate(texts):
        yield Sample(
            FRAMEWORK, t.f.uri, f"{r.index}#sample{k}", t.model, t.task, prompt=base.prompt,
            response=text, target=base.target, doc=base.doc, problem=base.problem,
            key_answer_type=base.key_answer_type,
        )  # fmt: skip


def _columns(schema: pa.Schema) -> tuple[str | None, list[str]]:
    """('new' | 'old' | None, the column paths to read)."""
    names = set(schema.names)
    if {"doc", "model_response"} <= names:
        cols: list[str] = []
        for top, wanted in (("doc", DOC_FIELDS), ("model_response", RESPONSE_FIELDS)):
            typ = schema.field(top).type
            if not pa.types.is_struct(typ):
                return None, []
            have = {typ.field(i).name for i in range(typ.num_fields)}
            cols += [f"{top}.{n}" for n in wanted if n in have]
        if "metric" in names:
            cols.append("metric")
        return "new", cols
    if "predictions" in names and ("example" in names or "full_prompt" in names):
        return "old", [c for c in OLD_COLUMNS if c in names]
    return None, []


def read(
    found: Found[DetailsFile], *, model: str | None = None, notes: list[str], **_
) -> Iterator[Sample | Skipped]:
    for f in found.files:
        yield from _read_file(f, model or model_name(f), notes)


def _read_file(f: DetailsFile, model: str, notes: list[str]) -> Iterator[Sample | Skipped]:
    t = _Task(f, model, task_name(f.task), metric_order(f))
    try:
        pf = pq.ParquetFile(f.fs.open_input_file(f.path))
        kind, columns = _columns(pf.schema_arrow)
    except (OSError, pa.ArrowException, ValueError) as e:
        notes.append(f"{f.uri}: not a readable Parquet file, left out ({type(e).__name__})")
        yield Sample(FRAMEWORK, f.uri, "*", model, t.task, problem=f"not a readable Parquet file: {e}")
        return
    if kind is None:
        notes.append(
            f"{f.uri}: not a lighteval details file (columns {pf.schema_arrow.names[:12]}), left out"
        )
        yield Sample(
            FRAMEWORK, f.uri, "*", model, t.task,
            problem="not a lighteval details file: neither doc + model_response nor example + predictions columns",
        )  # fmt: skip
        return
    to_row = _new_row if kind == "new" else _old_row
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            for item in batch.to_pylist():
                r = to_row(item, row)
                row += 1
                if r.loglikelihood:
                    t.loglik += 1
                    continue
                yield from _samples(t, r, notes)
    except (OSError, pa.ArrowException, ValueError) as e:
        notes.append(f"{f.uri}: unreadable after {row} row(s), the rest left out ({type(e).__name__})")
        yield Sample(
            FRAMEWORK,
            f.uri,
            f"#{row}*",
            model,
            t.task,
            problem=f"the file cannot be read past row {row}: {e}",
        )
    if t.loglik:
        yield Skipped(
            FRAMEWORK, f.uri, model, t.task, t.loglik,
            "log-likelihood samples (no generated text, only log-probabilities): nothing to re-score "
            "(only generative lighteval tasks can be imported)",
        )  # fmt: skip
    if t.used_metric and len(t.metrics_seen) > 1:
        where = "the first the results file reports" if t.order else "the first in the sample's metrics"
        notes.append(
            f"task {t.task!r} ({model}) has metrics {t.metrics_seen}: the framework's verdict is "
            f"{t.used_metric!r} ({where})"
        )


__all__ = ["DetailsFile", "Found", "find_files", "metric_order", "model_name", "read", "task_name"]
