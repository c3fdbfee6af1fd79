"""Checks around a job that turn the common set-up mistakes into one clear line (`xfinder-ray: ...`)
instead of a wait, a hang or a page of traceback:

- before Ray starts (`check_before_ray`): every local input path exists; a local output is not an input,
  inside one or around one, and holds no committed run (unless output.overwrite); the xFinder checkpoint
  (`xfinder.model_source`) is a folder on disk, an `s3://` (or other URL) folder or a well-formed
  Hugging Face id, and, offline (HF_HUB_OFFLINE), one already in the local Hugging Face cache;
- once Ray is up, before any engine is built (`check_after_ray`): `xfinder.device: gpu` on a local Ray
  instance without a GPU fails at once (a joined cluster may add GPU nodes through its autoscaler: a
  warning only);
- after the job (`rejection_problem`): more than `input.max_rejected_share` of the input rejected is a
  problem, reported with the three most common reasons (the CLI exits 3; `xfinder_ray.score` warns),
  with a hint to use `input.format=lm-eval` when the files look like lm-eval output.

No function here imports Ray at module level; only `check_after_ray` and `rejection_problem` touch it
or the output.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from xfinder_ray.config import ConfigError

log = logging.getLogger("xfinder_ray")

# A Hugging Face model id: namespace/name (letters, digits, -, _, .), as the hub accepts them.
_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
CHECKPOINT_HINT = (
    "download it with `.venv/bin/hf download IAAR-Shanghai/xFinder-qwen1505 "
    "--local-dir .cache/models/xFinder-qwen1505` (README: The xFinder checkpoint), or use extractor.name=rules"
)
# File names lm-evaluation-harness writes with --log_samples / --output_path.
_LM_EVAL_NAMES = re.compile(r"(^|/)(samples_.+\.jsonl|results_.+\.json)$")


def _local_path(uri: str) -> str | None:
    """The local path of an input URI, or None for a remote one (s3://, gs://, ...)."""
    if uri.startswith("file://"):
        return uri[len("file://") :]
    if "://" in uri:
        return None
    return uri


def check_inputs(paths: Any) -> None:
    """Every local input path exists (remote ones are listed by the job, with its storage settings)."""
    for uri in paths:
        local = _local_path(str(uri))
        if local is not None and not Path(local).expanduser().exists():
            glob = any(c in local for c in "*?[")  # the shell leaves a quoted or unmatched glob to us
            hint = "; globs are not expanded: pass the folder, or a list (input=[a,b])" if glob else ""
            raise FileNotFoundError(f"input {str(uri)!r} does not exist{hint}")


def model_source_problem(
    source: str, revision: str | None = None, key: str = "xfinder.model_source"
) -> str | None:
    """Why `source` (the config's `key`) cannot be a checkpoint to load, or None."""
    if "://" in source or Path(source).expanduser().is_dir():
        return None
    if not _HF_ID.match(source) or ".." in source or "--" in source:
        return (
            f"{key} {source!r} is not a folder on disk, an s3:// folder or a Hugging Face "
            f"id (namespace/name); {CHECKPOINT_HINT}"
        )
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # no hub client: the engine will say so
            return None
        found = try_to_load_from_cache(source, "config.json", revision=revision)
        if not isinstance(found, str):
            return (
                f"{key} {source!r} is a Hugging Face id that is not in the local cache, "
                f"and HF_HUB_OFFLINE is set; {CHECKPOINT_HINT}"
            )
    return None


def uses_model(cfg: Any) -> bool:
    """Whether this scoring job will load a model: xFinder (not the embedded default's `rules`
    fallback for a checkpoint that is not on disk) or a verifier judge."""
    from xfinder_ray.config import VERIFIER_DEFAULTS
    from xfinder_ray.stages.extract import falls_back_to_rules

    if cfg.extractor.name in VERIFIER_DEFAULTS:
        return True
    return cfg.extractor.name == "xfinder" and not falls_back_to_rules(cfg)


def check_output(cfg: Any) -> None:
    """A local output that is an input, inside one or holds one: ConfigError (the next run would read
    its own outputs as records); a committed one without output.overwrite: OutputExists, before Ray
    starts rather than after (remote outputs are checked by the job)."""
    from xfinder_ray.resume import committed_output

    out = _local_path(str(cfg.output.path))
    if out is None:
        return
    out_path = Path(out).expanduser().resolve()
    for uri in cfg.input.paths:
        local = _local_path(str(uri))
        if local is None:
            continue
        in_path = Path(local).expanduser().resolve()
        if out_path == in_path or in_path in out_path.parents or out_path in in_path.parents:
            where = (
                "is the input"
                if out_path == in_path
                else ("is inside the input" if in_path in out_path.parents else "holds the input")
            )
            raise ConfigError(
                f"output.path {str(cfg.output.path)!r} {where} {str(uri)!r}: the next run would read its own "
                "outputs as records; write the output to a folder of its own"
            )
    if (out_path / "manifest.json").exists() and not cfg.output.overwrite:
        raise committed_output(str(cfg.output.path))


def check_before_ray(cfg: Any) -> None:
    """Input paths, the output, then the checkpoint: FileNotFoundError / ConfigError / OutputExists
    with one line each."""
    check_inputs(cfg.input.paths)
    check_output(cfg)
    if uses_model(cfg):
        if cfg.extractor.name == "xfinder":
            problem = model_source_problem(cfg.xfinder.model_source, cfg.xfinder.revision)
        else:
            v = cfg.verifier
            problem = model_source_problem(v.model_source, v.revision, "verifier.model_source")
        if problem:
            raise ConfigError(problem)


def starts_local_ray(cfg: Any) -> bool:
    """Whether init_ray will start a local instance (no address, none running in this process)."""
    import ray

    return not (ray.is_initialized() or cfg.ray.address or os.environ.get("RAY_ADDRESS"))


def check_after_ray(cfg: Any, local_instance: bool) -> None:
    """`xfinder.device: gpu` where Ray sees no GPU: a ConfigError on a local instance (it would wait
    forever for one), a warning on a joined cluster (its autoscaler may add GPU nodes)."""
    if not uses_model(cfg) or cfg.xfinder.device != "gpu":
        return
    import ray

    if ray.cluster_resources().get("GPU", 0) > 0:
        return
    if local_instance:
        raise ConfigError(
            "xfinder.device=gpu, but this machine's Ray instance has no GPU; set xfinder.device=cpu "
            "(vLLM's CPU build; configs/local.yaml), submit to a GPU cluster, or use extractor.name=rules"
        )
    log.warning(
        "xfinder.device=gpu and the Ray cluster has no GPU node now: the job waits for its autoscaler "
        "to add one (docs/deploy.md); stop it if the cluster has no GPU worker group"
    )


def _reason_key(reason: str) -> str:
    """Reasons that differ only in a row or line number or a position count as one."""
    return re.sub(r"\b(row|line|column|char) \d+", r"\1 N", reason)


def rejection_problem(cfg: Any, result: Any) -> str | None:
    """The message for a run that rejected more than `input.max_rejected_share` of its input, with the
    three most common reasons, or None."""
    counts = result.manifest["counts"]
    n_input, n_rejected = counts["input"], counts["rejected"]
    limit = cfg.input.max_rejected_share
    if not n_input or n_rejected <= limit * n_input:
        return None
    try:
        reasons, files = _reject_reasons(cfg, result.output)
    except Exception as e:  # the run is committed; a failed read of its rejects only costs the detail
        log.warning("could not read the rejects of %s: %s", result.output, e)
        reasons, files = Counter(), set()
    top = "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common(3))
    message = (
        f"{n_rejected} of {n_input} records rejected ({n_rejected / n_input:.0%}, more than "
        f"input.max_rejected_share={limit:g}); most common reasons: {top or 'unknown'} "
        f"(all in {result.output.rstrip('/')}/rejects/)"
    )
    message += _columns_hint(cfg, reasons)
    names = [*files, *map(str, cfg.input.paths)]
    if cfg.input.format in ("auto", "jsonl", "parquet") and any(_LM_EVAL_NAMES.search(n) for n in names):
        message += (
            "; these look like lm-evaluation-harness output files: score them with input.format=lm-eval "
            "(docs/importing.md)"
        )
    return message


_MISSING_FIELD = re.compile(r"^missing field '(\w+)'")
HEAD_BYTES = 1 << 20  # of a JSONL input: its first record's keys are the columns named in the hint


def input_columns(cfg: Any) -> list[str]:
    """The columns of the first input file: a Parquet schema, or the keys of a JSONL file's first line."""
    import json

    import pyarrow.parquet as pq

    from xfinder_ray.stages.inventory import list_input

    first = list_input(cfg.input, cfg.storage)[0]
    if first.fmt != "jsonl":
        return list(pq.read_schema(first.fs.open_input_file(first.path)).names)
    with first.fs.open_input_stream(first.path) as f:
        head = f.read(HEAD_BYTES)
    if first.path.endswith(".gz"):
        import zlib

        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_BYTES)
    line = head.split(b"\n", 1)[0]
    try:
        record = json.loads(line)
    except ValueError:
        return []
    return list(record) if isinstance(record, dict) else []


