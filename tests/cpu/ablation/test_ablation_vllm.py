"""xFinder extractors in the ablation (xfinder_ray/ablation/model.py), through the real vLLM CPU engine
with a real small model (SmolLM2-135M-Instruct standing in for an xFinder checkpoint: its extractions
are not meaningful, the test proves the plumbing). Rejected rows never reach the model and are still
accounted for, the raw output is parsed into the key answer as in the scoring job, the generation's
log-probability is kept, and the least confident extractions land in review/low_confidence.

Also without an engine: a checkpoint whose folder is not on disk is skipped with a note, and the
log-probability arithmetic of the vLLM stage.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.cpu.vllm_fixtures import smollm2_model  # noqa: F401  (fixture)
from xfinder_ray.ablation.config import load_ablation_config
from xfinder_ray.ablation.fanout import error_col, extracted_col, judgment_col
from xfinder_ray.ablation.model import logprob_col, raw_col
from xfinder_ray.config import ConfigError
from xfinder_ray.parsing import parse_output
from xfinder_ray.records import parse_answer_range

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "xfinder_ray" / "data" / "sample_responses.parquet"
CONFIG = REPO / "configs" / "ablation.yaml"
XF = "xfinder:xFinder-qwen1505"


def real_engine(test):
    """The markers of the real-engine tests (as in test_vllm_stage.py; the engine starts once, in the
    module fixture, and its time counts against the first test's timeout)."""
    for mark in (pytest.mark.timeout(420), pytest.mark.slow, pytest.mark.vllm, pytest.mark.ray):
        test = mark(test)
    return test


def write_input(path: Path) -> pd.DataFrame:
    """14 valid sample rows (every key_answer_type, several models and tasks) + 2 the validate stage
    rejects (an unknown key_answer_type, an unparseable answer range)."""
    table = pq.read_table(SAMPLE)
    df = table.to_pandas()
    # a fixed draw: every key_answer_type, 8 models, 8 tasks
    valid = df[df["defect"].isna()].groupby("key_answer_type").sample(4, random_state=0).head(14)
    bad = df[df["defect"].isin(["unknown_key_answer_type", "unparseable_range"])].groupby("defect").head(1)
    assert len(valid) == 14 and len(bad) == 2
    picked = table.take(np.concatenate([valid.index.to_numpy(), bad.index.to_numpy()]))
    pq.write_table(picked, path)
    return picked.to_pandas()


def ablation_config(tmp: Path, model_source: str | Path, *extra: str):
    return load_ablation_config(
        CONFIG,
        [
            f"input={tmp / 'in.parquet'}",
            f"output={tmp / 'out'}",
            f"ablation.extractors=[rules,lm-eval,{XF}]",
            "ablation.comparators=[math-verify,xfinder-compat]",
            f"ablation.xfinder.xFinder-qwen1505.model_source={model_source}",
            *extra,
        ],
    )


@pytest.fixture(scope="module")
def xfinder_run(ray_local, smollm2_model, tmp_path_factory):  # noqa: F811
    import time

    from xfinder_ray.ablation.run import run_ablation

    tmp = tmp_path_factory.mktemp("ablation_vllm")
    rows = write_input(tmp / "in.parquet")
    cfg = ablation_config(
        tmp,
        smollm2_model,
        "ablation.xfinder.xFinder-qwen1505.max_tokens=8",
        "ablation.xfinder.xFinder-qwen1505.batch_size=8",
        "ablation.xfinder.xFinder-qwen1505.device=cpu",
        "ablation.low_confidence_limit=5",
    )
    started = time.time()
    manifest = run_ablation(cfg).manifest
    print(f"ablation with {XF} on SmolLM2: {time.time() - started:.1f} s")
    return rows, tmp / "out", manifest


@real_engine
def test_xfinder_extractor_counts_and_outputs(xfinder_run):
    rows, out, m = xfinder_run
    assert m["skipped_extractors"] == [] and m["notes"] == []
    assert m["extractors"][XF].startswith("xfinder:xFinder-qwen1505@SmolLM2-135M-Instruct@")
    counts = m["counts"]
    assert counts["input"] == 16 and counts["rejected_by_validation"] == 2
    for e, c in counts["per_extractor"].items():
        assert c["judged"] + c["rejected"] == 16, e
    xf = counts["per_extractor"][XF]
    assert xf["rejected"] == 2 + xf["extraction_errors"]

    wide = pd.concat([pd.read_parquet(p) for p in sorted((out / "records").glob("*.parquet"))])
    assert len(wide) == 16
    rejected = wide["reject_reason"].notna()
    # rejected rows never reached the model: no raw output, no logprob, no extraction
    assert wide.loc[rejected, [raw_col(XF), logprob_col(XF), extracted_col(XF)]].isna().all().all()
    ok = ~rejected & wide[error_col(XF)].isna()
    assert int(ok.sum()) == xf["judged"] >= 12
    lp = wide.loc[ok, logprob_col(XF)].astype(float)
    assert lp.notna().all() and np.isfinite(lp).all() and (lp <= 0).all()
    assert lp.nunique() > 1  # a real per-row value, not a constant
    for _, row in wide[ok].iterrows():  # the key answer is the scoring job's parse of the raw output
        rng = parse_answer_range(row["standard_answer_range"], row["key_answer_type"])
        assert isinstance(row[raw_col(XF)], str)
        assert row[extracted_col(XF)] == parse_output(row[raw_col(XF)], row["key_answer_type"], rng)
        assert row[judgment_col(XF, "math-verify")] in (True, False)

    j = pd.read_parquet(out / "judgments" / "xfinder.xFinder-qwen1505__math-verify")
    assert len(j) == xf["judged"] and {"raw_output", "logprob", "extracted", "judgment"} <= set(j.columns)
    assert (j["logprob"] <= 0).all()

    rejects = pd.read_parquet(out / "rejects" / "rejects.parquet")
    mine = rejects[rejects["extractor"].isna() | (rejects["extractor"] == XF)]
    assert len(mine) == xf["rejected"]

    agr = pd.read_parquet(out / "comparison" / "agreement.parquet")
    assert XF in set(agr["extractor_a"]) and XF in set(agr["extractor_b"])
    pair = agr[(agr["extractor_a"] == XF) & (agr["extractor_b"] == "rules")]
    assert (pair["n"] == xf["judged"]).all()
    summary = pd.read_parquet(out / "comparison" / "summary.parquet")
    assert set(summary["extractor"]) == {"rules", "lm-eval", XF}


@real_engine
def test_low_confidence_review_and_report(xfinder_run):
    _, out, m = xfinder_run
    low = pd.read_parquet(out / "review" / "low_confidence.parquet")
    assert m["low_confidence_rows"] == len(low) == 5
    assert set(low["extractor"]) == {XF}
    assert low["logprob"].is_monotonic_increasing and (low["logprob"] <= 0).all()
    wide = pd.concat([pd.read_parquet(p) for p in sorted((out / "records").glob("*.parquet"))])
    judged = wide[logprob_col(XF)].dropna().astype(float).sort_values()
    assert low["logprob"].tolist() == pytest.approx(judged.head(5).tolist())
    assert {"record_id", "llm_output", "extracted", "raw_output", "judgment"} <= set(low.columns)
    review = pd.read_parquet(out / "review" / "review.parquet")
    assert logprob_col(XF) in review.columns
    html = (out / "report.html").read_text()
    assert "Least confident xFinder extractions" in html
    assert "figures/logprob__xfinder.xFinder-qwen1505.png" in html
    assert (out / "figures" / "logprob__xfinder.xFinder-qwen1505.png").stat().st_size > 5000
    assert json.loads((out / "manifest.json").read_text())["status"] == "committed"


@pytest.mark.ray
def test_missing_model_folder_is_skipped_with_a_note(ray_local, tmp_path, monkeypatch):
    from xfinder_ray.ablation import model
    from xfinder_ray.ablation.run import run_ablation

    def no_engine(*args, **kwargs):
        raise AssertionError("an engine was built for a skipped extractor")

    monkeypatch.setattr(model, "model_stage", no_engine)
    monkeypatch.setattr("xfinder_ray.extractors.vllm.build_vllm_stage", no_engine)
    write_input(tmp_path / "in.parquet")
    missing = tmp_path / "no-such-model"
    cfg = ablation_config(tmp_path, missing)
    messages: list[str] = []  # the log (pytest runs here with -p no:logging: no caplog)
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("xfinder_ray").addHandler(handler)
    try:
        m = run_ablation(cfg).manifest
    finally:
        logging.getLogger("xfinder_ray").removeHandler(handler)
    assert list(m["extractors"]) == ["rules", "lm-eval"]
    assert [s["extractor"] for s in m["skipped_extractors"]] == [XF]
    assert str(missing) in m["skipped_extractors"][0]["reason"]
    assert m["notes"] and "never downloads" in m["notes"][0]
    assert any(XF in msg and "skipping" in msg and "never downloads" in msg for msg in messages)
    assert m["counts"]["input"] == 16 and set(m["counts"]["per_extractor"]) == {"rules", "lm-eval"}
    assert m["outputs"]["low_confidence"] is None
    assert not (tmp_path / "out" / "review" / "low_confidence.parquet").exists()
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Extractors skipped" in html and "no-such-model" in html


def test_only_missing_models_is_an_error(tmp_path):
    from xfinder_ray.ablation.run import model_extractors

    cfg = ablation_config(tmp_path, tmp_path / "nope", f"ablation.extractors=[{XF}]")
    with pytest.raises(FileNotFoundError, match="no extractor left"):
        model_extractors(cfg)


def test_xfinder_settings_and_config_checks(tmp_path):
    from xfinder_ray.ablation.model import settings

    cfg = ablation_config(
        tmp_path,
        "/models/qwen",
        "ablation.extractors=[xfinder:xFinder-qwen1505,xfinder:xFinder-llama38it,xfinder:mine]",
        "ablation.xfinder.mine.checkpoint=xFinder-llama38it",
        "ablation.xfinder.mine.prompt_format=opencompass",
    )
    a = cfg.ablation
    assert settings(a, "xfinder:xFinder-qwen1505").model_source == "/models/qwen"
    llama = settings(a, "xfinder:xFinder-llama38it")  # no section: the scoring job's defaults
    assert llama.checkpoint == "xFinder-llama38it" and llama.max_tokens == 32
    mine = settings(a, "xfinder:mine")
    assert (mine.checkpoint, mine.prompt_format) == ("xFinder-llama38it", "opencompass")
    with pytest.raises(ConfigError, match="checkpoint"):
        ablation_config(
            tmp_path, "/m", "ablation.extractors=[xfinder:other]", "ablation.xfinder.other.checkpoint=x"
        )
    with pytest.raises(ConfigError, match="max_tokens"):
        ablation_config(tmp_path, "/m", "ablation.xfinder.xFinder-qwen1505.max_tokens=0")
    with pytest.raises(ConfigError, match="needs a label"):
        ablation_config(tmp_path, "/m", "ablation.extractors=['xfinder:']")


def test_generated_logprob_sums_the_sampled_tokens():
    from xfinder_ray.extractors import vllm as vs
    from xfinder_ray.extractors.vllm import transport

    steps = [
        {11: {"logprob": -0.5, "rank": 1, "decoded_token": "B"}},
        {7: {"logprob": -0.25, "rank": 1}, 3: {"logprob": -2.0, "rank": 2}},
    ]
    assert vs.generated_logprob(steps, [11, 7]) == pytest.approx(-0.75)
    assert vs.generated_logprob([{"11": {"logprob": -1.0}}], [11]) == pytest.approx(-1.0)
    assert vs.generated_logprob([], []) == 0.0
    assert vs.generated_logprob(None, [1]) is None
    assert vs.generated_logprob([{}], [1]) is None
    assert vs.sampling_params(vs.VLLMStageConfig("m", logprobs=True))["logprobs"] == 0
    assert "logprobs" not in vs.sampling_params(vs.VLLMStageConfig("m"))
    assert math.isclose(
        vs.slim_logprob(
            {
                transport._ROW_COLUMN: b"",
                "generated_text": "B",
                "num_input_tokens": 3,
                "logprobs": steps,
                "generated_tokens": [11, 7],
            }
        )["logprobs"],
        -0.75,
    )
