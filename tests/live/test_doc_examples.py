"""Every example in README.md and docs/*.md is tried as a user would try it (issue 30).

A test collects each ```sql and ```python block of the docs. Each one that can run on one
machine without outside services runs through the real server (REST Run all, the real engine),
after the few cells of setup it presumes (a table it selects from, a CSV it loads), and must end
`done`; the rest (other people's paths such as `/data/mnist`, a PostgreSQL at db.example, `…`
placeholders, the Ray cluster) must at least parse as MLSQL, or compile as Python, so a
documented statement the language stops taking fails the suite. A new example is caught too:
it either runs or is named below as one that cannot, with the reason.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.lang import parse_cell
from tests.support.live_server import LiveServer
from tests.support.made_run import Api, run_all, text_of

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(sql|mlsql|python)\n(.*?)^```", re.M | re.S)

EVENTS = ("select * from values ('2026-12-01', 'a', 'click', 1), ('2026-12-02', 'b', 'view', 2) "
          "as t(day, category, kind, n) as events;")
MNIST = "select id % 10 as label, id as pixel from range(100) as mnist;"
COUNTS = ("select label, count(*) as n from mnist group by label as counts;\n"
          "select label, n from counts as more;")

# Examples that run, by their first line: the setup cells they presume (run first, same notebook).
RUNS: dict[str, list[str]] = {
    "select label, count(*) as n": [MNIST],
    "save overwrite counts as delta.`ai_model.counts`;": [MNIST, COUNTS, EVENTS],
    'set day = "2024-01-02";': [MNIST, COUNTS],
    'set day = "2026-12-01" where type="defaultParam";': [EVENTS],
    'run mnist as TableRepartition.`` where partitionNum="4" as mnist4;': [MNIST],
    'set a = "jack,2";': [],
    "set loadCsv = '''load csv.`{0}` where header=\"true\" as {1}''';": [],
}
# Examples that only parse or compile, by their first line, and why they cannot run here.
PARSE_ONLY: dict[str, str] = {
    "load parquet.`/data/mnist` as mnist;": "other people's paths and a jdbc connection",
    "connect jdbc where url=\"postgresql://me@db.example/shop\" as shop;": "a PostgreSQL server elsewhere",
    '!python env "PYTHON_ENV=source /opt/venvs/tf/bin/activate";': "a virtualenv of the reader's machine",
    'run command as Ray.`` where inputTable="mnist" and outputTable="mnist_model"': "Ray: tests/python_cells",
    "!ray on mnist '''": "Ray: tests/python_cells",
    "include notebook.`shared/etl`;        -- every cell of the notebook, markdown skipped":
        "notebooks of the reader's",
    "include project.`src/etl.mlsql`;                                   -- a script file (relative: in the lake)":
        "files and libraries of the reader's",
    "register ScriptUDF.`` as plus_one where lang=\"python\" and code='''def apply(self, x): return x + 1''';":
        "`…` placeholders",
    'train data1 as RandomForest.`models/rf` where keepVersion="true" and evaluateTable="data1"':
        "a features table of the reader's",
    'register ScriptUDF.`` as plusFun where lang="python" and dataType="double"': "a Python worker: tests/kernel",
    "!python conf \"schema=file\";                              -- one per schema/env/dataMode/runIn/other key given":
        "what a Python cell's annotations stand for, with `…` and `<cache dir>` placeholders",
    'set sql.engine = "cluster" where type="conf";   -- auto (the default), local or cluster':
        "the Ray cluster: tests/kernel/test_sql_cluster.py",
}


def _examples() -> Iterator[tuple[str, str, str]]:
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text[:m.start()].count("\n") + 1
            yield f"{doc.relative_to(ROOT)}:{line}", m.group(1), m.group(2)


EXAMPLES = list(_examples())
SQL = [(where, body) for where, lang, body in EXAMPLES if lang != "python"]
PYTHON = [(where, body) for where, lang, body in EXAMPLES if lang == "python"]


def _first(body: str) -> str:
    return body.splitlines()[0].rstrip()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    data = tmp_path_factory.mktemp("doc-examples")
    people = data / "lake" / "data" / "people.csv"
    people.parent.mkdir(parents=True)
    people.write_text("name,age\nada,36\nalan,41\n")
    served = LiveServer(str(data))
    try:
        yield served
    finally:
        served.close()


def test_every_sql_example_is_either_run_or_named_with_its_reason() -> None:
    assert len(SQL) >= 15, [w for w, _ in SQL]  # the collector still finds the docs' examples
    unknown = [f"{where}: {_first(body)!r}" for where, body in SQL if _first(body) not in {**RUNS, **PARSE_ONLY}]
    assert not unknown, "a new example: add it to RUNS (with its setup) or PARSE_ONLY (with why)"
    stale = set(RUNS) | set(PARSE_ONLY)
    stale -= {_first(body) for _, body in SQL}
    assert not stale, f"examples no longer in the docs: {stale}"


@pytest.mark.parametrize(("where", "body"), SQL, ids=[w for w, _ in SQL])
def test_an_sql_example_parses(where: str, body: str) -> None:
    parse_cell(body, cell=where)  # a ParseError names the line and column


@pytest.mark.parametrize(("where", "body"), PYTHON, ids=[w for w, _ in PYTHON])
def test_a_python_example_compiles(where: str, body: str) -> None:
    code = "\n".join(line for line in body.splitlines() if not line.startswith("--%"))
    ast.parse(code.replace("=...,", "=None,").replace("...", "pass"), filename=where)


RUNNABLE = [(where, body) for where, body in SQL if _first(body) in RUNS]


@pytest.mark.parametrize(("where", "body"), RUNNABLE, ids=[w for w, _ in RUNNABLE])
def test_a_runnable_sql_example_runs_through_the_server(live: LiveServer, where: str, body: str) -> None:
    api = Api(live.url)
    setup = RUNS[_first(body)]
    status, notebook = api.call("POST", "/notebooks", {"name": f"example {where}", "cells": [
        {"kind": "mlsql", "source": source} for source in [*setup, body]]})
    assert status == 201, notebook
    runs = run_all(api, notebook, timeout=180)
    assert [r["status"] for r in runs] == ["done"] * len(runs), "\n".join(text_of(r) for r in runs)[-3000:]
