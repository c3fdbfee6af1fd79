"""The task map: a task / dataset name -> key_answer_type, and how the answer range and the correct
answer are recovered from one imported sample (configs/task_map.yaml, docs/importing.md).

Nothing is guessed: a task without an entry, a sample whose options cannot be found, or a correct
answer that is not in the recovered range raises `Unrecoverable` with the reason the reject carries.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xfinder_ray.records import KEY_ANSWER_TYPES, MATH_ANSWER_RANGE

DEFAULT_TASK_MAP = Path(__file__).resolve().parents[2] / "configs" / "task_map.yaml"
FRAMEWORKS = ("lm-eval", "opencompass", "inspect", "lighteval", "helm")
ENTRY_KEYS = {
    "match",
    "key_answer_type",
    "range",
    "choices",
    "labels",
    "options_from_text",
    "answer",
    "answer_map",
    "question",
    *FRAMEWORKS,
}
DEFAULT_CHOICE_FIELDS = ("choices", "options", "endings")
LETTERS = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
MAX_OPTIONS = len(LETTERS)

TaskMapSource = str | Path | Mapping[str, Any] | None


class TaskMapError(ValueError):
    """A task map that cannot be used (bad YAML, unknown key, bad value); the message names it."""


class Unrecoverable(ValueError):
    """A sample that cannot become a record; the message is the reject reason."""


@dataclass(frozen=True)
class Entry:
    name: str
    match: tuple[str, ...]
    key_answer_type: str
    range: Any = None
    choices: tuple[Any, ...] = DEFAULT_CHOICE_FIELDS
    labels: tuple[str, ...] = ()
    options_from_text: bool = True
    answer: str | None = None
    answer_map: Mapping[str, str] | None = None
    question: str | None = None


@dataclass
class TaskMap:
    entries: dict[str, dict[str, Any]]  # name -> raw entry (framework sections still inside)
    order: list[str]  # lookup order for globs: user-added names first, then the shipped file's order
    sources: list[str]

    def lookup(self, task: str, framework: str) -> Entry | None:
        """The entry for `task` (exact match first, then the first glob), with the framework's section merged."""
        name = task.casefold()
        found = next(
            (n for n in self.order if any(p.casefold() == name for p in self._patterns(n))), None
        ) or next(
            (
                n
                for n in self.order
                if any(fnmatch.fnmatchcase(name, p.casefold()) for p in self._patterns(n))
            ),
            None,
        )
        if found is None:
            return None
        return _entry(found, self.entries[found], framework)

    def _patterns(self, name: str) -> list[str]:
        return list(self.entries[name].get("match") or [name])

    def as_dict(self) -> dict[str, Any]:
        return {"version": 1, "tasks": {n: self.entries[n] for n in self.order}}