def _columns_hint(cfg: Any, reasons: Counter[str]) -> str:
    """For missing fields among the top reasons: the columns the records have, and the mapping to use."""
    from xfinder_ray.records import FIELDS

    missing = [m.group(1) for r, _ in reasons.most_common(3) if (m := _MISSING_FIELD.match(r))]
    if not missing:
        return ""
    try:
        columns = input_columns(cfg)
    except Exception as e:  # the hint is a courtesy: an unreadable file only costs it
        log.warning("could not read the input's columns: %s", e)
        return ""
    if not columns:
        return ""
    spare = [c for c in columns if c not in FIELDS and c not in cfg.input.columns.values()]
    example = f"input.columns.{missing[0]}={spare[0] if spare else '<column>'}"
    shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
    return f"; the records' columns are {shown}: map them with input.columns.<field>=<column>, e.g. {example}"


def _reject_reasons(cfg: Any, output: str) -> tuple[Counter[str], set[str]]:
    """Reason counts and source files over the committed rejects/ of `output`."""
    import pyarrow.dataset as pads
    import pyarrow.fs as pafs

    from xfinder_ray.storage import resolve

    loc = resolve(output, cfg.storage).join("rejects")
    infos = loc.fs.get_file_info(pafs.FileSelector(loc.path, allow_not_found=True))
    paths = [f.path for f in infos if f.path.endswith(".parquet")]
    reasons: Counter[str] = Counter()
    files: set[str] = set()
    if not paths:
        return reasons, files
    dataset = pads.dataset(paths, format="parquet", filesystem=loc.fs)
    columns = [c for c in ("reason", "source_file") if c in dataset.schema.names]
    for batch in dataset.to_batches(columns=columns):
        data = batch.to_pydict()
        reasons.update(_reason_key(str(r)) for r in data.get("reason", []))
        files.update(str(f) for f in data.get("source_file", []) if f is not None)
    return reasons, files
