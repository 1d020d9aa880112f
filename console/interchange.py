"""Other tools' notebook files: Jupyter `.ipynb` both ways, Byzer Notebook `.bznb`/`.mlnb` in.

Every reader returns what console.notebook_file.parse_notebook returns ({"name", "cells":
[{"kind", "source", "id"?, "view"?}], "metadata"}) or raises NotebookFileError with what is wrong, before
anything is created. Stdlib only, like notebook_file.

Mapping to Jupyter: Python cells are code cells; Markdown cells are markdown cells; MLSQL cells are
code cells whose first line is `%%mlsql`. A cell's chart view travels in its metadata
(`metadata.mlsql_console.view`) both ways. Outputs become `stream` outputs (stdout/stderr), a result
table an `execute_result` with escaped text/html, text/plain and application/json, and a cell
error an `error` output. Byzer Notebook files are `{"name", "cell_list": [{"id", "content"}]}`;
a cell with a `--%markdown` header (or, in older files, starting with `-- Markdown`) is Markdown,
one with a `#%python` or `--%python` header is Python.
"""
from __future__ import annotations

import re
from html import escape
from typing import Any, Iterable, Mapping

from console.notebook_file import FORMAT, NotebookFileError, parse_notebook

MLSQL_MAGIC = "%%mlsql"
BYZER_MARKDOWN = "-- Markdown"
# `--%markdown` (or `#%markdown`) followed on the same line by text, not by a newline or `=`.
# Not followed by an ASCII word character: `--%markdown以上为…` (Chinese text glued on) is markdown too.
_GLUED_MARKDOWN = re.compile(r"(?:--%|#%)markdown(?![A-Za-z0-9_=])(?=[ \t]*[^\s=])", re.IGNORECASE)
_MAX_CELLS = 10_000


def _lines(text: str) -> list[str]:
    """Jupyter stores multi-line strings as lists of lines that keep their newlines."""
    return text.splitlines(keepends=True)


