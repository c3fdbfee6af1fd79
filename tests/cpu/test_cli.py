"""CLI round trips through a real subprocess: stdin JSONL -> stdout JSONL."""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.signals import sigint_default

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "kaf_dev.jsonl"

GOOD = {
    "record_id": "r1",
    "model_name": "m",
    "dataset": "MMLU",
    "key_answer_type": "alphabet_option",
    "question": "Where do children learn?",
    "llm_output": "Children learn at school, so the answer is (B) school building.",
    "standard_answer_range": "[['A', 'work'], ['B', 'school building']]",
    "correct_answer": "B",
    "extra": {"kept": True},
}


def cli(*args, stdin: str):
    return subprocess.run(
        [sys.executable, "-m", "xfinder_ray", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def lines(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def test_validate_keeps_fields_and_reports_reasons():
    bad = dict(GOOD, record_id="r2", key_answer_type="essay")
    r = cli("validate", stdin="\n".join(json.dumps(x) for x in (GOOD, bad)) + "\n")
    assert r.returncode == 0, r.stderr
    out = lines(r.stdout)
    assert out[0]["valid"] is True and out[0]["reason"] is None and out[0]["extra"] == {"kept": True}
    assert out[1]["valid"] is False and "unknown key_answer_type 'essay'" in out[1]["reason"]


def test_bad_lines_are_reported_with_line_numbers_and_others_processed():
    text = json.dumps(GOOD) + "\n{not json\n[1, 2]\n" + json.dumps(dict(GOOD, record_id="r3")) + "\n"
    r = cli("prompt", stdin=text)
    assert r.returncode == 1
    assert "line 2: not valid JSON" in r.stderr and "line 3: expected a JSON object, got list" in r.stderr
    out = lines(r.stdout)
    assert [o["record_id"] for o in out] == ["r1", "r3"]
    assert out[0]["prompt"].startswith("<|System|>:You are a help assistant")
    assert "Answer range: [['A', 'work'], ['B', 'school building']]" in out[0]["prompt"]


def test_invalid_record_gets_error_field_and_exit_1():
    r = cli(
        "prompt",
        "--checkpoint",
        "xFinder-llama38it",
        "--format",
        "xfinder-package",
        stdin=json.dumps(dict(GOOD, question=None)) + "\n" + json.dumps(GOOD) + "\n",
    )
    assert r.returncode == 1 and "line 1: invalid record: field 'question' is null" in r.stderr
    out = lines(r.stdout)
    assert "error" in out[0] and out[1]["prompt"].startswith("<|start_header_id|>system")


def test_extract_then_judge_pipe():
    r1 = cli("extract", "--extractor", "rules", stdin=json.dumps(GOOD) + "\n")
    assert r1.returncode == 0, r1.stderr
    out = lines(r1.stdout)[0]
    assert out["extracted_answer"] == "B" and out["no_answer_reason"] is None  # null for an answer
    assert out["confidence"] in ("certain", "likely", "unsure")
    r2 = cli("judge", stdin=r1.stdout)
    assert r2.returncode == 0, r2.stderr
    assert lines(r2.stdout)[0]["judgment"] is True


def test_extract_says_why_there_is_no_answer():
    from xfinder_ray.extractors import rules
    from xfinder_ray.records import NO_VALID_ANSWER, validate

    hedge = dict(GOOD, llm_output="Hmm, maybe A, or perhaps B; hard to say.")
    rec = validate(hedge)
    e = rules.extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
    assert e.answer == NO_VALID_ANSWER
    for extractor in ("rules", "lm-eval"):  # a baseline's non-answer takes rules' reason
        r = cli("extract", "--extractor", extractor, stdin=json.dumps(hedge) + "\n")
        assert r.returncode == 0, r.stderr
        out = lines(r.stdout)[0]
        assert out["extracted_answer"] == NO_VALID_ANSWER and out["no_answer_reason"] == e.reason
        assert ("confidence" in out) == (extractor == "rules")


def test_judge_reads_extracted_and_xfinder_compat():
    row = {
        "key_answer_type": "math",
        "standard_answer_range": "x",
        "extracted": r"\frac{1}{2}",
        "correct_answer": "0.5",
    }
    assert lines(cli("judge", stdin=json.dumps(row) + "\n").stdout)[0]["judgment"] is True
    r = cli("judge", "--math", "xfinder-compat", stdin=json.dumps(row) + "\n")
    assert (
        r.returncode == 0 and lines(r.stdout)[0]["judgment"] is False
    )  # the original comparator's known miss
    r = cli("judge", stdin=json.dumps({"key_answer_type": "math"}) + "\n")
    assert r.returncode == 1 and "no extracted_answer" in r.stderr


@pytest.mark.skipif(not DEV.exists(), reason="../shared/data not present")
def test_dev_set_round_trip_counts():
    text = DEV.read_text()
    r1 = cli("extract", "--extractor", "rules", stdin=text)
    r2 = cli("judge", stdin=r1.stdout)
    assert r1.returncode == 0 and r2.returncode == 0
    out = lines(r2.stdout)
    assert len(out) == len(lines(text)) == 240
    assert all(isinstance(o["judgment"], bool) for o in out)


@pytest.mark.ray
@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("storage.profile=nope", "xfinder-ray: storage.profile='nope': no such AWS profile in "),
        ("input=gs://bucket/in/", "xfinder-ray: gs:// needs the gcsfs package, which is not installed"),
    ],
)
def test_a_config_error_found_while_running_is_one_line(tmp_path, setting, message):
    # Both pass load_config and surface only when the job resolves its storage, after Ray has started.
    if setting.startswith("input=gs://") and importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed here")
    (tmp_path / "credentials").write_text("[lab]\naws_access_key_id = k\naws_secret_access_key = s\n")
    (tmp_path / "config").write_text("[profile lab]\nregion = us-east-1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RAY_ADDRESS"))}
    env.update(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
        AWS_CONFIG_FILE=str(tmp_path / "config"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    overrides = [
        "input=s3://bucket/in/",
        f"output={tmp_path / 'out'}",
        "extractor.name=rules",
        "ray.num_cpus=1",
    ]
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "score", "--config", "configs/local.yaml", *overrides, setting],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=180,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    ours = [line for line in r.stderr.splitlines() if line.startswith("xfinder-ray:")]
    assert len(ours) == 1 and ours[0].startswith(message), r.stderr


def test_prompt_reasoning_hands_xfinder_the_final_part():
    think = dict(
        GOOD, llm_output="<think>Maybe work? No: children learn at school.</think>\nThe answer is (B)."
    )
    for setting, thought_kept in (("final", False), ("full", True)):
        r = cli("prompt", "--reasoning", setting, stdin=json.dumps(think) + "\n")
        assert r.returncode == 0, r.stderr
        prompt = lines(r.stdout)[0]["prompt"]
        assert "The answer is (B)." in prompt
        assert ("Maybe work?" in prompt) is thought_kept


def test_version_is_the_package_version():
    from importlib.metadata import version

    import xfinder_ray

    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout.strip()
        == f"xfinder-ray {version('xfinder-ray')}"
        == f"xfinder-ray {xfinder_ray.__version__}"
    )


