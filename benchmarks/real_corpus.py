"""The committed corpus of real model responses (benchmarks/data/zeroeval/, built by
scripts/build_real_corpus.py from the public ZeroEval result files; see its README.md).

    from real_corpus import load_real_corpus              # from a benchmark script
    from benchmarks.real_corpus import load_real_corpus   # from the tests
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "zeroeval"


def corpus_files(path: Path = CORPUS_DIR) -> list[Path]:
    """The corpus's Parquet files (one per task folder), in a fixed order."""
    files = sorted(Path(path).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no corpus under {path}; build it with scripts/build_real_corpus.py")
    return files


def load_real_corpus(path: Path = CORPUS_DIR) -> pa.Table:
    """Every record of the corpus: the project's input columns plus `source` (repo, commit, file, id)."""
    return pa.concat_tables([pq.read_table(f) for f in corpus_files(path)])
