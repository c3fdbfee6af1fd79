#!/usr/bin/env python3
"""The HAOTIAN89/MMLU-Pro records of think_dev.jsonl (after the Qwen3-30B-A3B ones): raw outputs of
DeepSeek-R1-Distill-Qwen-1.5B (history, philosophy), AdaptThink-7B-delta0.05 and AdaptThink-1.5B-delta0.05
(computer science, history, philosophy) on MMLU-Pro, from HAOTIAN89/MMLU-Pro (Apache-2.0), labelled by reading
(labels_haotian/<model>.txt: `question_id | label | judged right (T/F) | tags | note`). The prompt ended
in `<think>\\n`, so every output starts inside the thought (a lone `</think>`, or none: cut off). Reads a
bare git clone of the source (THINK_DEV_HAOTIAN=<.git dir>); build.py's `build` appends these last.

Selection per model (seeded, as the candidates were drawn before labelling): its files' records, each
question once, in question order; the outputs without `</think>` or ending in a repetition first (at
most 10, `random.Random(7).sample`), then random others by the same generator, 50 in all.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

from mmlu_pro_forks import read_labels, record

HERE = Path(__file__).resolve().parent
GIT_DIR = os.environ.get('THINK_DEV_HAOTIAN', 'MMLU-Pro-HAOTIAN89.git')
REPO = 'HAOTIAN89/MMLU-Pro'
COMMIT = 'b735c4e06fa2ba97926f88c18dafa5cf78af6429'
# (model, labels file, its files in the snapshot: the others are over 4 MiB)
MODELS = (
    ('DeepSeek-R1-Distill-Qwen-1.5B', 'r1_distill_qwen_1.5b.txt',
     ('eval_results/DeepSeek-R1-Distill-Qwen-1.5B/CoT/all/history.json',
      'eval_results/DeepSeek-R1-Distill-Qwen-1.5B/CoT/all/philosophy.json')),
    ('AdaptThink-7B-delta0.05', 'adaptthink_7b.txt',
     ('eval_results/AdaptThink-7B-delta0.05/CoT/all/computer science.json',
      'eval_results/AdaptThink-7B-delta0.05/CoT/all/history.json',
      'eval_results/AdaptThink-7B-delta0.05/CoT/all/philosophy.json')),
    ('AdaptThink-1.5B-delta0.05', 'adaptthink_1.5b.txt',
     ('eval_results/AdaptThink-1.5B-delta0.05/CoT/all/computer science.json',
      'eval_results/AdaptThink-1.5B-delta0.05/CoT/all/history.json',
      'eval_results/AdaptThink-1.5B-delta0.05/CoT/all/philosophy.json')),
)
N, N_SPECIAL = 50, 10


def _ends_in_repetition(text: str, min_unit: int = 8, max_unit: int = 2000, min_copies: int = 3,
                        min_span: int = 300) -> bool:
    """The end is periodic: the last max((min_copies - 1) * L, min_span) characters equal those L before."""
    t = text.rstrip()
    n = len(t)
    for p in range(min_unit, max_unit + 1):
        span = max((min_copies - 1) * p, min_span)
        if span + p > n:
            break
        if t[n - span :] == t[n - span - p : n - p]:
            return True
    return False


def _picked(files: tuple[str, ...]) -> list[tuple[str, dict]]:
    pool, seen = [], set()
    for f in files:
        blob = subprocess.run(['git', '--git-dir', GIT_DIR, 'show', f'{COMMIT}:{f}'], check=True, capture_output=True)
        for r in json.loads(blob.stdout.decode('utf-8')):
            if r['question_id'] not in seen:
                seen.add(r['question_id'])
                pool.append((f, r))
    pool.sort(key=lambda x: x[1]['question_id'])

    def special(r: dict) -> bool:
        return '</think>' not in r['model_outputs'] or _ends_in_repetition(r['model_outputs'])

    first = [x for x in pool if special(x[1])]
    rest = [x for x in pool if not special(x[1])]
    rng = random.Random(7)
    first = rng.sample(first, N_SPECIAL) if len(first) > N_SPECIAL else first
    return first + rng.sample(rest, N - len(first))


def build(start: int) -> list[dict]:
    out = []
    for model, labels, files in MODELS:
        out += _build_model(start + len(out), model, labels, files)
    return out


def _build_model(start: int, model: str, labels: str, files: tuple[str, ...]) -> list[dict]:
    labs = read_labels(HERE / 'labels_haotian' / labels)
    picked = _picked(files)
    assert sorted(labs) == sorted(r['question_id'] for _, r in picked)
    out = []
    for n, (f, r) in enumerate(picked, start):
        o = r['model_outputs']
        assert '<think>' not in o and o.count('</think>') <= 1  # <think> was in the prompt
        source = {'repo': REPO, 'commit': COMMIT, 'file': f}
        out.append(record(n, model, f"MMLU-Pro/{r['category']}", r, labs[r['question_id']], source))
    return out
