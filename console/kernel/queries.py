"""The questions the server may ask a kernel between (and during) runs: one table, what -> handler.

Each handler only reads the session (the catalog, the kept results), so it may answer on the
kernel's command thread while a cell runs on the main thread. A handler raises LookupError
(nothing to answer: no such result) or ValueError (a bad argument); the message reaches the asker.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from console.kernel import completion, results
from console.kernel.host import SessionHost
from console.sources.base import SourceError

Handler = Callable[[SessionHost, Mapping[str, Any]], dict[str, Any]]

HANDLERS: dict[str, Handler] = {
    "result_page": results.page,
    "result_file": results.result_file,  # the whole result as CSV/Parquet at a path the server named
    "complete": completion.complete,
    "inspect": completion.inspect,
    "tables": completion.tables,  # the data panel's "this session's tables"
    "variables": completion.variables,  # the variable explorer: tables and Python globals
    "file_schema": completion.file_schema,  # the data panel's schema of a Parquet or Excel file
}


def answer(session: SessionHost, what: str, args: Mapping[str, Any]) -> dict[str, Any]:
    handler = HANDLERS.get(what)
    if handler is None:
        raise ValueError(f"unknown query {what!r}; known: {', '.join(sorted(HANDLERS))}")
    try:
        return handler(session, args)
    except SourceError as exc:  # a loaded result whose files changed or went since (catalog.py)
        raise LookupError(exc.message) from None
