"""prompt: rows -> + `prompt`, `truncated` (the checkpoint's training-exact xFinder prompt) for
every valid row; rejected and routed rows pass through with no prompt. `reasoning` (the job's
`xfinder.reasoning`) picks what of a reasoning model's response the prompt holds (docs/prompts.md).
`verifier_prompt_batch` is the same stage for a verifier judge (xVerify, CompassVerifier;
docs/judges.md): its prompt holds the correct answer too.

Rows are ordered by question inside each batch so prompts that share a prefix reach the engine
together (vLLM's prefix cache); there is no global shuffle.
"""

from __future__ import annotations

import functools

import pandas as pd

from xfinder_ray.prompts import render_prompt
from xfinder_ray.records import parse_answer_range
from xfinder_ray.stages.cache import flag
from xfinder_ray.stages.rows import row_stage
from xfinder_ray.verifiers import fit_verifier_prompt


@functools.lru_cache(maxsize=2)
def _tokenizer(model_dir: str):
    from transformers import AutoTokenizer  # only where a local model folder is given

    return AutoTokenizer.from_pretrained(model_dir)


def _is_prompted(batch: pd.DataFrame) -> pd.Series:
    """Valid rows the router did not settle."""
    routed = flag(batch["routed"], True) if "routed" in batch else False
    return batch["reject_reason"].isna() & ~routed


def _prompt(
    rows: pd.DataFrame,
    *,
    checkpoint: str,
    fmt: str,
    max_prompt_tokens: int,
    tokenizer_dir: str | None = None,
    reasoning: str = "full",
) -> pd.DataFrame:
    tok = _tokenizer(tokenizer_dir) if tokenizer_dir else None
    prompts, truncated = [], []
    for q, out, rng, kat in zip(
        rows["question"],
        rows["llm_output"],
        rows["standard_answer_range"],
        rows["key_answer_type"],
        strict=True,
    ):
        rendered = render_prompt(
            q,
            out,
            parse_answer_range(rng, kat),
            checkpoint=checkpoint,
            fmt=fmt,
            max_prompt_tokens=max_prompt_tokens,
            tokenizer=(lambda s: tok.encode(s, add_special_tokens=False)) if tok else None,
            detokenizer=tok.decode if tok else None,
            reasoning=reasoning,
        )
        prompts.append(rendered.prompt)
        truncated.append(rendered.truncated)
    return rows.assign(prompt=prompts, truncated=truncated)


def _stats(df: pd.DataFrame) -> dict[str, int]:
    if "prompt" not in df:
        return {"prompted": 0, "truncated": 0}
    prompted = df["prompt"].notna()
    return {"prompted": int(prompted.sum()), "truncated": int((prompted & flag(df["truncated"], True)).sum())}


prompt_batch = row_stage(
    "prompt",
    reads=("question", "llm_output", "standard_answer_range", "key_answer_type", "record_id"),
    writes=("prompt", "truncated"),
    fn=_prompt,
    rows=_is_prompted,
    stats=_stats,
    order_by=("question", "record_id"),  # prompts sharing a prefix reach the engine together
)


def _verifier_prompt(
    rows: pd.DataFrame,
    *,
    checkpoint: str,
    max_prompt_tokens: int,
    variant: str | None = None,
    cot: bool = False,
    strip_thought: bool = True,
) -> pd.DataFrame:
    fitted = [
        fit_verifier_prompt(
            checkpoint,
            q,
            out,
            gold,
            max_prompt_tokens=max_prompt_tokens,
            variant=variant,
            cot=cot,
            strip_thought=strip_thought,
        )
        for q, out, gold in zip(rows["question"], rows["llm_output"], rows["correct_answer"], strict=True)
    ]
    return rows.assign(prompt=[p for p, _ in fitted], truncated=[t for _, t in fitted])


verifier_prompt_batch = row_stage(
    "prompt",
    reads=("question", "llm_output", "correct_answer", "record_id"),
    writes=("prompt", "truncated"),
    fn=_verifier_prompt,
    rows=_is_prompted,
    stats=_stats,
    order_by=("question", "record_id"),
)