def _load_one(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    if isinstance(source, Mapping):
        data: Any = copy.deepcopy(dict(source))
        where = "<dict>"
    else:
        import yaml

        where = str(source)
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            raise TaskMapError(f"cannot read task map {where}: {e.strerror or e}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise TaskMapError(f"task map {where} is not valid YAML: {str(e).splitlines()[0]}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskMapError(f"task map {where} must be a mapping with a `tasks` key")
    if "tasks" in data:
        tasks = data["tasks"] if data["tasks"] is not None else {}
    else:  # a bare {name: entry} mapping
        tasks = {k: v for k, v in data.items() if k != "version"}
    if not isinstance(tasks, dict):
        raise TaskMapError(f"task map {where}: `tasks` must be a mapping of name -> entry")
    for name, entry in tasks.items():
        _check_entry(str(name), entry, where)
    return {str(k): v for k, v in tasks.items()}, where


def _check_entry(name: str, entry: Any, where: str, partial: bool = True) -> None:
    if not isinstance(entry, dict):
        raise TaskMapError(f"task map {where}: entry {name!r} must be a mapping")
    unknown = sorted(set(map(str, entry)) - ENTRY_KEYS)
    if unknown:
        raise TaskMapError(
            f"task map {where}: entry {name!r} has unknown key(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(ENTRY_KEYS))}"
        )
    kat = entry.get("key_answer_type")
    if kat is not None and kat not in KEY_ANSWER_TYPES:
        raise TaskMapError(
            f"task map {where}: entry {name!r} has key_answer_type {kat!r}; "
            f"expected one of {', '.join(KEY_ANSWER_TYPES)}"
        )
    match = entry.get("match")
    if match is not None and (
        isinstance(match, str) or not isinstance(match, list) or not all(isinstance(p, str) for p in match)
    ):
        raise TaskMapError(f"task map {where}: entry {name!r}: `match` must be a list of glob strings")
    for fw in FRAMEWORKS:
        if fw in entry and entry[fw] is not None:
            section = entry[fw]
            if not isinstance(section, dict) or set(section) & set(FRAMEWORKS) or "match" in section:
                raise TaskMapError(
                    f"task map {where}: entry {name!r}: `{fw}` must be a mapping of entry fields "
                    "(without match or framework sections)"
                )
            _check_entry(f"{name}.{fw}", section, where)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key in FRAMEWORKS and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **copy.deepcopy(value)}
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_task_map(
    extra: TaskMapSource | Sequence[TaskMapSource] = None, *, base: TaskMapSource = None
) -> TaskMap:
    """The shipped table (configs/task_map.yaml, or `base`) with each `extra` (a YAML path or a dict)
    merged over it: an entry with a new name is tried before the shipped ones; one with a shipped
    name is merged into that entry, field by field (lists such as `match` are replaced)."""
    first, where = _load_one(base if base is not None else DEFAULT_TASK_MAP)
    entries, order, sources = dict(first), list(first), [where]
    extras: list[TaskMapSource]
    if extra is None:
        extras = []
    elif isinstance(extra, (str, Path, Mapping)):
        extras = [extra]
    else:
        extras = list(extra)
    for source in extras:
        if source is None:
            continue
        more, where = _load_one(source)
        sources.append(where)
        new = [n for n in more if n not in entries]
        for name, entry in more.items():
            entries[name] = _merge(entries[name], entry) if name in entries else copy.deepcopy(entry)
        order = new + order
    for name in order:
        if entries[name].get("key_answer_type") is None:
            raise TaskMapError(f"task map entry {name!r} has no key_answer_type")
    return TaskMap(entries, order, sources)


def _entry(name: str, raw: dict[str, Any], framework: str) -> Entry:
    merged = {k: v for k, v in raw.items() if k not in FRAMEWORKS}
    section = raw.get(framework) or {}
    merged.update(section)
    choices = merged.get("choices")
    return Entry(
        name=name,
        match=tuple(raw.get("match") or [name]),
        key_answer_type=merged["key_answer_type"],
        range=merged.get("range"),
        choices=tuple(choices) if choices is not None else DEFAULT_CHOICE_FIELDS,
        labels=tuple(str(x) for x in merged.get("labels") or ()),
        options_from_text=bool(merged.get("options_from_text", True)),
        answer=merged.get("answer"),
        answer_map={str(k).strip().casefold(): str(v) for k, v in (merged.get("answer_map") or {}).items()},
        question=merged.get("question"),
    )


# --- answer range recovery -------------------------------------------------------------------------

# "A. text", "A) text", "A: text", "(A) text", "A、text", with optional leading spaces / markdown bullets.
_OPTION_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\(([A-Z])\)|([A-Z])\s*[.):：、．])\s*(\S.*?)\s*$")


def options_from_text(text: str) -> list[tuple[str, str]] | None:
    """The last run of consecutive option lines A, B, C, ... (two or more) in `text`, or None."""
    best: list[tuple[str, str]] | None = None
    run: list[tuple[str, str]] = []
    for line in text.splitlines():
        m = _OPTION_LINE.match(line)
        letter = (m.group(1) or m.group(2)) if m else None
        if m and len(run) < MAX_OPTIONS and letter == LETTERS[len(run)]:
            run.append((letter, m.group(3)))
            continue
        if len(run) >= 2:
            best = run
        run = [("A", m.group(3))] if m and letter == "A" else []
    if len(run) >= 2:
        best = run
    return best


def _texts(value: Any) -> list[str] | None:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, int, float)) for v in value):
        if any(isinstance(v, bool) for v in value):
            return None
        return [str(v) for v in value]
    return None


def options_from_doc(doc: Mapping[str, Any], entry: Entry) -> tuple[list[tuple[str, str]] | None, str]:
    """(pairs, field) from the first of entry.choices present in the document."""
    for spec in entry.choices:
        if isinstance(spec, (list, tuple)):  # several fields, one option each
            if all(isinstance(f, str) and f in doc for f in spec):
                texts = _texts([doc[f] for f in spec])
                if texts:
                    return _label(texts, entry), "+".join(spec)
            continue
        if not isinstance(spec, str) or spec not in doc:
            continue
        value = doc[spec]
        if isinstance(value, dict) and "text" in value:
            texts = _texts(value.get("text"))
            labels = _texts(value.get("label")) if value.get("label") is not None else None
            if texts and labels and len(labels) == len(texts):
                return list(zip(labels, texts, strict=True)), spec
            if texts:
                return _label(texts, entry), spec
            continue
        texts = _texts(value)
        if texts:
            return _label(texts, entry), spec
    return None, ""


