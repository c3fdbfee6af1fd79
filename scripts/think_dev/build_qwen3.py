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

HERE = Path(__file__).resolve().parent
GIT_DIR = os.environ.get('THINK_DEV_OKUVSHYNOV', 'MMLU-Pro-okuvshynov.git')
REPO = 'okuvshynov/MMLU-Pro'
COMMIT = 'cdd1b372b0dea3903980ad9e98bcdc70ef16f2fa'
FILE = 'think_data/cs_think.json'
MODEL = 'Qwen3-30B-A3B (thinking, GGUF quant, temp 0)'
N, N_SPECIAL = 50, 10
LETTERS = 'ABCDEFGHIJKLMNOP'


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
    labs = {}
    for line in open(HERE / 'labels_qwen3' / 'labels_cs.txt', encoding='utf-8'):
        if line.startswith('#') or not line.strip():
            continue
        qid, lab, judged, tags, note = (p.strip() for p in line.rstrip('\n').split('|', 4))
        labs[int(qid)] = (lab, judged == 'T', [t for t in tags.split(',') if t], note)
    out, n = [], start
    picked = _picked()
    assert sorted(labs) == sorted(r['question_id'] for r in picked)
    for r in picked:
        lab, judged, tags, note = labs[r['question_id']]
        o = r['model_outputs']
        # the structure tags checked against the text (markers only, no answer extraction)
        assert o.startswith('<think>')
        assert ('think-open' in tags) == ('</think>' not in o), r['question_id']
        options = [[LETTERS[i], t] for i, t in enumerate(r['options'])]
        assert lab == '[No valid answer]' or lab in LETTERS[: len(options)]
        assert judged == (lab == r['answer'])
        out.append({
            'id': f'thk-{n:04d}', 'model': MODEL, 'task': 'MMLU-Pro/computer science',
            'key_answer_type': 'alphabet_option', 'question': r['question'], 'llm_output': o,
            'standard_answer_range': options, 'correct_answer': r['answer'], 'gold_key_answer': lab,
            'gold_judgment': judged, 'tags': tags, 'stratum': 'uniform',
            'source': {'repo': REPO, 'commit': COMMIT, 'file': FILE, 'id': str(r['question_id'])},
            'reasoning_model_family': 'think', 'held_out': True, 'note': note,
        })
        n += 1
    return out
