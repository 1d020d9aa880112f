"""File paths for sources: resolving, the data-roots fence, listing data files, staged atomic writes,
and how a path is shown to a user (`shown`, `scrub`): never as the server's own folder.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from console.sources.base import SourceContext, SourceError


def resolve(ctx: SourceContext, path: str) -> Path:
    """An absolute, symlink-free path: absolute paths as written, relative ones under the lake.

    Refused when it leads into the server's data folder (outside its lake and ctx.own_roots), or
    outside ctx.data_roots when any are set. realpath runs before the check so neither `..` nor a
    symlink can step outside.
    """
    if not path or not path.strip():
        raise SourceError("empty path")
    raw = Path(os.path.expanduser(path.strip()))
    if not raw.is_absolute():
        # Never against the process's folder or the data folder: those hold the server's own files.
        raw = ctx.lake / raw
    real = _real(raw)
    check_roots(ctx, real, path)
    return real


def resolve_target(ctx: SourceContext, path: str) -> Path:
    """resolve() for a save: also refuses a target that is a root itself or holds one, which an
    overwrite would swap away whole (the lake, a data root, the server's data folder)."""
    real = resolve(ctx, path)
    guarded = [_real(ctx.data_dir), *_own(ctx), *(_real(r) for r in ctx.data_roots)]
    if any(_inside(g, real) for g in guarded):
        raise SourceError(f"cannot save to {path}: it is {real}, which is or holds a data root; "
                          f"save into a folder below it")
    return real


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _own(ctx: SourceContext) -> list[Path]:
    return [_real(ctx.lake), *(_real(r) for r in ctx.own_roots)]


def check_roots(ctx: SourceContext, real: Path, shown: str) -> None:
    """Refuse a resolved path outside what notebooks may touch (see SourceContext)."""
    own = _own(ctx)
    if any(_inside(real, r) for r in own):
        return
    private = _real(ctx.data_dir)
    configured = [_real(r) for r in ctx.data_roots]
    if _inside(real, private):
        # A root below the data folder opens that folder; one equal to or above it does not.
        if not any(_inside(real, r) and r != private and _inside(r, private) for r in configured):
            raise SourceError(f"path {shown} is inside the server's private data folder; "
                              f"notebooks may use only {', '.join(str(r) for r in own)} there")
        return
    if configured and not any(_inside(real, r) for r in configured):
        raise SourceError(f"path {shown} is outside the allowed data roots: "
                          f"{', '.join(str(r) for r in configured + own)}")


LAKE_PREFIX = "lake:"
CACHE_PREFIX = "cache:"
HIDDEN = "<server path>"


def _shown_roots(ctx: SourceContext) -> list[tuple[str, str]]:
    """(folder as text, what it is shown as), deepest first: the session's cache, the lake, then
    the rest of the data folder; each as configured and as resolved (they differ under a link)."""
    roots: list[tuple[str, str]] = []
    for folder, prefix in [*((r, CACHE_PREFIX) for r in ctx.own_roots), (ctx.lake, LAKE_PREFIX),
                           (Path(ctx.data_dir), "")]:
        for form in {str(Path(folder)), str(_real(folder))}:
            if form != "/":
                roots.append((form.rstrip("/"), prefix))
    return sorted(roots, key=lambda r: -len(r[0]))


def shown(ctx: SourceContext, path: Path | str) -> str:
    """A path as a user may see it: `lake:db/t` in the lake, `cache:tables/t.parquet` in the
    session's cache, `<server path>` anywhere else in the data folder, as given outside it."""
    text = str(path)
    for root, prefix in _shown_roots(ctx):
        if text == root or text.startswith(root + "/"):
            return prefix + text[len(root) + 1:] if prefix else HIDDEN
    return text


def scrub(ctx: SourceContext, text: str) -> str:
    """`text` with every path in the data folder written as `shown` writes it: what engines and
    libraries say (errors, notes) names the files they touched by their full path."""
    for root, prefix in _shown_roots(ctx):
        if root in text:
            pattern = re.escape(root) + r"(?![\w.-])(/[^\s'\"`,;()\[\]{}<>]*)?"
            text = re.sub(pattern, functools.partial(_as_shown, prefix), text)
    return text


def _as_shown(prefix: str, match: re.Match[str]) -> str:
    return prefix + (match.group(1) or "/")[1:] if prefix else HIDDEN


def sql_roots(ctx: SourceContext) -> list[Path]:
    """The folders SQL table functions (read_csv …) may read: the lake, own_roots and each data
    root that does not hold the data folder (DuckDB can allow folders but not carve one out)."""
    private = _real(ctx.data_dir)
    roots = _own(ctx)
    for r in ctx.data_roots:
        real = _real(r)
        if not _inside(private, real) and real not in roots:
            roots.append(real)
    return roots


def visible(name: str) -> bool:
    # Spark's rule: _SUCCESS, _committed_…, .crc and other hidden files are not data.
    return not name.startswith((".", "_"))


def missing(ctx: SourceContext | None, shown: str, what: str = "path") -> str:
    """Why a path is not there, with where it was looked for: the user asked for a file they see
    somewhere (often the machine's /tmp), and the answer should say where this one can be."""
    rel = not shown.startswith("/")
    where = ["relative paths resolve in the lake (lake:)" + (", so this one was looked for there" if rel else "")]
    if ctx is not None:
        roots = [str(r) for r in ctx.data_roots]
        where.append(f"absolute paths may be under {', '.join(roots)}" if roots
                     else "absolute paths may be anywhere outside the server's data folder")
    where.append("/tmp is private to each session: a file in the machine's /tmp is not seen here; put it "
                 "in the lake (the notebook's Data panel uploads files) or a data root")
    return f"{what} {shown} does not exist: {'; '.join(where)}"


def data_files(root: Path, suffixes: tuple[str, ...], shown: str, ctx: SourceContext | None = None) -> list[Path]:
    """The data files of a file or directory path (resolved, so symlink-free), sorted.

    A directory yields every visible file below it whose name ends in one of suffixes; when
    none does (Spark writes `part-00000` without one), every visible file. Hidden folders are
    skipped, but hive-style `key=value` folders are not. A symbolic link that leads out of the
    folder is refused; a link to a file inside it is read, a link to a folder inside it is not
    entered (its files are listed where they really are, once).
    """
    if root.is_file():
        return [root]
    if not root.exists():
        raise SourceError(missing(ctx, shown))
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):  # followlinks=False: linked folders are checked below
        here = Path(dirpath)
        kept = []
        for d in sorted(d for d in dirnames if visible(d)):
            if (here / d).is_symlink():
                _check_link(here / d, root, shown)
            else:
                kept.append(d)
        dirnames[:] = kept
        for f in filenames:
            if visible(f):
                if (here / f).is_symlink():
                    _check_link(here / f, root, shown)
                found.append(here / f)
    found.sort()
    matching = [p for p in found if p.name.lower().endswith(suffixes)]
    return matching or found


def _check_link(link: Path, root: Path, shown: str) -> None:
    if not _inside(_real(link), root):
        rel = link.relative_to(root)
        raise SourceError(f"path {shown} holds {rel}, a symbolic link that leads outside it; "
                          f"links out of a loaded folder are not followed")


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
    walked = list(os.walk(stage))
    for dirpath, _dirs, _files in walked:
        rel = Path(dirpath).relative_to(stage)
        if _real(target / rel) != target / rel:
            # target is symlink-free; a linked folder inside it would carry the write elsewhere.
            raise SourceError(f"cannot append to {target}: {rel} is a symbolic link")
    for dirpath, _dirs, filenames in walked:
        rel = Path(dirpath).relative_to(stage)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            os.rename(Path(dirpath) / name, target / rel / name)
