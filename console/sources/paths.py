"""File paths for sources: resolving, the data-roots fence, listing data files, staged atomic writes."""
from __future__ import annotations

import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from console.sources.base import SourceContext, SourceError


def resolve(ctx: SourceContext, path: str) -> Path:
    """An absolute, symlink-free path: absolute paths as written, relative ones under data_dir.

    Refuses paths outside ctx.data_roots when any are set. realpath runs before the check so
    neither `..` nor a symlink can step outside a root.
    """
    if not path or not path.strip():
        raise SourceError("empty path")
    raw = Path(os.path.expanduser(path.strip()))
    if not raw.is_absolute():
        raw = Path(ctx.data_dir) / raw
    real = Path(os.path.realpath(raw))
    check_roots(ctx, real, path)
    return real


def check_roots(ctx: SourceContext, real: Path, shown: str) -> None:
    if not ctx.data_roots:
        return
    roots = [Path(os.path.realpath(r)) for r in ctx.data_roots]
    if any(real == r or r in real.parents for r in roots):
        return
    raise SourceError(f"path {shown} is outside the allowed data roots: "
                      f"{', '.join(str(r) for r in roots)}")


def visible(name: str) -> bool:
    # Spark's rule: _SUCCESS, _committed_…, .crc and other hidden files are not data.
    return not name.startswith((".", "_"))


def data_files(root: Path, suffixes: tuple[str, ...], shown: str) -> list[Path]:
    """The data files of a file or directory path, sorted.

    A directory yields every visible file below it whose name ends in one of suffixes; when
    none does (Spark writes `part-00000` without one), every visible file. Hidden folders are
    skipped, but hive-style `key=value` folders are not.
    """
    if root.is_file():
        return [root]
    if not root.exists():
        raise SourceError(f"path {shown} does not exist")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if visible(d))
        found.extend(Path(dirpath) / f for f in filenames if visible(f))
    found.sort()
    matching = [p for p in found if p.name.lower().endswith(suffixes)]
    return matching or found


def part_name(suffix: str) -> str:
    return f"part-{uuid.uuid4().hex[:16]}{suffix}"


@contextmanager
def staged_write(target: Path, mode: str) -> Iterator[Path | None]:
    """Yield a hidden staging folder next to target to write into, then publish it by mode.

    overwrite: the staging folder replaces target by rename, so until then readers see the old
    data, and a failed write (an exception in the block) leaves it untouched.
    append: each staged file is renamed into target at its relative path (rename is atomic
    per file, so readers never see half a part file).
    errorIfExists / ignore on an existing target: errorIfExists raises; ignore yields None.
    """
    from console.sources.base import exists_error

    exists = target.exists() and (target.is_file() or any(target.iterdir()))
    if exists and mode == "errorIfExists":
        raise exists_error(f"path {target}")
    if exists and mode == "ignore":
        yield None
        return
    if mode == "append" and target.is_file():
        raise SourceError(f"cannot append to {target}: it is a single file, not a folder of part files")
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = target.parent / f".{target.name}.staging-{uuid.uuid4().hex[:12]}"
    stage.mkdir()
    try:
        yield stage
        if mode == "append" and target.is_dir():
            _merge_into(stage, target)
        else:
            _swap_in(stage, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _swap_in(stage: Path, target: Path) -> None:
    if not target.exists() and not target.is_symlink():
        os.rename(stage, target)
        return
    # Two renames: the old data stays whole under a hidden name until the new one is in place.
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(target, old)
    try:
        os.rename(stage, target)
    except OSError:
        os.rename(old, target)
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink()


def _merge_into(stage: Path, target: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(stage):
        rel = Path(dirpath).relative_to(stage)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            os.rename(Path(dirpath) / name, target / rel / name)
