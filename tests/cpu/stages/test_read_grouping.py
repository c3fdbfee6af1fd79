"""Question-grouped reads (xfinder.group_by_question): aligned row groups of per-model files are read by
one task and their rows sorted by question, so every model's answer to a question reaches the engine
together. Grouping changes the order only: the same rows, each once, resume and rejects unchanged."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xfinder_ray.config import InputConfig
from xfinder_ray.records import FIELDS
from xfinder_ray.sample_data import MODELS, TASKS, build_questions, respond
from xfinder_ray.stages.inventory import take_inventory
from xfinder_ray.stages.read import InputSource, aligned_groups, read_input

N_QUESTIONS = 240  # 30 per task of the sample's 8
ROW_GROUP = 80


def per_model_files(folder, n_models: int = 4, shuffle_last: bool = False) -> list[str]:
    """One Parquet file per model, each answering the same questions in the same (dataset) order."""
    questions = [q for t in TASKS for q in build_questions(t, N_QUESTIONS // len(TASKS), seed=3)]
    paths = []
    for k, model in enumerate(MODELS[:n_models]):
        rows = [{f: respond(model, q, seed=3)[f] for f in FIELDS} for q in questions]
        if k == 0:
            rows[5]["question"] = None  # null question (a reject later): still read exactly once
        if shuffle_last and k == n_models - 1:
            rows = rows[::-1]  # not aligned with the others: another order, the same rows
        path = folder / f"{model.name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=ROW_GROUP)
        paths.append(str(path))
    return paths


def read_order(folder, group: bool, done: dict | None = None) -> list[dict]:
    inventory = take_inventory(InputConfig(paths=[str(folder)]), None)
    ds = read_input(InputSource(inventory, {}, done or {}, "fail", group))
    rows: list[dict] = []
    for block in ds.iter_batches(batch_format="pandas", batch_size=None):
        rows.extend(block[["question", "source_file", "source_row", "reject_reason"]].to_dict("records"))
    return rows


def follows_same_question(rows: list[dict]) -> float:
    same = sum(
        1 for a, b in zip(rows, rows[1:], strict=False) if a["question"] and a["question"] == b["question"]
    )
    return same / max(1, len(rows) - 1)


@pytest.mark.ray
def test_grouped_read_puts_each_questions_answers_together(ray_local, tmp_path):
    per_model_files(tmp_path)
    plain, grouped = read_order(tmp_path, False), read_order(tmp_path, True)
    key = lambda r: (r["source_file"], int(r["source_row"]))  # noqa: E731
    # the same rows, each once
    assert sorted(map(key, grouped)) == sorted(map(key, plain))
    assert len({key(r) for r in grouped}) == len(grouped) == 4 * N_QUESTIONS
    assert sum(r["question"] is None for r in grouped) == 1  # sorted last, not dropped (validate rejects it)
    # per-model files read one by one: no answer follows another to the same question
    assert follows_same_question(plain) < 0.05
    # grouped: 4 answers per question in a row, so 3 of every 4 rows follow one of the same question
    assert follows_same_question(grouped) > 0.7


@pytest.mark.ray
def test_grouped_read_resumes_and_tolerates_unaligned_files(ray_local, tmp_path):
    paths = per_model_files(tmp_path, shuffle_last=True)
    done = {paths[0]: np.arange(0, 120, dtype=np.int64), paths[2]: np.arange(0, N_QUESTIONS, dtype=np.int64)}
    rows = read_order(tmp_path, True, done)
    got = sorted((r["source_file"], int(r["source_row"])) for r in rows)
    want = sorted(
        (p, i) for p in paths for i in range(N_QUESTIONS) if not (p in done and i in set(done[p].tolist()))
    )
    assert got == want  # done rows skipped, every other row once, whatever the alignment
    # the three remaining files: two aligned (grouped), one reversed (read in step, different questions)
    assert follows_same_question(rows) > 0.2


def test_aligned_groups_are_capped(tmp_path):
    per_model_files(tmp_path, n_models=4)
    inventory = take_inventory(InputConfig(paths=[str(tmp_path)]), None)
    pending = InputSource(inventory, {}, {}, "fail").pending_shards()
    assert len(pending) == 4 * (N_QUESTIONS // ROW_GROUP)
    groups = aligned_groups(pending)
    assert [len(g) for g in groups] == [4] * (N_QUESTIONS // ROW_GROUP)
    assert all(len({s.row_group for s, _ in g}) == 1 for g in groups)
    assert [len(g) for g in aligned_groups(pending, max_files=3)] == [3, 1] * (N_QUESTIONS // ROW_GROUP)
    assert [len(g) for g in aligned_groups(pending, max_rows=200)] == [2, 2] * (N_QUESTIONS // ROW_GROUP)
