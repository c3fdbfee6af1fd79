"""Speed of the `rules` extractor on real model responses (the committed ZeroEval corpus,
benchmarks/data/zeroeval/), measured side by side in one run:

(a) single process, no Ray: records/s of `rules` against the `lm-eval` re-implementation (both from
    the extractor registry, each called on `xfinder_ray.records.validate(row)`; validation is done
    beforehand and not timed), overall and per key_answer_type, after a warm-up of each on the shipped
    synthetic sample (not the corpus, so no cache holds a timed record's answer range). Target: rules
    at least half as fast as lm-eval's regexes (ratio >= 0.5). Beside them, the job's other per-record
    step: `xfinder_ray.judging.judge` on rules' answers (about 10% of real math comparisons leave the
    in-process fast path for the math-verify worker, against ~4% on the synthetic data).
(b) the whole `score` job with `extractor.name=rules` (benchmarks/score_child.py on configs/local.yaml,
    a fresh local Ray instance with 2 CPUs, via bench_pipeline.run_job) on the corpus tiled to --rows
    records (distinct record_ids, several Parquet files in a temporary folder): records/s over the job's
    wall time (Ray start excluded, as in bench_pipeline.py), the driver's peak RSS. Target >= 3000
    records/s on 2 cores. Beside it, bench_pipeline's baseline: the job's per-record work
    (validate -> rules -> judge) in a plain single-process loop on --baseline-rows of the corpus.

    scripts/loopback.sh .venv/bin/python benchmarks/bench_rules_real.py    # whole corpus (a), 100k (b)
    scripts/loopback.sh .venv/bin/python benchmarks/bench_rules_real.py --records 2000 --rows 10000
    .venv/bin/python benchmarks/bench_rules_real.py --skip-job              # (a) only, no Ray
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_pipeline import baseline_loop, cold_verdicts, run_job  # noqa: E402
from real_corpus import load_real_corpus  # noqa: E402

from xfinder_ray.extractors import extractor_identity, get_record_extractor  # noqa: E402
from xfinder_ray.records import FIELDS, NO_VALID_ANSWER, Record, validate  # noqa: E402

EXTRACTORS = ("rules", "lm-eval")
RATIO_TARGET = 0.5
JOB_TARGET = 3000.0


def pick_rows(table: pa.Table, n: int | None, seed: int = 0) -> list[dict]:
    """The whole corpus, or a seeded random subset of n rows (in corpus order: task mix kept)."""
    rows = table.to_pylist()
    if n is None or n >= len(rows):
        return rows
    return [rows[i] for i in sorted(random.Random(seed).sample(range(len(rows)), n))]


def warmup_records(n: int) -> list[Record]:
    """Warm-up input: the shipped synthetic sample, not the corpus, so that caches keyed on a question's
    answer range (the extractors keep a few hundred) hold none of the timed records' ranges."""
    from xfinder_ray.sample_data import read_sample

    rows = [r for r in read_sample() if r["defect"] is None]
    return [validate(r) for r in pick_rows(pa.Table.from_pylist(rows).select(list(FIELDS)), n)]


def timed(fn: Callable[[Any], Any], by_type: dict[str, list], repeats: int) -> tuple[dict, dict[str, list]]:
    """fn over each key_answer_type's items: records, seconds (best of `repeats`), records/s; and the
    results (of the last pass)."""
    stats: dict[str, dict] = {}
    results: dict[str, list] = {}
    seconds: dict[str, float] = {}
    for kat, items in by_type.items():
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            results[kat] = [fn(x) for x in items]
            best = min(best, time.perf_counter() - t0)
        seconds[kat] = best
    seconds["all"] = sum(seconds.values())
    counts = {kat: len(items) for kat, items in by_type.items()}
    counts["all"] = sum(counts.values())
    for kat, sec in seconds.items():  # rates from unrounded times
        stats[kat] = {
            "records": counts[kat],
            "s": round(sec, 4),
            "records_per_s": round(counts[kat] / sec, 1),
        }
    return stats, results


def time_extractor(name: str, by_type: dict[str, list[Record]], warmup: list[Record], repeats: int) -> dict:
    """Per key_answer_type: seconds (best of `repeats`), records/s, share of [No valid answer]; the
    answers under "answers"."""
    extract = get_record_extractor(name)
    for rec in warmup:  # imports, pattern compilation, first-call costs
        extract(rec)
    stats, answers = timed(extract, by_type, repeats)
    for kat, ans in answers.items():
        stats[kat]["no_valid_answer"] = round(sum(a == NO_VALID_ANSWER for a in ans) / len(ans), 4)
    n_nva = sum(a == NO_VALID_ANSWER for ans in answers.values() for a in ans)
    stats["all"]["no_valid_answer"] = round(n_nva / stats["all"]["records"], 4)
    return {**stats, "answers": answers}


