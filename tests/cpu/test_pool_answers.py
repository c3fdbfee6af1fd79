"""benchmarks/pool_answers.py: a pool read from git objects, dumped, and two dumps compared."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path

from benchmarks.pool_answers import compare, dump

OPTIONS = [f"option {i}" for i in range(10)]


def _mmlu_pro_clone(tmp_path: Path) -> Path:
    """A git repository shaped like TIGER-AI-Lab/MMLU-Pro: eval_results/model_outputs_<model>_5shots.zip."""
    repo = tmp_path / "mmlu-pro"
    (repo / "eval_results").mkdir(parents=True)
    records = [
        {"question_id": 1, "question": "Q1?", "options": OPTIONS, "answer": "C", "pred": "C",
         "generated_text": "Let's think. The answer is (C)."},
        {"question_id": 2, "question": "Q2?", "options": OPTIONS, "answer": "B", "pred": "E",
         "generated_text": "The answer is (E) for part a and (B) for part b."},
        {"question_id": 3, "question": "Q3?", "options": OPTIONS, "answer": "A", "pred": None,
         "generated_text": "Let me see. \\[ 3 + 4 ="},
    ]  # fmt: skip
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("model_outputs_tiny_5shots.json", json.dumps(records))
    (repo / "eval_results" / "model_outputs_tiny_5shots.zip").write_bytes(buf.getvalue())
    (repo / "eval_results" / "model_outputs_lfs_5shots.zip").write_text(
        "version https://git-lfs.github.com/spec/v1\n"
    )
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "pool"], check=True)
    return repo


def test_dump_reads_the_pool_and_compare_counts_changed_classes(tmp_path, capsys):
    repo = _mmlu_pro_clone(tmp_path)
    new = tmp_path / "new.json"
    assert dump("mmlu-pro", str(repo), str(new), with_judgment=True) == 0
    answers = json.loads(new.read_text())
    assert set(answers) == {"tiny/1", "tiny/2", "tiny/3"}  # the LFS pointer is passed over
    assert answers["tiny/1"][:2] == ["C", "certain"] and answers["tiny/1"][3:] == [True, True]
    assert answers["tiny/2"][0] == "[No valid answer]" and answers["tiny/2"][2] == "multi_part"
    assert answers["tiny/3"][2] == "truncated" and answers["tiny/3"][4] is None  # no source verdict
    assert "agrees with the source's on 2 of 2" in capsys.readouterr().out

    old = tmp_path / "old.json"
    old.write_text(json.dumps({**answers, "tiny/2": ["E", "certain", "", False, False]}))
    assert compare(str(old), str(new), show=5) == 0
    out = capsys.readouterr().out
    assert "3 responses in both; 1 answers changed" in out
    assert "1  answer -> no answer (multi_part)" in out
    assert "tiny/2: 'E' -> '[No valid answer]'" in out
