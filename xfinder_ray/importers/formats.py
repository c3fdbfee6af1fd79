"""The import formats (`input.format`, `xfinder-ray import <format>`) and the Reader each one names.

Kept free of heavy imports: config validation and `xfinder-ray --help` read the names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from xfinder_ray.registry import Registry

if TYPE_CHECKING:
    from xfinder_ray.importers.core import Sample, Skipped


class Reader(Protocol):
    """A framework's output reader (a module: importers/lm_eval.py, importers/opencompass.py): find its
    files under the given paths, then yield one Sample per record and Skipped counts for what it
    cannot use, each with its reason -- the import writes every one (input = written + rejected)."""

    def find_files(self, paths: list[str], storage: Any) -> Any: ...

    def read(
        self, found: Any, *, model: str | None, lm_eval_filter: str | None, notes: list[str]
    ) -> Iterator[Sample | Skipped]: ...


# import format (`input.format`, `xfinder-ray import <format>`) -> the module implementing Reader.
READERS: Registry[str] = Registry("import format")
READERS.register("lm-eval", "xfinder_ray.importers.lm_eval")
READERS.register("opencompass", "xfinder_ray.importers.opencompass")
READERS.register("zeroeval", "xfinder_ray.importers.zeroeval")
READERS.register("inspect", "xfinder_ray.importers.inspect_ai")
READERS.register("lighteval", "xfinder_ray.importers.lighteval")
READERS.register("helm", "xfinder_ray.importers.helm")
FORMATS = tuple(READERS.names())
