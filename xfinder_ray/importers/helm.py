"""Stanford CRFM HELM run folders -> Samples.

`helm-run` writes one folder per run, `benchmark_output/runs/<suite>/<run_name>/` (runner.py), holding:

- `run_spec.json`: `name` (`<scenario>:<arg>=<value>,...,model=<model>`, e.g.
  `mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt-4o`), `scenario_spec`,
  `adapter_spec`, `metric_specs`;
- `scenario_state.json`: `adapter_spec` (`method`: generation | multiple_choice_joint |
  multiple_choice_separate_original | ..., `model`, `instructions`, `input_prefix`, `num_train_trials`)
  and `request_states[]`, one per instance, train trial and perturbation: `instance` (`id`, `split`,
  `input.text`, `references[]` of `{output: {text}, tags: ["correct", ...]}`, `perturbation`),
  `train_trial_index`, `output_mapping` (multiple_choice_joint: letter -> option text), `request`
  (`prompt`, `model`), `result` (`success`, `completions[]` of `{text, logprob, thinking: {text}}`);
- `per_instance_stats.json`: per (instance_id, perturbation, train_trial_index) every stat of the run
  (`{name: {name, split}, count, mean, ...}`); `stats.json`: the same stats aggregated (a mean per
  train trial, averaged over the trials) -- what HELM's leaderboards show;
- `display_predictions.json` (written by `helm-summarize`): per (instance_id, perturbation,
  train_trial_index) `predicted_text`, `mapped_output`, `stats` ({stat name: value}, the stats of the
  run group's metric groups in HELM's schema), `thinking_text`.

Read here, per run folder (a folder with a `scenario_state.json`):

- `model`: `adapter_spec.model` (HELM's model name, e.g. `meta/llama-3-70b`; `--model` overrides);
  `task`: the run name without its `model=` / `model_deployment=` arguments, e.g.
  `mmlu:subject=anatomy,method=multiple_choice_joint` (the folder name when there is no run_spec.json).
  HELM reports splits and perturbations apart, so an instance of a split other than `test` goes
  under `<task>,split=<split>` (MMLU evaluates `valid` and `test`) and a perturbed one (HELM's data
  augmentation) under `<task>,perturbation=<name>`.
- `record_id`: `<model>::<task>::<instance id>`, with `#trial<n>` when the run has several train
  trials (`num_train_trials` > 1: each trial is one record, its own few-shot examples and verdict).
- `llm_output`: the completion HELM scored: the first of `result.completions` with the highest
  `logprob` (HELM's reference metrics sort them so; with one completion, the only one). A separate
  `thinking.text` (reasoning models) is not part of it.
- `question`: the prompt from the evaluated instance on (its `input_prefix` and input text, the
  options, the output prefix) with the instructions before it, the few-shot examples cut out; the
  instance's `input.text` (plus the options) when the prompt does not hold it (chat messages).
- multiple_choice_joint (also `_chain_of_thought`, `_multimodal`): `alphabet_option`, the range from
  `output_mapping` (letter -> option text, in its order), the gold letter the one whose option is the
  reference tagged `correct` (by position, as HELM's adapter lettered them; by text when the mapping
  is not in reference order). generation (also `chat`, `generation_multimodal`): the gold is the text
  of the reference tagged `correct` (several: a reject); when the instance also has references not
  tagged correct (a classification: every label is a reference) the reader infers
  `categorical_label` with the reference texts as range; otherwise the task map decides
  (configs/task_map.yaml: `gsm` and `math:*` are math). When the verdict is GSM8K's
  `final_number_exact_match` / `exact_match_indicator`, the gold is the final number of the reference
  (HELM's reference is `... The answer is 18.`), as final_number_exact_match reads it.
- `source_judgment`: HELM's own per-instance verdict, one correctness stat for the whole run, named in
  `source_metric`: the first of METRICS[method] that the run's per-instance stats hold --
  multiple_choice_joint: `exact_match` (HELM's main metric for MMLU-style runs); CoT joint:
  `chain_of_thought_correctness`; generation: `math_equiv_chain_of_thought`, `math_equiv`,
  `final_number_exact_match`, `exact_match_indicator`, `chain_of_thought_correctness`,
  `quasi_exact_match`, `exact_match`, ... (HELM keeps its main metric per scenario in its schema,
  not in the run folder; these are the binary ones its schemas name). Read from
  `display_predictions.json` where it has the stat, else from `per_instance_stats.json` (written by
  helm-run; display_predictions.json keeps only the stats of the schema's metric groups, so a run
  summarized with another schema lacks it). A value other than 0 / 1 gives no verdict. So per task
  (run and split) `source_accuracy` is the mean HELM writes for that stat and split in stats.json
  (HELM averages per train trial, then over trials: the same for trials of the same instances).

Left out: multiple_choice_separate_* (original, calibrated) runs score each option by its
log-probability and have no response text to re-score; they, language_modeling and the other
methods are counted as `Skipped` (one per instance and trial) with the reason. Request states
without a result or a completion (failed requests) are rejects.

Bounds: HELM writes each file as one JSON document (scenario_state.json is tens of MB for long
prompts), so a run is read whole, one run folder at a time: each file is loaded with a size bound,
MAX_JSON_BYTES (256 MiB). A file over it, or one that is not valid JSON, is not parsed: a
scenario_state.json so becomes one reject naming the file, with a note; a display_predictions.json /
per_instance_stats.json so is noted, and the verdicts come from the other file, else there are none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from xfinder_ray.importers.core import (
    Found,
    ImportInputError,
    NotJson,
    OverBound,
    Sample,
    Skipped,
    list_tree,
    load_json,
)
from xfinder_ray.storage import resolve, uri_of

FRAMEWORK = "helm"
STATE_FILE = "scenario_state.json"
RUN_SPEC_FILE = "run_spec.json"
DISPLAY_FILE = "display_predictions.json"
PER_INSTANCE_FILE = "per_instance_stats.json"
MAX_JSON_BYTES = 256 * 2**20  # one HELM file, read whole (json.load): larger ones are not parsed
MAIN_SPLIT = "test"  # HELM's main split; the records of another split go under `<task>,split=<split>`
CORRECT_TAG = "correct"  # helm.benchmark.scenarios.scenario.CORRECT_TAG
JOINT = frozenset(
    {"multiple_choice_joint", "multiple_choice_joint_chain_of_thought", "multiple_choice_joint_multimodal"}
)
GENERATION = frozenset({"generation", "chat", "generation_multimodal"})
# The per-instance correctness stat used as HELM's verdict: the first the run has, by adapter method.
# (HELM's main metric per scenario lives in its schema, not in the run folder: these are the binary
# ones its schemas name as main metrics -- exact_match for MMLU-style joint multiple choice,
# final_number_exact_match for GSM8K, math_equiv* for MATH, quasi_exact_match for classification.)
GENERATION_METRICS = (
    "math_equiv_chain_of_thought",
    "math_equiv",
    "final_number_exact_match",
    "exact_match_indicator",
    "chain_of_thought_correctness",
    "quasi_exact_match",
    "exact_match",
    "quasi_prefix_exact_match",
    "prefix_exact_match",
)
METRICS = {
    "multiple_choice_joint": ("exact_match", "quasi_exact_match"),
    "multiple_choice_joint_multimodal": ("exact_match", "quasi_exact_match"),
    "multiple_choice_joint_chain_of_thought": (
        "chain_of_thought_correctness",
        "exact_match",
        "quasi_exact_match",
    ),
    **dict.fromkeys(GENERATION, GENERATION_METRICS),
}
MODEL_ARGS = ("model", "model_deployment")
# GSM8K's verdicts: their gold is the final number of the reference (`... The answer is 18.`).
FINAL_NUMBER_METRICS = frozenset({"final_number_exact_match", "exact_match_indicator"})


@dataclass
class RunFolder:
    uri: str  # of its scenario_state.json
    path: str  # the run folder
    folder_uri: str
    fs: pafs.FileSystem
    name: str  # the folder name: HELM's run name with `/` as `_`


def find_files(paths: list[str], storage: Any = None) -> Found[RunFolder]:
    """Every HELM run folder (one with a scenario_state.json) under `paths`: benchmark_output/, a
    suite folder, run folders, or scenario_state.json files named one by one."""
    runs: list[RunFolder] = []
    notes: list[str] = []
    for p in paths:
        loc = resolve(p, storage)
        listed = list_tree(loc, (".json",))
        names: dict[str, set[str]] = {}
        for path in listed:
            folder, _, name = path.rpartition("/")
            names.setdefault(folder, set()).add(name)
        picked = [folder for folder, files in sorted(names.items()) if STATE_FILE in files]
        without = [
            folder
            for folder, files in sorted(names.items())
            if STATE_FILE not in files and RUN_SPEC_FILE in files
        ]
        for folder in without:
            notes.append(f"{uri_of(loc, folder)}: a HELM run folder without {STATE_FILE}: nothing to import")
        if not picked:
            raise ImportInputError(
                f"no HELM run folders (<run>/{STATE_FILE}) under {p!r} "
                "(pass benchmark_output/runs/<suite>/, run folders or scenario_state.json files)"
            )
        for folder in picked:
            state = f"{folder}/{STATE_FILE}"
            name = folder.rsplit("/", 1)[-1]
            runs.append(RunFolder(uri_of(loc, state), folder, uri_of(loc, folder), loc.fs, name))
    return Found.unique(runs, notes, sort=False)


class _Unreadable(Exception):
    pass


def _load_json(fs: pafs.FileSystem, path: str) -> Any:
    """The parsed file, None when it does not exist; _Unreadable (the reason) when it is over
    MAX_JSON_BYTES, unreadable or not JSON."""
    try:
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return None
        return load_json(fs, path, MAX_JSON_BYTES, info=info)
    except OverBound as e:
        bound = f"the {MAX_JSON_BYTES / 2**20:.3g} MiB bound on one HELM file"
        if e.size is None:
            raise _Unreadable(f"over {bound} (not parsed)") from None
        raise _Unreadable(f"{e.size / 2**20:.3g} MiB, over {bound} (read whole: not parsed)") from None
    except NotJson as e:
        raise _Unreadable(str(e)) from None
    except OSError as e:
        raise _Unreadable(f"cannot read it: {e}") from None


def task_of(run_name: str) -> str:
    """The run name without the model's arguments: `mmlu:subject=x,method=y,model=m` -> `mmlu:subject=x,method=y`."""
    scenario, sep, args = run_name.partition(":")
    if not sep:
        return run_name
    kept = [a for a in args.split(",") if a and a.split("=", 1)[0].strip() not in MODEL_ARGS]
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def _model_from_name(run_name: str) -> str | None:
    _, _, args = run_name.partition(":")
    for a in args.split(","):
        key, _, value = a.partition("=")
        if key.strip() == "model" and value.strip():
            return value.strip()
    return None


