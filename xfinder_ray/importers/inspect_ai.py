"""Inspect AI (UK AI Security Institute, `inspect eval`) logs -> Samples.

Inspect writes one log per task run, in one of two formats (inspect_ai/log/_recorders/):

- `.eval` (the default): a ZIP archive holding `header.json` (`version`, `status`, `eval` -- the task,
  the model, the config, the scorers --, `plan`, `results`, `stats`), one entry per sample and epoch
  `samples/<id>_epoch_<n>.json`, `summaries.json`, `reductions.json` and `_journal/` (`start.json`, the
  `eval` spec written when the run starts; `header.json` is written when it ends). Entries are
  deflate-compressed (Inspect before ~0.3.100) or zstd-compressed (method 93, current releases): zstd
  is decompressed with pyarrow's codec, since Python's zipfile reads it only from 3.14 on. A ZIP is read
  one sample entry at a time: its central directory first, then each entry, decompressed into memory up
  to MAX_ENTRY_BYTES and checked against its CRC. Inspect's newer "chunked" sample shape
  (`samples/<id>_epoch_<n>/sample.json` + message chunks, not yet written by default) is read from its
  `sample.json` shell.
- `.json` (`--log-format json`): the same fields in one JSON object, `samples` a list. It cannot be read
  one sample at a time without a streaming JSON parser (none is a dependency), so a file is read whole
  when it is at most MAX_JSON_LOG_BYTES, else rejected with that reason (`inspect log convert --to eval`
  makes an `.eval` of it, read incrementally).

A sample (EvalSample) has `id`, `epoch`, `input` (text, or a list of chat messages), `choices` (option
texts, for multiple choice), `target` (text or a list; a letter for multiple choice), `messages`,
`output` (ModelOutput: `completion`, `choices[].message.content` -- text, or a list of content blocks
such as `{"type": "reasoning", ...}` and `{"type": "text", "text": ...}`), `scores`
(`{scorer: {value, answer, explanation}}`) and `error` where the sample failed. Read here:

- `llm_output`: `output.completion` (what Inspect's scorers read: the text of the first choice, without
  reasoning blocks), else the text blocks of `output.choices[0].message.content` joined by newlines (as
  ChatMessage.text does; logs before `completion` was kept). Reasoning blocks are never prepended.
- `question`: `input` when it is text; for a list of chat messages, the last user message's text. For
  multiple choice it is followed by the options as Inspect's `multiple_choice()` lists them
  (`\\n\\nA) option\\nB) option...`), and `standard_answer_range` is `[["A", choice 0], ...]`.
- `correct_answer`: `target` (the letter for multiple choice; a list of several targets is rejected by
  the task map: not one key answer).
- `model`: `eval.model` as Inspect names it (`openai/gpt-4o`, `hf/SmolLM2-135M-Instruct`), or `--model`.
  `task`: `eval.task` without its package prefix (`inspect_evals/mmlu_0_shot` -> `mmlu_0_shot`), so the
  task map's globs apply. `record_id`: `<model>::<task>::<id>#epoch<n>`: every epoch is its own record.
- `key_answer_type`: a task map entry when one matches the task; else inferred from the structure:
  samples with `choices` -> `alphabet_option`; a task scored by `match(numeric=True)` -> `math`.
  Anything else needs a task map entry (otherwise rejected: `unknown task`).
- `source_judgment`: the verdict of the log's first scorer (`results.scores[0].name`, else the first
  scorer of `eval.scorers`, else the sample's first score), mapped exactly as Inspect's `accuracy()`
  metric maps a value (`value_to_float`: C -> 1, I -> 0, P -> 0.5, N -> 0, numbers as they are,
  "yes"/"true" -> 1, "no"/"false" -> 0, numeric strings as numbers, any other string -> 0): 1 is True,
  0 is False; a value in between (P, 0.5, 0.25) has no binary verdict and is imported without one (a
  note counts them), and so is a list or mapping value (a scorer with per-key metrics). Over a log
  whose samples all have a binary verdict, the share of True is the `accuracy` in `results.scores[0]`
  when every sample ran every epoch and the epoch reducer is `mean` (the default; a note says when it
  is not). `source_metric`: `scores.<scorer>`.

Rejected, with the reason: a sample that ended in an error, has no id, no output text, no question, more
options than letters, or no decodable entry; a file that is not a ZIP / JSON log, is over the size
bounds, or has no header. Every such file is also named in a note. A log without samples
(`--no-log-samples`) is noted.
"""

