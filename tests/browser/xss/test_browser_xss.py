"""XSS payloads through notebook and folder names, cell sources, Markdown, log output, table values,
errors, revision diffs and the read-only link page: Chromium must run none of them."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from browser_support import reveal
from xss_support import PAYLOADS, XSS, Server, assert_inert

SHORT = PAYLOADS[0] + PAYLOADS[1]  # names are at most 255 characters


def _seed(server: Server) -> dict[str, Any]:
    store = server.store()
    try:
        alice = store.get_user_by_name("alice")
        folder = "/team " + SHORT.replace("/", "∕")  # a folder name cannot hold '/'
        nb = store.create_notebook(f"nb {SHORT}", folder, owner_id=alice.id, cells=[
            {"kind": "markdown", "source": f"# Title {XSS}\n\n{XSS}\n\n[click](javascript:window.__xss=1)"},
            {"kind": "mlsql", "source": f"select '{XSS}' as v as t;"},
            {"kind": "python", "source": f"print('{XSS}')"},
        ])
        mlsql, python = nb.cells[1], nb.cells[2]
        run = store.create_run(nb.id, mlsql.id, mlsql.source, alice.id)
        store.append_output(run.id, [{"seq": 1, "text": f"log line {XSS}\n", "stream": "stdout"},
                                     {"seq": 2, "text": f"warn {XSS}\n", "stream": "stderr"}])
        ids = {"notebook_id": nb.id, "cell_id": mlsql.id, "run_id": run.id}  # as the session layer stores them
        store.finish_run(run.id, "done", result={"type": "result", "name": "t", **ids,
                                                 "columns": [{"name": f"col {XSS}", "type": "varchar"}],
                                                 "rows": [[XSS], [f"<b>{XSS}</b>"]], "total_rows": 2})
        run2 = store.create_run(nb.id, python.id, python.source, alice.id)
        store.append_output(run2.id, [{"seq": 1, "text": f"{XSS}\r{XSS}\n"}])
        store.append_metrics(run2.id, [{"seq": 1, "values": {f"loss {XSS}": 0.5}, "step": 1}])
        store.finish_run(run2.id, "error", error={"type": "error", "kind": "python", "message": f"boom {XSS}",
                                                  "notebook_id": nb.id, "cell_id": python.id, "run_id": run2.id,
                                                  "traceback": f"Traceback {XSS}"})
        store.update_notebook(nb.id, 1, cells=[{"id": c.id, "kind": c.kind, "source": c.source + f"\n-- {XSS}"}
                                               for c in nb.cells], author_id=alice.id)
        link = store.create_link(nb.id, alice.id)
        return {"id": nb.id, "folder": folder, "token": link.token}
    finally:
        store.close()


def test_workspace_and_notebook_render_payloads_as_text(page: Any, server: Server) -> None:
    seeded = _seed(server)
    page.goto(f"{server.url}/?folder={quote(seeded['folder'])}")
    page.wait_for_selector("#app[data-page=workspace][data-ready='1']", state="attached")
    assert "nb " + SHORT in page.locator("#app").inner_text()  # the name is shown, as text
    assert_inert(page)

    page.goto(f"{server.url}/notebooks/{seeded['id']}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    page.locator("section.cell [data-role=result]").first.wait_for()
    page.wait_for_timeout(500)
    text = page.locator("#app").inner_text()
    assert "log line" in text and "boom" in text
    assert_inert(page)
    assert page.evaluate("document.title").startswith("nb <img")


def test_history_and_share_panels_render_payloads_as_text(page: Any, server: Server) -> None:
    seeded = _seed(server)
    page.goto(f"{server.url}/notebooks/{seeded['id']}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    page.click("[data-sec-action=history]")
    page.locator("[data-role=revisions-panel] [data-sec-action=show-revision]").last.click()
    page.locator("[data-role=revision-diff] pre.diff").first.wait_for()
    assert "<script>" in page.locator("[data-role=revision-diff]").inner_text()
    assert_inert(page)
    page.keyboard.press("Escape")
    page.click("[data-sec-action=share]")
    page.fill("[data-role=share-user]", "vera")
    page.locator("[data-role=share-dialog] [data-sec-action=share]").click()
    page.locator("[data-role=shares] li[data-user=vera]").wait_for()
    page.locator("[data-role=share-dialog] [data-sec-action=create-link]").click()
    page.locator("[data-role=link-url]").first.wait_for()
    assert_inert(page)


def test_link_page_renders_payloads_as_text(browser: Any, server: Server) -> None:
    seeded = _seed(server)
    ctx = browser.new_context()  # no login: anyone with the link
    page = ctx.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    resp = page.goto(f"{server.url}/p/{seeded['token']}")
    assert resp.status == 200
    body = page.locator("body").inner_text()
    assert "log line" in body and XSS.split(">")[0] in body and "boom" in body
    page.wait_for_selector("#published-app[data-ready='1']", state="attached")
    # the metrics chart, drawn by publish.js
    assert page.locator("#published-app [data-role=chart] canvas").count() >= 1
    assert_inert(page)
    # Markdown is rendered as in the app (DOMPurify): an anchor may stay, its javascript: target not.
    assert page.locator("a#xss-link[href]").count() == 0
    ctx.close()


def test_the_detector_sees_a_payload_that_runs(page: Any, server: Server) -> None:
    """Guards the tests above against passing vacuously: a payload put in as HTML does run."""
    page.goto(f"{server.url}/login")
    page.evaluate("html => document.body.insertAdjacentHTML('beforeend', html)", PAYLOADS[0])
    page.wait_for_function("() => window.__xss === 1")


def test_fork_button_copies_into_the_workspace(page: Any, server: Server) -> None:
    seeded = _seed(server)
    page.goto(f"{server.url}/notebooks/{seeded['id']}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    reveal(page, "[data-sec-action=fork]").click()  # Fork sits in the toolbar's More menu
    page.wait_for_url(lambda url: seeded["id"] not in url and "/notebooks/" in url)
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    assert page.locator("[data-role=name]").input_value().endswith("(copy)")
    assert_inert(page)
