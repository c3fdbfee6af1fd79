"""One big JSONL file vs the same rows as Parquet: whole-job records/s with `rules` on 2 cores.

The rows: the shipped sample (xfinder_ray/data/sample_responses.parquet) replicated to --rows with fresh
record_ids, written once as one `results.jsonl` and as one Parquet file whose row groups hold as many rows
as a JSONL shard (input.jsonl_shard_rows), so both are read by the same number of tasks. Baseline,
measured in the same run: the Parquet file. Also measured: the JSONL file as a single shard
(input.jsonl_shard_rows=--rows), how every JSONL file was read before it was cut into line ranges.

    python benchmarks/bench_jsonl_shards.py --rows 100000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pipeline import CACHE, run_job  # noqa: E402

from xfinder_ray.config import InputConfig  # noqa: E402
from xfinder_ray.records import FIELDS  # noqa: E402

SAMPLE = ROOT / "xfinder_ray" / "data" / "sample_responses.parquet"


def inputs(n: int, shard_rows: int) -> tuple[Path, Path]:
    """(results.jsonl, results.parquet) of the same n rows, generated once and cached."""
    out = CACHE / f"jsonl-shards-{n}-{shard_rows}"
    jsonl, parquet = out / "jsonl" / "results.jsonl", out / "parquet" / "results.parquet"
    if (out / "_DONE").exists():
        return jsonl, parquet
    sample = [{c: r[c] for c in FIELDS} for r in pq.read_table(SAMPLE).to_pylist()]
    rows = [{**r, "record_id": f"{r['record_id']}#{k}"} for k in range(-(-n // len(sample))) for r in sample][
        :n
    ]
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    parquet.parent.mkdir(parents=True, exist_ok=True)
    with open(jsonl, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    pq.write_table(pa.Table.from_pylist(rows), parquet, row_group_size=shard_rows, compression="zstd")
    (out / "_DONE").write_text("ok")
    return jsonl, parquet


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    shard_rows = InputConfig(paths=[]).jsonl_shard_rows
    jsonl, parquet = inputs(args.rows, shard_rows)
    tasks = -(-args.rows // shard_rows)
    runs = [
        ("Parquet (baseline)", parquet, [], tasks),
        ("JSONL, line-range shards", jsonl, [], tasks),
        ("JSONL, one shard (as before)", jsonl, [f"input.jsonl_shard_rows={args.rows}"], 1),
    ]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, path, extra, n_tasks) in enumerate(runs):
            r = run_job([f"input={path}", f"output={tmp}/out-{i}", "ray.num_cpus=2", *extra])
            results.append({"run": name, "read_tasks": n_tasks, "bytes": path.stat().st_size, **r})
            print(f"{name}: {r}", flush=True)
    base = results[0]["records_per_s"]
    print(f"\n## One JSONL file vs the same {args.rows} rows as Parquet (`rules`, 2 CPUs; × the Parquet run)")
    print("| input | read tasks | MB | records/s | × Parquet | wall (s) |\n|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['run']} | {r['read_tasks']} | {r['bytes'] / 1e6:.0f} | {r['records_per_s']} | "
            f"{r['records_per_s'] / base:.2f} | {r['wall_s']} |"
        )
    (ROOT / "out").mkdir(exist_ok=True)
    (ROOT / "out" / "bench_jsonl_shards.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
