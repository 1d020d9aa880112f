"""A data folder's notebook-environment layers on disk: where they live, which are sealed, which go.

The kernel uses layers (console/kernel/envs.py) and, with no server to ask, builds private ones;
the server builds and seals the shared ones (console/server/sessions/env_builds.py) and prunes the ones
nobody used for CONSOLE_ENV_KEEP_DAYS when it starts. Both need the folder's layout and the same
idea of "sealed", so they live here, below both: stdlib only.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
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
        half_done = name.startswith((".build-", ".seal-")) and age > 86400
        if (stale or half_done) and remove_layer(path):
            removed.append(name)
    return removed


def remove_layer(folder: Path) -> bool:
    """Remove a layer's folder (read-only once built); False when it is no folder or may not go."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        if os.geteuid() != 0:  # root needs no write bit, and chmods nothing a kernel could swap for a link
            writable(folder)
        shutil.rmtree(folder)  # by descriptors: a link swapped in is removed, never followed
    except OSError:
        return False
    return True


def writable(folder: Path) -> None:
    for dirpath, _dirs, _files in os.walk(folder):  # os.walk follows no link to a folder
        Path(dirpath).chmod(0o755)


def read_only(folder: Path) -> None:
    """Take every write bit off a built layer (files first, then folders from the bottom up), so
    that nobody but its owner, by chmod, can change it."""
    for dirpath, _dirs, filenames in os.walk(folder):
        for name in filenames:
            p = Path(dirpath, name)
            p.chmod(p.stat().st_mode & 0o555)
    for dirpath, _dirs, _files in os.walk(folder, topdown=False):
        Path(dirpath).chmod(0o555)


def mark_used(folder: Path) -> None:
    """Mark a layer used now (its folder's mtime), so a server start keeps it (prune above)."""
    try:
        os.utime(folder)
    except OSError:  # not ours to touch: a shared layer of another uid is kept by its age alone
        pass


def is_sealed(folder: Path, data_dir: Path) -> bool:
    """Whether folder is a layer the server sealed: a real folder (no link) owned by the data dir's
    owner, which no other uid can write. Behind the sandbox a kernel uses no other."""
    try:
        st, owner = os.lstat(folder), os.stat(data_dir).st_uid
        meta = os.lstat(folder / "meta.json")
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == owner and not st.st_mode & 0o222
            and stat.S_ISREG(meta.st_mode) and meta.st_uid == owner)
