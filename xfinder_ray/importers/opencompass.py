"""OpenCompass run folders -> Samples.

An OpenCompass run (`outputs/<work_dir>/<timestamp>/`) holds `predictions/<model_abbr>/<dataset_abbr>.json`
and `results/<model_abbr>/<dataset_abbr>.json` (opencompass/utils/abbr.py get_infer_output_path).

- predictions, GenInferencer (openicl/icl_inferencer/icl_base_inferencer.py GenInferencerOutputHandler):
  {"0": {"origin_prompt": str | [{"role": ..., "prompt": ...}, ...], "prediction": str | [str, ...],
  "gold": ...}, "1": ...}; `gold` is left out when falsy. A dataset split by the size partitioner is
  `<abbr>_0.json`, `<abbr>_1.json`, ..., each keyed from "0" (read back in that order by
  tasks/openicl_eval.py).
- predictions, PPLInferencer / CLPInferencer: "label: <x>" entries or "testing input": no response text;
  counted and reported as skipped.
- results (with --dump-eval-details): `details`, per sample in prediction order, either a dict keyed
  "0", "1", ... (OpenICLEvalTask.format_details; then `correct` only where the evaluator gives one) or
  a list (BaseEvaluator.evaluate: `example_abbr`, `pred`, `refr`/`answer`, `correct` as a list with
  one bool per replica); `is_correct` and `cascade_correct` are read too. Checked against real
  OpenCompass 0.5.4 runs (tests/data/importers/opencompass/).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow.fs as pafs

from xfinder_ray.importers.core import ImportInputError, Sample, Skipped, list_tree
from xfinder_ray.storage import Location, resolve, uri_of

FRAMEWORK = "opencompass"
PARTITION = re.compile(r"^(?P<base>.+)_(?P<k>\d+)$")
HUMAN_ROLES = ("HUMAN", "human", "user", "USER")
VERDICT_KEYS = ("correct", "is_correct", "cascade_correct")
ANSWER_KEYS = ("answer", "refr", "references", "gold")  # evaluators name the reference differently


@dataclass
class Dataset:
    """One (model, dataset) of one run: its prediction file(s) in order, and its results file."""

    model: str
    dataset: str
    parts: list[str]  # paths inside fs, partition order
    uris: list[str]
    fs: pafs.FileSystem
    results_path: str | None


# Not core.Found: a dataset here is several files (partitions), each with its own uri.
@dataclass
class Found:
    datasets: list[Dataset]
    notes: list[str] = field(default_factory=list)

    @property
    def uris(self) -> list[str]:
        return [u for d in self.datasets for u in d.uris]


def _split(path: str) -> tuple[str, str, str] | None:
    """(run root, model, dataset) of a path .../predictions/<model>/<dataset...>.json."""
    parts = path.split("/")
    if "predictions" not in parts[:-2]:
        return None
    i = len(parts) - 1 - parts[::-1].index("predictions", 2)
    if i + 2 >= len(parts):
        return None
    root = "/".join(parts[:i])
    dataset = "/".join(parts[i + 2 :])[: -len(".json")]
    return root, parts[i + 1], dataset


def find_files(paths: list[str], storage: Any = None) -> Found:
    """Every predictions/<model>/<dataset>.json under `paths` (a run folder, its predictions folder, a
    model folder in it, or prediction files)."""
    notes: list[str] = []
    groups: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    loc_of: dict[tuple[str, str, str], Location] = {}
    for p in paths:
        loc = resolve(p, storage)
        listed = list_tree(loc, (".json",))
        picked = 0
        listed_set = set(listed)
        for path in listed:
            where = _split(path)
            if where is None:
                if path != loc.path:
                    continue  # results/, summary/, configs/ of a run folder
                parent = path.rsplit("/", 2)  # a prediction file outside the usual layout
                where = ("", parent[-2] if len(parent) >= 2 else "unknown", parent[-1][: -len(".json")])
                notes.append(f"{path}: not under predictions/<model>/; model taken from its folder")
            root, model, dataset = where
            folder, name = path.rsplit("/", 1)
            m = PARTITION.match(name[: -len(".json")])
            k = 0
            if (
                m
                and f"{folder}/{m.group('base')}.json" not in listed_set
                and f"{folder}/{m.group('base')}_0.json" in listed_set
            ):
                k = int(m.group("k"))  # <abbr>_<k>.json: part k of a partitioned dataset
                dataset = dataset[: len(dataset) - len(name) + len(".json")] + m.group("base")
            key = (root, model, dataset)
            groups.setdefault(key, []).append((k, path))
            loc_of[key] = loc
            picked += 1
        if not picked:
            raise ImportInputError(
                f"no OpenCompass predictions/<model>/<dataset>.json files under {p!r} "
                "(pass a run folder such as outputs/default/<timestamp>)"
            )
    datasets: list[Dataset] = []
    for (root, model, dataset), parts in sorted(groups.items()):
        loc = loc_of[(root, model, dataset)]
        fs = loc.fs
        ordered = [path for _, path in sorted(set(parts))]
        ks = sorted({k for k, _ in parts})
        if len(ordered) > 1 and ks != list(range(len(ks))):
            notes.append(f"{model}/{dataset}: partitions {ks} are not consecutive from 0")
        results = f"{root}/results/{model}/{dataset}.json" if root else None
        if results and fs.get_file_info(results).type != pafs.FileType.File:
            results = None
        uris = [uri_of(loc, q) for q in ordered]
        datasets.append(Dataset(model, dataset, ordered, uris, fs, results))
    return Found(datasets, notes)


def _load(fs: pafs.FileSystem, path: str) -> Any:
    with fs.open_input_stream(path) as f:
        return json.loads(f.read().decode("utf-8"))


def _verdicts(fs: pafs.FileSystem, path: str | None) -> tuple[dict[int, tuple[bool | None, Any]], str | None]:
    """{global index: (verdict, reference answer)} from results `details`, and the metric's name."""
    if path is None:
        return {}, None
    try:
        data = _load(fs, path)
    except (OSError, ValueError):
        return {}, None
    details = data.get("details") if isinstance(data, dict) else None
    if isinstance(details, dict):
        items = [(int(k), v) for k, v in details.items() if str(k).isdigit()]
    elif isinstance(details, list):
        items = list(enumerate(details))
    else:
        return {}, None
    out: dict[int, tuple[bool | None, Any]] = {}
    metric = None
    for i, d in items:
        if not isinstance(d, dict):
            continue
        verdict = None
        for key in VERDICT_KEYS:
            value = d.get(key)
            if isinstance(value, list) and len(value) == 1:
                value = value[0]
            if isinstance(value, bool):
                verdict, metric = value, f"details.{key}"
                break
        answer = next((d[k] for k in ANSWER_KEYS if k in d), None)
        if isinstance(answer, list) and len(answer) == 1 and "example_abbr" in d:
            answer = answer[0]  # BaseEvaluator.evaluate: one value per replica
        out[i] = (verdict, answer)
    return out, metric


