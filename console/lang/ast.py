"""The statements a cell parses into: one frozen dataclass per statement kind.

Every statement carries where it starts in the cell (line, column, offset) and its raw text, so
errors found later (a missing table, a ${var} nobody set) can point back at the cell.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypedDict


class Position(TypedDict, total=False):
    """Where a statement starts, passed as `**position` to a statement's constructor."""
    line: int
    column: int
    offset: int


@dataclass(frozen=True, kw_only=True)
class Statement:
    line: int = 1
    column: int = 1
    offset: int = 0
    source: str = ""  # the statement's text in the cell, without the closing ';'

    def dump(self) -> str:
        """One line per field, stable across runs: the golden files compare these."""
        parts = [type(self).__name__]
        for f in dataclasses.fields(self):
            if f.name in ("offset", "source"):
                continue
            parts.append(f"  {f.name}: {_show(getattr(self, f.name))}")
        # No trailing spaces: editors strip them from the golden files.
        return "\n".join(ln.rstrip() for ln in "\n".join(parts).split("\n"))


def _show(value: Any) -> str:
    if isinstance(value, dict) and any(isinstance(v, str) and "\n" in v for v in value.values()):
        return "".join(f"\n    {k}: " + _show(v).replace("\n", "\n  ") for k, v in value.items())
    if isinstance(value, str) and "\n" in value:
        return "|\n" + "\n".join("    " + ln for ln in value.split("\n"))
    return repr(value)


@dataclass(frozen=True, kw_only=True)
class Load(Statement):
    """load FORMAT.`path` [where …] as table"""
    format: str
    path: str
    options: dict[str, str] = field(default_factory=dict)
    table: str


@dataclass(frozen=True, kw_only=True)
class Select(Statement):
    """select … as table: `sql` is the Spark SQL without the trailing `as table`."""
    sql: str
    table: str
    sql_line: int = 1    # where `sql` starts in the cell, so SQL errors map back to cell lines
    sql_column: int = 1


SAVE_MODES = ("overwrite", "append", "errorIfExists", "ignore")


@dataclass(frozen=True, kw_only=True)
class Save(Statement):
    """save [mode] table as FORMAT.`path` [where …] [partitionBy c1, c2]"""
    mode: str  # one of SAVE_MODES, spelled as there
    table: str
    format: str
    path: str
    options: dict[str, str] = field(default_factory=dict)
    partition_by: tuple[str, ...] = ()


SET_TYPES = ("text", "sql", "shell", "conf", "defaultParam")


@dataclass(frozen=True, kw_only=True)
class Set(Statement):
    """set key = value [where type="text|sql|shell|conf|defaultParam"]"""
    key: str
    value: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return self.options.get("type", "text")


@dataclass(frozen=True, kw_only=True)
class Connect(Statement):
    """connect FORMAT where … as alias"""
    format: str
    options: dict[str, str] = field(default_factory=dict)
    alias: str


@dataclass(frozen=True, kw_only=True)
class PythonSetting(Statement):
    """!python env "K=V" (scope env) or !python conf "k=v" (scope conf)."""
    scope: str
    key: str
    value: str


RUN_VERBS = ("run", "train", "predict")


@dataclass(frozen=True, kw_only=True)
class Run(Statement):
    """run|train|predict table as ET.`path` [where …] [as output]; `!ray on` and Python cells compile to this.

    verb "run" applies an extension (Ray, TableRepartition, DataSummary, …), "train" fits an
    algorithm and saves the model under path, "predict" applies a saved model. Any extension name
    parses; an unknown one fails when it runs, naming those that exist.
    For et == "Ray", options hold inputTable, outputTable, code, model, confTable and any conf key;
    code_line is the cell line where the code text starts.
    """
    input: str
    et: str  # Ray and TableRepartition are spelled so whatever the case written; others as written
    path: str = ""
    options: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    code_line: int = 1
    verb: str = "run"  # one of RUN_VERBS


@dataclass(frozen=True, kw_only=True)
class Include(Statement):
    """include notebook.`name[#cell]`"""
    format: str
    path: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Register(Statement):
    """register ET.`path` as function [where …] (parsed; not executed yet)"""
    et: str
    path: str
    function: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Command(Statement):
    """!name arg arg …: any `!` command but !python and !ray (which have their own statements).

    args are the words, -flags, paths and quoted strings (unquoted) in order, as Byzer splits
    them; raw is the text after the name as written. Unknown commands fail when they run.
    """
    name: str
    args: tuple[str, ...] = ()
    raw: str = ""
