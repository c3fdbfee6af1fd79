"""`xfinder-ray prompt --checkpoint <verifier>`: the verifier prompt on each record, as for xFinder."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from xfinder_ray import cli
from xfinder_ray.verifiers import CHECKPOINTS, render_verifier_prompt

ROOT = Path(__file__).resolve().parents[3]

RECORD = {
    "record_id": "r1",
    "model_name": "m",
    "dataset": "MATH",
    "key_answer_type": "math",
    "question": "What is 1/2 + 1/4?",
    "llm_output": "<think>1/2 = 2/4, so 3/4? Or 2/6.</think>\n\nThe answer is $\\frac{3}{4}$.",
    "standard_answer_range": "",
    "correct_answer": "3/4",
    "extra": {"kept": True},
}


def _run(argv: list[str], rows: list[dict]) -> tuple[int, list[dict], str]:
    args = cli.build_parser().parse_args(argv)
    stdin = io.StringIO("".join(json.dumps(r) + "\n" for r in rows))
    stdout, stderr = io.StringIO(), io.StringIO()
    status = cli.run_lines(args.make(args), stdin, stdout, stderr)
    return status, [json.loads(x) for x in stdout.getvalue().splitlines()], stderr.getvalue()


@pytest.mark.parametrize("checkpoint", CHECKPOINTS)
def test_every_published_checkpoint_renders(checkpoint):
    status, out, err = _run(["prompt", "--checkpoint", checkpoint], [RECORD])
    assert status == 0, err
    row = out[0]
    expected = render_verifier_prompt(checkpoint, RECORD["question"], RECORD["llm_output"], "3/4")
    assert row["prompt"] == expected and row["truncated"] is False
    assert row["extra"] == {"kept": True} and row["record_id"] == "r1"  # every input field kept
    assert "The answer is $\\frac{3}{4}$." in row["prompt"] and "2/6" not in row["prompt"]  # thought dropped


def test_options_reach_the_prompt():
    _, [cot], _ = _run(["prompt", "--checkpoint", "CompassVerifier-3B", "--cot"], [RECORD])
    assert cot["prompt"].endswith(
        "Analysis step by step and Final Judgment:\n<|im_end|>\n<|im_start|>assistant\n"
    )
    _, [repo], _ = _run(
        ["prompt", "--checkpoint", "xVerify-8B-I", "--variant", "xverify-repo", "--reasoning", "full"],
        [RECORD],
    )
    assert repo["prompt"].startswith(
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are"
    )
    assert "Or 2/6.</think>" in repo["prompt"]  # --reasoning full keeps the thought


def test_xfinder_prompt_unchanged():
    _, [row], _ = _run(["prompt"], [dict(RECORD, key_answer_type="math")])
    assert row["prompt"].startswith("<|System|>:You are a help assistant")
    assert "Key extracted answer: \n<|Bot|>:" in row["prompt"]


def test_invalid_record_is_reported_as_for_xfinder():
    status, out, err = _run(
        ["prompt", "--checkpoint", "xVerify-0.5B-I"], [dict(RECORD, question=None), RECORD]
    )
    assert status == 1 and "line 1: invalid record: field 'question' is null" in err
    assert "error" in out[0] and out[1]["prompt"].startswith("<|im_start|>system\nYou are Qwen")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--checkpoint", "xVerify-0.5B-I", "--cot"], "--cot is CompassVerifier's"),
        (
            ["--checkpoint", "CompassVerifier-3B", "--variant", "xverify-repo"],
            "not one of CompassVerifier-3B's",
        ),
        (["--checkpoint", "CompassVerifier-3B", "--format", "training"], "--format is xFinder's"),
        (["--checkpoint", "xVerify-0.5B-I", "--reasoning", "tail"], "final (drop a closed thought) or full"),
        (["--variant", "tokenizer"], "not xFinder-qwen1505"),
    ],
)
def test_option_mismatches_are_usage_errors(argv, message, capsys):
    args = cli.build_parser().parse_args(["prompt", *argv])
    with pytest.raises(SystemExit) as e:
        args.make(args)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_unknown_checkpoint_lists_the_verifiers(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["prompt", "--checkpoint", "xVerify-9B"])
    err = capsys.readouterr().err
    assert "xVerify-0.5B-I" in err and "CompassVerifier-32B" in err and "xFinder-qwen1505" in err


def test_real_command_line():
    r = subprocess.run(
        [sys.executable, "-m", "xfinder_ray", "prompt", "--checkpoint", "CompassVerifier-3B"],
        input=json.dumps(RECORD) + "\n",
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    prompt = json.loads(r.stdout)["prompt"]
    assert prompt.startswith(
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    )
    assert "<Candidate's Answer Begin>: \nThe answer is $\\frac{3}{4}$.\n<Candidate's Answer End>" in prompt


def test_a_response_past_the_window_loses_its_middle_as_in_the_scoring_job():
    long = dict(RECORD, llm_output="Start of the work. " + "step " * 6000 + "The answer is $\\frac{3}{4}$.")
    status, out, err = _run(["prompt", "--checkpoint", "xVerify-0.5B-I"], [long])
    assert status == 0, err
    row = out[0]
    assert row["truncated"] is True
    # the job's window: verifier.max_model_len (4096) less max_tokens (16), at 3 characters a token
    assert len(row["prompt"]) <= (4096 - 16) * 3
    assert "Start of the work." in row["prompt"] and "The answer is $\\frac{3}{4}$." in row["prompt"]
    assert "\n...\n" in row["prompt"]  # the cut is marked
    status, out, _ = _run(
        ["prompt", "--checkpoint", "xVerify-0.5B-I", "--max-prompt-tokens", "100000"], [long]
    )
    assert out[0]["truncated"] is False
