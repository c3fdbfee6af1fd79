"""A big JSONL file is many read tasks (issue #25, C6) and an over-long line is its model's reject (C1).

The inventory scans a JSONL file in byte-range pieces and cuts it into line-range shards, each a read
task found by the byte offset of its first line; rows keep their line numbers, so resume works as for
Parquet row groups. Most of it is checked here without Ray (the scan and the read stage are plain
functions); one in-process job checks the over-long line's attribution and is the reference for the
kill-and-resume test (a real `xfinder-ray score` subprocess SIGKILLed once part files exist, as in
test_faults.py).
"""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pandas as pd
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests import faults
from xfinder_ray.config import ConfigError, InputConfig, load_config
from xfinder_ray.records import FIELDS
from xfinder_ray.stages import inventory as inv
from xfinder_ray.stages.aggregate import reject_cause
from xfinder_ray.stages.inventory import (
    MAX_LINE_BYTES,
    InputFile,
    Inventory,
    _assemble_jsonl,
    _scan_jsonl,
    id_digest,
    iter_lines,
    take_inventory,
)
from xfinder_ray.stages.read import InputSource, _parse_line, canonical_rows, head_fields, read_shard

LOCAL = pafs.LocalFileSystem()
SAMPLE = "xfinder_ray/data/sample_responses.parquet"
LONG_ID = "long-line/phi-3-mini"  # the record whose line is over MAX_LINE_BYTES


def record(i: int, model: str = "model-a", **extra: str) -> dict[str, str]:
    return {
        "record_id": f"r{i}",
        "model": model,
        "task": "MMLU",
        "key_answer_type": "alphabet_option",
        "question": f"question {i}?",
        "llm_output": "The answer is A.",
        "standard_answer_range": '[["A", "yes"], ["B", "no"]]',
        "correct_answer": "A",
        **extra,
    }


def edge_case_file(path, n: int = 40) -> bytes:
    """JSONL with the edge cases: a BOM, blank and whitespace lines, CRLF endings, a line over
    MAX_LINE_BYTES in the middle, a line that is not JSON, and no newline after the last line."""
    lines = []
    for i in range(n):
        text = json.dumps(record(i, f"model-{i % 3}"))
        if i == 0:
            text = "\ufeff" + text
        if i == n // 2:
            text = json.dumps(record(i, "model-long", llm_output="x" * (MAX_LINE_BYTES + 10)))
        if i == 7:
            text = '{"record_id": "r7", "model": '  # cut off: not JSON
        lines.append(text.encode() + (b"\r" if i % 5 == 1 else b""))
        if i % 6 == 2:
            lines.extend([b"", b"   \t", b""])
    data = b"\n".join(lines)  # no final newline
    path.write_bytes(data)
    return data


def reference(data: bytes) -> dict[int, bytes]:
    """Line number -> line of every record in a JSONL file, the whole file in memory."""
    return {i: line for i, line in enumerate(data.split(b"\n")) if line.strip()}


def record_id(line: bytes) -> str | None:
    try:
        return json.loads(line.decode().removeprefix("\ufeff")).get("record_id")
    except ValueError:
        return None


def scan_locally(path, chunk: int, shard_rows: int) -> tuple[InputFile, np.ndarray, np.ndarray]:
    """The inventory's JSONL scan without Ray: the same pieces scan_files gives its tasks."""
    f = InputFile(str(path), str(path), "jsonl", LOCAL)
    size = 0 if str(path).endswith(".gz") else path.stat().st_size
    bounds = [(a, a + chunk if a + chunk < size else None) for a in range(0, size, chunk)] or [(0, None)]
    pieces = [_scan_jsonl(f, ["record_id"], a, b) for a, b in bounds]
    return _assemble_jsonl(f, pieces, shard_rows)


def read_all(inventory: Inventory, done: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Every pending shard through the read stage (no Ray: read_shard is the read task's body)."""
    source = InputSource(inventory, {}, done or {}, "fail")
    blocks = [df for shard, d in source.pending_shards() for df in read_shard(*source.shard_args(shard, d))]
    return pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 20])
