"""Model identity: a short, stable name for the weights, computed without Ray or the engine. Two runs'
extractions are comparable (and share the extraction cache) only if it matches.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xfinder_ray.config import StorageConfig

# Weight and tokenizer files whose names and sizes enter model_identity (content hashes would mean reading GBs).
_IDENTITY_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".model")
_IDENTITY_NAMES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json")


def _hf_revision(repo_id: str) -> str:
    """The commit of the cached snapshot (offline), else the hub's current one, else 'unresolved'."""
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(repo_id, "config.json")
        if isinstance(cached, str):
            parts = Path(cached).parts
            if "snapshots" in parts:
                return parts[parts.index("snapshots") + 1]
    except Exception:  # noqa: BLE001 - identity must not fail the job
        pass
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("1", "true", "True", "YES", "yes"):
        try:
            from huggingface_hub import HfApi

            sha = HfApi().model_info(repo_id).sha
            if sha:
                return sha
        except Exception:  # noqa: BLE001
            pass
    return "unresolved"


def model_identity(
    model_source: str, revision: str | None = None, storage: StorageConfig | None = None
) -> str:
    """A short, stable name for the weights: two runs are comparable only if this matches.

    Folder (local, s3:// or another fsspec URL, read with the job's `storage` settings: endpoint,
    credentials, profile): ``<folder name>@<12 hex>``, hashing config.json's bytes plus the names and
    sizes of the weight and tokenizer files (not their contents: that would read gigabytes).
    HF id: ``<id>@<revision>`` when one is pinned, else ``<id>@<commit>`` (the cached snapshot's commit
    when offline, the hub's current one otherwise).
    """
    from pyarrow.fs import FileSelector, FileType

    from xfinder_ray.storage import resolve

    is_remote = "://" in model_source
    if not is_remote and not Path(model_source).expanduser().is_dir():
        return f"{model_source}@{revision or _hf_revision(model_source)}"
    loc = resolve(model_source if is_remote else str(Path(model_source).expanduser()), storage)
    root = loc.path.rstrip("/")
    h = hashlib.sha256()
    with loc.fs.open_input_stream(f"{root}/config.json") as f:
        h.update(f.read())
    entries = []
    for info in loc.fs.get_file_info(FileSelector(root)):
        name = info.base_name
        if info.type == FileType.File and (name.endswith(_IDENTITY_SUFFIXES) or name in _IDENTITY_NAMES):
            entries.append([name, int(info.size or 0)])
    h.update(json.dumps(sorted(entries)).encode())
    return f"{root.rsplit('/', 1)[-1]}@{h.hexdigest()[:12]}"
