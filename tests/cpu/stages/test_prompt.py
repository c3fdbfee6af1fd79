"""prompt (stages/prompt.py), without Ray: the training-exact prompt for the rows a model must read."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.cpu.stages.helpers import batch, record
from xfinder_ray.prompts import REASONING, render_prompt
from xfinder_ray.records import parse_answer_range
from xfinder_ray.stages.prompt import prompt_batch

KW = dict(checkpoint="xFinder-qwen1505", fmt="training", max_prompt_tokens=2016)


def test_prompts_for_valid_unrouted_rows_only_grouped_by_question():
    rows = [record(0, question="Q b"), record(1, question="Q a"), record(2, question="Q c"), record(3)]
    df = batch(*rows, reasons=[None, None, "bad", None])
    df["routed"] = [False, False, False, True]
    out = prompt_batch(df, **KW)
    by_id = out.set_index("record_id")
    r1 = rows[1]
    expected = render_prompt(
        r1["question"],
        r1["llm_output"],
        parse_answer_range(r1["standard_answer_range"], r1["key_answer_type"]),
        checkpoint=KW["checkpoint"],
        fmt=KW["fmt"],
        max_prompt_tokens=KW["max_prompt_tokens"],
    ).prompt
    assert by_id.loc["r1", "prompt"] == expected
    assert pd.isna(by_id.loc["r2", "prompt"])  # rejected
    assert pd.isna(by_id.loc["r3", "prompt"])  # settled by the router
    assert list(out["question"])[:2] == ["Q a", "Q b"]  # sorted, so shared prefixes meet
    assert prompt_batch.stats(out) == {"prompted": 2, "truncated": 0}


def test_a_long_response_is_truncated_and_counted():
    df = batch(record(0, llm_output="word " * 5000))
    out = prompt_batch(df, **KW)
    assert bool(out.loc[0, "truncated"]) is True
    assert prompt_batch.stats(out) == {"prompted": 1, "truncated": 1}


REASONING_OUTPUT = "<think>\nOption B looks tempting, but the Thirteenth is A.\n</think>\n\nThe answer is A."


def test_the_reasoning_setting_reaches_the_prompt():
    df = batch(record(0, llm_output=REASONING_OUTPUT))
    final = prompt_batch(df, **KW, reasoning="final").loc[0, "prompt"]
    assert 'Output sentences: """The answer is A."""' in final and "tempting" not in final
    full = prompt_batch(df, **KW, reasoning="full").loc[0, "prompt"]
    assert f'Output sentences: """{REASONING_OUTPUT}"""' in full
    assert prompt_batch(df, **KW).loc[0, "prompt"] == full  # the stage's own default renders as given


def test_reasoning_is_part_of_the_extractor_identity_and_the_cache_folder(tmp_path):
    from xfinder_ray.config import XFinderConfig
    from xfinder_ray.extractors.model import model_extractor_identity, model_settings
    from xfinder_ray.stages.cache import cache_location
    from xfinder_ray.storage import resolve

    assert XFinderConfig().reasoning == "final"
    root = resolve(str(tmp_path / "cache"))
    ids, folders = set(), set()
    for reasoning in REASONING:
        x = XFinderConfig(model_source="some/model", revision="v1", reasoning=reasoning)
        ident = model_extractor_identity(x, "cpu")
        assert (
            ident.startswith("xfinder:xFinder-qwen1505@some/model@v1:training:") and f":{reasoning}:" in ident
        )
        ids.add(ident)
        folders.add(cache_location(root, model_settings(x, "cpu")).path)
    assert len(ids) == len(folders) == len(REASONING)


def test_an_unknown_reasoning_setting_is_a_config_error(tmp_path):
    from xfinder_ray.config import ConfigError, load_config

    base = [f"input={tmp_path / 'in.jsonl'}", f"output={tmp_path / 'out'}"]
    assert load_config(None, [*base, "xfinder.reasoning=tail"]).xfinder.reasoning == "tail"
    with pytest.raises(ConfigError, match=r"xfinder.reasoning='thoughts'; expected one of final, tail, full"):
        load_config(None, [*base, "xfinder.reasoning=thoughts"])