from __future__ import annotations

import math
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from xfinder_ray.importers.core import (
    Found,
    ImportInputError,
    NotJson,
    OverBound,
    Sample,
    list_tree,
    load_json,
    parse_json,
)
from xfinder_ray.importers.task_map import LETTERS
from xfinder_ray.storage import resolve, uri_of

FRAMEWORK = "inspect"
MAX_ENTRY_BYTES = 256 << 20  # one decompressed `.eval` entry (a sample with its events, or the header)
MAX_JSON_LOG_BYTES = 256 << 20  # a `.json` log is parsed whole: about 5-10x its size in memory
ZIP_ZSTANDARD = 93  # zipfile.ZIP_ZSTANDARD from Python 3.14 on; Inspect writes it from ~0.3.100 on
SAMPLE_ENTRY = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)(?:\.json|/sample\.json)$")
JSON_LOG_START = re.compile(rb'^\s*\{\s*"version"\s*:')
ATTACHMENT = "attachment://"


@dataclass
class LogFile:
    uri: str
    path: str
    fs: pafs.FileSystem
    kind: str  # "eval" | "json"


def _looks_like_json_log(fs: pafs.FileSystem, path: str) -> bool:
    """Inspect's JSON recorder writes `{"version": ...` first (an object with `version` as its first key)."""
    try:
        with fs.open_input_stream(path) as fh:
            head = fh.read(256)
    except OSError:
        return True  # unreadable: import it, so the error is reported against the file
    return bool(JSON_LOG_START.match(head.removeprefix(b"\xef\xbb\xbf")))


def find_files(paths: list[str], storage: Any = None) -> Found[LogFile]:
    """Every `*.eval` and Inspect `*.json` log under `paths` (log folders or files)."""
    files: list[LogFile] = []
    notes: list[str] = []
    other_json = 0
    for p in paths:
        loc = resolve(p, storage)
        picked = 0
        for path in list_tree(loc, (".eval", ".json")):
            kind = "eval" if path.endswith(".eval") else "json"
            if kind == "json" and path != loc.path and not _looks_like_json_log(loc.fs, path):
                other_json += 1  # e.g. the log folder's logs.json listing
                continue
            files.append(LogFile(uri_of(loc, path), path, loc.fs, kind))
            picked += 1
        if not picked:
            raise ImportInputError(
                f"no Inspect logs (*.eval, or *.json written with --log-format json) under {p!r} "
                "(pass the --log-dir of `inspect eval`, or log files)"
            )
    if other_json:
        notes.append(f"left out {other_json} .json file(s) that are not Inspect logs")
    return Found.unique(files, notes)


# --- the log's own metadata -------------------------------------------------------------------------


def task_name(spec: dict[str, Any]) -> str | None:
    """`eval.task` without its package prefix (`inspect_evals/gsm8k` -> `gsm8k`)."""
    task = spec.get("task")
    if not isinstance(task, str) or not task.strip():
        return None
    return task.strip().rsplit("/", 1)[-1] or task.strip()


