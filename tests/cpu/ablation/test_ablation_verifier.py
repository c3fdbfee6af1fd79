"""Verifier columns in the ablation (`verifier:<checkpoint>`, ablation/model.py): beside xFinder, rules
and the RegEx baselines, a verifier's verdict is its judgment under every comparator, its extraction
accuracy is empty (it extracts nothing), an output that is no verdict rejects the row for that
column only. Without an engine (the fan-out on given outputs), and through the real vLLM CPU engine
with SmolLM2 standing in for the verifier's weights.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.cpu.ablation.test_ablation_vllm import CONFIG, real_engine, write_input
from tests.cpu.stages.helpers import batch, record
from tests.cpu.vllm_fixtures import smollm2_model  # noqa: F401  (fixture)
from xfinder_ray.ablation.config import load_ablation_config
from xfinder_ray.ablation.fanout import (
    error_col,
    extracted_col,
    extraction_ok_col,
    fanout_batch,
    judgment_col,
)
from xfinder_ray.ablation.model import logprob_col, raw_col
from xfinder_ray.config import ConfigError
from xfinder_ray.records import NO_VALID_ANSWER

CV = "verifier:CompassVerifier-3B"
COMPARATORS = ["math-verify", "xfinder-compat"]


def test_fanout_takes_the_verdict_as_the_judgment_under_every_comparator():
    df = batch(*(record(i) for i in range(4))).assign(
        **{
            "gold_key_answer": ["A", "A", "A", "A"],
            "gold_judgment": [True, True, True, True],
            "tags": [None] * 4,
            # CompassVerifier outputs: correct, incorrect, an invalid response (C), no verdict
            raw_col(CV): ["A", "B", "\\boxed{C} - INCOMPLETE", "hmm"],
            logprob_col(CV): [-0.1, -0.2, -0.3, -4.0],
            error_col(CV): [None] * 4,
        }
    )
    wide = fanout_batch(df, extractors=["rules", CV], comparators=COMPARATORS).to_pandas()
    for c in COMPARATORS:
        assert list(wide[judgment_col(CV, c)][:3]) == [True, False, False] and pd.isna(
            wide[judgment_col(CV, c)][3]
        )
        assert list(wide[judgment_col("rules", c)]) == [True] * 4  # "The answer is option A."
    assert list(wide[extracted_col(CV)][:3]) == ["", "", NO_VALID_ANSWER] and pd.isna(
        wide[extracted_col(CV)][3]
    )
    assert wide.loc[3, error_col(CV)].startswith("verifier gave no verdict")
    assert wide[extraction_ok_col(CV)].isna().all()  # nothing extracted to check against the gold
    assert wide[extraction_ok_col("rules")].all()


def test_config_checks_the_verifier_columns(tmp_path):
    def load(*extra: str):
        return load_ablation_config(CONFIG, [f"input={tmp_path}/in.parquet", f"output={tmp_path}/o", *extra])

    cfg = load(f"ablation.extractors=[rules,{CV}]")
    assert cfg.ablation.extractors == ["rules", CV]
    with pytest.raises(ConfigError, match="ablation.verifier.xVerify-70B-I.checkpoint"):
        load("ablation.extractors=[rules,verifier:xVerify-70B-I]")
    with pytest.raises(ConfigError, match="ablation.verifier.CompassVerifier-3B.variant='xverify-repo'"):
        load(f"ablation.extractors=[{CV}]", "ablation.verifier.CompassVerifier-3B.variant=xverify-repo")


@real_engine
def test_a_verifier_column_beside_rules_through_the_real_engine(ray_local, smollm2_model, tmp_path):  # noqa: F811
    from xfinder_ray.ablation.run import run_ablation

    write_input(tmp_path / "in.parquet")
    cfg = load_ablation_config(
        CONFIG,
        [
            f"input={tmp_path / 'in.parquet'}",
            f"output={tmp_path / 'out'}",
            f"ablation.extractors=[rules,lm-eval,{CV}]",
            f"ablation.comparators=[{','.join(COMPARATORS)}]",
            f"ablation.verifier.CompassVerifier-3B.model_source={smollm2_model}",
            "ablation.verifier.CompassVerifier-3B.max_tokens=4",
            "ablation.verifier.CompassVerifier-3B.max_model_len=2048",
        ],
    )
    m = run_ablation(cfg).manifest
    assert m["skipped_extractors"] == []
    assert m["extractors"][CV].startswith("verifier:CompassVerifier-3B@SmolLM2-135M-Instruct@")
    counts = m["counts"]["per_extractor"]
    for e, c in counts.items():
        assert c["judged"] + c["rejected"] == 16, e  # input = judged + rejected, per column
    wide = pd.concat([pd.read_parquet(p) for p in sorted((tmp_path / "out" / "records").glob("*.parquet"))])
    valid = wide["reject_reason"].isna()
    assert wide.loc[~valid, raw_col(CV)].isna().all()  # validation rejects never reach the verifier
    assert wide.loc[valid, raw_col(CV)].map(lambda v: isinstance(v, str)).all()
    # the verdict is the judgment under both comparators, row for row
    same = wide[judgment_col(CV, COMPARATORS[0])].astype("boolean").fillna(pd.NA)
    other = wide[judgment_col(CV, COMPARATORS[1])].astype("boolean").fillna(pd.NA)
    assert same.isna().equals(other.isna()) and (same.dropna() == other.dropna()).all()
    summary = pd.read_parquet(tmp_path / "out" / "comparison" / "summary.parquet")
    assert set(summary["extractor"]) == {"rules", "lm-eval", CV}
    agreement = pd.read_parquet(tmp_path / "out" / "comparison" / "agreement.parquet")
    assert CV in set(agreement["extractor_a"]) | set(agreement["extractor_b"])
