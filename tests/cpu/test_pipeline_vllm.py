"""End to end through the real vLLM CPU engine with a real small model (SmolLM2-135M-Instruct).

SmolLM2 is not an xFinder checkpoint, so its answers are not graded here; the test proves the
plumbing: the training-format prompt reaches the engine token for token, raw generations are parsed
into the answer range, and every record is judged or rejected with a reason.
"""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cpu.vllm_fixtures import smollm2_model  # noqa: F401  (fixture)
from xfinder_ray.config import load_config
from xfinder_ray.extractors.router import strict_answer
from xfinder_ray.parsing import parse_output
from xfinder_ray.pipeline import run
from xfinder_ray.prompts import render_prompt
from xfinder_ray.records import FIELDS, NO_VALID_ANSWER, parse_answer_range, validate
from xfinder_ray.sample_data import read_sample
from xfinder_ray.stages.route import ROUTED_BY
from xfinder_ray.verifiers import parse_verdict

pytestmark = [pytest.mark.ray, pytest.mark.vllm, pytest.mark.slow]


def test_xfinder_end_to_end_with_real_engine(ray_local, smollm2_model, tmp_path):  # noqa: F811
    rows = [r for r in read_sample() if r["defect"] is None]
    picked, seen = [], set()
    for r in rows:  # two of each key_answer_type, from different questions
        key = (r["key_answer_type"], len([p for p in picked if p["key_answer_type"] == r["key_answer_type"]]))
        if key[1] < 2 and key not in seen:
            seen.add(key)
            picked.append(r)
    bad = dict(picked[0], record_id="bad-1", key_answer_type="essay")
    table = pa.Table.from_pylist([{k: r[k] for k in FIELDS} for r in [*picked, bad]])
    pq.write_table(table, tmp_path / "in.parquet")

    def config(name: str, *extra: str):
        return load_config(
            "configs/local.yaml",
            [
                f"input={tmp_path / (name + '.parquet')}",
                f"output={tmp_path / ('out-' + name)}",
                f"xfinder.model_source={smollm2_model}",
                "xfinder.max_tokens=8",
                "xfinder.batch_size=8",
                f"cache.path={tmp_path / 'cache'}",
                *extra,
            ],
        )

    cfg = config("in", "extractor.router=strict")
    routed = {r["record_id"] for r in picked if strict_answer(validate(r)) is not None}
    assert 0 < len(routed) < len(picked)
    res = run(cfg)
    assert not res.notes  # the model is on disk: no fallback to rules
    m = json.loads((tmp_path / "out-in" / "manifest.json").read_text())
    assert m["counts"] == {"input": 9, "judged": 8, "rejected": 1}
    assert m["extractor"].startswith("xfinder:xFinder-qwen1505@") and ":training:" in m["extractor"]

    j = pd.read_parquet(tmp_path / "out-in" / "judgments").set_index("record_id")
    assert len(j) == 8 and j["judgment"].notna().all()
    assert set(j["extractor"]) == {m["extractor"], ROUTED_BY}

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(smollm2_model))
    assert m["router"] == {"mode": "strict", "routed": len(routed), "share": round(len(routed) / 8, 4)}
    assert set(j.index[j["extractor"] == ROUTED_BY]) == routed
    assert (j.loc[sorted(routed), "confidence"] == "certain").all()  # the tier the router settles
    assert j.loc[[i for i in j.index if i not in routed], "confidence"].isna().all()  # model rows: none
    for r in picked:
        row = j.loc[r["record_id"]]
        rng = parse_answer_range(r["standard_answer_range"], r["key_answer_type"])
        if r["record_id"] in routed:  # settled without the model: no prompt, no cache entry
            assert row["extracted_answer"] == strict_answer(validate(r)) and pd.isna(row["cache_hit"])
            continue
        prompt = render_prompt(r["question"], r["llm_output"], rng, reasoning=cfg.xfinder.reasoning).prompt
        # The engine saw exactly our rendered prompt: its token count matches the tokenizer's.
        assert row["prompt_tokens"] in (
            len(tok(prompt)["input_ids"]),
            len(tok(prompt, add_special_tokens=False)["input_ids"]),
        )
        assert isinstance(row["raw_output"], str)
        # What was judged is the parse of what the engine wrote.
        assert row["extracted_answer"] == parse_output(row["raw_output"], r["key_answer_type"], rng)
        if r["key_answer_type"] != "math":
            assert row["extracted_answer"] == NO_VALID_ANSWER or row["extracted_answer"] in (
                [x[0] for x in rng] if r["key_answer_type"] == "alphabet_option" else rng
            )
    rejects = pd.read_parquet(tmp_path / "out-in" / "rejects")
    assert list(rejects["record_id"]) == ["bad-1"] and "unknown key_answer_type" in rejects["reason"][0]

    # Incremental re-score: the same records plus two new responses, into a new output with the same
    # cache. Only the two new prompts reach the model; the others are served from the cache.
    assert m["cache"] == {
        "path": str(tmp_path / "cache" / m["cache"]["path"].rsplit("/", 1)[-1]),
        "hits": 0,
        "misses": 8 - len(routed),
    }
    new = [
        dict(picked[i], record_id=f"new-{i}", llm_output=picked[i]["llm_output"] + " (revised)")
        for i in (0, 1)
    ]
    # A reasoning model's response: a long thought, then picked[2]'s text. Under `xfinder.reasoning:
    # final` (the default) the engine reads only the final part, so its prompt is picked[2]'s.
    thought = "Let me weigh every option once more before I commit. " * 60
    think = dict(
        picked[2],
        record_id="new-think",
        llm_output=f"<think>\n{thought}\n</think>\n\n{picked[2]['llm_output']}",
    )
    table = pa.Table.from_pylist([{k: r[k] for k in FIELDS} for r in [*picked, bad, *new, think]])
    pq.write_table(table, tmp_path / "in2.parquet")
    # With a second opinion (issue #23): a verifier (SmolLM2 standing in) judges the rows where xFinder
    # and rules disagree. Two replica pools on this 2-CPU Ray instance: half a CPU each.
    cfg2 = config(
        "in2",
        "second_opinion.checkpoint=xVerify-0.5B-I",
        f"second_opinion.model_source={smollm2_model}",
        "second_opinion.max_tokens=6",
        "second_opinion.max_model_len=2048",
        "xfinder.cpus_per_replica=0.5",
    )
    assert cfg2.xfinder.reasoning == "final" and ":training:final:" in m["extractor"]
    m2 = run(cfg2).manifest
    assert m2["counts"] == {"input": 12, "judged": 11, "rejected": 1}
    # This run has no router: the records routed before now need the model too.
    hit = picked[2]["record_id"] not in routed  # the reasoning row shares picked[2]'s cache entry
    assert (m2["cache"]["hits"], m2["cache"]["misses"]) == (
        8 - len(routed) + hit,
        2 + len(routed) + (not hit),
    )
    j2 = pd.read_parquet(tmp_path / "out-in2" / "judgments").set_index("record_id")
    for r in picked:
        if r["record_id"] in routed:
            continue
        assert (
            j2.loc[r["record_id"], "cache_hit"]
            and j2.loc[r["record_id"], "raw_output"] == j.loc[r["record_id"], "raw_output"]
        )
    assert not j2.loc["new-0", "cache_hit"] and not j2.loc["new-1", "cache_hit"]
    plain, reasoned = j2.loc[picked[2]["record_id"]], j2.loc["new-think"]
    assert reasoned["prompt_tokens"] == plain["prompt_tokens"]  # the thought never reached the engine
    assert reasoned["cache_hit"] == hit and (reasoned["raw_output"] == plain["raw_output"] or not hit)

    # The second opinion: asked exactly where xFinder's judgment and rules' differ; its verdict (or
    # none: SmolLM2 is no verifier) recorded; the judgment is its verdict where it gave one; xFinder's
    # outputs are back in place (the cache assertions above read them).
    so = m2["second_opinion"]
    assert so["judge"].startswith("verifier:xVerify-0.5B-I@") and so["decides"] is True
    assert j2["rules_judgment"].notna().all()  # no router: xFinder judged every valid row
    asked = j2["first_judgment"].notna()
    xfinder_said = j2["first_judgment"].where(asked, j2["judgment"])  # xFinder's own judgment per row
    assert so["asked"] == int(asked.sum()) == int((xfinder_said != j2["rules_judgment"]).sum())
    for rid, row in j2.iterrows():
        if not asked[rid]:
            assert row["judgment"] == row["rules_judgment"] and pd.isna(row["second_judge"])
            continue
        assert row["first_judgment"] != row["rules_judgment"] and row["second_judge"] == so["judge"]
        assert isinstance(row["second_raw_output"], str)
        verdict = parse_verdict("xVerify-0.5B-I", row["second_raw_output"])
        if verdict.parsed:
            assert row["second_judgment"] == (verdict.verdict == "correct") == row["judgment"]
        else:
            assert pd.isna(row["second_judgment"]) and row["judgment"] == row["first_judgment"]
    assert so["answered"] == int(j2["second_judgment"].notna().sum())
    assert so["overturned"] == int(
        (j2["second_judgment"].notna() & (j2["judgment"] != j2["first_judgment"])).sum()
    )