def _text(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise NotebookFileError(f"{what} must be a string or a list of strings")


def _table_outputs(result: Mapping[str, Any]) -> dict[str, Any]:
    cols = [str(c.get("name", "")) for c in result.get("columns") or [] if isinstance(c, Mapping)]
    rows = [list(r) for r in result.get("rows") or [] if isinstance(r, list)]
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    plain = "\n".join(["\t".join(cols)] + ["\t".join(str(v) for v in r) for r in rows])
    return {
        "output_type": "execute_result", "execution_count": None, "metadata": {},
        "data": {
            "text/html": f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
            "text/plain": plain,
            "application/json": {"columns": result.get("columns") or [], "rows": rows,
                                 "total_rows": result.get("total_rows", len(rows))},
        },
    }


def _ipynb_outputs(run: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if not run:
        return []
    outs: list[dict[str, Any]] = []
    for chunk in run.get("outputs") or []:
        name = "stderr" if chunk.get("stream") == "stderr" else "stdout"
        if outs and outs[-1].get("name") == name:  # one stream output per run of chunks
            outs[-1]["text"] += chunk.get("text", "")
        else:
            outs.append({"output_type": "stream", "name": name, "text": chunk.get("text", "")})
    for o in outs:
        o["text"] = _lines(o["text"])
    if run.get("result"):
        outs.append(_table_outputs(run["result"]))
    err = run.get("error")
    if err:
        msg = str(err.get("message", "")) if isinstance(err, Mapping) else str(err)
        kind = str(err.get("kind", "error")) if isinstance(err, Mapping) else "error"
        tb = err.get("traceback") if isinstance(err, Mapping) else None
        outs.append({"output_type": "error", "ename": kind, "evalue": msg,
                     "traceback": _lines(tb) if isinstance(tb, str) else [msg]})
    return outs


def to_ipynb(name: str, cells: Iterable[Mapping[str, Any]],
             metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An nbformat 4.5 notebook; each cell is {id, kind, source, outputs?} (outputs: a stored run)."""
    out = []
    for c in cells:
        ours: dict[str, Any] = {"kind": c["kind"]}
        if c.get("view") is not None:  # the cell's chart choice, so an imported copy draws the same chart
            ours["view"] = c["view"]
        meta = {"mlsql_console": ours}
        if c["kind"] == "markdown":
            out.append({"cell_type": "markdown", "id": c.get("id") or "", "metadata": meta,
                        "source": _lines(c["source"])})
            continue
        source = c["source"] if c["kind"] == "python" else f"{MLSQL_MAGIC}\n{c['source']}"
        out.append({"cell_type": "code", "id": c.get("id") or "", "metadata": meta, "execution_count": None,
                    "source": _lines(source), "outputs": _ipynb_outputs(c.get("outputs"))})
    for cell in out:
        if not cell["id"]:
            del cell["id"]
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "mlsql_console": {"name": name, **dict(metadata or {})},
        },
        "cells": out,
    }


def from_ipynb(data: Any, fallback_name: str = "Imported notebook") -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise NotebookFileError("an .ipynb file is a JSON object")
    major = data.get("nbformat")
    if isinstance(major, bool) or not isinstance(major, int) or major < 4:
        raise NotebookFileError('"nbformat" must be 4 or later (re-save the notebook with Jupyter 4+)')
    cells_in = data.get("cells")
    if not isinstance(cells_in, list):
        raise NotebookFileError('"cells" must be a list')
    if len(cells_in) > _MAX_CELLS:
        raise NotebookFileError(f"more than {_MAX_CELLS} cells")
    meta = data.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    ours = meta.get("mlsql_console")
    ours = ours if isinstance(ours, Mapping) else {}
    cells = []
    for i, cell in enumerate(cells_in, 1):
        if not isinstance(cell, Mapping):
            raise NotebookFileError(f"cell {i} must be an object")
        ctype = cell.get("cell_type")
        source = _text(cell.get("source", ""), f"cell {i}: source")
        if ctype in ("markdown", "raw"):
            kind = "markdown"
        elif ctype == "code":
            first, _, rest = source.partition("\n")
            if first.strip() == MLSQL_MAGIC:
                kind, source = "mlsql", rest
            else:
                kind = "python"
        else:
            raise NotebookFileError(f'cell {i}: "cell_type" must be code, markdown or raw')
        out: dict[str, Any] = {"kind": kind, "source": source}
        if isinstance(cell.get("id"), str):
            out["id"] = cell["id"]
        cell_meta = cell.get("metadata")
        cell_ours = cell_meta.get("mlsql_console") if isinstance(cell_meta, Mapping) else None
        view = cell_ours.get("view") if isinstance(cell_ours, Mapping) else None
        if view is not None:
            # Checked in full where it is stored (console/store/views.py); here only its shape.
            if not isinstance(view, Mapping):
                raise NotebookFileError(f'cell {i}: "metadata.mlsql_console.view" must be an object')
            out["view"] = dict(view)
        cells.append(out)
    name = ours.get("name")
    name = name if isinstance(name, str) and name.strip() else fallback_name
    folder = ours.get("folder")
    return {"name": name.strip(), "cells": cells, "metadata": {"folder": folder} if isinstance(folder, str) else {}}


def from_byzer(data: Any, fallback_name: str = "Imported notebook") -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise NotebookFileError("a Byzer notebook file is a JSON object")
    cells_in = data.get("cell_list")
    if not isinstance(cells_in, list):
        raise NotebookFileError('"cell_list" must be a list')
    if len(cells_in) > _MAX_CELLS:
        raise NotebookFileError(f"more than {_MAX_CELLS} cells")
    cells = []
    for i, cell in enumerate(cells_in, 1):
        if not isinstance(cell, Mapping):
            raise NotebookFileError(f"cell {i} must be an object")
        content = cell.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise NotebookFileError(f'cell {i}: "content" must be a string')
        kind, source = _byzer_cell(content)
        out = {"kind": kind, "source": source}
        if isinstance(cell.get("id"), (str, int)) and not isinstance(cell.get("id"), bool):
            out["id"] = str(cell["id"])
        cells.append(out)
    name = data.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else fallback_name
    return {"name": name, "cells": cells, "metadata": {}}


def _byzer_cell(content: str) -> tuple[str, str]:
    """(kind, source) of a Byzer Notebook cell.

    Byzer marks a cell's type with a header line at column 0, `--%markdown` or `#%python`
    (`--%` and `#%` are the same; a header without `=` is the type, the last one wins). A
    markdown cell keeps its text without the header; a Python cell keeps its headers, which our
    annotated Python cells read (input, output, schema …). Older files start Markdown cells with
    `-- Markdown` instead.
    """
    stripped = content.lstrip()
    if stripped.startswith(BYZER_MARKDOWN):
        return "markdown", stripped[len(BYZER_MARKDOWN):].lstrip(" ")
    # Byzer Notebook itself writes `--%markdown# Title` with no newline after the marker: the
    # rest of that line is already the text.
    glued = _GLUED_MARKDOWN.match(stripped)
    if glued:
        return "markdown", stripped[glued.end():].lstrip(" ")
    kind = "mlsql"
    lines = content.split("\n")
    for line in lines:
        header = line[3:] if line.startswith("--%") else line[2:] if line.startswith("#%") else None
        if header is not None and "=" not in header and header.strip():
            kind = header.strip().lower()
    if kind == "markdown":
        body = [ln for ln in lines if ln.strip().lower() not in ("--%markdown", "#%markdown")]
        return "markdown", "\n".join(body).strip("\n")
    if kind == "python":
        return "python", content
    return "mlsql", content


def read_any(data: Any, kind: str | None = None, fallback_name: str = "Imported notebook") -> dict[str, Any]:
    """Parse our format, .ipynb or Byzer by `kind` ("json", "ipynb", "bznb"/"mlnb") or by content."""
    if kind in (None, ""):
        if isinstance(data, Mapping) and data.get("format") == FORMAT:
            kind = "json"
        elif isinstance(data, Mapping) and "nbformat" in data:
            kind = "ipynb"
        elif isinstance(data, Mapping) and "cell_list" in data:
            kind = "bznb"
        else:
            raise NotebookFileError(
                f'not a notebook file this program reads (expected "format": "{FORMAT}", an .ipynb '
                'with "nbformat", or a Byzer notebook with "cell_list")')
    if kind == "json":
        return parse_notebook(data)
    if kind == "ipynb":
        return from_ipynb(data, fallback_name)
    if kind in ("bznb", "mlnb"):
        return from_byzer(data, fallback_name)
    raise NotebookFileError(f"unknown format {kind!r} (json, ipynb, bznb or mlnb)")