def _pert_key(value: Any) -> str | None:
    """A perturbation description as a comparable key (None for an original instance)."""
    if not value:
        return None
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)


def _pert_name(value: Any) -> str | None:
    if not value:
        return None
    if isinstance(value, dict):
        return str(value.get("name") or _pert_key(value))
    return str(value)


Key = tuple[str, str | None, int]


def _key(instance_id: Any, perturbation: Any, trial: Any) -> Key:
    return (str(instance_id), _pert_key(perturbation), trial if isinstance(trial, int) else 0)


def _display_stats(data: Any) -> dict[Key, dict[str, Any]]:
    out: dict[Key, dict[str, Any]] = {}
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and isinstance(item.get("stats"), dict) and "instance_id" in item:
            k = _key(item["instance_id"], item.get("perturbation"), item.get("train_trial_index"))
            out.setdefault(k, {}).update(item["stats"])
    return out


def _per_instance_stats(data: Any) -> dict[Key, dict[str, Any]]:
    """per_instance_stats.json as display_predictions.json keeps it: {stat name: mean}."""
    out: dict[Key, dict[str, Any]] = {}
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("stats"), list) or "instance_id" not in item:
            continue
        k = _key(item["instance_id"], item.get("perturbation"), item.get("train_trial_index"))
        stats = out.setdefault(k, {})
        for s in item["stats"]:
            name = s.get("name") if isinstance(s, dict) else None
            if isinstance(name, dict) and isinstance(name.get("name"), str) and s.get("mean") is not None:
                stats[name["name"]] = s["mean"]
    return out