def _scorer_specs(header: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(score name, params) of the log's scorers, first scorer first: results.scores, else eval.scorers."""
    results = header.get("results") if isinstance(header.get("results"), dict) else {}
    scores = results.get("scores") if isinstance(results.get("scores"), list) else []
    out = [
        (s["name"], s.get("params") if isinstance(s.get("params"), dict) else {})
        for s in scores
        if isinstance(s, dict) and isinstance(s.get("name"), str)
    ]
    if out:
        return out
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    scorers = spec.get("scorers") if isinstance(spec.get("scorers"), list) else []
    return [
        (s["name"], s.get("options") if isinstance(s.get("options"), dict) else {})
        for s in scorers
        if isinstance(s, dict) and isinstance(s.get("name"), str)
    ]


def _numeric_match(header: dict[str, Any], scorer: str | None) -> bool:
    """Is the first scorer `match(numeric=True)`? (its params in results, or its options in eval.scorers)"""
    if scorer is None or scorer.rsplit("/", 1)[-1] != "match":
        return False
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    candidates = [params for name, params in _scorer_specs(header) if name == scorer]
    for s in spec.get("scorers") or []:
        if isinstance(s, dict) and s.get("name") == scorer and isinstance(s.get("options"), dict):
            candidates.append(s["options"])
    return any(c.get("numeric") is True for c in candidates)


@dataclass
class _Log:
    """What every sample of one log shares."""

    file: LogFile
    model: str | None
    task: str | None
    scorer: str | None  # the first scorer's score name: its value is the framework's verdict
    numeric: bool  # the first scorer is match(numeric=True): math answers
    between: int = 0  # samples whose value is neither 0 nor 1 under value_to_float (P, 0.5, ...)
    other: int = 0  # samples whose value is a list or mapping


def _log_notes(log: _Log, header: dict[str, Any], notes: list[str]) -> None:
    status = header.get("status")
    if status not in (None, "success"):
        notes.append(
            f"{log.file.uri}: status {status!r} (the run did not finish): samples imported as logged"
        )
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
    epochs, reducer = config.get("epochs"), config.get("epochs_reducer")
    if isinstance(epochs, int) and epochs > 1 and reducer not in (None, "mean", ["mean"]):
        notes.append(
            f"{log.file.uri}: {epochs} epochs reduced by {reducer}: Inspect's accuracy is over the reduced "
            "per-sample values; source_judgment is per epoch, so source_accuracy can differ from it"
        )


def _end_notes(log: _Log, notes: list[str]) -> None:
    if log.between:
        notes.append(
            f"{log.file.uri}: {log.between} sample(s) scored between 0 and 1 by {log.scorer!r} (P = partial is "
            "0.5 in Inspect's accuracy): imported without a framework verdict"
        )
    if log.other:
        notes.append(
            f"{log.file.uri}: {log.other} sample(s) with a list or mapping score value from {log.scorer!r}: "
            "imported without a framework verdict"
        )


# --- reading -----------------------------------------------------------------------------------------


def read(found: Found[LogFile], *, model: str | None = None, notes: list[str], **_) -> Iterator[Sample]:
    for f in found.files:
        if f.kind == "eval":
            yield from _read_eval(f, model, notes)
        else:
            yield from _read_json(f, model, notes)


def _bad_file(f: LogFile, model: str | None, problem: str, notes: list[str]) -> Sample:
    notes.append(f"{f.uri}: skipped: {problem}")
    return Sample(FRAMEWORK, f.uri, "*", model, None, problem=problem)


class _EntryError(ValueError):
    pass


def _entry_bytes(fh: Any, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One ZIP entry, decompressed (at most MAX_ENTRY_BYTES) and CRC-checked; zstd through pyarrow."""
    limit = MAX_ENTRY_BYTES
    if info.file_size > limit:
        raise _EntryError(f"entry {info.filename!r} is {info.file_size} bytes (bound {limit})")
    if info.flag_bits & 0x1:
        raise _EntryError(f"entry {info.filename!r} is encrypted")
    try:
        if info.compress_type == ZIP_ZSTANDARD and getattr(zipfile, "ZIP_ZSTANDARD", None) is None:
            data = _zstd_entry(fh, info, limit)  # Python < 3.14
        else:
            with zf.open(info) as e:
                data = e.read(limit + 1)
    except NotImplementedError as e:
        raise _EntryError(f"entry {info.filename!r}: {e} (method {info.compress_type})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, pa.ArrowException) as e:
        raise _EntryError(f"entry {info.filename!r} cannot be decompressed: {e}") from None
    if len(data) > limit:
        raise _EntryError(f"entry {info.filename!r} is over {limit} bytes decompressed")
    if zlib.crc32(data) != info.CRC:
        raise _EntryError(f"entry {info.filename!r} fails its CRC check (damaged)")
    return data


def _zstd_entry(fh: Any, info: zipfile.ZipInfo, limit: int) -> bytes:
    """A zstd entry (ZIP method 93): its raw bytes after the local file header, through pyarrow's codec."""
    fh.seek(info.header_offset)
    local = fh.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise _EntryError(f"entry {info.filename!r}: bad local file header")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    if info.compress_size > limit:
        raise _EntryError(f"entry {info.filename!r} is {info.compress_size} bytes compressed (bound {limit})")
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fh.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise _EntryError(f"entry {info.filename!r} is truncated")
    return pa.CompressedInputStream(pa.BufferReader(raw), "zstd").read(limit + 1)


def _parse(data: bytes, what: str) -> Any:
    try:
        return parse_json(data, strip_bom=True)
    except NotJson as e:
        raise _EntryError(f"{what} is {e}") from None


def _header_of(data: Any) -> tuple[dict[str, Any], str | None]:
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        return {}, "the header has no `eval` spec (not an Inspect log)"
    return data, None


def _read_eval(f: LogFile, model: str | None, notes: list[str]) -> Iterator[Sample]:
    try:
        fh = f.fs.open_input_file(f.path)
    except OSError as e:
        yield _bad_file(f, model, f"not a readable Inspect .eval log: {e}", notes)
        return
    with fh:
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            yield _bad_file(f, model, f"not a readable Inspect .eval log (ZIP archive): {e}", notes)
            return
        with zf:
            infos = {i.filename: i for i in zf.infolist()}
            name = "header.json" if "header.json" in infos else "_journal/start.json"
            if name not in infos:
                yield _bad_file(
                    f, model, "no header.json or _journal/start.json: not an Inspect .eval log", notes
                )
                return
            try:
                header, problem = _header_of(_parse(_entry_bytes(fh, zf, infos[name]), name))
            except _EntryError as e:
                header, problem = {}, str(e)
            if problem:
                yield _bad_file(f, model, problem, notes)
                return
            if name != "header.json":
                notes.append(f"{f.uri}: no header.json (an unfinished run): task and model from {name}")
            log = _new_log(f, model, header, notes)
            entries = [i for i in zf.infolist() if SAMPLE_ENTRY.match(i.filename)]
            if not entries:
                notes.append(f"{f.uri}: no samples logged (run with --no-log-samples?): nothing to import")
            for info in entries:
                m = SAMPLE_ENTRY.match(info.filename)
                fallback = f"{m.group('id')}#epoch{m.group('epoch')}"
                try:
                    raw = _parse(_entry_bytes(fh, zf, info), info.filename)
                except _EntryError as e:
                    yield Sample(FRAMEWORK, f.uri, fallback, log.model, log.task, problem=str(e))
                    continue
                yield _sample(log, raw, fallback)
            _end_notes(log, notes)


def _read_json(f: LogFile, model: str | None, notes: list[str]) -> Iterator[Sample]:
    try:
        parsed = load_json(f.fs, f.path, MAX_JSON_LOG_BYTES, strip_bom=True)
    except OverBound as e:
        if e.size is None:
            yield _bad_file(f, model, f"JSON log is over the {MAX_JSON_LOG_BYTES}-byte bound", notes)
        else:
            yield _bad_file(
                f,
                model,
                f"JSON log of {e.size} bytes is over the {MAX_JSON_LOG_BYTES}-byte bound for a whole-file "
                "read (`inspect log convert --to eval` makes an .eval log, read one sample at a time)",
                notes,
            )
        return
    except OSError as e:
        yield _bad_file(f, model, f"not a readable Inspect JSON log: {e}", notes)
        return
    except NotJson as e:
        yield _bad_file(f, model, f"not a readable Inspect JSON log: the file is {e}", notes)
        return
    header, problem = _header_of(parsed)
    if problem:
        yield _bad_file(f, model, problem, notes)
        return
    log = _new_log(f, model, header, notes)
    samples = header.get("samples")
    if samples is None or samples == []:
        notes.append(f"{f.uri}: no samples logged (run with --no-log-samples?): nothing to import")
        return
    if not isinstance(samples, list):
        yield Sample(FRAMEWORK, f.uri, "*", log.model, log.task, problem="`samples` is not a list")
        return
    for i, raw in enumerate(samples):
        yield _sample(log, raw, f"#{i}")
        samples[i] = None  # let each sample go once converted
    _end_notes(log, notes)


def _new_log(f: LogFile, model: str | None, header: dict[str, Any], notes: list[str]) -> _Log:
    spec = header["eval"]
    specs = _scorer_specs(header)
    scorer = specs[0][0] if specs else None
    name = model or (spec.get("model") if isinstance(spec.get("model"), str) and spec["model"] else None)
    log = _Log(f, name, task_name(spec), scorer, _numeric_match(header, scorer))
    _log_notes(log, header, notes)
    return log


# --- one sample ---------------------------------------------------------------------------------------


def _resolve(text: Any, attachments: Any) -> Any:
    """`attachment://<hash>` -> the text kept in the sample's `attachments` (Inspect's condensed form)."""
    if isinstance(text, str) and text.startswith(ATTACHMENT) and isinstance(attachments, dict):
        return attachments.get(text[len(ATTACHMENT) :], text)
    return text


def content_text(content: Any, attachments: Any = None) -> str | None:
    """A message's text: a string as is; a list of content blocks -> its `text` blocks joined by newlines
    (reasoning, images, tool blocks left out), as Inspect's ChatMessage.text."""
    if isinstance(content, str):
        return _resolve(content, attachments)
    if isinstance(content, list):
        texts = [
            _resolve(b.get("text"), attachments)
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(t for t in texts if isinstance(t, str))
    return None


def question_text(value: Any, attachments: Any = None) -> str | None:
    """The sample's `input`: text, or the last user message of a list of chat messages."""
    if isinstance(value, str):
        return _resolve(value, attachments)
    if isinstance(value, list):
        for msg in reversed(value):
            if isinstance(msg, dict) and msg.get("role") == "user":
                return content_text(msg.get("content"), attachments)
    return None


def response_text(output: Any, attachments: Any = None) -> str | None:
    """`output.completion`, else the text of the first choice's message (reasoning blocks left out)."""
    if not isinstance(output, dict):
        return None
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return completion
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return content_text(message.get("content"), attachments)
    return None


def value_to_float(value: Any) -> float | None:
    """Inspect's default `value_to_float()` (scorer/_metric.py), which its `accuracy()` applies; None where
    it would warn about a list or mapping (a value that is not one verdict)."""
    if isinstance(value, (list, dict)):
        return None
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value == "I" or value == "N":
        return 0.0
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        low = value.lower()
        if low in ("yes", "true"):
            return 1.0
        if low in ("no", "false"):
            return 0.0
        try:
            number = float(low)
        except ValueError:
            return 0.0  # Inspect: "Unable to convert value to float", counted as 0
        return number if math.isfinite(number) else 0.0
    return 0.0


def _verdict(log: _Log, scores: Any) -> tuple[bool | None, str | None]:
    if not isinstance(scores, dict) or not scores:
        return None, None
    name = log.scorer if log.scorer in scores else (None if log.scorer else next(iter(scores)))
    score = scores.get(name) if name is not None else None
    if not isinstance(score, dict) or "value" not in score:
        return None, None
    value = value_to_float(score["value"])
    if value is None:
        log.other += 1
        return None, f"scores.{name}"
    if value == 1.0:
        return True, f"scores.{name}"
    if value == 0.0:
        return False, f"scores.{name}"
    log.between += 1
    return None, f"scores.{name}"


def _sample(log: _Log, raw: Any, fallback: str) -> Sample:
    f = log.file
    if not isinstance(raw, dict):
        return Sample(FRAMEWORK, f.uri, fallback, log.model, log.task, problem="sample is not an object")
    sid, epoch = raw.get("id"), raw.get("epoch", 1)
    index = fallback if sid is None else f"{sid}#epoch{epoch}"
    s = Sample(FRAMEWORK, f.uri, index, log.model, log.task)
    if sid is None or isinstance(sid, (dict, list, bool)):
        s.problem = "no sample id"
        return s
    error = raw.get("error")
    if error:  # not scored by Inspect either (its metrics leave errored samples out)
        message = error.get("message") if isinstance(error, dict) else error
        s.problem = f"the sample ended in an error: {str(message)[:200]}"
        return s
    attachments = raw.get("attachments")
    s.verdict, s.metric = _verdict(log, raw.get("scores"))
    s.response = response_text(raw.get("output"), attachments)
    s.target = raw.get("target")
    question = question_text(raw.get("input"), attachments)
    if question is not None and question.startswith(ATTACHMENT):
        s.problem = "the input is an attachment reference not kept in the sample (chunked sample shape)"
        return s
    choices = raw.get("choices")
    if choices:
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            s.problem = "`choices` is not a list of option texts"
            return s
        if len(choices) > len(LETTERS):
            s.problem = f"{len(choices)} choices; at most {len(LETTERS)} can be lettered"
            return s
        s.doc = {"choices": choices}
        s.key_answer_type = "alphabet_option"
        if question is not None:  # as multiple_choice() lists them (solver/_multiple_choice.py)
            question += "\n\n" + "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(choices))
    elif log.numeric:
        s.key_answer_type = "math"
    s.prompt = question
    if s.response is None:
        s.problem = "no response text in `output`"
    elif question is None:
        s.problem = "no question text in `input`"
    return s
