"""`lighteval` CLI, offline: lighteval 0.12/0.13 import every built-in task module when building the task
registry, and two of them reach the network at import (tasks/tiny_benchmarks.py downloads a pickle,
tasks/mt_bench/main.py lists hub models). Here a built-in module that fails to import is left out
(logged); everything else is lighteval's own CLI and pipeline, unchanged."""

import importlib
import logging
import sys

from lighteval.tasks.registry import Registry

log = logging.getLogger("run_lighteval")


def _load_from_files(files, module_prefix):
    configs = {}
    for task_file in files:
        try:
            module = importlib.import_module(f"{module_prefix}.{task_file.stem}")
        except Exception as e:  # noqa: BLE001
            log.warning("left out built-in task module %s: %s", task_file.stem, type(e).__name__)
            continue
        configs.update(Registry._extract_configs(module))
    return configs


def _load_from_subdirs(subdirs):
    configs = {}
    for task_dir in subdirs:
        try:
            module = importlib.import_module(f"lighteval.tasks.tasks.{task_dir.name}.main")
        except Exception as e:  # noqa: BLE001
            log.warning("left out built-in task module %s: %s", task_dir.name, type(e).__name__)
            continue
        configs.update(Registry._extract_configs(module))
    return configs


Registry._load_from_files = staticmethod(_load_from_files)
Registry._load_from_subdirs = staticmethod(_load_from_subdirs)

if __name__ == "__main__":
    from lighteval.__main__ import app

    sys.argv[0] = "lighteval"
    app()
