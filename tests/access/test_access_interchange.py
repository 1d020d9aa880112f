"""Import and export: our JSON and .ipynb round trips keep every cell; the sample Byzer file imports;
malformed files are a 400 that creates nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from console.interchange import from_byzer, from_ipynb, to_ipynb
from console.notebook_file import NotebookFileError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CELLS = [
    {"kind": "markdown", "source": "# Title\n\nsome *text*"},
    {"kind": "mlsql", "source": "load parquet.`/tmp/mnist` as mnist;\nselect 1 as a as t;"},
    {"kind": "python", "source": "--%python\n--%input=mnist\nprint('hi')\n"},
    {"kind": "mlsql", "source": ""},
    {"kind": "python", "source": "x = 1"},
]


def _seed(client: FlaskClient) -> dict:
    r = client.post("/api/notebooks", json={"name": "round trip", "folder": "/rt", "cells": CELLS})
    assert r.status_code == 201
    return r.json  # type: ignore[no-any-return]


def _cells(nb: dict) -> list[tuple[str, str, str]]:
    return [(c["id"], c["kind"], c["source"]) for c in nb["cells"]]


@pytest.mark.parametrize("fmt", ["json", "ipynb"])
def test_export_then_import_keeps_every_cell(client: FlaskClient, fmt: str) -> None:
    nb = _seed(client)
    exported = client.get(f"/api/notebooks/{nb['id']}/export?format={fmt}")
    assert exported.status_code == 200
    assert exported.headers["Content-Disposition"].endswith(f'.{fmt}"')
    r = client.post("/api/notebooks/import", json=exported.json)
    assert r.status_code == 201, r.json
    assert r.json["name"] == "round trip" and r.json["folder"] == "/rt"
    assert _cells(r.json) == _cells(nb)


def test_ipynb_shape_and_outputs() -> None:
    run = {"outputs": [{"text": "a\n", "stream": "stdout"}, {"text": "b\n", "stream": "stdout"},
                       {"text": "oops\n", "stream": "stderr"}],
           "result": {"columns": [{"name": "<b>x</b>", "type": "int"}], "rows": [["<script>1</script>"]],
                      "total_rows": 1},
           "error": {"kind": "sql", "message": "bad"}}
    nb = to_ipynb("n", [{"id": "c1", "kind": "mlsql", "source": "select 1;", "outputs": run},
                        {"id": "c2", "kind": "markdown", "source": "# m"}])
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] == 5
    code, md = nb["cells"]
    assert code["cell_type"] == "code" and "".join(code["source"]).startswith("%%mlsql\n")
    assert md["cell_type"] == "markdown" and md["source"] == ["# m"]
    kinds = [o["output_type"] for o in code["outputs"]]
    assert kinds == ["stream", "stream", "execute_result", "error"]
    assert code["outputs"][0] == {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]}
    html = code["outputs"][2]["data"]["text/html"]
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html
    assert code["outputs"][2]["data"]["application/json"]["rows"] == [["<script>1</script>"]]
    back = from_ipynb(json.loads(json.dumps(nb)))
    assert [(c["kind"], c["source"]) for c in back["cells"]] == [("mlsql", "select 1;"), ("markdown", "# m")]


def test_plain_jupyter_notebook_imports(client: FlaskClient) -> None:
    nb = {"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [
        {"cell_type": "code", "source": ["import numpy as np\n", "np.zeros(3)"], "outputs": [], "metadata": {}},
        {"cell_type": "markdown", "source": "## notes", "metadata": {}},
        {"cell_type": "raw", "source": "raw text", "metadata": {}},
        {"cell_type": "code", "source": "%%mlsql\nselect 1 as a as t;", "outputs": [], "metadata": {}}]}
    r = client.post("/api/notebooks/import?name=from-jupyter", json=nb)
    assert r.status_code == 201
    assert [(c["kind"], c["source"]) for c in r.json["cells"]] == [
        ("python", "import numpy as np\nnp.zeros(3)"), ("markdown", "## notes"), ("markdown", "raw text"),
        ("mlsql", "select 1 as a as t;")]


def test_sample_bznb_imports(client: FlaskClient) -> None:
    data = json.loads((FIXTURES / "sample.bznb").read_text(encoding="utf-8"))
    r = client.post("/api/notebooks/import?format=bznb", json=data)
    assert r.status_code == 201, r.json
    assert r.json["name"] == "Sample Byzer notebook"
    cells = r.json["cells"]
    assert [c["kind"] for c in cells] == ["markdown", "mlsql", "mlsql", "python", "markdown"]
    assert [c["id"] for c in cells] == ["101", "102", "103", "104", "105"]
    assert cells[0]["source"].startswith("# Iris in Byzer")
    assert cells[3]["source"].startswith("#%python\n#%input=iris\n")
    # Detected from the content as well.
    assert client.post("/api/notebooks/import", json=data).status_code == 201


@pytest.mark.parametrize("body,why", [
    ({"nbformat": 3, "cells": []}, "nbformat"),
    ({"nbformat": 4, "cells": "nope"}, "cells"),
    ({"nbformat": 4, "cells": [{"cell_type": "widget", "source": ""}]}, "cell_type"),
    ({"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}, "source"),
    ({"cell_list": [{"content": 7}]}, "content"),
    ({"cell_list": {"a": 1}}, "cell_list"),
    ({"format": "mlsql-console-notebook", "version": 1, "name": "", "cells": []}, "name"),
    ({"hello": "world"}, "not a notebook file"),
    ([1, 2, 3], "JSON object"),
])
def test_malformed_files_are_400_and_create_nothing(client: FlaskClient, body: object, why: str) -> None:
    before = client.get("/api/notebooks").json
    r = client.post("/api/notebooks/import", json=body)
    assert r.status_code == 400 and why in r.json["error"], r.json
    assert client.get("/api/notebooks").json == before


def test_not_json_and_unknown_format(client: FlaskClient) -> None:
    assert client.post("/api/notebooks/import", data=b"{not json", content_type="application/json").status_code == 400
    r = client.post("/api/notebooks/import?format=docx", json={"cell_list": []})
    assert r.status_code == 400 and "unknown format" in r.json["error"]
    assert client.get("/api/notebooks/x/export?format=docx").status_code == 404
    assert client.get("/api/notebooks").json["notebooks"] == []


def test_readers_raise_the_file_error() -> None:
    with pytest.raises(NotebookFileError):
        from_byzer({"cell_list": [None]})
    with pytest.raises(NotebookFileError):
        from_ipynb({"nbformat": True, "cells": []})


@pytest.mark.parametrize("content,source", [
    ("--%markdown# Title", "# Title"),  # what Byzer Notebook writes: no newline after the marker
    ("--%markdown## Part\nsome *text*", "## Part\nsome *text*"),
    ("#%markdown# Title", "# Title"),
    ("--%markdown\n# Title", "# Title"),
])
def test_byzer_markdown_marker_with_or_without_newline(content: str, source: str) -> None:
    cells = from_byzer({"cell_list": [{"id": 1, "content": content}]})["cells"]
    assert [(c["kind"], c["source"]) for c in cells] == [("markdown", source)]


def test_byzer_header_that_is_not_markdown_stays_mlsql() -> None:
    cells = from_byzer({"cell_list": [{"content": "--%markdownish\nselect 1;"}]})["cells"]
    assert cells[0]["kind"] == "mlsql"
