"""second opinion (optional, `second_opinion.checkpoint`): a second model judges the rows where the first
model and `rules` disagree (docs/judges.md, "A second opinion").

    judged rows -> ask: rules' judgment of each row the first model judged; ASKED where they differ
                -> second judge: a pool of actors, each holding the second verifier's vLLM engine,
                   prompts and judges the asked rows of its batch and passes every other row through
                -> its verdict, beside the first judgment; with `decides`, the judgment (rules and
                   the first model disagreeing, it is the majority of the three)

One linear stage rather than the model chain's filter + union: Ray Data has no fan-out, so a branch
after the first model would run the first model's whole chain a second time. A second model's failure
(an engine error, an output that is no verdict) leaves the first judgment standing: it never rejects
a row the first model judged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from xfinder_ray.extractors import get_scored_extractor
from xfinder_ray.judging import judge
from xfinder_ray.records import FIELDS, parse_answer_range, validate
from xfinder_ray.stages.cache import flag
from xfinder_ray.verifiers import fit_verifier_prompt, parse_verdict
from xfinder_ray.verifiers.verdict import CORRECT, INVALID

if TYPE_CHECKING:
    import ray.data

    from xfinder_ray.config import JobConfig

log = logging.getLogger("xfinder_ray")
ASKED = "second_opinion_asked"  # a disagreement sent to the second model
WRITES = ("rules_judgment", "first_judgment", "second_judgment", "second_judge", "second_raw_output")


def _objects(values: list, batch: pd.DataFrame) -> pd.Series:
    """Object dtype: pandas would give a list of texts and Nones its `str` dtype, with NaN for None."""
    return pd.Series(values, index=batch.index, dtype=object)


def _rules_judgment(row: dict, math: str) -> bool | None:
    answer, _, _ = get_scored_extractor("rules")(validate(row))
    rng = parse_answer_range(row["standard_answer_range"], row["key_answer_type"])
    return judge(row["key_answer_type"], rng, answer, row["correct_answer"], math=math)


def ask_batch(batch: pd.DataFrame, *, math: str) -> pd.DataFrame:
    """+ rules_judgment on the rows the first model judged (not the router's, not rejects), and ASKED
    where it differs from the first model's `judgment`."""
    routed = flag(batch["routed"], True) if "routed" in batch else pd.Series(False, index=batch.index)
    by_model = batch["judgment"].notna() & batch["reject_reason"].isna() & ~routed
    rules_j: list[bool | None] = [None] * len(batch)
    for i in np.flatnonzero(by_model.to_numpy()):
        rules_j[i] = _rules_judgment({f: batch[f].iloc[i] for f in FIELDS}, math)
    first = batch["judgment"].astype(object).where(batch["judgment"].notna(), None)
    asked = [r is not None and bool(r) != bool(f) for r, f in zip(rules_j, first, strict=True)]
    return batch.assign(rules_judgment=_objects(rules_j, batch), **{ASKED: asked})


def settle(
    batch: pd.DataFrame, outputs: list[str | None], *, checkpoint: str, identity: str, decides: bool
) -> pd.DataFrame:
    """The second model's outputs (one per asked row, in order; None where it failed) -> its verdicts,
    recorded beside the first judgment and, with `decides`, made the judgment."""
    asked = batch[ASKED].fillna(False).astype(bool).to_numpy()
    raw: list[str | None] = [None] * len(batch)
    second: list[bool | None] = [None] * len(batch)
    for i, text in zip(np.flatnonzero(asked), outputs, strict=True):
        raw[i] = text
        v = parse_verdict(checkpoint, text) if text is not None else None
        if v is not None and v.parsed:  # an invalid response (CompassVerifier's C) is wrong, as for the first
            second[i] = v.verdict == CORRECT if v.verdict != INVALID else False
    first = batch["judgment"].astype(object).where(batch["judgment"].notna(), None).tolist()
    judgment = [s if decides and s is not None else f for s, f in zip(second, first, strict=True)]
    return batch.assign(
        judgment=_objects(judgment, batch),
        first_judgment=_objects([f if a else None for f, a in zip(first, asked, strict=True)], batch),
        second_judgment=_objects(second, batch),
        second_judge=_objects([identity if a else None for a in asked], batch),
        second_raw_output=_objects(raw, batch),
    )


class SecondJudge:
    """A pool actor: the second verifier's vLLM engine, judging the asked rows of each batch."""

    def __init__(
        self,
        model: str,
        engine_kwargs: dict[str, Any],
        sampling: dict[str, Any],
        env: dict[str, str],
        prompt_kwargs: dict[str, Any],
        identity: str,
        decides: bool,
    ) -> None:
        os.environ.update(env)  # VLLM_CPU_KVCACHE_SPACE and the like, before vLLM reads them
        from vllm import LLM, SamplingParams

        self.llm = LLM(model=model, **engine_kwargs)
        self.sampling = SamplingParams(**sampling)
        self.prompt_kwargs = prompt_kwargs
        self.identity, self.decides = identity, decides

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        rows = batch[batch[ASKED].fillna(False).astype(bool)]
        texts = zip(rows["question"], rows["llm_output"], rows["correct_answer"], strict=True)
        prompts = [
            fit_verifier_prompt(question=q, llm_output=o, correct_answer=c, **self.prompt_kwargs)[0]
            for q, o, c in texts
        ]
        outputs: list[str | None] = [None] * len(prompts)
        if prompts:
            try:
                done = self.llm.generate(prompts, self.sampling, use_tqdm=False)
                outputs = [d.outputs[0].text if d.outputs else None for d in done]
            except Exception as e:  # the first judgment stands; the rows are not lost
                log.warning("second opinion: the engine failed on %d row(s): %s", len(prompts), e)
        checkpoint = self.prompt_kwargs["checkpoint"]
        return settle(batch, outputs, checkpoint=checkpoint, identity=self.identity, decides=self.decides)


def second_opinion_stats(df: pd.DataFrame) -> dict[str, int]:
    """Rows asked, answered with a verdict, and whose judgment the second verdict changed."""
    if ASKED not in df:
        return {"asked": 0, "answered": 0, "overturned": 0}
    asked = df[ASKED].fillna(False).astype(bool)
    second = df["second_judgment"] if "second_judgment" in df else pd.Series(None, index=df.index)
    first = df["first_judgment"] if "first_judgment" in df else pd.Series(None, index=df.index)
    answered = asked & second.notna()
    changed = answered & (second.astype(object) != first.astype(object))
    return {"asked": int(asked.sum()), "answered": int(answered.sum()), "overturned": int(changed.sum())}


@dataclass(frozen=True)
class SecondOpinion:
    identity: str  # the second judge's identity (verifier:...), on each asked row and in the manifest
    decides: bool
    apply: Callable[[ray.data.Dataset], ray.data.Dataset]


def build_second_opinion(cfg: JobConfig, device: str | None) -> tuple[SecondOpinion | None, list[str]]:
    """The second-opinion stages for `cfg.second_opinion` on `device` (None: no model judge runs), or
    None when it is off; and the job's note when it is set but no model judge runs (the rules
    fallback), so none is asked."""
    s = cfg.second_opinion
    if s.checkpoint is None:
        return None, []
    if device is None:
        return None, ["second_opinion is set, but no model judge runs (the rules fallback): none was asked"]
    from ray.data import ActorPoolStrategy

    from xfinder_ray.extractors.verifier import engine_section, verifier_identity, verifier_prompt_kwargs
    from xfinder_ray.extractors.vllm import processor_config_kwargs, sampling_params, stage_config_from

    x = engine_section(s, cfg.xfinder)  # the pool and engine settings are the xfinder section's
    stage = replace(stage_config_from(x), logprobs=False)
    engine = processor_config_kwargs(stage, device)
    identity = verifier_identity(s, cfg.xfinder, device, cfg.storage)
    actor = dict(
        model=engine["model_source"],
        engine_kwargs=engine["engine_kwargs"],
        sampling=sampling_params(stage),
        env=engine["runtime_env"]["env_vars"],
        prompt_kwargs=verifier_prompt_kwargs(s),
        identity=identity,
        decides=s.decides,
    )
    gpus = 0.0 if device == "cpu" else x.gpus_per_replica * x.tensor_parallel_size
    batch = cfg.ray.batch_size

    def apply(ds: ray.data.Dataset) -> ray.data.Dataset:
        asked = ds.map_batches(
            ask_batch, batch_format="pandas", batch_size=batch, fn_kwargs=dict(math=cfg.judge.comparator)
        )
        return asked.map_batches(
            SecondJudge,
            fn_constructor_kwargs=actor,
            compute=ActorPoolStrategy(size=x.replicas),
            num_cpus=x.cpus_per_replica,
            num_gpus=gpus,
            batch_format="pandas",
            batch_size=batch,
        )

    return SecondOpinion(identity, s.decides, apply), []