def warm_rules_and_judge(warmup: list[Record]) -> None:
    """rules + judge on the warm-up records: imports, patterns, the math-verify worker process's start."""
    from xfinder_ray.judging import judge

    extract = get_record_extractor("rules")
    for rec in warmup:
        judge(rec.key_answer_type, rec.answer_range, extract(rec), rec.correct_answer)


def time_judge(by_type: dict[str, list[Record]], answers: dict[str, list[str]], warmup: list[Record]) -> dict:
    """The job's other per-record step, on rules' answers: judge(...) per key_answer_type. One pass only:
    the math comparator caches recent pairs, so a second pass would time the cache."""
    from xfinder_ray.judging import judge

    warm_rules_and_judge(warmup)
    pairs = {kat: list(zip(recs, answers[kat], strict=True)) for kat, recs in by_type.items()}
    stats, _ = timed(
        lambda p: judge(p[0].key_answer_type, p[0].answer_range, p[1], p[0].correct_answer), pairs, 1
    )
    return stats


def bench_extractors(table: pa.Table, records: int | None, warmup: int, repeats: int) -> dict:
    by_type: dict[str, list[Record]] = {}
    for row in pick_rows(table, records):
        rec = validate(row)
        by_type.setdefault(rec.key_answer_type, []).append(rec)
    by_type = dict(sorted(by_type.items()))
    warm = warmup_records(warmup)
    res = {
        name: {"identity": extractor_identity(name), **time_extractor(name, by_type, warm, repeats)}
        for name in EXTRACTORS
    }
    res["judge"] = time_judge(by_type, res["rules"]["answers"], warm)
    for name in EXTRACTORS:
        del res[name]["answers"]
    return res


def tile_corpus(table: pa.Table, rows: int, out: Path, file_rows: int, seed: int = 0) -> int:
    """Write `rows` records as Parquet files of at most `file_rows` rows; returns the number of files.

    Whole copies of the corpus, then a seeded sample of it for the remainder (so a size below the
    corpus's keeps its mix of tasks and models); record_id gets the copy number as a suffix."""
    base = table.select(list(FIELDS))
    full, rest = divmod(rows, base.num_rows)
    parts = [(k, base) for k in range(full)]
    if rest:
        idx = sorted(random.Random(seed).sample(range(base.num_rows), rest))
        parts.append((full, base.take(pa.array(idx))))
    tiled = pa.concat_tables(
        part.set_column(0, "record_id", pa.array([f"{i}#{k}" for i in part.column("record_id").to_pylist()]))
        for k, part in parts
    )
    out.mkdir(parents=True, exist_ok=True)
    n_files = 0
    for start in range(0, tiled.num_rows, file_rows):
        pq.write_table(tiled.slice(start, file_rows), out / f"part-{n_files:04d}.parquet", compression="zstd")
        n_files += 1
    return n_files


def _baseline_child(path: str, rows: int, warmup: int) -> dict:
    cold_verdicts()  # not the verdicts (a) or an earlier run left on this machine
    warm_rules_and_judge(warmup_records(warmup))  # as the job's workers are after their first block
    return baseline_loop(Path(path), rows)