def _question(origin: Any) -> str | None:
    """The question as the model saw it: the prompt text, or the last human turn of a chat."""
    if isinstance(origin, str):
        return origin
    if isinstance(origin, list) and origin and all(isinstance(x, list) for x in origin):
        origin = origin[-1]  # multiround: the last round
    if isinstance(origin, list):
        turns = [t for t in origin if isinstance(t, dict)]
        human = [t for t in turns if t.get("role") in HUMAN_ROLES] or turns
        for turn in reversed(human):
            text = turn.get("prompt", turn.get("content"))
            if isinstance(text, str):
                return text
    return None


def _is_scored_by_likelihood(entry: dict[str, Any]) -> bool:
    return any(str(k).startswith("label: ") for k in entry) or "testing input" in entry


def read(found: Found, *, model: str | None = None, notes: list[str], **_) -> Iterator[Sample | Skipped]:
    for d in found.datasets:
        yield from _read_dataset(d, model or d.model, notes)


@dataclass
class _Progress:
    """What reading one dataset carries from one prediction file (partition) to the next."""

    verdicts: dict[int, tuple[bool | None, Any]]  # from the results file, by global index
    metric: str | None
    offset: int = 0  # the global index of the current part's first entry
    skipped: int = 0  # entries scored by likelihood (no response text)
    several_noted: bool = False  # the "several predictions per sample" note is given once