@dataclass
class _Verdicts:
    stats: dict[Key, dict[str, Any]]
    metric: str | None
    source: str | None


def _verdicts(run: RunFolder, candidates: tuple[str, ...], notes: list[str]) -> _Verdicts:
    """HELM's per-instance stats of a run: per_instance_stats.json (written by helm-run: every stat)
    and display_predictions.json (written by helm-summarize: the stats of the schema's metric groups
    for the run's groups, so not always the correctness stat). The metric is the first candidate either
    has; its values are read from display_predictions.json where it holds them."""
    problems: list[str] = []
    found: list[tuple[str, dict[Key, dict[str, Any]]]] = []
    for name, parse in ((DISPLAY_FILE, _display_stats), (PER_INSTANCE_FILE, _per_instance_stats)):
        try:
            data = _load_json(run.fs, f"{run.path}/{name}")
        except _Unreadable as e:
            problems.append(f"{name}: {e}")
            continue
        if data is not None:
            found.append((name, parse(data)))
    for metric in candidates:
        for name, stats in found:
            if any(metric in v for v in stats.values()):
                if problems:
                    notes.append(f"{run.folder_uri}: {'; '.join(problems)}: verdicts ({metric}) from {name}")
                return _Verdicts(stats, metric, name)
    if found:
        problems.append(
            f"no {' / '.join(candidates[:3])}{' / ...' if len(candidates) > 3 else ''} stat in "
            + " or ".join(name for name, _ in found)
        )
    notes.append(
        f"{run.folder_uri}: no HELM per-instance verdicts "
        f"({'; '.join(problems) or f'no {DISPLAY_FILE} or {PER_INSTANCE_FILE}'}): "
        "imported without the framework's verdict"
    )
    return _Verdicts({}, None, None)


