"""prompt: rows -> + `prompt`, `truncated` (the checkpoint's training-exact xFinder prompt) for
every valid row; rejected and routed rows pass through with no prompt.

Rows are ordered by question inside each batch so prompts that share a prefix reach the engine
together (vLLM's prefix cache); there is no global shuffle.
"""

from __future__ import annotations

import functools

import pandas as pd

from xfinder_ray.prompts import render_prompt
from xfinder_ray.records import parse_answer_range
from xfinder_ray.stages.cache import flag


@functools.lru_cache(maxsize=2)
def _tokenizer(model_dir: str):
    from transformers import AutoTokenizer  # only where a local model folder is given

    return AutoTokenizer.from_pretrained(model_dir)


def prompt_batch(
    batch: pd.DataFrame,
    *,
    checkpoint: str,
    fmt: str,
    max_prompt_tokens: int,
    tokenizer_dir: str | None = None,
) -> pd.DataFrame:
    batch = batch.sort_values(["question", "record_id"], kind="stable").reset_index(drop=True)
    tok = _tokenizer(tokenizer_dir) if tokenizer_dir else None
    prompts, truncated = [], []
    routed = flag(batch["routed"], True) if "routed" in batch else [False] * len(batch)
    for q, out, rng, kat, reason, settled in zip(
        batch["question"],
        batch["llm_output"],
        batch["standard_answer_range"],
        batch["key_answer_type"],
        batch["reject_reason"],
        routed,
        strict=True,
    ):
        if isinstance(reason, str) or settled:
            prompts.append(None)
            truncated.append(None)
            continue
        rendered = render_prompt(
            q,
            out,
            parse_answer_range(rng, kat),
            checkpoint=checkpoint,
            fmt=fmt,
            max_prompt_tokens=max_prompt_tokens,
            tokenizer=(lambda s: tok.encode(s, add_special_tokens=False)) if tok else None,
            detokenizer=tok.decode if tok else None,
        )
        prompts.append(rendered.prompt)
        truncated.append(rendered.truncated)
    return batch.assign(prompt=prompts, truncated=truncated)
