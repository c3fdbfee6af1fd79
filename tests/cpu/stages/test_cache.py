"""cache lookup (stages/cache.py), without Ray: content-addressed folders, hits and misses, entries
written only for fresh, successful extractions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa

from xfinder_ray.stages.cache import cache_folder, load_index, lookup_batch, new_entries, prompt_key
from xfinder_ray.stages.write import write_parquet_atomic
from xfinder_ray.storage import resolve


def test_cache_keys_hits_and_invalidation(tmp_path):
    root = resolve(str(tmp_path / "cache"))
    ident = {"extractor": "xfinder:xFinder-qwen1505@abc:training:float32", "max_tokens": 8}
    folder = cache_folder(root, ident)
    # Another checkpoint or prompt format is another folder: its entries can never be served here.
    assert (
        cache_folder(root, dict(ident, extractor=ident["extractor"].replace("training", "opencompass")))
        != folder
    )
    assert cache_folder(root, dict(ident, max_tokens=16)) != folder
    assert (
        json.loads((tmp_path / "cache" / folder.path.rsplit("/", 1)[-1] / "identity.json").read_text())
        == ident
    )
    assert load_index(folder) is None

    prompts = [f"prompt {i}" for i in range(50)]
    done = pd.DataFrame(
        {
            "cache_key": [prompt_key(p) for p in prompts],
            "cache_hit": [False] * 50,
            "raw_output": [f"out {i}" for i in range(50)],
            "prompt_tokens": list(range(50)),
            "extract_error": [None] * 49 + ["engine died"],  # a failure is never cached
        }
    )
    write_parquet_atomic(new_entries(done), folder, "a")
    index = load_index(folder)
    assert len(index.keys) == 49

    batch = pd.DataFrame(
        {"prompt": ["prompt 3", "prompt 49", "new", None], "reject_reason": [None, None, None, "bad"]}
    )
    looked = lookup_batch(batch, index=index)
    assert list(looked["cache_hit"]) == [True, False, False, None]
    assert looked["raw_output"][0] == "out 3" and looked["prompt_tokens"][0] == 3
    assert pd.isna(looked["raw_output"][1]) and pd.isna(looked["cache_key"][3])


def test_cache_key_with_trailing_zero_byte_is_found():
    # numpy's fixed-width bytes drop trailing NULs; the lookup must still match such keys.
    prompts = (f"p{i}" for i in range(100_000))
    p = next(p for p in prompts if prompt_key(p).endswith(b"\0"))
    from xfinder_ray.stages.cache import CacheIndex

    key = prompt_key(p)
    index = CacheIndex(np.array([key], dtype="S16"), pa.array(["hit"]), np.array([1]))
    out = lookup_batch(pd.DataFrame({"prompt": [p], "reject_reason": [None]}), index=index)
    assert out["cache_hit"][0] is True or out["cache_hit"][0] == True  # noqa: E712


def test_a_cached_output_keeps_its_logprob_and_old_entries_read_as_none(tmp_path):
    """A verifier's verdict log-probability (its confidence) survives the cache; entries written
    before the column existed read as NaN, not as an error."""
    import pyarrow.parquet as pq

    from xfinder_ray.stages.cache import load_index, new_entries
    from xfinder_ray.storage import resolve

    rows = pd.DataFrame(
        {
            "prompt": ["p-new", "p-none"],
            "cache_key": [prompt_key("p-new"), prompt_key("p-none")],
            "cache_hit": [False, False],
            "raw_output": ["Correct", "Incorrect"],
            "prompt_tokens": [12, 13],
            "logprob": [-0.25, float("nan")],
        }
    )
    pq.write_table(new_entries(rows), tmp_path / "part-new.parquet")
    old = pa.table(
        {"key": pa.array([prompt_key("p-old")], pa.binary(16)), "raw_output": ["A"], "prompt_tokens": [3]}
    )
    pq.write_table(old, tmp_path / "part-old.parquet")
    index = load_index(resolve(str(tmp_path)))
    out = lookup_batch(
        pd.DataFrame({"prompt": ["p-new", "p-none", "p-old", "p-miss"], "reject_reason": [None] * 4}),
        index=index,
    )
    assert list(out["cache_hit"]) == [True, True, True, False]
    assert list(out["raw_output"][:3]) == ["Correct", "Incorrect", "A"]
    assert out["logprob"][0] == -0.25 and out["logprob"][1:].isna().all()
