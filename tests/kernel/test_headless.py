"""Headless runs of notebook JSON files: cells in order, markdown skipped, --cell, exit codes."""
from __future__ import annotations

import json
from pathlib import Path

from console.config import load_config
from console.kernel.headless import run_file


def _notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    path.write_text(json.dumps({"format": "mlsql-console-notebook", "version": 1, "name": "nb",
                                "cells": [{"kind": k, "source": s} for k, s in cells]}))
    return path


def test_notebook_runs_cells_and_stops_at_first_failure(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "nb.json", [("mlsql", "select 1 as a as t;"), ("markdown", "# hi"),
                                          ("mlsql", "set duckdb.threads = \"1\" where type=\"conf\";\n"
                                                    "select a + 1 as b from t as u;"),
                                          ("mlsql", "select 1 as a as t;\n\nselect zz from t as v;"),
                                          ("mlsql", "select 3 as never as w;")])
    chunks: list[str] = []
    code = run_file(nb, load_config({"DATA_DIR": str(tmp_path)}), out=chunks.append)
    lines = "\n".join(chunks).split("\n")
    assert code == 1
    assert lines[:4] == ["-- cell 1: t", "a", "-", "1"]
    assert "-- cell 3: u" in lines
    assert lines[-1].startswith("error: cell 4, line 3, column 8: Binder Error: Referenced column \"zz\"")
    assert not any("cell 5" in ln for ln in lines)


def test_single_cell_and_bad_files(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "nb.json", [("mlsql", "select 1 as a as t;"), ("mlsql", "select 2 as b as u;")])
    cfg = load_config({"DATA_DIR": str(tmp_path)})
    lines: list[str] = []
    assert run_file(nb, cfg, cell=2, out=lines.append) == 0
    assert lines[0] == "-- cell 2: u"
    assert run_file(nb, cfg, cell=9, out=lines.append) == 2
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    assert run_file(tmp_path / "bad.json", cfg, out=lines.append) == 2
    assert "not a notebook file" in lines[-1]
    assert run_file(tmp_path / "missing.mlsql", cfg, out=lines.append) == 2


def test_the_printer_joins_an_unfinished_line_once() -> None:
    from console.kernel.headless import _Printer
    from console.wire.cell import Output

    printed: list[str] = []
    printer = _Printer(printed.append)
    for _ in range(2000):  # a long line, 4 kB at a time, with no newline until the end
        printer(Output(text="y" * 4096, source="driver", stream="stdout"))
    printer(Output(text=" end\nnext", source="driver", stream="stdout"))
    printer(Output(text="epoch 1\repoch 2", source="Trainer pid=3", stream="stdout"))
    printer.flush()
    assert printed == ["[driver] " + "y" * 4096 * 2000 + " end", "[driver] next", "[Trainer pid=3] epoch 2"]


def test_a_headless_run_writes_its_manifest_even_when_a_cell_fails(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "nb.json", [
        ("mlsql", 'set day = "x" where type="defaultParam";\nselect 1 as a as t;\nsave overwrite t as delta.`h.t`;'),
        ("mlsql", "load delta.`h.t` as r;\nsave append t as delta.`h.t`;\nselect nope from r as broken;")])
    out = tmp_path / "manifest.json"
    code = run_file(nb, load_config({"DATA_DIR": str(tmp_path)}), out=lambda _: None, params={"day": "y"},
                    manifest=out)
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["format"] == "mlsql-console-manifest" and doc["params"] == {"day": "y"}
    first, second = doc["cells"]
    assert [(e["access"], e["table"], e["version"], e["mode"]) for e in first["entries"]] == \
        [("write", "h.t", 0, "overwrite")]
    assert [(e["access"], e["version"]) for e in second["entries"]] == [("read", 0), ("write", 1)]


def test_a_version_range_and_time_travel_name_the_versions_they_read(tmp_path: Path) -> None:
    from console.kernel.session import Session

    s = Session(load_config({"DATA_DIR": str(tmp_path / "data")}))
    try:
        s.run_cell("select 1 as a as t;\nsave overwrite t as delta.`r.t`;\nsave append t as delta.`r.t`;\n"
                   "save append t as delta.`r.t`;")
        out = s.run_cell("load delta.`r.t` where startingVersion='0' and endingVersion='2' as x;\n"
                         "load delta.`r.t` where versionAsOf='1' as y;\nload delta.`r.t` as z;")
        assert out.ok, out.error
        assert [(e.statement, e.version) for e in out.io] == [(1, 1), (2, 1), (3, 2)]
    finally:
        s.shutdown()
