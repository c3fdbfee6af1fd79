"""Project layout rules checked on the source itself (no imports of the package, no Ray)."""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "xfinder_ray"
MAX_FUNCTION_LINES = 80
# The documented rules algorithm and the sample-data generator are long by design.
ALLOWED_LONG = ("extractors/rules/", "sample_data.py")

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _functions(
    tree: ast.AST, prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method, nested ones included, with a qualified name (Class.method, f.inner)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if isinstance(node, _FUNCTIONS):
                yield name, node
            yield from _functions(node, f"{name}.")
        else:
            yield from _functions(node, prefix)


def _allowed(relative: str) -> bool:
    return any(relative.startswith(a) if a.endswith("/") else relative == a for a in ALLOWED_LONG)


def long_functions(package: Path = PACKAGE, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, str, int]]:
    """(name, file, lines) of each function over `limit` lines, outside the allowlist."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if _allowed(relative):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _functions(tree):
            lines = node.end_lineno - node.lineno + 1  # from `def` to the last line of the body
            if lines > limit:
                found.append((name, f"xfinder_ray/{relative}", lines))
    return found


def test_no_function_over_80_lines():
    offenders = long_functions()
    listing = "\n".join(f"  {name} ({file}): {lines} lines" for name, file, lines in offenders)
    assert not offenders, f"functions over {MAX_FUNCTION_LINES} lines (split them):\n{listing}"


def _source(name: str, lines: int, indent: str = "") -> str:
    """A function `lines` long, its `def` line included."""
    return f"{indent}def {name}():\n" + "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))


def test_the_scan_sees_long_functions(tmp_path):
    """The check itself: a method over the limit is reported; one at the limit, or in the allowlist, is not."""
    over = MAX_FUNCTION_LINES + 1
    (tmp_path / "mod.py").write_text(
        "class C:\n" + _source("method", over, "    ") + _source("at_limit", MAX_FUNCTION_LINES)
    )
    (tmp_path / "extractors" / "rules").mkdir(parents=True)
    (tmp_path / "extractors" / "rules" / "algo.py").write_text(_source("long", over))
    (tmp_path / "sample_data.py").write_text(_source("long", over))
    assert long_functions(tmp_path) == [("C.method", "xfinder_ray/mod.py", over)]


def test_each_job_reads_in_one_screen():
    # pipeline.run and ablation/run.py:run_ablation are where a reader sees the whole job.
    for file, name in (("pipeline.py", "run"), ("ablation/run.py", "run_ablation")):
        tree = ast.parse((PACKAGE / file).read_text())
        (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        assert fn.end_lineno - fn.lineno + 1 <= 40, f"{file}:{name} is {fn.end_lineno - fn.lineno + 1} lines"


# A path of one machine (a developer's checkout, a build host) in a file people copy from is a trap:
# docs, scripts and test data name paths relative to the repository.
MACHINE_PATHS = re.compile(r"(?<![\w.])/(?:work|root)/")  # not /home/ray/: the Ray image's own home


def tracked_text_files() -> Iterator[Path]:
    root = PACKAGE.parent
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        path = root / name.decode()
        binary = path.suffix in {".parquet", ".png", ".zip", ".eval", ".gz", ".zst"}
        if binary or not path.is_file() or path == Path(__file__).resolve():  # this file: its examples
            continue
        yield path


def test_no_machine_paths_in_tracked_files():
    found = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(PACKAGE.parent)}: {m.group(0)}" for m in MACHINE_PATHS.finditer(text)]
        if MACHINE_PATHS.search(path.relative_to(PACKAGE.parent).as_posix().replace("__", "/")):
            found.append(f"{path.relative_to(PACKAGE.parent)} (its name)")
    assert not found, found[:20]


def test_the_machine_path_scan_sees_one():
    assert MACHINE_PATHS.search('"pretrained": "/work/main/.cache/models/x"')
    assert MACHINE_PATHS.search("/root/.cache/huggingface")
    assert not MACHINE_PATHS.search("s3://bucket/work/x and ../shared/data and ./work/")
