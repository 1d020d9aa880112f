"""MLSQL's `set` statement in a session: variables, default parameters, engine settings, `shell` and `sql`
values, and the built-in variables; split from session.py, whose `self` is each function's first argument."""
from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from console import lang
from console.kernel.errors import CellError
from console.kernel.host import SessionHost
from console.kernel.sql import SETTABLE
from console.lang import paramsafe


def builtin_variables(cache_dir: Path) -> dict[str, str]:
    """The variables every cell has: the cache folder and the days around today."""
    today = dt.date.today()
    builtins = {
        lang.CACHE_DIR_VAR: str(cache_dir),
        "today": today.isoformat(),
        "yesterday": (today - dt.timedelta(days=1)).isoformat(),
        "tomorrow": (today + dt.timedelta(days=1)).isoformat(),
    }
    return builtins


def run_set(self: SessionHost, stmt: lang.Set) -> None:
    """`set key = value where type=…`: a variable, a default parameter, an engine setting, or the
    output of a shell command or a query."""
    kind = stmt.type
    if kind == "defaultParam":
        self.variables.setdefault(stmt.key, stmt.value)
        self.params.setdefault(stmt.key)  # Python cells see it in context.params
        if self.outside.get(stmt.key) is None:
            self.outside[stmt.key] = stmt.value  # the declared default: any other value came from a run
    elif kind == "conf":
        from console.kernel.sqlengines.choice import check_conf

        wrong = check_conf(stmt.key, stmt.value)  # sql.engine, sql.clusterBytes
        if wrong:
            raise CellError("sql", wrong, stmt.line, stmt.column)
        self.conf[stmt.key] = stmt.value
        if stmt.key.startswith("duckdb."):  # e.g. set duckdb.threads = 2 where type="conf"
            try:
                self.sql.con.execute(f"SET {stmt.key[len('duckdb.'):]} = ?", [stmt.value])
            except Exception as exc:
                why = (f"notebooks may change only {', '.join(SETTABLE)}" if "locked" in str(exc)
                       else str(exc))
                raise CellError("sql", f"cannot set {stmt.key}: {why}", stmt.line, stmt.column) from None
    elif kind == "shell":
        lake = self.source_context().lake
        try:
            lake.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CellError("data", f"cannot make the lake folder {lake}: {exc.strerror}",
                            stmt.line, stmt.column) from None
        # Relative paths in a shell command resolve against the lake too, never the server's folder.
        done = subprocess.run(["bash", "-c", stmt.value], capture_output=True, text=True, cwd=lake)
        if done.returncode != 0:
            raise CellError("data", f"shell command failed with exit code {done.returncode}: "
                                    f"{done.stderr.strip() or done.stdout.strip()}", stmt.line, stmt.column)
        self.variables[stmt.key] = done.stdout.rstrip("\n")
    elif kind == "sql":
        line, col = lang.template.position_in(stmt, stmt.value[:40])
        value = self.sql.scalar(stmt.value, self.tables, line, col)
        self.variables[stmt.key] = "" if value is None else str(value)
    else:
        self.variables[stmt.key] = stmt.value


def carry_outside(self: SessionHost, written: lang.Set) -> None:
    """`set x = "…${day}…"`: x holds a value from outside while day does (its own default is the
    notebook's code), so x's ${x} gets day's rules; set from anything else, it is x's own again."""
    if self.outside.get(written.key) is not None:  # a parameter stays one
        return
    if paramsafe.carries(self.outside, self.variables, lang.template.names_in(written.value)):
        self.outside[written.key] = None
    else:
        self.outside.pop(written.key, None)
