"""Batches as the read stage hands them over (pandas, every canonical field a string), for the stage
tests that run without Ray."""

from __future__ import annotations

import json

import pandas as pd

from xfinder_ray.records import FIELDS

OPTIONS = [["A", "Thirteenth"], ["B", "First"], ["C", "Fifteenth"], ["D", "Nineteenth"]]


def record(i: int, **over) -> dict:
    base = {
        "record_id": f"r{i}",
        "model": "m",
        "task": "MMLU",
        "key_answer_type": "alphabet_option",
        "question": f"Question {i}: which amendment abolished slavery?",
        "llm_output": "The answer is option A.",
        "standard_answer_range": json.dumps(OPTIONS),
        "correct_answer": "A",
    }
    return {**base, **over}


def batch(*rows: dict, reasons: list | None = None) -> pd.DataFrame:
    df = pd.DataFrame([{f: r.get(f) for f in FIELDS} for r in rows], columns=list(FIELDS))
    df["reject_reason"] = reasons if reasons is not None else [None] * len(rows)
    df["source_file"] = "in.jsonl"
    df["source_row"] = range(len(rows))
    return df
