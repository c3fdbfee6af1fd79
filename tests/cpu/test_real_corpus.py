"""The committed corpus of real responses (benchmarks/data/zeroeval/, scripts/build_real_corpus.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.real_corpus import CORPUS_DIR, corpus_files, load_real_corpus
from xfinder_ray.records import FIELDS, InvalidRecord, validate

REAL_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "real_dev.jsonl"
REPO = "WildEval/ZeroEval"
# The documented shape (benchmarks/data/zeroeval/README.md).
ROWS = 27_321
MODELS = 57
FAMILIES = {"GSM8K": (13_181, 44), "MATH-L5": (12_857, 43), "MMLU-Redux": (1_283, 3)}
COMMITS = {
    "8c1485edf12c6efb5f69135a562927c5ad484059",
    "5db1a561249211b8c7ce0eb7aa4f26ddaf40fdfe",
    "e26c69c4f9d4268d9044c72e2b38a25c29f4b1e3",
    "f90d6d947ed9bed3f5af354d48f297929d8b0666",
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return load_real_corpus().to_pylist()


def test_size_models_tasks(rows: list[dict]) -> None:
    assert len(rows) == ROWS
    assert len({r["model"] for r in rows}) == MODELS
    assert len({r["record_id"] for r in rows}) == ROWS
    family = Counter(r["task"].split("/")[0] for r in rows)
    assert dict(family) == {k: n for k, (n, _) in FAMILIES.items()}
    for fam, (_, models) in FAMILIES.items():
        assert len({r["model"] for r in rows if r["task"].startswith(fam)}) == models
    kat = {r["task"].split("/")[0]: r["key_answer_type"] for r in rows}
    assert kat == {"GSM8K": "math", "MATH-L5": "math", "MMLU-Redux": "alphabet_option"}
    assert sum(f.stat().st_size for f in corpus_files()) <= 10 * 1024 * 1024


def test_schema_and_source(rows: list[dict]) -> None:
    assert list(rows[0]) == [*FIELDS, "source"]
    for r in rows:
        src = r["source"]
        assert src["repo"] == REPO and src["commit"] in COMMITS, r["record_id"]
        assert src["file"].startswith("result_dirs/") and src["id"], r["record_id"]


def test_every_row_validates(rows: list[dict]) -> None:
    reasons = Counter()
    for r in rows:
        try:
            validate(r)
        except InvalidRecord as e:
            reasons[str(e)] += 1
    assert not reasons, reasons.most_common(5)


def test_multiple_choice_range_is_json(rows: list[dict]) -> None:
    # The range is stored as JSON text of [letter, text] pairs, the correct answer a letter in it.
    for r in rows:
        if r["key_answer_type"] == "alphabet_option":
            pairs = json.loads(r["standard_answer_range"])
            assert r["correct_answer"] in [p[0] for p in pairs]
            assert "\nAnswer Choices: (A) " in r["question"]


@pytest.mark.skipif(not REAL_DEV.exists(), reason=f"{REAL_DEV} absent")
def test_no_overlap_with_real_dev(rows: list[dict]) -> None:
    with open(REAL_DEV, encoding="utf-8") as f:
        dev = {(s["file"], str(s["id"])) for s in (json.loads(line)["source"] for line in f if line.strip())}
    assert len(dev) == 300
    assert not dev & {(r["source"]["file"], r["source"]["id"]) for r in rows}


def test_license_and_readme() -> None:
    license_text = (CORPUS_DIR / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0" in license_text
    readme = (CORPUS_DIR / "README.md").read_text()
    assert "WildEval/ZeroEval" in readme and "Apache" in readme
    for commit in COMMITS:
        assert commit in readme
