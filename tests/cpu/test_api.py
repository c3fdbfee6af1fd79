"""The public API a notebook discovers: `import xfinder_ray` exposes it lazily and imports no Ray."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import xfinder_ray

ROW = dict(
    record_id="r1",
    model="m",
    task="t",
    key_answer_type="alphabet_option",
    question="Which is a wedge?\nAnswer Choices: (A) a lever (B) an axe head",
    llm_output='{"reasoning": "An axe head splits wood.", "answer": "B"}',
    standard_answer_range=json.dumps([["A", "a lever"], ["B", "an axe head"]]),
    correct_answer="B",
)


def test_import_exposes_the_api_without_importing_ray():
    code = (
        "import sys, xfinder_ray as x\n"
        "names = [n for n in x.__all__ if n != '__version__']\n"
        "assert all(callable(getattr(x, n)) for n in names), names\n"
        "assert isinstance(x.__version__, str)\n"
        "assert 'ray' not in sys.modules, 'importing the API imported ray'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dir_and_docstrings():
    listed = dir(xfinder_ray)
    for name in (
        "score",
        "ablate",
        "submit",
        "ScoringJob",
        "load_config",
        "read_accuracy",
        "validate",
        "extract",
        "judge",
        "import_results",
        "__version__",
    ):
        assert name in listed and name in xfinder_ray.__all__
        if name != "__version__":
            assert getattr(xfinder_ray, name).__doc__, name
    with pytest.raises(AttributeError):
        xfinder_ray.no_such_thing  # noqa: B018


def test_record_level_functions():
    rec = xfinder_ray.validate(ROW)
    assert rec.key_answer_type == "alphabet_option"
    assert xfinder_ray.extract(ROW) == "B"
    assert xfinder_ray.extract(dict(ROW, llm_output="The answer is (A)."), extractor="lm-eval") == "A"
    assert xfinder_ray.judge("math", None, "0.5", "\\frac{1}{2}") is True
    cfg = xfinder_ray.load_config("configs/local.yaml", ["extractor.name=lm-eval", "output=/tmp/x"])
    assert cfg.extractor.name == "lm-eval"


@pytest.mark.ray
def test_score_and_read_accuracy(ray_local, tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    pq.write_table(pa.Table.from_pylist([dict(ROW, record_id=f"r{i}") for i in range(5)]), inp / "a.parquet")
    out = tmp_path / "out"
    result = xfinder_ray.score(
        "configs/local.yaml", [f"input={inp}", f"output={out}", "extractor.name=rules"]
    )
    assert result.manifest["counts"] == {"input": 5, "judged": 5, "rejected": 0}
    tables = xfinder_ray.read_accuracy(str(out))
    assert float(tables["by_model"]["accuracy_micro"].iloc[0]) == 1.0
    assert set(tables) == {"by_model_task", "by_model", "pairwise", "ranks", "conflicts"}
    assert len(tables["conflicts"]) == 0  # one gold per question here
    assert list(tables["ranks"]["model"]) == list(tables["by_model"]["model"])