def baseline_fresh(path: Path, rows: int, warmup: int) -> dict:
    """bench_pipeline.baseline_loop in a fresh process: the judge caches recent comparisons, and (a) has
    just judged the same (answer, correct answer) pairs in this one."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(_baseline_child, str(path), rows, warmup).result()


def bench_job(table: pa.Table, rows: int, file_rows: int, baseline_rows: int, warmup: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        res: dict = {}
        if baseline_rows:
            # The job's per-record work (validate -> rules -> judge) in one plain process, no Ray: what
            # the job is compared with in bench_pipeline.py; on a seeded sample, so the task mix is kept.
            tile_corpus(table, baseline_rows, Path(tmp) / "base", file_rows)
            res["baseline"] = baseline_fresh(Path(tmp) / "base", baseline_rows, warmup)
            print(f"baseline (single-process validate -> rules -> judge): {res['baseline']}", flush=True)
        inp = Path(tmp) / "in"
        n_files = tile_corpus(table, rows, inp, file_rows)
        res["job"] = {**run_job([f"input={inp}", f"output={tmp}/out", "ray.num_cpus=2"]), "files": n_files}
    return res


def met(ok: bool) -> str:
    return "met" if ok else "**NOT met**"


def report(results: dict) -> None:
    ex = results.get("extractors")
    if ex:
        print(f"\n## (a) Single process, real responses: `rules` vs `lm-eval` (best of {results['repeats']})")
        print(f"rules: `{ex['rules']['identity']}`; lm-eval: `{ex['lm-eval']['identity']}`\n")
        print(
            "| key_answer_type | records | rules records/s | lm-eval records/s | rules / lm-eval | rules NVA "
            "| lm-eval NVA | judge records/s (rules' answers) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for kat in [k for k in ex["rules"] if k != "identity"]:
            a, b, j = ex["rules"][kat], ex["lm-eval"][kat], ex["judge"][kat]
            print(
                f"| {kat} | {a['records']:,} | {a['records_per_s']:,.0f} | {b['records_per_s']:,.0f} | "
                f"{a['records_per_s'] / b['records_per_s']:.3f} | {a['no_valid_answer']:.1%} | "
                f"{b['no_valid_answer']:.1%} | {j['records_per_s']:,.0f} |"
            )
        ratio = ex["rules"]["all"]["records_per_s"] / ex["lm-eval"]["all"]["records_per_s"]
        results["ratio"] = round(ratio, 4)
        print(f"\nrules / lm-eval = {ratio:.3f} (target >= {RATIO_TARGET}: {met(ratio >= RATIO_TARGET)})")
    job = results.get("job")
    if job:
        rate = job["records_per_s"]
        base = results.get("baseline")
        print("\n## (b) Whole `score` job, `extractor.name=rules`, real responses tiled, local Ray, 2 CPUs\n")
        print(
            "| run | records | files | judged | wall (s) | records/s | × baseline | Ray start (s) "
            "| driver peak RSS (MB) | object store peak (MB) |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        if base:
            print(
                f"| baseline: validate → rules → judge, one process, no Ray | {base['records']:,} | – | – | "
                f"{base['wall_s']} | {base['records_per_s']:,.0f} | 1.00 | – | – | – |"
            )
        ratio = f"{rate / base['records_per_s']:.2f}" if base else "–"
        print(
            f"| whole job | {job['records']:,} | {job['files']} | {job['judged']:,} | {job['wall_s']} | "
            f"{rate:,.0f} | {ratio} | {job['ray_start_s']} | {job['driver_peak_rss_mb']} | "
            f"{job.get('object_store_peak_mb', '–')} |"
        )
        print(f"\nwhole job {rate:,.0f} records/s (target >= {JOB_TARGET:,.0f}: {met(rate >= JOB_TARGET)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--records", type=int, default=None, help="(a): a seeded subset of the corpus (default: all)"
    )
    ap.add_argument(
        "--warmup",
        type=int,
        default=500,
        help="warm-up records (shipped sample, every type) for (a) and the baseline",
    )
    ap.add_argument("--repeats", type=int, default=3, help="(a): timed passes per extractor, best kept")
    ap.add_argument("--rows", type=int, default=100_000, help="(b): records for the whole job")
    ap.add_argument("--file-rows", type=int, default=25_000, help="(b): rows per input Parquet file")
    ap.add_argument(
        "--baseline-rows", type=int, default=10_000, help="(b): rows of the single-process baseline; 0: none"
    )
    ap.add_argument("--skip-extractors", action="store_true")
    ap.add_argument("--skip-job", action="store_true")
    args = ap.parse_args(argv)
    cold_verdicts()  # (a)'s judge figure starts as on a new machine
    table = load_real_corpus()
    results: dict = {"corpus_records": table.num_rows, "repeats": args.repeats}
    print(f"corpus: {table.num_rows:,} real responses (benchmarks/data/zeroeval)", flush=True)
    if not args.skip_extractors:
        results["extractors"] = bench_extractors(table, args.records, args.warmup, args.repeats)
        print(f"(a): {json.dumps(results['extractors'])}", flush=True)
    if not args.skip_job:
        results.update(bench_job(table, args.rows, args.file_rows, args.baseline_rows, args.warmup))
        print(f"(b): {json.dumps(results['job'])}", flush=True)
    report(results)
    (ROOT / "out").mkdir(exist_ok=True)
    (ROOT / "out" / "bench_rules_real.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
