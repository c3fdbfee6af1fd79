#!/usr/bin/env python3
"""The Qwen3-30B-A3B records of think_dev.jsonl (after the MATH-500 ones): raw `<think>` outputs on
MMLU-Pro computer science from okuvshynov/MMLU-Pro (Apache-2.0), labelled by reading
(labels_qwen3/labels_cs.txt: `question_id | label | judged right (T/F) | tags | note`). Reads a bare git
clone of the source (THINK_DEV_OKUVSHYNOV=<.git dir>); build.py's `build` appends these records last.

Selection (seeded, as the candidates were drawn before labelling): each question once; the outputs
without `</think>` or ending in a repetition first (at most 10, `random.Random(7).sample`), then random
others to 50 records.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

from mmlu_pro_forks import read_labels, record

HERE = Path(__file__).resolve().parent
GIT_DIR = os.environ.get('THINK_DEV_OKUVSHYNOV', 'MMLU-Pro-okuvshynov.git')
REPO = 'okuvshynov/MMLU-Pro'
COMMIT = 'cdd1b372b0dea3903980ad9e98bcdc70ef16f2fa'
FILE = 'think_data/cs_think.json'
MODEL = 'Qwen3-30B-A3B (thinking, GGUF quant, temp 0)'
N, N_SPECIAL = 50, 10


def _ends_in_repetition(text: str, min_unit: int = 8, max_unit: int = 400, min_reps: int = 3) -> bool:
    t = text.rstrip()
    for p in range(min_unit, max_unit + 1):
        if len(t) < p * min_reps:
            break
        unit = t[-p:]
        if all(t[-(k + 1) * p : len(t) - k * p] == unit for k in range(min_reps)):
            return True
    lines = [ln.strip() for ln in t.splitlines() if ln.strip()]
    return len(lines) >= 4 and len(set(lines[-4:])) == 1 and len(lines[-1]) > 5


def _picked() -> list[dict]:
    blob = subprocess.run(['git', '--git-dir', GIT_DIR, 'show', f'{COMMIT}:{FILE}'], check=True, capture_output=True)
    seen, unique = set(), []
    for r in json.loads(blob.stdout.decode('utf-8')):
        if r['question_id'] not in seen:
            seen.add(r['question_id'])
            unique.append(r)
    special = [r for r in unique if '</think>' not in (r.get('model_outputs') or '')
               or _ends_in_repetition(r.get('model_outputs') or '')]
    rng = random.Random(7)
    special = special if len(special) <= N_SPECIAL else rng.sample(special, N_SPECIAL)
    ids = {r['question_id'] for r in special}
    rest = [r for r in unique if r['question_id'] not in ids]
    return special + rng.sample(rest, min(len(rest), N - len(special)))


def build(start: int) -> list[dict]:
    labs = read_labels(HERE / 'labels_qwen3' / 'labels_cs.txt')
    picked = _picked()
    assert sorted(labs) == sorted(r['question_id'] for r in picked)
    source = {'repo': REPO, 'commit': COMMIT, 'file': FILE}
    out = []
    for n, r in enumerate(picked, start):
        assert r['model_outputs'].startswith('<think>')
        out.append(record(n, MODEL, 'MMLU-Pro/computer science', r, labs[r['question_id']], source))
    return out