def test_iter_lines_is_split_on_lf_with_long_lines_cut_to_their_head(monkeypatch, block):
    monkeypatch.setattr(inv, "READ_BLOCK", block)
    monkeypatch.setattr(inv, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(inv, "HEAD_BYTES", 5)
    data = b'\xef\xbb\xbf{"a":1}\r\n\n  \n{"b": "0123456789abc"}\n{"c":2}\n\n{"d": "way past twelve bytes"}'
    got = list(iter_lines(io.BytesIO(data).read, first_line=10))
    split = data.split(b"\n")
    assert [n for n, *_ in got] == [10 + i for i in range(len(split))]
    for (_, offset, line, length), whole in zip(got, split, strict=True):
        assert data[offset : offset + length] == whole  # offsets and lengths are the file's
        want = b"" if not whole.strip() else whole if len(whole) <= 12 else whole[:5]
        assert line == want


# Scan pieces of 97 bytes: most lines start in one piece and end in another; read blocks of 256 bytes
# (the 2 MB line is read in 8,000 of them).
@pytest.mark.parametrize("chunk, shard_rows", [(1 << 20, 4), (97, 3), (1000, 1000)])
def test_shards_cover_every_line_exactly_once(tmp_path, monkeypatch, chunk, shard_rows):
    monkeypatch.setattr(inv, "READ_BLOCK", 256)
    path = tmp_path / "edge.jsonl"
    data = edge_case_file(path)
    want = reference(data)
    f, digests, rows = scan_locally(path, chunk, shard_rows)
    assert f.error is None and f.n_rows == len(want) == len(rows)
    assert rows.tolist() == sorted(want)  # line numbers, blank lines counted but not rows
    # ids as the read stage sees them (none for the line over the bound or the line that is not JSON)
    ids = [record_id(line) for line in want.values() if len(line) <= MAX_LINE_BYTES]
    assert sorted(d for d in digests.tolist() if d) == sorted(id_digest(i) for i in ids if i)

    inventory = Inventory([f], {}, [])
    shards = inventory.shards()
    assert len(shards) == -(-len(want) // shard_rows)
    assert sum(s.rows for s in shards) == len(want)
    assert all(
        a.stop == b.start and a.byte_stop == b.byte_start for a, b in zip(shards, shards[1:], strict=False)
    )
    got = read_all(inventory)
    assert got["source_row"].tolist() == sorted(want)  # every record once, in file order
    for row in got.itertuples():
        parsed = _parse_line(want[row.source_row])
        assert row.record_id == parsed.get("record_id")
        assert row.llm_output == parsed.get("llm_output")
    long = got[got["model"] == "model-long"]
    assert long["reject_reason"].tolist() == [f"line longer than {MAX_LINE_BYTES} bytes"]
    assert long["record_id"].tolist() == ["r20"]  # read from the head of the line


def test_a_gzip_file_is_one_shard(tmp_path):
    path = tmp_path / "records.jsonl.gz"
    plain = edge_case_file(tmp_path / "plain.jsonl")
    path.write_bytes(gzip.compress(plain))
    f, _, rows = scan_locally(path, 7, 3)
    assert rows.tolist() == sorted(reference(plain))
    shards = Inventory([f], {}, []).shards()
    assert [(s.start, s.rows, s.byte_start, s.byte_stop) for s in shards] == [(0, len(rows), 0, None)]
    assert read_all(Inventory([f], {}, []))["source_row"].tolist() == rows.tolist()


def test_a_rerun_reads_only_the_lines_not_yet_written(tmp_path):
    path = tmp_path / "edge.jsonl"
    want = sorted(reference(edge_case_file(path)))
    f, _, _ = scan_locally(path, 1 << 20, 5)
    inventory = Inventory([f], {}, [])
    # the first two shards written whole, a few rows of the last one
    shards = inventory.shards()
    done_rows = [r for r in want if r < shards[2].start] + want[-2:]
    done = {f.uri: np.array(done_rows, dtype=np.int64)}
    pending = InputSource(inventory, {}, done, "fail").pending_shards()
    assert [s.start for s, _ in pending] == [s.start for s in shards[2:]]  # the written shards are not read
    assert pending[-1][1].tolist() == want[-2:]  # the last shard skips its written rows
    assert read_all(inventory, done)["source_row"].tolist() == [r for r in want if r not in done_rows]


@pytest.mark.parametrize(
    "head, want",
    [
        # the C1 case: the fields before the long response are read, the cut-off response is not
        (
            b'{"record_id": "q1", "model": "m", "task": "t", "llm_output": "xxxx',
            {"record_id": "q1", "model": "m", "task": "t"},
        ),
        # escaped quotes and unicode escapes in a value; a number id
        (b'{"id": 12, "model": "a \\"quoted\\" \\u00e9", "x": "', {"id": 12, "model": 'a "quoted" \u00e9'}),
        # `"model": ...` inside a string value is text, not a key; the first occurrence wins
        (
            b'{"llm_output": "say \\"model\\": \\"fake\\"", "model": "real", "model": "later", "q": "',
            {"llm_output": 'say "model": "fake"', "model": "real"},
        ),
        # a BOM, odd spacing, a value the head cuts off
        (
            b'\xef\xbb\xbf{ "model" :"m2" ,"task":"t2","question":"cut off by the hea',
            {"model": "m2", "task": "t2"},
        ),
    ],
)
def test_head_fields_reads_whole_values_before_the_cut(head, want):
    assert head_fields(head) == want


def test_an_over_long_line_is_a_response_caused_reject_of_its_model():
    line = json.dumps(record(1, "phi-3-mini", llm_output="y" * (MAX_LINE_BYTES + 1))).encode()
    row = _parse_line(line[:1000], len(line))  # what the read stage gets: the head and the length
    df = canonical_rows([row], {})
    assert df.loc[0, ["record_id", "model", "task"]].tolist() == ["r1", "phi-3-mini", "MMLU"]
    assert df.loc[0, "llm_output"] is None
    assert reject_cause("read", df.loc[0, "reject_reason"]) == "response"
    # input.columns names the data's column: the head is read by the data's names too
    mapped = canonical_rows(
        [_parse_line(b'{"name": "m9", "id": "x"' + b" " * MAX_LINE_BYTES)], {"model": "name"}
    )
    assert mapped.loc[0, "model"] == "m9"


def test_jsonl_shard_rows_must_be_positive():
    with pytest.raises(ConfigError, match="jsonl_shard_rows"):
        load_config("configs/local.yaml", ["input.jsonl_shard_rows=0", "output=/tmp/x"])
    assert InputConfig(paths=["x"]).jsonl_shard_rows > 1000


# --------------------------------------------------------------------------------------- real jobs

SHARD_ROWS = 250  # ~25 shards of the ~6,200 records below
BATCH = 128  # a part file per ~128 rows: several appear while the job runs


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory):
    """The sample's records three times over with fresh record_ids (~6,200 lines) in one JSONL file
    with a BOM, CRLF and blank lines, and a 2 MB response in the middle (phi-3-mini, GSM8K)."""
    rows = pq.read_table(SAMPLE).to_pylist()
    path = tmp_path_factory.mktemp("big-jsonl") / "results.jsonl"
    with open(path, "wb") as out:
        out.write("\ufeff".encode())
        for k in range(3):
            for i, r in enumerate(rows):
                rec = {c: r[c] for c in FIELDS} | {"record_id": f"{r['record_id']}#{k}"}
                out.write(json.dumps(rec).encode() + (b"\r\n" if i % 7 == 0 else b"\n"))
                if i % 500 == 0:
                    out.write(b"\n")
            if k == 1:
                long = record(
                    0,
                    "phi-3-mini",
                    record_id=LONG_ID,
                    task="GSM8K",
                    key_answer_type="math",
                    llm_output="z" * (MAX_LINE_BYTES + 100),
                )
                out.write(json.dumps(long).encode() + b"\n")
    return path, len(rows) * 3 + 1


def job_args(path, out) -> list[str]:
    return [
        f"input={path}",
        f"output={out}",
        "extractor.name=rules",
        f"input.jsonl_shard_rows={SHARD_ROWS}",
        f"ray.batch_size={BATCH}",
    ]


@pytest.fixture(scope="module")
def uninterrupted(ray_local, big_jsonl, tmp_path_factory):
    from xfinder_ray.pipeline import run

    path, _ = big_jsonl
    out = tmp_path_factory.mktemp("jsonl-ref") / "out"
    result = run(load_config("configs/local.yaml", job_args(path, out)))
    return out, result


@pytest.mark.ray
def test_one_jsonl_file_is_many_read_tasks_and_its_long_line_counts_against_its_model(
    big_jsonl, uninterrupted
):
    path, n = big_jsonl
    out, result = uninterrupted
    assert result.manifest["counts"]["input"] == n
    # one read task per shard of SHARD_ROWS rows, not one for the whole file
    inventory = take_inventory(InputConfig(paths=[str(path)], jsonl_shard_rows=SHARD_ROWS), None)
    assert len(InputSource(inventory, {}, {}, "fail").task_groups()) == -(-n // SHARD_ROWS)
    judgments = faults.read_output(LOCAL, str(out))
    rejects = judgments.rejects.to_pandas().set_index("record_id")
    assert rejects.loc[LONG_ID, ["model", "task", "reason"]].tolist() == [
        "phi-3-mini",
        "GSM8K",
        f"line longer than {MAX_LINE_BYTES} bytes",
    ]
    by_model = pd.read_parquet(out / "accuracy" / "by_model.parquet").set_index("model")
    assert "(unknown)" not in by_model.index
    assert by_model.loc["phi-3-mini", "rejected_response"] == 1  # counted as wrong (aggregate.rejects=wrong)
    assert "Not attributed to a model" not in (out / "accuracy" / "leaderboard.md").read_text()


@pytest.mark.ray
@pytest.mark.slow
def test_killed_mid_run_a_rerun_keeps_the_written_shards_and_gives_the_same_result(
    big_jsonl, uninterrupted, tmp_path
):
    path, n = big_jsonl
    ref_out, _ = uninterrupted
    out = tmp_path / "out"
    args = faults.score_args(*job_args(path, out))
    first = faults.Job(args, tmp_path / "job.log")
    try:
        faults.wait_for(
            lambda: len(faults.part_files(LOCAL, str(out / "judgments"))) >= 3, 600, "3 part files", job=first
        )
    finally:
        first.kill_tree()  # SIGKILL: the driver, its Ray instance and every worker
    assert not (out / "manifest.json").exists()
    second = faults.Job(args, tmp_path / "job.log")
    try:
        assert second.wait(600) == 0, second.log_tail()
    finally:
        second.kill_tree()
    result = faults.read_output(LOCAL, str(out))
    resume = result.manifest["resume"]
    print(f"\n[jsonl killed mid-run] {json.dumps(resume)}, rerun {second.elapsed():.1f} s", flush=True)
    assert resume["resumed"] and resume["rows_done_before"] > 0 and resume["rows_this_run"] > 0, resume
    assert resume["rows_done_before"] + resume["rows_this_run"] == n
    ref = faults.read_output(LOCAL, str(ref_out))
    for part in ("judgments", "rejects"):
        mine = getattr(result, part).to_pandas().sort_values("record_id").reset_index(drop=True)
        theirs = getattr(ref, part).to_pandas().sort_values("record_id").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, theirs, check_like=True, obj=part)
    leaderboard = "accuracy/leaderboard.md"
    assert (out / leaderboard).read_text() == (ref_out / leaderboard).read_text()
