"""Folder paths: one spelling for each folder ("/", "/team/a"), checked before they are stored."""
from __future__ import annotations

import re

from console.store.errors import Invalid

MAX_PATH = 512
MAX_NAME = 255
_BAD = re.compile(r"[\x00-\x1f\x7f\\]")
# Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) make a name display in
# another order than it is stored ("report\u202excod.py" shows as "reportyp.docx"); lone
# surrogates cannot be stored as UTF-8 at all.
_SPOOF = re.compile("[\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def normalize_folder(path: object) -> str:
    """'/team//a/' -> '/team/a'; '' or None -> '/'; rejects '..', '.', control characters."""
    if path is None:
        return "/"
    if not isinstance(path, str):
        raise Invalid("folder must be a string")
    parts = [p.strip() for p in path.split("/")]
    parts = [p for p in parts if p]
    for p in parts:
        if p in (".", "..") or _BAD.search(p):
            raise Invalid(f"folder {path!r}: {p!r} is not allowed in a folder name")
        if _SPOOF.search(p):
            raise Invalid("a folder name must not hold bidirectional-override characters or lone surrogates")
    norm = "/" + "/".join(parts)
    if len(norm) > MAX_PATH:
        raise Invalid(f"folder path is longer than {MAX_PATH} characters")
    return norm


def check_name(name: object) -> str:
    """A notebook name: a non-empty string without control or bidi-override characters, trimmed."""
    if not isinstance(name, str):
        raise Invalid("name must be a string")
    name = name.strip()
    if not name:
        raise Invalid("name must not be empty")
    if len(name) > MAX_NAME:
        raise Invalid(f"name is longer than {MAX_NAME} characters")
    if _BAD.search(name.replace("\\", "")):
        raise Invalid("name must not contain control characters")
    if _SPOOF.search(name):
        raise Invalid("name must not hold bidirectional-override characters (U+202A-U+202E, U+2066-U+2069) "
                      "or lone surrogates")
    return name


def is_under(path: str, folder: str) -> bool:
    """True when `path` is `folder` or inside it."""
    return folder == "/" or path == folder or path.startswith(folder + "/")


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def child_of(path: str, folder: str) -> str | None:
    """The direct subfolder of `folder` on the way to `path` (or None when path isn't below it)."""
    if path == folder or not is_under(path, folder):
        return None
    rest = path[len(folder):].lstrip("/") if folder != "/" else path.lstrip("/")
    first = rest.split("/", 1)[0]
    return (folder.rstrip("/") + "/" + first) if folder != "/" else "/" + first
