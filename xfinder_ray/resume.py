"""Resume: the committed part files in judgments/ and rejects/ are the job's checkpoint.

Every output row carries its input position (source_file, source_row); every part file is written
whole or not at all (stages/write.py). So after a crash the rows already done are exactly the
positions found in the part files, and a rerun of the same job reads only the others. Why not Ray
Data's own checkpointing: it needs a unique id column carried through every operator and a linear
read -> map -> write plan, while this job must tolerate duplicate record_ids (they are rejected, not
skipped), branches around the model, and packs rows inside the vLLM stage.

`_run.json` records what the unfinished output was made from (input files with sizes and mtimes,
extractor identity, comparator, ...). A rerun continues it only if that fingerprint is identical;
otherwise it refuses, or starts over with `output.overwrite=true`. `manifest.json`, written last,
commits the output: readers trust nothing in a folder without it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

from xfinder_ray.storage import Location, exists, read_json, remove_tree, write_json_atomic

log = logging.getLogger("xfinder_ray")
RUN_FILE = "_run.json"
OUTPUT_PARTS = ("judgments", "rejects")
DERIVED = ("accuracy",)


class OutputExists(RuntimeError):
    pass


def committed_output(uri: str) -> OutputExists:
    """The refusal to write over a committed run: for a leaderboard, last week's run is what the diff
    needs, so a new output comes first in the advice, overwriting second."""
    return OutputExists(
        f"{uri} already holds a committed run (manifest.json); write to another output= (e.g. a dated "
        "folder, then compare_to=previous to diff against this one) or set output.overwrite=true to "
        "replace it"
    )


class OutputCorrupt(RuntimeError):
    pass


@dataclass
class Progress:
    resumed: bool = False
    done: dict[str, np.ndarray] = field(default_factory=dict)  # source_file -> sorted rows already written

    @property
    def rows_done(self) -> int:
        return sum(len(v) for v in self.done.values())

    def figures(self, n_input: int) -> dict[str, Any]:
        """The manifest's `resume` entry."""
        return {
            "resumed": self.resumed,
            "rows_done_before": self.rows_done,
            "rows_this_run": n_input - self.rows_done,
        }


def part_files(loc: Location) -> list[str]:
    infos = loc.fs.get_file_info(pa.fs.FileSelector(loc.path, allow_not_found=True))
    return sorted(
        f.path for f in infos if f.path.rsplit("/", 1)[-1].startswith("part-") and f.path.endswith(".parquet")
    )


def written_positions(
    out: Location, parts: tuple[str, ...] = OUTPUT_PARTS
) -> tuple[dict[str, np.ndarray], int]:
    """(source_file -> sorted unique rows, number of rows written) over the part folders (the scoring
    job's judgments/ and rejects/; the ablation's records/)."""
    rows: dict[str, list[np.ndarray]] = defaultdict(list)
    total = 0
    for part in parts:
        files = part_files(out.join(part))
        if not files:
            continue
        dataset = pads.dataset(files, format="parquet", filesystem=out.fs)
        for batch in dataset.to_batches(columns=["source_file", "source_row"]):
            total += batch.num_rows
            for name, group in batch.to_pandas().groupby("source_file", sort=False):
                rows[name].append(group["source_row"].to_numpy(dtype=np.int64))
    merged = {name: np.unique(np.concatenate(parts)) for name, parts in rows.items()}
    return merged, total


def fingerprint_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def open_output(
    out: Location,
    fingerprint: dict[str, Any],
    *,
    overwrite: bool,
    resume: bool,
    parts: tuple[str, ...] = OUTPUT_PARTS,
    derived: tuple[str, ...] = DERIVED,
) -> Progress:
    """Prepare `out` for this job: continue an unfinished run of the same job, or start clean.
    `parts` hold the checkpoint (position-keyed part files); `derived` is rebuilt from them."""
    manifest = out.join("manifest.json")
    run_file = out.join(RUN_FILE)
    if exists(manifest):
        if not overwrite:
            raise committed_output(out.uri)
        # Uncommit first, so a crash below leaves an output that readers do not trust.
        manifest.fs.delete_file(manifest.path)
    elif exists(run_file) and resume:
        previous = read_json(run_file)
        differs = fingerprint_diff(previous, fingerprint)
        if not differs:
            done, total = written_positions(out, parts)
            if total != sum(len(v) for v in done.values()):
                raise OutputCorrupt(
                    f"{out.uri} holds {total} output rows for {sum(len(v) for v in done.values())} input "
                    "positions: some rows were written twice; set output.overwrite=true to start over"
                )
            progress = Progress(resumed=True, done=done)
            log.warning(
                "resuming the unfinished run in %s: %d rows already done", out.uri, progress.rows_done
            )
            return progress
        if not overwrite:
            raise OutputExists(
                f"{out.uri} holds an unfinished run of a different job (differs in: {', '.join(differs)}); "
                "set output.overwrite=true to discard it"
            )
    for part in (*parts, *derived):
        remove_tree(out.join(part))
    write_json_atomic(run_file, fingerprint)
    return Progress()
