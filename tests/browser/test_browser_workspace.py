"""The workspace page in Chromium: folders, notebooks, search, import and export."""
from __future__ import annotations

import json
import urllib.request
from typing import Any

from browser_support import Server


def dialog(page: Any, text: str | None) -> None:
    page.wait_for_selector("[data-role=dialog]")
    if text is not None:
        page.fill("[data-role=dialog-input]", text)
    page.click("[data-role=dialog-ok]")


def row(page: Any, name: str) -> Any:
    return page.locator(f"li.notebook[data-name='{name}']")


def test_folders_and_notebook_operations(page: Any, server: Server) -> None:
    server.api("POST", "/folders", {"path": "/ws-test"})
    nb = server.notebook("ws alpha", "select 1 as a;", folder="/ws-test")
    page.goto(f"{server.url}/?folder=/ws-test")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    assert row(page, "ws alpha").is_visible()

    page.click("[data-action=new-folder]")
    dialog(page, "sub")
    page.locator("li.folder[data-path='/ws-test/sub']").wait_for()
    page.locator(".tree .tree-label[data-path='/ws-test/sub']").wait_for()

    row(page, "ws alpha").locator("[data-action=rename]").click()
    dialog(page, "ws beta")
    row(page, "ws beta").wait_for()

    row(page, "ws beta").locator("[data-action=duplicate]").click()
    row(page, "ws beta (copy)").wait_for()

    row(page, "ws beta (copy)").locator("[data-action=move]").click()
    dialog(page, "/ws-test/sub")
    row(page, "ws beta (copy)").wait_for(state="detached")
    page.click("li.folder[data-path='/ws-test/sub'] a")
    row(page, "ws beta (copy)").wait_for()
    assert "folder=%2Fws-test%2Fsub" in page.url

    row(page, "ws beta (copy)").locator("[data-action=delete]").click()
    dialog(page, None)
    page.locator("li.empty").wait_for()

    # Search by name across folders.
    page.fill("[data-role=search]", "beta")
    row(page, "ws beta").wait_for()
    assert "/ws-test" in row(page, "ws beta").inner_text()
    page.fill("[data-role=search]", "no such thing")
    page.locator("li.empty").wait_for()

    # Export: the link downloads the notebook file.
    page.fill("[data-role=search]", "")
    page.goto(f"{server.url}/?folder=/ws-test")
    href = row(page, "ws beta").locator("a", has_text="Export").get_attribute("href")
    with urllib.request.urlopen(server.url + href) as resp:
        exported = json.load(resp)
    assert exported["name"] == "ws beta" and exported["cells"][0]["source"] == "select 1 as a;"
    assert nb["id"] in href
    assert not page.js_errors


def test_import_a_notebook_file_and_a_script(page: Any, server: Server, tmp_path: Any) -> None:
    server.api("POST", "/folders", {"path": "/imports"})
    nb_file = tmp_path / "imported.json"
    nb_file.write_text(json.dumps({"format": "mlsql-console-notebook", "version": 1, "name": "from a file",
                                   "cells": [{"kind": "markdown", "source": "# hi"}]}))
    script = tmp_path / "job.mlsql"
    script.write_text("select 42 as answer;")
    page.goto(f"{server.url}/?folder=/imports")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    page.set_input_files("[data-role=import-file]", str(nb_file))
    row(page, "from a file").wait_for()
    page.set_input_files("[data-role=import-file]", str(script))
    row(page, "job").wait_for()
    listing = server.api("GET", "/notebooks?folder=/imports")
    assert sorted(n["name"] for n in listing["notebooks"]) == ["from a file", "job"]
    job = next(n for n in listing["notebooks"] if n["name"] == "job")
    assert server.api("GET", f"/notebooks/{job['id']}")["cells"][0]["source"] == "select 42 as answer;"
