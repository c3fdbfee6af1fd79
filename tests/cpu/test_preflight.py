"""The newcomer's traps (issue #16 item 6; ../shared/reviews/newcomer-first-hour.md), each on real
files: what is read from a folder, .json documents, a checkpoint that is not there, a GPU config on a
machine without one, bad input paths, runs that reject (nearly) everything, the demo config never
replacing a committed run, the README's example records, and the record tools' polish."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import xfinder_ray
from tests.signals import sigint_default
from xfinder_ray.config import ConfigError, InputConfig, StorageConfig, load_config, redacted
from xfinder_ray.preflight import model_source_problem
from xfinder_ray.stages.inventory import BadInputFile, list_input

ROOT = Path(__file__).resolve().parents[2]
LM_EVAL = ROOT / "tests/data/importers/lm_eval/smollm2"
ROW = {
    "model": "m-7b",
    "task": "MMLU",
    "key_answer_type": "alphabet_option",
    "question": "Which gas do plants absorb?",
    "llm_output": "Plants take in CO2, so the answer is (B).",
    "standard_answer_range": '[["A", "Oxygen"], ["B", "Carbon dioxide"]]',
    "correct_answer": "B",
}


def rows(prefix: str, n: int) -> list[dict]:
    return [dict(ROW, record_id=f"{prefix}{i}") for i in range(n)]


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RAY_ADDRESS"))}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), RAY_DISABLE_USAGE_STATS="1")
    return env


def score_cli(tmp_path: Path, *overrides: str, config: str = "configs/local.yaml", env=None, timeout=240):
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "score", "--config", config, "ray.num_cpus=1", *overrides],
        capture_output=True, text=True, cwd=ROOT, env=env or cli_env(tmp_path), timeout=timeout,
    )  # fmt: skip
    return r, time.monotonic() - t0


def our_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("xfinder-ray:")]


def assert_no_ray(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-3000:]
    assert "Ray instance" not in r.stderr and "ray.init" not in r.stderr, r.stderr[-3000:]


# ------------------------------------------------------------------ item 1: what a folder holds


def test_auto_lists_a_folders_parquet_and_jsonl_files(tmp_path):
    (tmp_path / "sub").mkdir()
    pq.write_table(pa.Table.from_pylist(rows("p", 3)), tmp_path / "a.parquet")
    write_jsonl(tmp_path / "sub" / "b.jsonl", rows("j", 2))
    files = list_input(InputConfig(paths=[str(tmp_path)]), StorageConfig())
    assert [(Path(f.uri).name, f.fmt) for f in files] == [("a.parquet", "parquet"), ("b.jsonl", "jsonl")]
    only = list_input(InputConfig(paths=[str(tmp_path)], format="jsonl"), StorageConfig())
    assert [Path(f.uri).name for f in only] == ["b.jsonl"]


def test_a_folder_without_the_asked_format_says_what_it_holds(tmp_path):
    write_jsonl(tmp_path / "b.jsonl", rows("j", 2))
    with pytest.raises(
        FileNotFoundError, match=r"no Parquet files under .*1 jsonl file\(s\): set input.format=auto"
    ):
        list_input(InputConfig(paths=[str(tmp_path)], format="parquet"), StorageConfig())


@pytest.mark.parametrize("fmt", ["auto", "jsonl"])
def test_json_documents_are_refused_with_the_import_formats_named(tmp_path, fmt):
    for f in LM_EVAL.glob("*/*"):
        shutil.copy(f, tmp_path)
    with pytest.raises(BadInputFile, match=r"1 \.json file\(s\) \('results_.*input.format=lm-eval"):
        list_input(InputConfig(paths=[str(tmp_path)], format=fmt), StorageConfig())
    single = next(tmp_path.glob("results_*.json"))
    if fmt == "auto":
        with pytest.raises(BadInputFile, match="not JSON Lines"):
            list_input(InputConfig(paths=[str(single)]), StorageConfig())
    # Parquet only: the folder's .json (and .jsonl) files are not what was asked for
    pq.write_table(pa.Table.from_pylist(rows("p", 1)), tmp_path / "a.parquet")
    files = list_input(InputConfig(paths=[str(tmp_path)], format="parquet"), StorageConfig())
    assert [Path(f.uri).name for f in files] == ["a.parquet"]


@pytest.mark.ray
def test_a_mixed_folder_is_scored_whole(ray_local, tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    pq.write_table(pa.Table.from_pylist(rows("p", 4)), inp / "records.parquet")
    write_jsonl(inp / "records.jsonl", rows("j", 3))
    result = xfinder_ray.score(
        "configs/local.yaml", [f"input={inp}/", f"output={tmp_path / 'out'}", "extractor.name=rules"]
    )
    assert result.manifest["counts"] == {"input": 7, "judged": 7, "rejected": 0}


# ------------------------------------------------------------------ items 5, 12: before Ray starts


def test_a_missing_checkpoint_without_fallback_is_one_line_before_ray(tmp_path):
    write_jsonl(tmp_path / "r.jsonl", rows("j", 2))
    out = tmp_path / "out"
    r, took = score_cli(
        tmp_path, f"input={tmp_path / 'r.jsonl'}", f"output={out}", "extractor.name=xfinder",
        "extractor.fallback=null", "xfinder.model_source=.cache/models/no-such-checkpoint",
    )  # fmt: skip
    assert r.returncode == 2, r.stderr[-3000:]
    (line,) = our_lines(r.stderr)
    assert line.startswith(
        "xfinder-ray: xfinder.model_source '.cache/models/no-such-checkpoint' is not a folder"
    )
    assert "hf download IAAR-Shanghai/xFinder-qwen1505" in line
    assert_no_ray(r)
    assert not out.exists() and took < 60


def test_an_uncached_hub_id_offline_is_one_line_before_ray(tmp_path):
    write_jsonl(tmp_path / "r.jsonl", rows("j", 2))
    r, _ = score_cli(
        tmp_path, f"input={tmp_path / 'r.jsonl'}", f"output={tmp_path / 'out'}",
        config="configs/default.yaml",
    )  # fmt: skip
    assert r.returncode == 2, r.stderr[-3000:]
    (line,) = our_lines(r.stderr)
    assert "'IAAR-Shanghai/xFinder-qwen1505' is a Hugging Face id that is not in the local cache" in line
    assert_no_ray(r)


def test_model_source_forms():
    assert model_source_problem("s3://bucket/models/xFinder-qwen1505") is None
    assert model_source_problem(str(ROOT)) is None  # an existing folder
    for bad in (".cache/models/xFinder-qwen1505", "xFinder-qwen1505", "org/../x", "/abs/missing"):
        assert "is not a folder on disk" in model_source_problem(bad)


def test_a_missing_input_is_one_line_before_ray(tmp_path):
    out = tmp_path / "out"
    r, _ = score_cli(tmp_path, f"input={tmp_path / 'record.jsonl'}", f"output={out}", "extractor.name=rules")
    assert r.returncode == 1, r.stderr[-3000:]
    assert our_lines(r.stderr) == [f"xfinder-ray: input '{tmp_path / 'record.jsonl'}' does not exist"]
    assert_no_ray(r)
    assert not out.exists()


def test_api_score_checks_inputs_before_ray(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        xfinder_ray.score("configs/local.yaml", [f"input={tmp_path / 'nope'}", f"output={tmp_path / 'o'}"])


# ------------------------------------------------------------------ item 9: device gpu, no GPU


@pytest.mark.ray
def test_gpu_config_without_a_gpu_fails_at_once(tmp_path):
    write_jsonl(tmp_path / "r.jsonl", rows("j", 2))
    model = tmp_path / "model"  # a folder passes the checkpoint check; the GPU check comes first
    model.mkdir()
    env = dict(cli_env(tmp_path), CUDA_VISIBLE_DEVICES="")  # no GPU for this Ray instance
    out = tmp_path / "out"
    r, took = score_cli(
        tmp_path, f"input={tmp_path / 'r.jsonl'}", f"output={out}", f"xfinder.model_source={model}",
        config="configs/default.yaml", env=env,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr[-3000:]
    (line,) = our_lines(r.stderr)
    assert line.startswith("xfinder-ray: xfinder.device=gpu, but this machine's Ray instance has no GPU")
    assert "Traceback" not in r.stderr and not out.exists() and took < 120


# ------------------------------------------------------------------ item 6: (nearly) all rejected


@pytest.mark.ray
def test_a_mostly_rejected_run_exits_3_with_reasons_and_the_lm_eval_hint(tmp_path):
    inp = tmp_path / "lm_eval_samples"
    inp.mkdir()
    for f in LM_EVAL.glob("*/samples_*.jsonl"):
        shutil.copy(f, inp)
    out = tmp_path / "out"
    r, _ = score_cli(tmp_path, f"input={inp}", f"output={out}", "extractor.name=rules")
    assert r.returncode == 3, r.stderr[-3000:]
    (line,) = our_lines(r.stderr)
    m = re.match(
        r"xfinder-ray: (\d+) of (\d+) records rejected \(100%, more than input.max_rejected_share=0.5\)", line
    )
    assert m and m.group(1) == m.group(2), line
    assert "most common reasons: " in line and " x " in line and "input.format=lm-eval" in line
    assert (out / "manifest.json").exists()  # committed: the rejects are there to read

    r, _ = score_cli(
        tmp_path, f"input={inp}", f"output={out}", "extractor.name=rules",
        "output.overwrite=true", "input.max_rejected_share=1.0",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.ray
def test_api_score_warns_when_most_records_are_rejected(ray_local, tmp_path):
    renamed = [{("response" if k == "llm_output" else k): v for k, v in rec.items()} for rec in rows("r", 4)]
    write_jsonl(tmp_path / "r.jsonl", renamed + rows("ok", 1))
    # the message names the records' columns and the mapping that would read them (issue #25, C5)
    hint = (
        r"the records' columns are model, task, key_answer_type, question, response, standard_answer_range, "
        r"correct_answer, record_id: map them with input.columns.<field>=<column>, "
        r"e.g. input.columns.llm_output=response"
    )
    with pytest.warns(UserWarning, match=r"4 of 5 records rejected \(80%.*4 x .*llm_output.*" + hint):
        xfinder_ray.score(
            "configs/local.yaml",
            [f"input={tmp_path / 'r.jsonl'}", f"output={tmp_path / 'out'}", "extractor.name=rules"],
        )


def test_input_columns_keys_are_fields_and_the_reversed_mapping_says_so():
    with pytest.raises(ConfigError, match=r"input.columns.response: the keys are the job's field names .* "
                       r"did you mean input.columns.llm_output=response\?"):  # fmt: skip
        load_config("configs/local.yaml", ["input.columns.response=llm_output"])
    with pytest.raises(ConfigError, match=r"did you mean input.columns.<field>=gold\?"):
        load_config("configs/local.yaml", ["input.columns.gold=answer"])
    cfg = load_config("configs/local.yaml", ["input.columns.llm_output=response", "input.columns.model=m"])
    assert dict(cfg.input.columns) == {"llm_output": "response", "model": "m"}


# ------------------------------------------------------------------ item 8: no silent replacement


def test_local_config_never_replaces_a_committed_run_and_the_demo_says_so_itself():
    assert load_config("configs/local.yaml").output.overwrite is False
    make = subprocess.run(
        ["make", "-n", "-o", ".venv/bin/.installed", "demo"], cwd=ROOT, capture_output=True, text=True
    )
    assert make.returncode == 0, make.stderr
    assert "score --config configs/local.yaml output.overwrite=true" in make.stdout


# ------------------------------------------------------------------ item 11: README records


def test_readme_has_a_valid_example_record_per_key_answer_type():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```jsonl\n(.*?)```", readme, re.S).group(1)
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "validate"],
        input=block,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and all(o["valid"] for o in out), r.stdout
    assert sorted(o["key_answer_type"] for o in out) == sorted(xfinder_ray.records.KEY_ANSWER_TYPES)
    assert "hf download IAAR-Shanghai/xFinder-qwen1505 --local-dir .cache/models/xFinder-qwen1505" in readme
    assert load_config("configs/local.yaml").xfinder.model_source == ".cache/models/xFinder-qwen1505"


# ------------------------------------------------------------------ items 2, 3: the quoted strings

MATH_RANGE = "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality"
YES_NO = '["yes", "no"]'
OPTIONS = '[["A", "x"], ["B", "y"], ["C", "z"]]'
QUOTED = [  # (key_answer_type, range, llm_output, the answer rules gives now)
    ("math", MATH_RANGE, '{"reasoning": "12*3=36, 36-5=31", "answer": 31}', "31"),
    ("math", MATH_RANGE, '{"answer": "31"}', "31"),
    ("math", MATH_RANGE, '{"reasoning": "x", "answer": "\\\\frac{3}{4}"}', "\\frac{3}{4}"),
    ("categorical_label", YES_NO, '{"answer": "no"}', "no"),
    ("categorical_label", YES_NO, '{"answer": "yes"}', "yes"),
    ("categorical_label", YES_NO, "**Answer:** no", "no"),
    ("alphabet_option", OPTIONS, '{"reasoning": "x", "answer": "B"}', "B"),
    ("alphabet_option", OPTIONS, '{"answer": "(C)"}', "C"),
    (
        "categorical_label",
        YES_NO,
        "No, the Pacific is not the largest ocean. The Pacific Ocean is the second",
        "no",
    ),
    ("categorical_label", YES_NO, "No. Penguins are mammals, not birds. They belong to the order of", "no"),
    ("categorical_label", YES_NO, "No.\nWater does not boil at 50 degrees Celsius at sea level", "no"),
    ("categorical_label", YES_NO, "Yes, the Amazon is big. It covers", "yes"),
    ("math", MATH_RANGE, "12 * 2 = 24\n2 * 2 = 4\n2 * 2 = ", "[No valid answer]"),  # cut off mid-sum
]


def test_newcomer_quoted_responses_through_the_extract_command():
    text = "".join(
        json.dumps(dict(ROW, record_id=str(i), key_answer_type=k, standard_answer_range=rng, llm_output=o,
                        correct_answer={"math": "31", "alphabet_option": "B"}.get(k, "no")))
        + "\n"
        for i, (k, rng, o, _) in enumerate(QUOTED)
    )  # fmt: skip
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "extract", "--extractor", "rules"],
        input=text, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = [json.loads(x)["extracted_answer"] for x in r.stdout.splitlines()]
    assert got == [want for *_, want in QUOTED]


# ------------------------------------------------------------------ items 13, 14, 15: polish


def test_validate_into_a_closed_pipe_is_quiet():
    text = (json.dumps(dict(ROW, record_id="x")) + "\n") * 20000
    r = subprocess.run(
        f"{sys.executable} -m xfinder_ray validate | head -1",
        shell=True, input=text, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert r.stdout.count("\n") == 1 and "BrokenPipe" not in r.stderr and "Traceback" not in r.stderr, (
        r.stderr
    )


def test_json_error_column_and_validate_marks_duplicates():
    good = json.dumps(dict(ROW, record_id="a"))
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "validate"],
        input=f'{good}\n{{"record_id": "b" "model": "m"}}\n{good}\n', capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert "line 2: not valid JSON (Expecting ',' delimiter at column 19)" in r.stderr, r.stderr
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out[0]["valid"] is True
    assert out[1]["valid"] is False and out[1]["reason"].startswith("duplicate record_id: first occurrence")


def test_counts_are_not_redacted_and_null_is_spelled_null(tmp_path):
    cfg = load_config(
        "configs/local.yaml",
        ["xfinder.env_vars={HF_TOKEN: secret}", "xfinder.engine_kwargs={tokenizer_mode: auto}"],
    )
    shown = redacted(cfg)
    assert shown["xfinder"]["max_tokens"] == 32 and shown["xfinder"]["env_vars"]["HF_TOKEN"] == "***"
    assert shown["xfinder"]["engine_kwargs"]["tokenizer_mode"] == "auto"
    with pytest.raises(ValueError, match="expected one of null, rules"):
        load_config("configs/local.yaml", ["extractor.fallback=none"])


@pytest.mark.ray
def test_fallback_note_on_stderr_and_import_counts_in_the_summary(tmp_path):
    # the embedded default without its checkpoint: the note goes to stderr, stdout is the leaderboard
    # and the summary lines, the import's own counts among them (item 17)
    r, _ = score_cli(
        tmp_path, f"input={ROOT / 'tests/data/importers/lm_eval/dummy'}", "input.format=lm-eval",
        f"output={tmp_path / 'out'}", "xfinder.model_source=.cache/models/no-such-checkpoint",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "NOTE:" not in r.stdout and "NOTE: xFinder checkpoint not found" in r.stderr
    assert r.stderr.count("xFinder checkpoint not found") == 1  # the NOTE only, not a log line too (P13)
    assert r.stdout.startswith("# Leaderboard"), r.stdout[:500]
    assert "import (lm-eval): 23 samples read, 16 written, 4 rejected, 3 skipped" in r.stdout, r.stdout[
        -2000:
    ]


# ------------------------------------------------------------------ issue #25 item 5: safe outputs


@pytest.mark.parametrize("where", ["inside", "is", "around"])
def test_an_output_inside_its_input_or_around_it_is_refused_before_ray(tmp_path, where):
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "records.jsonl", rows("r", 2))
    out = {"inside": data / "scored", "is": data, "around": tmp_path}[where]
    r, _ = score_cli(tmp_path, f"input={data}", f"output={out}", "extractor.name=rules")
    assert r.returncode == 2, r.stderr[-3000:]
    (line,) = our_lines(r.stderr)
    assert line.startswith(f"xfinder-ray: output.path '{out}' ") and "the next run would read its own" in line
    assert_no_ray(r)
    assert not (out / "manifest.json").exists() and not (out / "judgments").exists()


def test_a_committed_output_is_refused_before_ray_with_a_new_output_first_in_the_advice(tmp_path):
    write_jsonl(tmp_path / "records.jsonl", rows("r", 2))
    out = tmp_path / "runs" / "week1"
    out.mkdir(parents=True)
    # last week's committed run: what the refusal looks at is its commit marker (a real run's is
    # refused the same way by the job itself: tests/cpu/importers/test_importers.py)
    (out / "manifest.json").write_text('{"status": "committed"}')
    r, _ = score_cli(tmp_path, f"input={tmp_path / 'records.jsonl'}", f"output={out}", "extractor.name=rules")
    assert r.returncode == 1
    assert our_lines(r.stderr) == [
        f"xfinder-ray: {out} already holds a committed run (manifest.json); write to another output= (e.g. a "
        "dated folder, then compare_to=previous to diff against this one) or set output.overwrite=true to "
        "replace it"
    ]
    assert_no_ray(r)
    assert (out / "manifest.json").read_text() == '{"status": "committed"}' and not (
        out / "judgments"
    ).exists()


def test_input_listing_leaves_out_folders_holding_a_run(tmp_path):
    write_jsonl(tmp_path / "records.jsonl", rows("r", 2))
    for run, marker in (("old_run", "manifest.json"), ("unfinished", "_run.json")):
        (tmp_path / run / "judgments").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows("j", 2)), tmp_path / run / "judgments" / "part-0.parquet")
        (tmp_path / run / marker).write_text("{}")
    notes: list[str] = []
    files = list_input(InputConfig(paths=[str(tmp_path)]), StorageConfig(), notes)
    assert [Path(f.uri).name for f in files] == ["records.jsonl"]
    assert len(notes) == 1 and "left out 2 folder(s)" in notes[0] and "scoring output" in notes[0]
    # a run's own folder named as the input is refused, not read as records
    with pytest.raises(FileNotFoundError, match="holds a scoring output .* not input records"):
        list_input(InputConfig(paths=[str(tmp_path / "old_run")]), StorageConfig())
    # its judgments/ named on purpose are read (a user re-scoring a run's judgments)
    files = list_input(InputConfig(paths=[str(tmp_path / "old_run" / "judgments")]), StorageConfig())
    assert [Path(f.uri).name for f in files] == ["part-0.parquet"]


# ------------------------------------------------------------------ issue #25 item 5: Ctrl-C


@pytest.mark.ray
def test_ctrl_c_is_one_line_exit_130_and_keeps_the_written_parts(tmp_path):
    import signal

    from xfinder_ray.records import FIELDS
    from xfinder_ray.sample_data import read_sample

    base = [{k: r[k] for k in FIELDS} for r in read_sample()]
    table = pa.Table.from_pylist(
        [dict(r, record_id=f"{i}-{r['record_id']}") for i in range(60) for r in base]
    )  # ~124k rows in row groups of 4,096: many read tasks, so parts are written long before the end
    pq.write_table(table, tmp_path / "big.parquet", row_group_size=4096)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "xfinder_ray", "score", "--config", "configs/local.yaml", "ray.num_cpus=1",
         f"input={tmp_path / 'big.parquet'}", f"output={out}", "extractor.name=rules"],
        cwd=ROOT, env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_default,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while not list((out / "judgments").glob("*.parquet")) and proc.poll() is None:
        assert time.monotonic() < deadline, "no part written in 180 s"
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert our_lines(stderr) == [
        f"xfinder-ray: interrupted; the rows written so far are kept in {out}: run the same command to resume"
    ]
    assert "Traceback" not in stderr
    assert list((out / "judgments").glob("*.parquet")) and not (out / "manifest.json").exists()
