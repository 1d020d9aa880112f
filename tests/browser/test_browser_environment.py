"""The Environment panel in Chromium: the notebook's %pip requirements, each with its version (or
"not built") and where it comes from; a notebook without %pip says it uses the base."""
from __future__ import annotations

from typing import Any

from browser_support import Server, reveal


def test_the_environment_panel_lists_the_notebooks_requirements(page: Any, server: Server,
                                                                 open_notebook: Any) -> None:
    nb = server.notebook("env-panel", "select 1 as a;")
    # Kept as a kernel's %pip would have it (tests/python_cells/test_environment_notebook.py runs
    # the real one); no layer was built here, so the version reads "not built".
    server.store().set_environment(nb["id"], {"requirements": ["consoletestpkg==1.2"], "lock_hash": "ab12"})
    open_notebook(page, nb["id"])
    reveal(page, "[data-sec-action=environment]").click()
    panel = page.locator("[data-role=environment-panel]")
    row = panel.locator("tr[data-package=consoletestpkg]")
    row.wait_for()
    assert row.inner_text().split("\t") == ["consoletestpkg", "not built", "requested: consoletestpkg==1.2"]
    assert "lock ab12" in panel.locator("[data-role=environment-summary]").inner_text()

    bare = server.notebook("env-bare", "select 1 as a;")
    open_notebook(page, bare["id"])
    reveal(page, "[data-sec-action=environment]").click()
    summary = page.locator("[data-role=environment-panel] [data-role=environment-summary]")
    summary.wait_for()
    assert "base environment" in summary.inner_text()
