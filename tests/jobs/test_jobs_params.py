"""Parameters: declared by set … where type="defaultParam", overridden by a run, seen by MLSQL and Python."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from console.lang import parse
from console.lang import params as P
from tests.support.live_server import REPO, server_env

CELLS = [
    ("mlsql", 'set day = "x" where type="defaultParam";\nset limit = 10 where type="defaultParam";'),
    ("markdown", 'set nope = "md" where type="defaultParam";'),
    ("python", "--%python\nprint(context.params)"),
    ("mlsql", 'set day = "again" where type="defaultParam";\nselect "${day}" as d as t;'),
]


def test_declared_parameters_in_order_first_default_wins() -> None:
    assert P.declared(CELLS) == [P.Param("day", "x", 0), P.Param("limit", "10", 0)]


def test_an_undeclared_parameter_is_refused_with_the_declared_list() -> None:
    with pytest.raises(P.UnknownParams, match=r"unknown parameter dya: this notebook declares day, limit"):
        P.check(P.declared(CELLS), {"dya": "1"})
    with pytest.raises(P.UnknownParams, match="declares none"):
        P.check([], {"a": "1"})


def test_an_override_is_set_before_its_declaration_on_the_same_line() -> None:
    source = CELLS[3][1]
    out = P.apply("mlsql", source, {"day": 'a "quoted"\\ value\nnext'})
    assert out.count("\n") == source.count("\n")  # no line moves, so errors keep their positions
    sets = [s for s in parse(out) if s.__class__.__name__ == "Set"]
    assert [(s.key, s.value, s.type) for s in sets] == [
        ("day", 'a "quoted"\\ value\nnext', "text"), ("day", "again", "defaultParam")]
    assert P.apply("python", CELLS[2][1], {"day": "1"}) == CELLS[2][1]
    assert P.apply("mlsql", source, {}) == source


def _notebook(tmp_path: Path, cells: list[tuple[str, str]]) -> Path:
    path = tmp_path / "nb.json"
    path.write_text(json.dumps({"format": "mlsql-console-notebook", "version": 1, "name": "p",
                                "cells": [{"kind": k, "source": s} for k, s in cells]}))
    return path


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "console", "run", *args, "--data-dir", str(tmp_path / "data")],
                          cwd=REPO, env=server_env(), capture_output=True, text=True, timeout=300)


def test_cli_param_reaches_mlsql_and_python_cells(tmp_path: Path) -> None:
    nb = _notebook(tmp_path, [
        ("mlsql", 'set day = "x" where type="defaultParam";'),
        ("mlsql", "select '${day}' as d as t;"),
        ("python", "--%python\nprint('params', sorted(context.params.items()))"),
    ])
    done = _cli(tmp_path, str(nb), "--param", "day=2026-12-01")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2026-12-01" in done.stdout.split("-- cell 2: t", 1)[1]
    assert "params [('day', '2026-12-01')]" in done.stdout
    default = _cli(tmp_path, str(nb), "--cell", "1")
    assert default.returncode == 0


def test_cli_refuses_an_unknown_parameter(tmp_path: Path) -> None:
    nb = _notebook(tmp_path, [("mlsql", 'set day = "x" where type="defaultParam";')])
    done = _cli(tmp_path, str(nb), "--param", "dya=1")
    assert done.returncode == 2 and "unknown parameter dya: this notebook declares day" in done.stdout
    bad = _cli(tmp_path, str(nb), "--param", "nothing")
    assert bad.returncode == 2 and "is not NAME=VALUE" in bad.stderr
