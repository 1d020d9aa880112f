"""The data panel's API: what the lake holds, one delta table's schema and history, and uploads.

    GET  /api/lake                           -> {tables, entries, roots, upload}
    GET  /api/lake/tables/<db.table>         -> {name, version, schema, partition_columns, rows, size, history, …}
    GET  /api/lake/files?path=folder/        -> {path, entries: [{name, kind, size}]}
    GET  /api/lake/session/<notebook_id>     -> {tables: [{name, rows, columns}], kernel}  (the caller's kernel)
    GET  /api/lake/session/<notebook_id>/schema?path=uploads/x.csv
                                             -> {path, format, columns: [{name, type}] | null, note?, sampled?}
    POST /api/lake/upload?name=x.csv[&folder=uploads][&overwrite=true]   body: the file
                                             -> 201 {path, format, bytes, load}

Members only (console/server/access.py): they share the lake and write it from cells anyway.
A delta table is described from its transaction log's JSON alone (console/server/lake_read.py:
capped, checked by type, folders opened without following links): the lake is written by user
code, so the server never decodes its Parquet, and a malformed log is that table's error only. An upload is written
through directory descriptors opened without following links, so a link a cell planted in the
lake cannot carry it out of the lake, and appears under its name only once it is whole.
"""
from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.server.deps import get_config
from console.server.errors import ApiError
from console.server import lake_read
from console.sources.paths import visible

# What an upload may be, by extension: the format its `load` uses, and how its first bytes look.
UPLOAD_FORMATS = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet",
                  ".xlsx": "excel"}
DEFAULT_FOLDER = "uploads"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,199}$")
_QUERY = ("name", "folder", "overwrite")
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Upload:
    """A decoded upload request (its query string); the body is the file itself."""

    name: str
    folder: tuple[str, ...]
    overwrite: bool
    format: str


def decode_upload(args: Any) -> Upload:
    unknown = sorted(set(args) - set(_QUERY))
    if unknown:
        raise ApiError(400, f"unknown parameter {', '.join(unknown)}; an upload takes {', '.join(_QUERY)}")
    name = args.get("name", "")
    if not name or not _NAME.match(name) or ".." in name:
        raise ApiError(400, f"'name' must be a plain file name (letters, digits, '.', '_', '-', spaces; "
                            f"no folders, no '..', not hidden), not {name!r}")
    ext = os.path.splitext(name)[1].lower()
    if ext not in UPLOAD_FORMATS:
        raise ApiError(415, f"{name!r}: only {', '.join(sorted(UPLOAD_FORMATS))} files can be uploaded "
                            f"(the formats load reads); other data can be written from a cell")
    folder = args.get("folder", DEFAULT_FOLDER)
    parts = tuple(p for p in folder.split("/") if p)
    bad = [p for p in parts if not _NAME.match(p) or p.startswith((".", "_")) or ".." in p]
    if not parts or folder.startswith("/") or bad:
        raise ApiError(400, f"'folder' must be a folder of the lake (names separated by '/', no '..', "
                            f"not hidden), not {folder!r}")
    overwrite = args.get("overwrite", "false")
    if overwrite not in ("true", "false"):
        raise ApiError(400, "'overwrite' must be true or false")
    return Upload(name, parts, overwrite == "true", UPLOAD_FORMATS[ext])


def _lake() -> Path:
    return Path(get_config().data_dir) / "lake"


def catalog() -> ResponseReturnValue:
    lake = _lake()
    cfg = get_config()
    found = lake_read.tables(lake)
    dbs = {t.db + "/" for t in found}
    tables = [lake_read.summary(lake, t) for t in found]
    entries = [{"name": e.name, "kind": e.kind} for e in lake_read.folder(lake, ()) if e.name not in dbs]
    roots = [{"name": "lake", "path": "lake:", "note": "relative paths and delta.`db.table` resolve here"}]
    roots += [{"name": str(p), "path": str(p), "note": "a data root load and save may use"}
              for p in cfg.DATA_ROOTS or []]
    return jsonify({"tables": tables, "entries": entries, "roots": roots,
                    "upload": {"max_bytes": cfg.UPLOAD_MAX_BYTES, "formats": sorted(UPLOAD_FORMATS),
                               "folder": DEFAULT_FOLDER}})


def table(name: str) -> ResponseReturnValue:
    if not re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", name):
        raise ApiError(400, f"a delta table of the lake is named db.table, not {name!r}")
    found = next((t for t in lake_read.tables(_lake()) if t.name == name), None)
    if found is None:
        raise ApiError(404, f"no delta table {name!r} in the lake (names are db.table)")
    return jsonify(lake_read.summary(_lake(), found, history=True))


