"""What build_qwen3.py and build_haotian.py share: MMLU-Pro forks' raw records (question_id, question,
options, answer, model_outputs) and their hand labels (`question_id | label | judged right (T/F) | tags |
note`) made into think_dev records."""
from __future__ import annotations

from pathlib import Path

LETTERS = 'ABCDEFGHIJKLMNOP'


def read_labels(path: Path) -> dict[int, tuple[str, bool, list[str], str]]:
    labs = {}
    for line in open(path, encoding='utf-8'):
        if line.startswith('#') or not line.strip():
            continue
        qid, lab, judged, tags, note = (p.strip() for p in line.rstrip('\n').split('|', 4))
        labs[int(qid)] = (lab, judged == 'T', [t for t in tags.split(',') if t], note)
    return labs


def record(n: int, model: str, task: str, r: dict, label: tuple, source: dict) -> dict:
    """The think_dev record of source record r, checked against its label (held out, stratum uniform)."""
    lab, judged, tags, note = label
    o = r['model_outputs']
    # the structure tags checked against the text (markers only, no answer extraction)
    assert ('think-open' in tags) == ('</think>' not in o), r['question_id']
    options = [[LETTERS[i], t] for i, t in enumerate(r['options'])]
    assert lab == '[No valid answer]' or lab in LETTERS[: len(options)]
    assert judged == (lab == r['answer'])
    return {
        'id': f'thk-{n:04d}', 'model': model, 'task': task,
        'key_answer_type': 'alphabet_option', 'question': r['question'], 'llm_output': o,
        'standard_answer_range': options, 'correct_answer': r['answer'], 'gold_key_answer': lab,
        'gold_judgment': judged, 'tags': tags, 'stratum': 'uniform',
        'source': {**source, 'id': str(r['question_id'])},
        'reasoning_model_family': 'think', 'held_out': True, 'note': note,
    }
