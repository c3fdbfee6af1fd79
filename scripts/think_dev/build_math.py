#!/usr/bin/env python3
"""The MATH-500 records of think_dev.jsonl (thk-0104 onward): raw `<think>` outputs of three models from
markyx316/LLM-Reasoning-Trace-Topology, labelled by reading (labels_math/*.txt: `item | label | judged
right (T/F) | tags | note`). Reads a bare git clone of the source (THINK_DEV_MARKYX=<.git dir>); build.py's
`build` appends these records after the multiple-choice ones.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIT_DIR = os.environ.get('THINK_DEV_MARKYX', 'LLM-Reasoning-Trace-Topology.git')
REPO = 'markyx316/LLM-Reasoning-Trace-Topology'
COMMIT = '1f7d07ccf290d585ae2f0043b1999826b49749f2'
RANGE = 'a(n) number / set / vector / matrix / interval / expression / function / equation / inequality'
# order: Llama-8B, R1 API (two runs), Qwen-7B (held out) last
PLAN = [
    ('pilot_math500_llama8b.jsonl', 'labels_llama.txt', 'DeepSeek-R1-Distill-Llama-8B', False),
    ('math500_deepseek_r1.jsonl', 'labels_r1a.txt', 'DeepSeek-R1 (API deepseek-reasoner)', False),
    ('pilot_math500_r1.jsonl', 'labels_r1b.txt', 'DeepSeek-R1 (API deepseek-reasoner)', False),
    ('pilot_math500_qwen7b.jsonl', 'labels_qwen.txt', 'DeepSeek-R1-Distill-Qwen-7B', True),
]
NOTES = {
    ('math500_deepseek_r1.jsonl', '0000'): 'no \\boxed{}; the final part states "The polar coordinates are \\((3, \\frac{\\pi}{2})\\)" and repeats it at the end',
    ('math500_deepseek_r1.jsonl', '0002'): 'no \\boxed{}; final part: "The value of \\( f(-2) + f(-1) + f(0) \\) is \\( \\frac{14}{3} \\)"',
    ('math500_deepseek_r1.jsonl', '0003'): 'no \\boxed{}; final part: "Thus, 196 has **9** positive whole-number divisors."',
    ('math500_deepseek_r1.jsonl', '0004'): 'no \\boxed{}; the answer is the statement "Evelyn has the greatest average speed"; the speeds (3.6, 0.88, ..., 0.21) are listed after it',
    ('math500_deepseek_r1.jsonl', '0007'): 'final part says "The angle between the lines is \\(90^\\circ\\)" and ends with \\boxed{90}; the box is the label',
    ('math500_deepseek_r1.jsonl', '0008'): 'no \\boxed{}; final part: "is \\(3\\sqrt{13}\\) units", then the derivation',
    ('math500_deepseek_r1.jsonl', '0018'): 'x = 180 - 124 = 56 by corresponding angles; gold 28',
    ('pilot_math500_r1.jsonl', '0004'): 'no \\boxed{}; the answer is the statement "Evelyn has the greatest average speed"; the speeds are listed after it',
    ('pilot_math500_r1.jsonl', '0007'): 'final part says "the angle between the lines is \\(90^\\circ\\)" and ends with \\boxed{90}; the box is the label',
    ('pilot_math500_llama8b.jsonl', '0007'): 'wrong direction vector (2, -12, 3); cos = 36/(7 sqrt 157), about 65.8 degrees, boxed as 66; gold 90',
    ('pilot_math500_llama8b.jsonl', '0009'): 'counts groupings that move the +1 (e.g. (2+1)*3*4*5 = 180): 10 values; gold 4',
    ('pilot_math500_llama8b.jsonl', '0011'): 'arithmetic slip in the extra root; boxes -1/49 in the thought and the final part; gold 3/56',
    ('pilot_math500_llama8b.jsonl', '0018'): 'the thought ends in guesses ("I think the answer is 32°, but I\'m not sure"); the final part commits to \\boxed{32}; gold 28',
    ('pilot_math500_qwen7b.jsonl', '0009'): 'no </think>: cut off at the 32768-token cap inside the thought. From about character 45.8k it repeats "Alternatively, group ((2 * 3) * 4) * 5 + 1: same. So, 121." to the end; before the loop it leaned to 3 values (121, 122, 144). No \\boxed{} anywhere',
    ('pilot_math500_qwen7b.jsonl', '0011'): 'wrong extra root c = 721/720; boxes 721/9 in the thought and the final part; gold 3/56',
    ('pilot_math500_qwen7b.jsonl', '0018'): 'takes x equal to the 124 degree angle; gold 28',
}


def _nospace(s: str) -> str:
    return ''.join(s.split())


def _source(name: str) -> list[dict]:
    blob = subprocess.run(['git', '--git-dir', GIT_DIR, 'show', f'{COMMIT}:data/traces/{name}'],
                          check=True, capture_output=True).stdout.decode('utf-8')
    return [json.loads(x) for x in blob.splitlines() if x.strip()]


def build(start: int) -> list[dict]:
    out, n = [], start
    for f, lf, model, held in PLAN:
        src = {r['item_id'][-4:]: r for r in _source(f)}
        labs = {}
        for line in open(HERE / 'labels_math' / lf, encoding='utf-8'):
            if line.startswith('#') or not line.strip():
                continue
            parts = [p.strip() for p in line.rstrip('\n').split('|')]
            labs[parts[0]] = (parts[1], parts[2] == 'T', [t for t in parts[3].split(',') if t])
        assert sorted(labs) == sorted(src), (f, sorted(set(src) - set(labs)))
        for k in sorted(src):
            r = src[k]
            lab, judged, tags = labs[k]
            tags = [t for t in tags if t != 'equiv-format']
            if judged and _nospace(lab) != _nospace(r['ground_truth']):
                tags.append('equiv-format')
            o = r['full_response']
            # the structure tags checked against the text (markers only, no answer extraction)
            if 'lone-close-think' in tags:
                assert '<think>' not in o and o.count('</think>') == 1
            if 'think-closed' in tags:
                assert o.startswith('<think>') and o.count('</think>') == 1
            if 'think-open' in tags:
                assert '</think>' not in o
            if lab == '[No valid answer]':
                assert not judged
            rec = {'id': 'thk-%04d' % n, 'model': model, 'task': 'MATH-500', 'key_answer_type': 'math',
                   'question': r['problem'], 'llm_output': o, 'standard_answer_range': RANGE,
                   'correct_answer': r['ground_truth'], 'gold_key_answer': lab, 'gold_judgment': judged,
                   'tags': tags, 'stratum': 'uniform',
                   'source': {'repo': REPO, 'commit': COMMIT, 'file': 'data/traces/' + f, 'id': r['item_id']},
                   'reasoning_model_family': 'think', 'held_out': held}
            if (f, k) in NOTES:
                rec['note'] = NOTES[(f, k)]
            out.append(rec)
            n += 1
    return out
