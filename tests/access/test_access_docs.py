"""The user docs as pages (console/server/api/userdocs.py): GET /docs/<name> and GET /api/docs/<name>
for whoever sees the workspace (a reader too; the local user in single-user mode), nobody logged
out, and only the names listed from docs/ at startup: traversal and other files are a 404."""
from __future__ import annotations

import http.client
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from console.server.api.userdocs import DOCS_DIR, list_docs
from security_support import Served, login

TRAVERSALS = ("/docs/..%2Fconsole%2Fconfig", "/docs/%2e%2e", "/docs/..", "/docs/language.md",
              "/docs/%2e%2e%2fREADME", "/docs/..%2FREADME", "/docs/nope", "/docs/img",
              "/api/docs/..%2Fconsole%2Fconfig", "/api/docs/%2e%2e", "/api/docs/..%2FREADME",
              "/api/docs/language.md", "/api/docs/img")


def test_a_reader_reads_a_doc_and_its_page(mu_app: Flask) -> None:
    rita = login(mu_app, "rita")  # site role reader
    r = rita.get("/api/docs/language")
    assert r.status_code == 200
    assert r.json == {"name": "language", "markdown": (DOCS_DIR / "language.md").read_text(encoding="utf-8")}
    assert "## Machine learning and extensions" in r.json["markdown"]
    page = rita.get("/docs/language")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]


def test_logged_out_callers_get_nothing(mu_app: Flask) -> None:
    anon = mu_app.test_client()
    r = anon.get("/api/docs/language")
    assert r.status_code == 401 and "log in" in r.json["error"]
    page = anon.get("/docs/language")
    assert page.status_code == 302 and page.headers["Location"] == "/login?next=%2Fdocs%2Flanguage"


def test_only_listed_names_are_served_traversal_is_a_404(mu_app: Flask) -> None:
    alice = login(mu_app, "alice")
    for url in TRAVERSALS:
        r = alice.get(url)
        assert r.status_code == 404, (url, r.status_code, r.get_data(as_text=True)[:200])
        assert "secret" not in r.get_data(as_text=True).lower()
    assert "the docs are: api, architecture" in alice.get("/api/docs/nope").json["error"]


def _raw_get(url: str, path: str) -> tuple[int, bytes]:
    """A request with the path exactly as written (no client normalizes or re-quotes it)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", f"{host}:{port}")
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_single_user_mode_reads_docs_and_a_real_server_refuses_traversal(app: Flask, client: FlaskClient) -> None:
    assert client.get("/api/docs/language").json["name"] == "language"  # the local user, no login
    assert client.get("/docs/language").status_code == 200
    served = Served(app)
    try:
        status, body = _raw_get(served.url, "/api/docs/security")
        assert status == 200 and b"# " in body
        for path in TRAVERSALS:
            status, body = _raw_get(served.url, path)
            assert status == 404, (path, status, body[:200])
            assert b"SECRET_KEY" not in body and b"def load_config" not in body
    finally:
        served.close()


def test_the_list_holds_plain_md_files_of_the_folder_only(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n")
    (docs / "sub" / "inner.md").write_text("# not listed: below the folder\n")
    (docs / ".hidden.md").write_text("# not listed: not a page name\n")
    (docs / "notes.txt").write_text("not markdown\n")
    (tmp_path / "outside.md").write_text("# outside\n")
    (docs / "link.md").symlink_to(tmp_path / "outside.md")
    assert list(list_docs(docs)) == ["guide"]
    assert list_docs(tmp_path / "missing") == {}
    assert {"language", "api", "security"} <= set(list_docs())


def test_the_app_lists_the_folder_once(mu_app: Flask) -> None:
    from console.server.api.userdocs import DOCS_KEY

    listed = mu_app.extensions[DOCS_KEY]
    assert listed == list_docs() and all(p.parent == DOCS_DIR for p in listed.values())
