"""A verifier judge end to end through the real vLLM CPU engine, SmolLM2-135M-Instruct standing in
for the xVerify / CompassVerifier weights (which cannot be downloaded here).

SmolLM2 is no verifier, so its verdicts are not graded; the test proves the plumbing: the verifier's
prompt (with the correct answer) reaches the engine token for token, each output becomes a verdict
(judgment) or a reject with its text, rules settles its `certain` rows first, the counts reconcile
(input = settled by rules + judged by the verifier + rejected), and the cache serves a rerun.
"""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cpu.vllm_fixtures import smollm2_model  # noqa: F401  (fixture)
from xfinder_ray.config import load_config
from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.pipeline import run
from xfinder_ray.records import FIELDS, NO_VALID_ANSWER, validate
from xfinder_ray.sample_data import read_sample
from xfinder_ray.stages.judge import NO_VERDICT
from xfinder_ray.stages.route import ROUTED_BY
from xfinder_ray.verifiers import fit_verifier_prompt, parse_verdict

pytestmark = [pytest.mark.ray, pytest.mark.vllm, pytest.mark.slow]


def test_verifier_judge_end_to_end_with_real_engine(ray_local, smollm2_model, tmp_path):  # noqa: F811
    rows = [r for r in read_sample() if r["defect"] is None]
    picked = []
    for kat in ("alphabet_option", "short_text", "categorical_label", "math"):
        picked += [r for r in rows if r["key_answer_type"] == kat][:2]
    bad = dict(picked[0], record_id="bad-1", key_answer_type="essay")
    pq.write_table(
        pa.Table.from_pylist([{k: r[k] for k in FIELDS} for r in [*picked, bad]]), tmp_path / "in.parquet"
    )

    def config(out: str, *extra: str):
        return load_config(
            "configs/local.yaml",
            [
                f"input={tmp_path / 'in.parquet'}",
                f"output={tmp_path / out}",
                "extractor.name=xverify",
                "verifier.checkpoint=xVerify-0.5B-I",
                f"verifier.model_source={smollm2_model}",
                "verifier.max_tokens=6",
                "verifier.max_model_len=2048",
                "xfinder.batch_size=8",
                f"cache.path={tmp_path / 'cache'}",
                *extra,
            ],
        )

    cfg = config("out", "extractor.router=strict")
    routed = {r["record_id"] for r in picked if strict_answer(validate(r)) is not None}
    assert 0 < len(routed) < len(picked)
    m = run(cfg).manifest
    assert (
        m["extractor"].startswith("verifier:xVerify-0.5B-I@") and ":tokenizer:plain:strip:" in m["extractor"]
    )
    assert m["router"]["routed"] == len(routed)

    j = pd.read_parquet(tmp_path / "out" / "judgments").set_index("record_id")
    rej = pd.read_parquet(tmp_path / "out" / "rejects").set_index("record_id")
    # input = settled by rules + judged by the verifier + rejected (the bad record, and outputs that
    # held no verdict: SmolLM2 is no verifier)
    no_verdict = rej[rej["reason"].str.startswith(NO_VERDICT)]
    assert m["counts"]["input"] == 9 == len(j) + len(rej)
    assert set(rej.index) == {"bad-1", *no_verdict.index}
    assert len(routed) + (len(j) - len(routed)) + len(no_verdict) == len(picked)

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(smollm2_model))
    for r in picked:
        rid = r["record_id"]
        if rid in routed:  # settled by rules without the verifier: rules' answer, compared
            assert j.loc[rid, "extractor"] == ROUTED_BY and j.loc[rid, "extracted_answer"] == strict_answer(
                validate(r)
            )
            continue
        if rid in no_verdict.index:  # the verifier's text is kept in the reason, never read as "wrong"
            assert rej.loc[rid, "stage"] == "judge"
            continue
        row = j.loc[rid]
        assert row["extractor"] == m["extractor"]
        prompt, _ = fit_verifier_prompt(
            "xVerify-0.5B-I", r["question"], r["llm_output"], r["correct_answer"], max_prompt_tokens=2042
        )
        assert "Correct Answer: " + r["correct_answer"] in prompt
        # The engine saw exactly this prompt: its token count matches the tokenizer's.
        assert row["prompt_tokens"] in (
            len(tok(prompt)["input_ids"]),
            len(tok(prompt, add_special_tokens=False)["input_ids"]),
        )
        verdict = parse_verdict("xVerify-0.5B-I", row["raw_output"])
        assert verdict.parsed and row["judgment"] == (verdict.verdict == "correct")
        assert row["extracted_answer"] in ("", NO_VALID_ANSWER)
        assert row["verdict_logprob"] <= 0.0  # the verdict's log-probability: its confidence
    assert j.loc[sorted(routed), "verdict_logprob"].isna().all()  # rules' rows carry no verdict

    # A rerun without the router: every valid row goes to the verifier; the rows judged before come
    # from the cache.
    m2 = run(config("out2")).manifest
    assert m2["router"]["routed"] == 0
    assert m2["cache"]["hits"] == len(picked) - len(routed)
    assert m2["cache"]["misses"] == len(routed)
    assert m2["counts"]["input"] == 9
    manifest = json.loads((tmp_path / "out2" / "manifest.json").read_text())
    assert manifest["extractor"] == m["extractor"]
    # A cached verdict keeps its log-probability (when the stand-in wrote any verdict at all).
    if any((tmp_path / "out2" / "judgments").glob("*.parquet")):
        j2 = pd.read_parquet(tmp_path / "out2" / "judgments").set_index("record_id")
        for rid in set(j.index) & set(j2.index) - routed:
            assert (
                j2.loc[rid, "cache_hit"] and j2.loc[rid, "verdict_logprob"] == j.loc[rid, "verdict_logprob"]
            )
