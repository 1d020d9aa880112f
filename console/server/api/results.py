"""A cell's whole last result, kept by the notebook's kernel: pages of any range, sorted, and downloads.

    GET /api/notebooks/<id>/cells/<cell>/result?offset=&limit=&sort=    -> a page (ResultEvent fields + offset)
    GET /api/notebooks/<id>/cells/<cell>/result/download/<csv|parquet>?sort=  -> the whole result as a file

Results belong to the notebook's shared kernel (console/server/sessions/kernels.py), paged by those who may
run it (the policy table: runner); with no kernel or no kept result the answer is a 409 telling
them to run the cell.
`sort` is JSON: [["column", "asc"|"desc"], ...].

A download is written by the kernel into its session's cache folder under a random name the
server chose, and read back from the path the server computes from its own settings, opened
without following links and only if it is a regular file with one name: the kernel is user code
and could leave a link there to a file of the server's (its secret key).
"""
from __future__ import annotations

import json
import os
import secrets
import stat
from typing import Any, BinaryIO

from flask import Blueprint, jsonify, request, send_file
from flask.typing import ResponseReturnValue

from console.cluster.sandbox import session_cache_dir
from console.ids import NotebookId, UserId
from console.server.auth import signed_in
from console.server.deps import get_config, get_manager
from console.server.errors import ApiError
from console.server.sessions.kernels import KernelSession
from console.server.validate import query_int

FORMATS = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}
DOWNLOADS_DIR = "downloads"  # console/kernel/results.py writes there (DOWNLOADS_DIR)
MAX_LIMIT = 10_000
MAX_SORT_KEYS = 16
PAGE_TIMEOUT = 30.0
FILE_TIMEOUT = 300.0  # the kernel writes the whole result; a big one takes a while


def _sort() -> list[list[str]] | None:
    raw = request.args.get("sort", "")
    if not raw:
        return None
    if len(raw) > 8192:
        raise ApiError(400, "'sort' is longer than 8192 characters")
    try:
        sort = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"'sort' must be JSON like [[\"column\", \"desc\"]]: {exc}") from None
    if not isinstance(sort, list) or len(sort) > MAX_SORT_KEYS:
        raise ApiError(400, f"'sort' must be a list of at most {MAX_SORT_KEYS} [column, direction] pairs")
    for i, item in enumerate(sort):
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str)
                or item[1] not in ("asc", "desc")):
            raise ApiError(400, f"'sort' item {i + 1} must be [\"column\", \"asc\" or \"desc\"], not {item!r}")
    return sort


def _ask(notebook_id: str, what: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
    try:
        return get_manager().query(UserId(signed_in().id), NotebookId(notebook_id), what, args, timeout)
    except LookupError as exc:  # no kernel, no kept result, or the kernel refused the question:
        # 409, a state the caller can change (run the cell), not a 404 that reads like "no access"
        raise ApiError(409, str(exc.args[0]) if exc.args else "run the cell first") from None
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    except TimeoutError as exc:
        raise ApiError(504, str(exc)) from None


def result_page(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    offset = query_int("offset", 0)
    limit = query_int("limit", 100)
    if offset < 0 or not 0 <= limit <= MAX_LIMIT:
        raise ApiError(400, f"'offset' must be 0 or more and 'limit' 0 to {MAX_LIMIT}")
    args = {"cell": cell_id, "offset": offset, "limit": limit, "sort": _sort()}
    page = _ask(notebook_id, "result_page", args, PAGE_TIMEOUT)
    return jsonify({**page, "cell_id": cell_id, "sort": args["sort"] or []})


def _open_download(notebook_id: str, name: str, fmt: str) -> BinaryIO:
    """The kernel's file, opened from the server's own path one folder at a time, never through a
    link, then unlinked (the open file stays readable until it is sent)."""
    cfg = get_config()
    session_id = KernelSession(UserId(signed_in().id), NotebookId(notebook_id)).session_id
    folder = session_cache_dir(cfg.data_dir, session_id)
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fds: list[int] = []
    try:
        fds.append(os.open(folder.parent, flags | os.O_DIRECTORY))  # <data_dir>/cache: the server's
        for part in (folder.name, DOWNLOADS_DIR):
            fds.append(os.open(part, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        file_name = f"{name}.{fmt}"
        fd = os.open(file_name, flags | os.O_NONBLOCK, dir_fd=fds[-1])
        try:
            st = os.fstat(fd)
            os.unlink(file_name, dir_fd=fds[-1])
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                raise ApiError(502, "the kernel left something other than a plain file; nothing was sent")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
    except OSError as exc:
        raise ApiError(502, f"the kernel's download file could not be read ({exc.strerror})") from None
    finally:
        for d in fds:
            os.close(d)


def download(notebook_id: str, cell_id: str, fmt: str) -> ResponseReturnValue:
    if fmt not in FORMATS:
        raise ApiError(404, f"no download format {fmt!r}; there are {', '.join(FORMATS)}")
    name = secrets.token_hex(16)
    answer = _ask(notebook_id, "result_file", {"cell": cell_id, "format": fmt, "name": name, "sort": _sort()},
                  FILE_TIMEOUT)
    fh = _open_download(notebook_id, name, fmt)
    table = str(answer.get("name") or cell_id)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in table)[:100] or "result"
    resp = send_file(fh, mimetype=FORMATS[fmt], as_attachment=True, download_name=f"{safe}.{fmt}")
    resp.headers["X-Result-Rows"] = str(answer.get("rows", ""))
    return resp


def create_blueprint() -> Blueprint:
    bp = Blueprint("results", __name__, url_prefix="/notebooks/<notebook_id>/cells/<cell_id>/result")
    bp.add_url_rule("", "page", result_page, methods=["GET"])
    bp.add_url_rule("/download/<fmt>", "download", download, methods=["GET"])
    return bp