def _subcommands() -> dict:
    from xfinder_ray.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices


def test_every_subcommand_says_what_it_reads_writes_and_exits_with():
    commands = _subcommands()
    assert set(commands) == {"score", "ablate", "import", "diff", "validate", "prompt", "extract", "judge"}
    for name, parser in commands.items():
        text = parser.format_help()
        for part in ("reads:", "writes:", "exit status:"):
            assert part in text, (name, part)
        codes = re.findall(r"^  (\d+) ", text.split("exit status:")[1], re.M)
        expected = {"0", "1", "2", "130"} | ({"3"} if name == "score" else set())
        assert expected <= set(codes), (name, codes)
        if name != "score":  # only score stops with 3 (too many rejects)
            assert "3" not in codes, name
    record_tools = ("validate", "prompt", "extract", "judge")
    for name in record_tools:
        assert "JSON Lines on stdin" in commands[name].format_help()
    score = commands["score"].format_help()
    assert "compare_to=" in score and "input.max_rejected_share" in score and "config.py" in score


def test_the_top_level_help_points_on():
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert r.returncode == 0
    assert "--version" in r.stdout and "README.md" in r.stdout and "make demo" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 100  # wrapped for a terminal


@pytest.mark.parametrize(
    "name", ["score", "ablate", "import", "diff", "validate", "prompt", "extract", "judge"]
)
def test_a_bad_option_is_exit_2_as_the_help_says(name, capsys):
    from xfinder_ray.cli import main

    needed = {"import": ["lm-eval", "x", "--output", "y"], "diff": ["a", "b"]}.get(name, [])
    with pytest.raises(SystemExit) as stop:
        main([name, *needed, "--no-such-option"])
    assert stop.value.code == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_diff_takes_output_like_import():
    from xfinder_ray.cli import build_parser

    assert build_parser().parse_args(["diff", "a", "b", "--output", "x"]).out == "x"
    assert build_parser().parse_args(["diff", "a", "b", "--out", "y"]).out == "y"


def test_ctrl_c_on_a_record_tool_is_one_line_and_130():
    proc = subprocess.Popen(
        [sys.executable, "-m", "xfinder_ray", "validate"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=sigint_default,
    )  # fmt: skip
    proc.stdin.write(json.dumps(GOOD) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["valid"] is True  # in the loop, waiting for the next line
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == "xfinder-ray: interrupted"


def test_a_bad_json_line_names_the_column_once():
    r = cli("validate", stdin='{"a": "x\ty"}\n')  # a raw tab inside a string
    assert r.returncode == 1
    assert r.stderr.strip() == "line 1: not valid JSON (Invalid control character at column 9)"


def test_a_glob_input_says_globs_are_not_expanded(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "score", f"input={tmp_path}/*.jsonl", f"output={tmp_path / 'out'}"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().endswith("globs are not expanded: pass the folder, or a list (input=[a,b])")