def read(
    found: Found[RunFolder], *, model: str | None = None, notes: list[str], **_
) -> Iterator[Sample | Skipped]:
    for run in found.files:
        yield from _read_run(run, model, notes)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _read_run(run: RunFolder, model_override: str | None, notes: list[str]) -> Iterator[Sample | Skipped]:
    state_path = f"{run.path}/{STATE_FILE}"
    spec_path = f"{run.path}/{RUN_SPEC_FILE}"
    try:
        spec = _load_json(run.fs, spec_path)
    except _Unreadable as e:
        notes.append(f"{run.folder_uri}/{RUN_SPEC_FILE}: {e}; the run name is the folder's")
        spec = None
    spec = spec if isinstance(spec, dict) else {}
    run_name = _text(spec.get("name")) or run.name
    task = task_of(run_name)
    try:
        state = _load_json(run.fs, state_path)
    except _Unreadable as e:
        notes.append(f"{run.uri}: {e}")
        yield Sample(FRAMEWORK, run.uri, "*", model_override, task, problem=f"{STATE_FILE}: {e}")
        return
    if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
        problem = f"not a HELM {STATE_FILE} (no `request_states` list)"
        notes.append(f"{run.uri}: {problem}")
        yield Sample(FRAMEWORK, run.uri, "*", model_override, task, problem=problem)
        return
    adapter = state.get("adapter_spec") if isinstance(state.get("adapter_spec"), dict) else {}
    if not adapter and isinstance(spec.get("adapter_spec"), dict):
        adapter = spec["adapter_spec"]
    method = _text(adapter.get("method")) or "?"
    model = (
        model_override
        or _text(adapter.get("model"))
        or _text(adapter.get("model_deployment"))
        or _model_from_name(run_name)
    )
    states = state["request_states"]
    if method not in METRICS:
        keys = {
            _key(
                (rs.get("instance") or {}).get("id"),
                (rs.get("instance") or {}).get("perturbation"),
                rs.get("train_trial_index"),
            )
            for rs in states
            if isinstance(rs, dict) and rs.get("request_mode") != "calibration"
        }
        if keys:
            how = (
                "HELM scored each option by its log-probability"
                if method.startswith("multiple_choice_separate")
                else "not a generation"
            )
            yield Skipped(
                FRAMEWORK, run.uri, model, task, len(keys),
                f"adapter method {method}: {how}, so there is no response text to re-score (only "
                "generation and multiple_choice_joint runs can be imported)",
            )  # fmt: skip
        return
    if not states:
        notes.append(f"{run.uri}: no request states")
        return
    verdicts = _verdicts(run, METRICS[method], notes)
    trials = adapter.get("num_train_trials")
    several = (isinstance(trials, int) and trials > 1) or any(
        isinstance(rs, dict) and isinstance(rs.get("train_trial_index"), int) and rs["train_trial_index"] > 0
        for rs in states
    )
    for i, rs in enumerate(states):
        yield _sample(run, model, task, i, rs, adapter, method, verdicts, several)


