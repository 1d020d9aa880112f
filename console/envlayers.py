"""A data folder's notebook-environment layers on disk: where they live and which go (issue 31).

The kernel builds and uses layers (console/kernel/envs.py); the server prunes the ones nobody used
for CONSOLE_ENV_KEEP_DAYS when it starts. Both need the folder's layout, so it lives here, below
both: stdlib only.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

LAYER_NAME = re.compile(r"^[0-9a-f]{24}(-[0-9a-f]{16})?$")  # <lock hash>[-<a kernel's private suffix>]


def envs_dir(data_dir: Path) -> Path:
    return data_dir / "envs"


def prune(data_dir: Path, keep_days: float) -> list[str]:
    """At the server's start: remove layers (shared or private) not used for keep_days, and builds
    left half done by a kernel that died. Returns the names removed; a layer it may not remove stays."""
    root = envs_dir(data_dir)
    try:
        names = os.listdir(root)
    except OSError:
        return []
    now, removed = time.time(), []
    for name in names:
        path = root / name
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        stale = LAYER_NAME.match(name) and age > keep_days * 86400
        if (stale or (name.startswith(".build-") and age > 86400)) and remove_layer(path):
            removed.append(name)
    return removed


def remove_layer(folder: Path) -> bool:
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        writable(folder)
        shutil.rmtree(folder)
    except OSError:
        return False
    return True


def writable(folder: Path) -> None:
    for dirpath, _dirs, _files in os.walk(folder):  # os.walk follows no link to a folder
        Path(dirpath).chmod(0o755)
