"""Whole-job throughput with `rules` (local files and S3), the driver's peak memory and the object store's
peak use (sampled by score_child.py) as input grows.

Baseline, measured in the same run: the same per-record work (validate -> rules -> judge) in a plain
single-process Python loop over the same Parquet files, without Ray.

    python benchmarks/bench_pipeline.py --rows 1000000 2000000 --s3-rows 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CACHE = Path(os.environ.get("XFINDER_RAY_CACHE", ROOT / ".cache")) / "bench"


def synthetic_input(n: int) -> Path:
    """N synthetic records as Parquet files of 100k rows, generated once and cached."""
    from xfinder_ray.sample_data import iter_synthetic_tables

    out = CACHE / f"synthetic-{n}"
    if (out / "_DONE").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    for i, table in enumerate(iter_synthetic_tables(n, rows_per_table=100_000, seed=0)):
        pq.write_table(table, out / f"part-{i:04d}.parquet", compression="zstd")
    (out / "_DONE").write_text("ok")
    return out


def cold_verdict_env() -> dict[str, str]:
    """The environment of a process that judges as on a new machine: a fresh shared math-verify
    verdict folder (judging/verdict_cache.py keeps verdicts across runs otherwise)."""
    return {"XFINDER_VERDICT_CACHE_DIR": tempfile.mkdtemp(prefix="bench-verdicts-")}


def cold_verdicts() -> None:
    """Judge from here on, in this process and its children, as on a new machine."""
    os.environ.update(cold_verdict_env())


def baseline_loop(path: Path, limit: int) -> dict:
    from xfinder_ray.extractors import get_record_extractor
    from xfinder_ray.judging import judge
    from xfinder_ray.records import InvalidRecord, validate

    extract = get_record_extractor("rules")
    n = 0
    t0 = time.time()
    for f in sorted(path.glob("*.parquet")):
        for row in pq.read_table(f).to_pylist():
            try:
                rec = validate(row)
                judge(rec.key_answer_type, rec.answer_range, extract(rec), rec.correct_answer)
            except InvalidRecord:
                pass
            n += 1
            if n >= limit:
                break
        if n >= limit:
            break
    wall = time.time() - t0
    return {"records": n, "wall_s": round(wall, 2), "records_per_s": round(n / wall, 1)}


def run_job(overrides: list[str], env: dict | None = None) -> dict:
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "score_child.py"),
        str(ROOT / "configs" / "local.yaml"),
        "extractor.name=rules",
        "output.overwrite=true",
        *overrides,
    ]
    # Each job starts as on a new machine, not with the verdicts of this process or an earlier run.
    env = {**os.environ, **cold_verdict_env(), **(env or {})}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"job failed:\n{proc.stderr[-3000:]}")
    lines = [x for x in proc.stdout.splitlines() if x.startswith("BENCH_JSON ")]
    return json.loads(lines[-1][len("BENCH_JSON ") :])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[200_000, 400_000])
    ap.add_argument("--s3-rows", type=int, default=200_000, help="0 to skip the S3 run")
    ap.add_argument("--baseline-rows", type=int, default=20_000)
    args = ap.parse_args()
    cold_verdicts()
    results: dict = {"local": {}, "s3": None}
    inputs = {
        n: synthetic_input(n) for n in sorted(set(args.rows + ([args.s3_rows] if args.s3_rows else [])))
    }
    results["baseline"] = baseline_loop(inputs[min(inputs)], args.baseline_rows)
    print(f"baseline (single-process loop, no Ray): {results['baseline']}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.rows:
            r = run_job([f"input={inputs[n]}", f"output={tmp}/out-{n}"])
            results["local"][n] = r
            print(f"local {n}: {r}", flush=True)
        if args.s3_rows:
            from tests.s3_server import SeaweedS3

            with SeaweedS3(Path(tmp) / "weed") as s3:
                s3.start()
                bucket = s3.make_bucket("bench")
                fs = s3.pyarrow_fs()
                t0 = time.time()
                for f in sorted(inputs[args.s3_rows].glob("*.parquet")):
                    with open(f, "rb") as src, fs.open_output_stream(f"{bucket}/in/{f.name}") as dst:
                        dst.write(src.read())
                upload = time.time() - t0
                creds = [
                    f"storage.endpoint_url={s3.endpoint_url}",
                    f"storage.access_key_id={s3.access_key}",
                    f"storage.secret_access_key={s3.secret_key}",
                    "storage.region=us-east-1",
                ]
                r = run_job([f"input=s3://{bucket}/in/", f"output=s3://{bucket}/out/", *creds])
                r["upload_s"] = round(upload, 1)
                results["s3"] = r
                print(f"s3 {args.s3_rows}: {r}", flush=True)
    base = results["baseline"]["records_per_s"]
    print("\n## Whole job with `rules` (records/s; ratio vs the single-process loop baseline)")
    print(
        "| run | records | records/s | × baseline | driver peak RSS (MB) | object store peak (MB) | spilled (MB) |"
        "\n|---|---|---|---|---|---|---|"
    )
    print(f"| baseline loop | {results['baseline']['records']} | {base} | 1.00 | – | – | – |")
    runs = [("local", r) for r in results["local"].values()] + (
        [("s3", results["s3"])] if results["s3"] else []
    )
    for where, r in runs:
        print(
            f"| {where} | {r['records']} | {r['records_per_s']} | {r['records_per_s'] / base:.2f} | "
            f"{r['driver_peak_rss_mb']} | {r.get('object_store_peak_mb', '–')} | {r.get('object_store_spilled_mb', '–')} |"
        )
    (ROOT / "out").mkdir(exist_ok=True)
    (ROOT / "out" / "bench_pipeline.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
