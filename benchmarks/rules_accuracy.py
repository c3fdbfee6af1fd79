"""Extraction and judgment accuracy of the `rules` extractor on a labelled JSONL file (KAF style).

    .venv/bin/python benchmarks/rules_accuracy.py [data.jsonl] [--failures]

Prints markdown tables (overall, per key_answer_type, per tag) for docs/rules.md. The default file
is the shared dev set, ../shared/data/kaf_dev.jsonl from the repository root. Math extraction is
compared by equivalence through `xfinder_ray.judging.judge` when it is importable, otherwise by a
small normalized equality (the output says which).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xfinder_ray.extractors.rules import RULES_VERSION
from xfinder_ray.extractors.rules_eval import accuracy_table, load_judge, load_rows, score_rows

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "kaf_dev.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT), help="labelled JSONL (default: %(default)s)")
    ap.add_argument("--failures", action="store_true", help="also list the rows extracted or judged wrongly")
    args = ap.parse_args(argv)

    judge = load_judge()
    scored = score_rows(load_rows(args.path), judge=judge)
    comparator = "xfinder_ray.judging.judge" if judge else "simple normalized equality (judge not importable)"
    print(
        f"`{RULES_VERSION}` on `{Path(args.path).name}` ({len(scored)} rows); math compared by {comparator}.\n"
    )
    print(accuracy_table(scored))
    if args.failures:
        print(
            "\n| id | type | tags | extracted | gold | extraction | judgment |\n|---|---|---|---|---|---|---|"
        )
        for r in scored:
            if not (r["extraction_ok"] and r["judgment_ok"]):
                print(
                    f"| {r['id']} | {r['key_answer_type']} | {', '.join(r['tags'])} | `{r['extracted']}` | "
                    f"`{r['gold_key_answer']}` | {'ok' if r['extraction_ok'] else 'WRONG'} | "
                    f"{'ok' if r['judgment_ok'] else 'WRONG'} |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