def _label(texts: list[str], entry: Entry) -> list[tuple[str, str]]:
    labels = list(entry.labels) or LETTERS
    if len(texts) > len(labels):
        raise Unrecoverable(f"{len(texts)} options but only {len(labels)} labels")
    return list(zip(labels, texts, strict=False))


def _norm(text: str) -> str:
    return " ".join(str(text).strip().rstrip(".").split()).casefold()


def _scalar_answer(raw: Any) -> str:
    if isinstance(raw, (list, tuple)):
        values = [v for v in raw if v is not None]
        if len(values) != 1:
            raise Unrecoverable(f"{len(values)} reference answers; expected one")
        raw = values[0]
    if raw is None:
        raise Unrecoverable("no correct answer")
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, (dict,)):
        raise Unrecoverable("correct answer is a mapping, not text")
    text = str(raw).strip()
    if not text:
        raise Unrecoverable("correct answer is empty")
    return text


def _mapped(text: str, entry: Entry) -> str:
    if entry.answer_map:
        return entry.answer_map.get(text.strip().casefold(), text)
    return text


_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def last_boxed(text: str) -> str | None:
    """The content of the last \\boxed{...} (braces balanced), or None."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    i = start = starts[-1]
    depth = 1
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i].strip()
        i += 1
    return None


def math_answer(raw: Any) -> str:
    """A reference answer from a math target: the part after '####' (GSM8K), the last \\boxed{} (MATH)."""
    text = _scalar_answer(raw)
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    boxed = last_boxed(text)
    if boxed:
        text = boxed
    if not text:
        raise Unrecoverable("correct answer is empty")
    return text


def letter_answer(raw: Any, pairs: list[tuple[str, str]], entry: Entry) -> str:
    text = _mapped(_scalar_answer(raw), entry)
    labels = [label for label, _ in pairs]
    core = text.strip().strip("()[]").rstrip(".):：").strip()
    for label in labels:
        if core.casefold() == label.casefold():
            return label
    if core.isdigit() and not any(label.isdigit() for label in labels):
        i = int(core)
        if 0 <= i < len(labels):
            return labels[i]
    for label, option in pairs:
        if _norm(option) == _norm(text):
            return label
    raise Unrecoverable(
        f"correct answer {text[:80]!r} is not an option label, index or text of the range {labels}"
    )


def label_answer(raw: Any, candidates: list[str], entry: Entry) -> str:
    text = _mapped(_scalar_answer(raw), entry)
    for c in candidates:
        if _norm(c) == _norm(text):
            return c
    if text.isdigit() and not any(c.strip().isdigit() for c in candidates):
        i = int(text)
        if 0 <= i < len(candidates):
            return candidates[i]
    raise Unrecoverable(f"correct answer {text[:80]!r} is not in the range {candidates[:10]}")


def _fixed_range(entry: Entry) -> Any:
    value = entry.range
    if entry.key_answer_type == "alphabet_option":
        if not (
            isinstance(value, list)
            and value
            and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value)
        ):
            raise Unrecoverable(
                f"task_map entry {entry.name!r}: alphabet_option range must be [[letter, text], ...]"
            )
        return [(str(a), str(b)) for a, b in value]
    texts = _texts(value)
    if not texts:
        raise Unrecoverable(f"task_map entry {entry.name!r}: range must be a list of strings")
    return texts


def recover(
    entry: Entry, doc: Mapping[str, Any] | None, question: str, raw_answer: Any
) -> tuple[str, str, str]:
    """(standard_answer_range as JSON text or the math string, correct_answer, how the range was found)."""
    kat = entry.key_answer_type
    doc = doc or {}
    if kat == "math":
        return MATH_ANSWER_RANGE, math_answer(raw_answer), "math"
    if entry.range is not None:
        pairs_or_texts, how = _fixed_range(entry), "task_map"
    else:
        pairs, how = options_from_doc(doc, entry)
        if pairs is None and entry.options_from_text:
            pairs, how = options_from_text(question), "question text"
        if pairs is None:
            tried = [("+".join(s) if isinstance(s, (list, tuple)) else str(s)) for s in entry.choices]
            raise Unrecoverable(
                "answer range not recoverable: no options in document fields "
                f"{tried}{' or option lines in the question' if entry.options_from_text else ''}"
            )
        pairs_or_texts = pairs if kat == "alphabet_option" else [t for _, t in pairs]
    if kat == "alphabet_option":
        pairs = pairs_or_texts
        correct = letter_answer(raw_answer, pairs, entry)
        return json.dumps([list(p) for p in pairs], ensure_ascii=False), correct, how
    texts = pairs_or_texts
    correct = label_answer(raw_answer, texts, entry)
    return json.dumps(texts, ensure_ascii=False), correct, how
