"""Writable config and cache folders, in the session's cache dir, for libraries user code uses.

In the sandbox the home folder is read-only: matplotlib warned in red on every import (and
rebuilt its font cache each time in a temporary folder), and jedi/parso's cache writes failed
and were printed as the kernel's own errors. A Python worker gets all of FOLDERS in its
environment (`!python env` may still set them); the kernel process itself only needs jedi's.
"""
from __future__ import annotations

import os
from pathlib import Path

HOME = ".home"  # beside the `--%cache=true` tables of cache_dir, never one of them
FOLDERS = {"MPLCONFIGDIR": "matplotlib", "XDG_CACHE_HOME": "cache", "XDG_CONFIG_HOME": "config"}


def folders(cache_dir: Path) -> dict[str, str]:
    """FOLDERS as paths under cache_dir/HOME, made; empty where they cannot be (a read-only data dir)."""
    chosen: dict[str, str] = {}
    for name, sub in FOLDERS.items():
        folder = cache_dir / HOME / sub
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:  # the libraries fall back as before
            continue
        chosen[name] = str(folder)
    return chosen


def apply_to_kernel(cache_dir: Path) -> None:
    """Before the kernel's first `import jedi`: its (and parso's) cache folder, unless one is set."""
    if not os.environ.get("XDG_CACHE_HOME"):
        cache = folders(cache_dir).get("XDG_CACHE_HOME")
        if cache:
            os.environ["XDG_CACHE_HOME"] = cache