def _read_dataset(d: Dataset, model: str, notes: list[str]) -> Iterator[Sample | Skipped]:
    progress = _Progress(*_verdicts(d.fs, d.results_path))
    for path, uri in zip(d.parts, d.uris, strict=True):
        yield from _read_part(d, path, uri, model, progress, notes)
    if progress.skipped:
        yield Skipped(
            FRAMEWORK, d.uris[0], model, d.dataset, progress.skipped,
            "ppl/clp inference: scored by perplexity over the options, so there is no response text to "
            "re-score (only gen datasets can be imported)",
        )  # fmt: skip
    _note_verdicts(d, model, progress.verdicts, notes)


def _read_part(
    d: Dataset, path: str, uri: str, model: str, progress: _Progress, notes: list[str]
) -> Iterator[Sample]:
    """The samples of one prediction file; a file that cannot be read is one reject (and no indexes)."""
    try:
        data = _load(d.fs, path)
    except (OSError, ValueError) as e:
        yield Sample(FRAMEWORK, uri, "*", model, d.dataset, problem=f"not a readable predictions file: {e}")
        return
    if not isinstance(data, dict):
        yield Sample(
            FRAMEWORK, uri, "*", model, d.dataset,
            problem=f"not an OpenCompass predictions file (a {type(data).__name__}, expected an object)",
        )  # fmt: skip
        return
    keys = sorted((k for k in data if str(k).isdigit()), key=int)
    for k in (k for k in data if not str(k).isdigit()):
        yield Sample(
            FRAMEWORK,
            uri,
            str(k),
            model,
            d.dataset,
            problem=f"prediction key {str(k)[:40]!r} is not an index",
        )
    for k in keys:
        entry = data[k]
        index = progress.offset + int(k)
        if not isinstance(entry, dict):
            yield Sample(
                FRAMEWORK, uri, str(index), model, d.dataset, problem="prediction entry is not an object"
            )
            continue
        if _is_scored_by_likelihood(entry):
            progress.skipped += 1
            continue
        yield _entry_sample(d, uri, model, index, entry, progress, notes)
    progress.offset += len(keys)


def _entry_sample(
    d: Dataset, uri: str, model: str, index: int, entry: dict[str, Any], progress: _Progress, notes: list[str]
) -> Sample:
    """The Sample of one generated prediction, with the framework's verdict from the results details."""
    prediction = entry.get("prediction")
    if isinstance(prediction, dict):
        prediction = prediction.get("prediction")
    verdict, answer = progress.verdicts.get(index, (None, None))
    if isinstance(prediction, list):
        if len(prediction) > 1:
            verdict = None  # the framework scored all of them together; we import the first
            if not progress.several_noted:
                notes.append(
                    f"{model}/{d.dataset}: several predictions per sample; the first is imported, "
                    "without the framework's verdict"
                )
                progress.several_noted = True
        prediction = prediction[0] if prediction and isinstance(prediction[0], str) else None
    gold = entry.get("gold", answer)
    problem = None
    question = _question(entry.get("origin_prompt"))
    if not isinstance(prediction, str):
        problem = "no prediction text"
    elif question is None:
        problem = "no origin_prompt"
    elif gold is None:
        problem = "no gold answer (absent from the prediction and the results details)"
    return Sample(
        framework=FRAMEWORK,
        path=uri,
        index=str(index),
        model=model,
        task=d.dataset,
        prompt=question,
        response=prediction if isinstance(prediction, str) else None,
        target=gold,
        doc=None,
        verdict=verdict,
        metric=progress.metric if verdict is not None else None,
        problem=problem,
    )


def _note_verdicts(
    d: Dataset, model: str, verdicts: dict[int, tuple[bool | None, Any]], notes: list[str]
) -> None:
    """Say why a dataset's samples come without the framework's verdicts."""
    if d.results_path is None:
        notes.append(f"{model}/{d.dataset}: no results/{model}/{d.dataset}.json; no framework verdicts")
    elif not verdicts:
        notes.append(
            f"{model}/{d.dataset}: the results file has no per-sample `details` "
            "(run OpenCompass with --dump-eval-details); no framework verdicts"
        )
    elif all(v is None for v, _ in verdicts.values()):
        notes.append(
            f"{model}/{d.dataset}: the evaluator wrote no per-sample verdict (`correct`) in `details`"
        )