def _completion(result: dict[str, Any]) -> dict[str, Any] | None:
    """The completion HELM's reference metrics score: sorted by -logprob (stable), the first."""
    completions = [c for c in result.get("completions") or [] if isinstance(c, dict)]
    if not completions:
        return None

    def logprob(c: dict[str, Any]) -> float:
        lp = c.get("logprob")
        return float(lp) if isinstance(lp, (int, float)) and not isinstance(lp, bool) else 0.0

    return sorted(completions, key=lambda c: -logprob(c))[0]


def question_of(prompt: str | None, text: str, adapter: dict[str, Any], options: str | None) -> str:
    """The evaluated instance as the prompt shows it (from its input prefix on), the instructions
    before it, few-shot examples cut; the input text (and options) when the prompt does not hold it."""
    if prompt and text and text in prompt:
        prefix = _text(adapter.get("input_prefix")) or ""
        start = prompt.rfind(prefix + text) if prefix else -1
        start = start if start >= 0 else prompt.rfind(text)
        tail = prompt[start:].strip()
        instructions = (_text(adapter.get("instructions")) or "").strip()
        if instructions and instructions in prompt[:start]:
            return f"{instructions}\n\n{tail}"
        return tail
    return f"{text}\n{options}" if options else text


def final_number(text: str) -> str | None:
    """HELM's final_number_exact_match reading of a text: its last number, commas removed."""
    matches = re.findall(r"-?[\d,]+(?:.\d+)?", text)
    if not matches:
        return None
    return matches[-1].replace(",", "") or None