MAX_PATH = 4096  # PATH_MAX: a longer folder path names nothing


def files() -> ResponseReturnValue:
    path = request.args.get("path", "")
    parts = _lake_path(path)
    if not all(visible(p) for p in parts):  # as the listings: _delta_log, .hidden are not the panel's
        return jsonify({"path": path, "entries": []})
    entries = [{"name": e.name, "kind": e.kind, "size": e.size} for e in lake_read.folder(_lake(), parts)]
    return jsonify({"path": path, "entries": entries})


SESSION_TIMEOUT = 5.0  # seconds: the kernel answers between statements even while a cell runs


def session_tables(notebook_id: str) -> ResponseReturnValue:
    """The tables of the caller's own session of this notebook; none (kernel: false) before it runs."""
    from console.ids import NotebookId, UserId
    from console.server import auth
    from console.server.deps import get_manager

    try:
        answer = get_manager().query(UserId(auth.signed_in().id), NotebookId(notebook_id), "tables", {},
                                     timeout=SESSION_TIMEOUT)
    except (LookupError, TimeoutError):
        return jsonify({"tables": [], "kernel": False})
    return jsonify({**answer, "kernel": True})


def session_variables(notebook_id: str) -> ResponseReturnValue:
    """The variable explorer: the caller's session's tables and Python globals; empty before it runs."""
    from console.ids import NotebookId, UserId
    from console.server import auth
    from console.server.deps import get_manager

    try:
        answer = get_manager().query(UserId(auth.signed_in().id), NotebookId(notebook_id), "variables", {},
                                     timeout=SESSION_TIMEOUT)
    except (LookupError, TimeoutError):
        return jsonify({"tables": [], "python": None, "kernel": False})
    python = answer.get("python")
    return jsonify({"tables": _list(answer.get("tables")), "kernel": True,
                    "python": None if python is None else [_variable(v) for v in _list(python)[:500]]})


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _variable(item: Any) -> dict[str, str]:
    """One global as the kernel described it, cut to text of bounded size: the kernel is not trusted."""
    got = item if isinstance(item, dict) else {}
    return {key: str(got.get(key, ""))[:200] for key in ("name", "type", "size", "value")}


def file_schema(notebook_id: str) -> ResponseReturnValue:
    """A listed file's columns (console/server/api/lake_schema.py); the notebook's session reads the binary formats."""
    from console.ids import NotebookId, UserId
    from console.server import auth
    from console.server.api import lake_schema
    from console.server.deps import get_manager

    path = request.args.get("path", "")
    unknown = sorted(set(request.args) - {"path"})
    if unknown:
        raise ApiError(400, f"unknown parameter {', '.join(unknown)}; a file's schema takes 'path'")
    parts = _lake_path(path)
    if not parts or not all(visible(p) for p in parts):
        raise ApiError(400, "'path' is a file of the lake (as the data panel lists it)")
    user = UserId(auth.signed_in().id)

    def ask(what: str, args: dict[str, Any]) -> dict[str, Any]:
        return get_manager().query(user, NotebookId(notebook_id), what, args, timeout=SESSION_TIMEOUT)

    try:
        answer = lake_schema.file_schema(_lake(), parts, ask)
    except lake_schema.NoFile as exc:
        raise ApiError(404, str(exc)) from None
    return jsonify({"path": "/".join(parts), **answer})


def _lake_path(path: str) -> tuple[str, ...]:
    """A relative path of the lake as its names; 400 for an absolute one, '..', control characters."""
    if len(path) > MAX_PATH or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ApiError(400, f"'path' is a path of the lake: at most {MAX_PATH} characters, no control "
                            f"characters (NUL, newline…)")
    parts = tuple(p for p in path.split("/") if p)
    if path.startswith("/") or ".." in parts:
        raise ApiError(400, "'path' is a path of the lake, relative, without '..'")
    return parts


