"""`xfinder-ray import lm-eval|opencompass|zeroeval PATH... --output DIR`."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_import_parser(sub: Any) -> argparse.ArgumentParser:
    sp = sub.add_parser(
        "import",
        help="convert evaluation-framework outputs (lm-eval, OpenCompass, ZeroEval, Inspect AI, ...) into job input",
        description=(
            "Read lm-eval --log_samples files (samples_<task>_<timestamp>.jsonl + results_*.json) or an "
            "OpenCompass run folder (predictions/<model>/<dataset>.json + results/) or ZeroEval result "
            "files (result_dirs/<task>/<model>.json) or Inspect AI logs (a --log-dir of .eval / --log-format "
            "json logs) or lighteval details (--save-details: details/**/details_<task>_<date>.parquet + "
            "results/) or HELM run folders (benchmark_output/runs/<suite>/<run>/scenario_state.json) and write "
            "DIR/records.parquet (job input + source_judgment), DIR/_import/rejects.parquet and "
            "DIR/_import/report.json. Then: xfinder-ray score input=DIR output=... (docs/importing.md)"
        ),
    )
    from xfinder_ray.importers.formats import FORMATS

    sp.add_argument("format", choices=FORMATS)
    sp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (local, file://, s3://)")
    sp.add_argument("--output", "-o", required=True, metavar="DIR", help="folder to write (local or s3://)")
    sp.add_argument(
        "--task-map",
        action="append",
        default=[],
        metavar="YAML",
        help="extra task map merged over configs/task_map.yaml (repeatable; later files win)",
    )
    sp.add_argument("--model", help="model name to use instead of the one the framework recorded")
    sp.add_argument(
        "--filter",
        dest="lm_eval_filter",
        metavar="NAME",
        help="lm-eval: the filter whose verdict becomes source_judgment (default: the first logged)",
    )
    sp.set_defaults(run=import_main)
    return sp


def import_main(args: argparse.Namespace) -> int:
    from xfinder_ray.config import ConfigError
    from xfinder_ray.importers import ImportInputError, TaskMapError, import_files

    try:
        report = import_files(
            args.format,
            args.paths,
            args.output,
            task_map=args.task_map or None,
            model=args.model,
            lm_eval_filter=args.lm_eval_filter,
        )
    except (ImportInputError, TaskMapError) as e:
        print(f"xfinder-ray import: {e}", file=sys.stderr)
        return 1
    except ConfigError as e:  # a URL storage.py cannot serve (gs:// without gcsfs, memory://, ...)
        print(f"xfinder-ray import: {e}", file=sys.stderr)
        return 2
    for line in report.summary():
        print(line, file=sys.stderr if line.startswith(("SKIPPED", "REJECTED", "  ")) else sys.stdout)
    print(f"report: {report.output.rstrip('/')}/_import/report.json")
    return 0
