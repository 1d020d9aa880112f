"""`!fs`, `!sh`, `!pyInclude`, include of files, jsonStr/csvStr and Byzer notebook import.

What each does, and where it stops.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from console import lang
from console.config import load_config
from console.interchange import from_byzer
from console.kernel import include
from console.kernel.errors import CellError
from console.kernel.host import CellRun
from console.kernel.session import Session
from console.sources import SourceContext, SourceError, get_source
from tests.kernel.test_commands import failed, ok, printed, rows


@pytest.fixture
def lake(session: Session) -> Path:
    path = session.source_context().lake
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_fs_operations_in_the_lake(session: Session, lake: Path, events: list[Any]) -> None:
    ok(session, "!fs -mkdir -p models/a; !hdfs -mkdir models/b;")
    assert (lake / "models" / "a").is_dir() and (lake / "models" / "b").is_dir()
    (lake / "models" / "a" / "notes.txt").write_text("one\ntwo\n")
    listing = rows(ok(session, "!fs -ls models;"))
    assert [(r[0], r[1]) for r in listing] == [("lake:models/a", "dir"), ("lake:models/b", "dir")]
    deep = rows(ok(session, "!fs -ls -R models;"))
    assert ["lake:models/a/notes.txt", "file", 8] == deep[2][:3]
    events.clear()
    out = ok(session, "!fs -cat models/a/notes.txt;")
    assert rows(out) == [["one"], ["two"]] and printed(events) == "one\ntwo\n"
    ok(session, "!fs -cp models/a/notes.txt models/b; !fs -mv models/b/notes.txt models/b/moved.txt;")
    assert (lake / "models" / "b" / "moved.txt").read_text() == "one\ntwo\n"
    ok(session, "!fs -cp -r models/a models/c;")
    assert (lake / "models" / "c" / "notes.txt").exists()
    err = failed(session, "!fs -rm models/c;")
    assert "is a folder; use -rm -r" in err.message and (lake / "models" / "c").exists()
    ok(session, "!fs -rm -r models/c; !fs -rmr models/b; !fs -rm models/a/notes.txt;")
    assert sorted(p.name for p in (lake / "models").iterdir()) == ["a"]
    err = failed(session, "!fs -cat models/missing.txt;")
    assert "no such file or folder" in err.message
    assert "-ls" in rows(ok(session, "!fs -help;"))[0][0]
    assert "unknown operation" in failed(session, "!fs -chmod 777 x;").message


def test_fs_refuses_the_server_folder_and_the_roots_themselves(session: Session, lake: Path) -> None:
    server = session.cfg.data_dir / "server"
    server.mkdir(parents=True, exist_ok=True)
    (server / "secret.key").write_text("k")
    for cmd in (f"!fs -ls {server};", f"!fs -cat {server}/secret.key;", "!fs -cat ../server/secret.key;",
                f"!hdfs -rm -r {server};", f"!fs -cp {server}/secret.key stolen.txt;"):
        err = failed(session, cmd)
        assert err.kind == "data" and "private data folder" in err.message, cmd
    assert (server / "secret.key").exists() and not (lake / "stolen.txt").exists()
    os.symlink(server, lake / "door")
    assert "private data folder" in failed(session, "!fs -ls door;").message
    assert "private data folder" in failed(session, "!fs -cat door/secret.key;").message
    # A listing shows such a link but nothing about what it leads to.
    assert [r[1:] for r in rows(ok(session, "!fs -ls .;"))] == [["link", None, None]]
    err = failed(session, "!fs -rm -r .;")
    assert "holds a data root" in err.message and lake.is_dir()


def test_fs_with_data_roots_refuses_everything_else(tmp_path: Path, events: list[Any]) -> None:
    roots = tmp_path / "roots"
    (roots / "in").mkdir(parents=True)
    (roots / "in" / "a.txt").write_text("inside\n")
    s = Session(load_config({"DATA_DIR": str(tmp_path / "data"), "DATA_ROOTS": [str(roots)]}), events.append)
    try:
        err = failed(s, "!fs -cat /etc/passwd;")
        assert "outside the allowed data roots" in err.message and err.column == 10
        assert "outside the allowed data roots" in failed(s, "!fs -ls /;").message
        assert "outside the allowed data roots" in failed(s, f"!fs -cp {roots}/in/a.txt /tmp/out.txt;").message
        assert rows(ok(s, f"!fs -cat {roots}/in/a.txt;")) == [["inside"]]
    finally:
        s.shutdown()


def test_sh_runs_in_the_lake(session: Session, lake: Path, events: list[Any]) -> None:
    out = ok(session, '!sh "pwd; echo made > made.txt";')
    assert rows(out) == [[str(lake)]] and (lake / "made.txt").read_text() == "made\n"
    assert rows(ok(session, "!sh echo a b;")) == [["a b"]]
    err = failed(session, '!sh "echo oops >&2; exit 3";')
    assert err.kind == "data" and "exit code 3: oops" in err.message
    assert "cannot run" in failed(session, "!sh no-such-program-here x;").message


def test_py_include_project_and_local(session: Session, lake: Path) -> None:
    (lake / "src" / "algs").mkdir(parents=True)
    (lake / "src" / "algs" / "train.py").write_text("print('train')\n")
    lib = lake / "lib" / "github.com" / "someone" / "lib-core" / "alg"
    lib.mkdir(parents=True)
    (lib / "xgboost.py").write_text("print('xgb')\n")
    ok(session, "!pyInclude project 'src/algs/train.py' named code1;")
    assert session.tables["code1"].column("content").to_pylist() == ["print('train')\n"]
    ok(session, "!pyInclude local 'github.com/someone/lib-core.alg.xgboost.py' named code2;")
    assert session.tables["code2"].column("content").to_pylist() == ["print('xgb')\n"]
    err = failed(session, "!pyInclude local 'nolib.alg.x.py' named c;")
    assert "no library alias 'nolib'" in err.message
    assert "no file" in failed(session, "!pyInclude project 'src/none.py' named c;").message
    server = session.cfg.data_dir / "server"
    server.mkdir(exist_ok=True)
    (server / "x.py").write_text("secret")
    assert "private data folder" in failed(session, f"!pyInclude project '{server}/x.py' named c;").message


def _include(session: Session, text: str, including: list[str] | None = None) -> tuple[str, list[include.IncludedCell]]:
    stmt = lang.parse(text)[0]
    assert isinstance(stmt, lang.Include)
    return include.included_cells(stmt, None, including or [], host=session)


def test_include_project_lib_and_local_files(session: Session, lake: Path) -> None:
    (lake / "src").mkdir()
    (lake / "src" / "b.mlsql").write_text("select 2 as two as b_table;")
    name, cells = _include(session, "include project.`src/b.mlsql`;")
    assert name == str(lake / "src" / "b.mlsql") and [c.source for c in cells] == ["select 2 as two as b_table;"]
    run = CellRun()
    session.run_statements(cells[0].source, run)
    assert "b_table" in session.tables
    with pytest.raises(CellError, match="include cycle"):
        _include(session, "include project.`src/b.mlsql`;", [name])
    with pytest.raises(CellError, match="does not download"):
        _include(session, 'include lib.`github.com/someone/lib-core` where alias="libCore";')
    udf = lake / "lib" / "github.com" / "someone" / "lib-core" / "udf"
    udf.mkdir(parents=True)
    (udf / "hello.byzer").write_text("select 'hello' as h as hello_table;")
    assert _include(session, 'include lib.`github.com/someone/lib-core` where alias="libCore";')[1] == []
    assert [c.source for c in _include(session, "include local.`libCore.udf.hello`;")[1]] == \
        ["select 'hello' as h as hello_table;"]
    assert _include(session, "include local.`github.com/someone/lib-core.udf.hello`;")[0] == str(udf / "hello.byzer")
    with pytest.raises(CellError, match="no file"):
        _include(session, "include local.`libCore.udf.nothing`;")
    with pytest.raises(CellError, match="no library alias 'other'"):
        _include(session, "include local.`other.udf.hello`;")
    (session.cfg.data_dir / "server").mkdir(exist_ok=True)
    with pytest.raises(CellError, match="private data folder"):
        _include(session, f"include project.`{session.cfg.data_dir}/server/x.mlsql`;")
    with pytest.raises(CellError, match="needs the session"):
        include.included_cells(lang.parse("include project.`src/b.mlsql`;")[0], None, [])  # type: ignore[arg-type]


def test_json_str_and_csv_str_read_a_variable(tmp_path: Path) -> None:
    ctx = SourceContext(tmp_path)
    ctx.variables = {  # type: ignore[attr-defined]  # what the session passes its sources
        "people": '\n{"name": "a", "age": 3}\n\n{"name": "b"}\n',
        "arr": '[{"x": 1}, {"x": 2, "y": "z"}]',
        "bad": '{"x": 1}\n{"x": ',
        "csv": "name,age\na,3\nb,\n"}
    people = get_source("jsonStr").read(ctx, "people", {})
    assert people.to_pylist() == [{"name": "a", "age": 3}, {"name": "b", "age": None}]
    assert get_source("jsonstr").read(ctx, "arr", {}).to_pylist() == [{"x": 1, "y": None}, {"x": 2, "y": "z"}]
    with pytest.raises(SourceError, match="line 2 of the variable is not one JSON object"):
        get_source("jsonStr").read(ctx, "bad", {})
    with pytest.raises(SourceError, match=r"variables set: arr, bad, csv, people"):
        get_source("jsonStr").read(ctx, "nobody", {})
    plain = get_source("csvStr").read(ctx, "csv", {})
    assert plain.column_names == ["_c0", "_c1"] and plain.num_rows == 3
    typed = get_source("csvStr").read(ctx, "csv", {"header": "true", "inferSchema": "true"})
    assert typed.to_pylist() == [{"name": "a", "age": 3}, {"name": "b", "age": None}]


def test_load_json_str_in_a_session(session: Session) -> None:
    ok(session, "set abc='''\n{\"x\": 120, \"y\": 100}\n{\"x\": 130}\n''';\nload jsonStr.`abc` as t;")
    assert session.tables["t"].to_pylist() == [{"x": 120, "y": 100}, {"x": 130, "y": None}]


def test_byzer_notebook_cells_keep_their_kinds() -> None:
    doc = {"name": "nb", "cell_list": [
        {"id": 1, "content": "--%markdown\n# Title\nSome *text*."},
        {"id": 2, "content": "#%python\n#%input=t\n#%output=o\n#%schema=st(field(a,long))\nprint(1)"},
        {"id": 3, "content": "--%python\n--%input=command\nimport os"},
        {"id": 4, "content": "-- a comment first\n--%markdown\nlater header"},
        {"id": 5, "content": "-- Markdown## Old style"},
        {"id": 6, "content": "load csv.`x.csv` as t;\nselect '#%python' as s as u;"}]}
    cells = from_byzer(doc)["cells"]
    assert [c["kind"] for c in cells] == ["markdown", "python", "python", "markdown", "markdown", "mlsql"]
    assert cells[0]["source"] == "# Title\nSome *text*."
    assert cells[3]["source"] == "-- a comment first\nlater header"
    assert cells[1]["source"].startswith("#%python\n#%input=t")
    # The python cell compiles to the Ray statement its headers describe.
    stmts = lang.parse_cell(cells[1]["source"], 2, cells[1]["kind"])
    assert any(isinstance(s, lang.Run) and s.et == "Ray" for s in stmts)