def upload() -> ResponseReturnValue:
    up = decode_upload(request.args)
    cap = int(get_config().UPLOAD_MAX_BYTES)
    if request.content_length is not None and request.content_length > cap:
        raise ApiError(413, f"the file is {request.content_length} bytes; uploads take at most {cap} "
                            f"(CONSOLE_UPLOAD_MAX_BYTES)")
    request.max_content_length = cap  # this request only: the API's own cap is for JSON bodies
    folder_fd = _open_folder(_lake(), up.folder)
    temp = f".upload-{secrets.token_hex(8)}"
    try:
        written = _receive(folder_fd, temp, cap)
        _check_content(folder_fd, temp, up)
        _place(folder_fd, temp, up)
    finally:
        try:
            os.unlink(temp, dir_fd=folder_fd)
        except FileNotFoundError:
            pass
        os.close(folder_fd)
    rel = "/".join((*up.folder, up.name))
    table_name = re.sub(r"\W", "_", os.path.splitext(up.name)[0]).strip("_") or "uploaded"
    if table_name[0].isdigit():
        table_name = "t_" + table_name
    options = ' where header="true" and inferSchema="true"' if up.format == "csv" else ""
    if up.name.lower().endswith(".tsv"):
        options = ' where header="true" and inferSchema="true" and sep="\\t"'
    return jsonify({"path": rel, "format": up.format, "bytes": written,
                    "load": f"load {up.format}.`{rel}`{options} as {table_name};"}), 201


def _open_folder(lake: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of lake/parts…, each made if missing and none followed if it is a link."""
    from console.cluster import identity

    lake.mkdir(parents=True, exist_ok=True)
    if identity.available():  # as before a sandbox starts: the lake is the members group's (cluster/walls.py),
        identity.share_folder(lake, identity.members_gid(get_config()))  # so what is made in it is too
    fd = os.open(lake, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            made = True
            try:
                os.mkdir(part, 0o775, dir_fd=fd)
            except FileExistsError:
                made = False
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                raise ApiError(400, f"'{'/'.join(parts)}' is not a folder of the lake (a file or a link is "
                                    f"in the way at {part!r})") from None
            if made:  # group-writable; setgid (and the members group) from the lake, as a sandbox's folders
                os.fchmod(inner, 0o775 | (os.fstat(fd).st_mode & stat.S_ISGID))
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _receive(folder_fd: int, temp: str, cap: int) -> int:
    out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o664, dir_fd=folder_fd)
    written = 0
    try:
        os.fchmod(out, 0o664)  # sessions (other uids, the members group) may replace it from a cell
        stream = request.stream
        while chunk := stream.read(_CHUNK):
            written += len(chunk)
            if written > cap:
                raise ApiError(413, f"the file is over {cap} bytes, the most an upload takes "
                                    f"(CONSOLE_UPLOAD_MAX_BYTES); nothing was kept")
            os.write(out, chunk)
    finally:
        os.close(out)
    if written == 0:
        raise ApiError(400, "the upload is empty: send the file as the request body")
    return written


def _check_content(folder_fd: int, temp: str, up: Upload) -> None:
    """The bytes look like the format the name says, so a `load` of it does what it suggests."""
    fd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder_fd)
    try:
        head = os.pread(fd, 65536, 0)
        size = os.fstat(fd).st_size
        tail = os.pread(fd, 4, max(0, size - 4))
    finally:
        os.close(fd)
    if up.format == "parquet":
        ok, what = head[:4] == b"PAR1" and tail == b"PAR1", "a Parquet file (PAR1 at both ends)"
    elif up.format == "excel":
        ok, what = head[:4] == b"PK\x03\x04", "an .xlsx workbook (a zip file)"
    else:
        text: str | None
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError as exc:  # a multi-byte character cut at the end of the sample is fine
            text = head[:exc.start].decode("utf-8") if exc.start > len(head) - 4 else None
        ok = text is not None and "\x00" not in text
        if ok and up.format == "json":
            ok = (text or "").lstrip()[:1] in ("{", "[")
        what = "UTF-8 text" + (" holding JSON" if up.format == "json" else "")
    if not ok:
        raise ApiError(415, f"{up.name!r} is not {what}; nothing was kept")


def _place(folder_fd: int, temp: str, up: Upload) -> None:
    if up.overwrite:
        os.rename(temp, up.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        return
    try:
        os.link(temp, up.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    except FileExistsError:
        raise ApiError(409, f"'{'/'.join((*up.folder, up.name))}' is already in the lake; "
                            f"send overwrite=true to replace it") from None


def create_blueprint() -> Blueprint:
    bp = Blueprint("lake", __name__, url_prefix="/api/lake")
    bp.add_url_rule("", "catalog", catalog, methods=["GET"])
    bp.add_url_rule("/tables/<name>", "table", table, methods=["GET"])
    bp.add_url_rule("/files", "files", files, methods=["GET"])
    bp.add_url_rule("/upload", "upload", upload, methods=["POST"])
    bp.add_url_rule("/session/<notebook_id>", "session_tables", session_tables, methods=["GET"])
    bp.add_url_rule("/session/<notebook_id>/schema", "file_schema", file_schema, methods=["GET"])
    bp.add_url_rule("/session/<notebook_id>/variables", "session_variables", session_variables, methods=["GET"])
    return bp