def _sample(
    run: RunFolder,
    model: str | None,
    task: str,
    i: int,
    rs: Any,
    adapter: dict[str, Any],
    method: str,
    verdicts: _Verdicts,
    several_trials: bool,
) -> Sample:
    if not isinstance(rs, dict) or not isinstance(rs.get("instance"), dict):
        return Sample(FRAMEWORK, run.uri, f"#{i}", model, task, problem="request state has no `instance`")
    inst = rs["instance"]
    trial = rs.get("train_trial_index") if isinstance(rs.get("train_trial_index"), int) else 0
    split = inst.get("split")
    if isinstance(split, str) and split and split != MAIN_SPLIT:
        task = f"{task},split={split}"
    pert = _pert_name(inst.get("perturbation"))
    if pert:
        task = f"{task},perturbation={pert}"
    iid = inst.get("id")
    index = f"#{i}" if iid is None else str(iid)
    if several_trials:
        index += f"#trial{trial}"
    s = Sample(FRAMEWORK, run.uri, index, model, task)
    if iid is None:
        s.problem = "instance has no `id`"
        return s
    if verdicts.metric:
        s.metric = f"{verdicts.metric} ({verdicts.source})"
        value = verdicts.stats.get(_key(iid, inst.get("perturbation"), trial), {}).get(verdicts.metric)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
            s.verdict = bool(value)
    result = rs.get("result")
    if not isinstance(result, dict):
        s.problem = "request state has no `result` (the request was not run or failed)"
        return s
    completion = _completion(result)
    if completion is None or not isinstance(completion.get("text"), str):
        error = _text(result.get("error"))
        s.problem = "result has no completion text" + (f" (request error: {error[:200]})" if error else "")
        return s
    s.response = completion["text"]
    text = _text((inst.get("input") or {}).get("text")) if isinstance(inst.get("input"), dict) else None
    refs = [r for r in inst.get("references") or [] if isinstance(r, dict)]
    ref_texts = [
        _text((r.get("output") or {}).get("text")) if isinstance(r.get("output"), dict) else None
        for r in refs
    ]
    correct = [t for r, t in zip(refs, ref_texts, strict=True) if CORRECT_TAG in (r.get("tags") or [])]
    request = rs.get("request") if isinstance(rs.get("request"), dict) else {}
    prompt = _text(request.get("prompt"))
    if method in JOINT:
        return _joint(s, rs, text or "", prompt, adapter, refs, ref_texts)
    s.prompt = question_of(prompt, text or "", adapter, None) if (text or prompt) else None
    if not correct or any(t is None for t in correct):
        s.problem = "no reference tagged `correct`"
        return s
    if len(correct) > 1:
        s.target = correct  # core rejects it: several reference answers, one expected
        return s
    s.target = correct[0]
    if verdicts.metric in FINAL_NUMBER_METRICS:
        s.target = final_number(correct[0]) or correct[0]
    if len(ref_texts) > 1 and all(isinstance(t, str) for t in ref_texts):
        s.doc = {"choices": ref_texts}  # a classification: every label is a reference
        s.key_answer_type = "categorical_label"
    return s


def _joint(
    s: Sample,
    rs: dict[str, Any],
    text: str,
    prompt: str | None,
    adapter: dict[str, Any],
    refs: list[dict[str, Any]],
    ref_texts: list[str | None],
) -> Sample:
    mapping = rs.get("output_mapping")
    if not isinstance(mapping, dict) or not mapping or not all(isinstance(v, str) for v in mapping.values()):
        s.problem = "no `output_mapping` (letter -> option text)"
        return s
    labels, options = [str(k) for k in mapping], list(mapping.values())
    lines = "\n".join(f"{label}. {option}" for label, option in zip(labels, options, strict=True))
    s.prompt = question_of(prompt, text, adapter, lines) if (text or prompt) else None
    is_correct = [CORRECT_TAG in (r.get("tags") or []) for r in refs]
    if ref_texts == options:  # HELM letters the references in order: the gold by position
        gold = [label for label, ok in zip(labels, is_correct, strict=True) if ok]
    else:
        correct = {t for t, ok in zip(ref_texts, is_correct, strict=True) if ok}
        gold = [label for label, option in zip(labels, options, strict=True) if option in correct]
    if len(gold) != 1:
        s.problem = (
            "no option is the reference tagged `correct`"
            if not gold
            else f"{len(gold)} options are tagged `correct` ({', '.join(gold)}); expected one"
        )
        return s
    s.target = gold[0]
    s.doc = {"choices": {"label": labels, "text": options}}
    s.key_answer_type = "alphabet_option"
    return s


__all__ = ["Found", "RunFolder", "final_number", "find_files", "question_of", "read", "task_of"]
