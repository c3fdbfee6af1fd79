"""Import evaluation-framework outputs as job input (docs/importing.md).

- `import_files(fmt, paths, output, task_map=...)`: lm-evaluation-harness `--log_samples` files or an
  OpenCompass run folder -> `output`/records.parquet (the job's input schema + source_* columns),
  `output`/_import/rejects.parquet and `output`/_import/report.json.
- `convert_inputs(paths, fmt, task_map, out_dir)`: the same for the job (`input.format: lm-eval|opencompass`),
  returning the Parquet paths to read.
- `source_accuracy(...)`, `add_source_accuracy(...)`: the framework's own accuracy over the records the
  job judged, and the job's tables with it beside ours.

Names are loaded on first use, so `xfinder-ray --help` does not pay for pyarrow and pandas.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "FORMATS": "formats",
    "READERS": "formats",
    "Reader": "formats",
    "META_DIR": "core",
    "RECORDS_FILE": "core",
    "RECORD_SCHEMA": "core",
    "REJECTS_FILE": "core",
    "REJECT_SCHEMA": "core",
    "REPORT_FILE": "core",
    "ImportInputError": "core",
    "ImportReport": "core",
    "convert_inputs": "core",
    "import_files": "core",
    "add_source_accuracy": "source",
    "source_accuracy": "source",
    "DEFAULT_TASK_MAP": "task_map",
    "TaskMap": "task_map",
    "TaskMapError": "task_map",
    "load_task_map": "task_map",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
