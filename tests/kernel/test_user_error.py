"""One shape for a user's error (console/errors.py): each layer's error is a UserError whose event
the session sends as it is, with its kind, place and the user's part of the traceback."""
from __future__ import annotations

import pickle

from console.errors import UserError
from console.kernel.envs import EnvError
from console.kernel.errors import CellError
from console.kernel.job import PythonCellError
from console.lang import ParseError
from console.sources.base import SourceError


def test_every_layers_error_is_one_user_error_with_its_kind() -> None:
    cases = [(ParseError("expected ';'", cell=3, line=2, column=7, snippet="select 1\n      ^"), "parse"),
             (SourceError("no such file: /lake/x.csv"), "data"),
             (EnvError("tabulate==99 does not resolve"), "env"),
             (CellError("sql", "table 't' not found", 1, 15), "sql"),
             (PythonCellError("worker", "the worker died (signal 9)", 4), "worker")]
    for exc, kind in cases:
        assert isinstance(exc, UserError)
        event = exc.event()
        assert (event.kind, event.message) == (kind, exc.message)
    parse = cases[0][0].event()
    assert (parse.line, parse.column, parse.traceback) == (2, 7, "select 1\n      ^")
    assert str(cases[0][0]).startswith("cell 3, line 2, column 7: expected ';'")


def test_a_parse_error_crosses_a_pipe_whole() -> None:
    again = pickle.loads(pickle.dumps(ParseError("bad", cell="c1", line=3, column=4, expected="AS", snippet="s")))
    assert (again.kind, again.line, again.column, again.expected, again.traceback) == ("parse", 3, 4, "AS", "s")
