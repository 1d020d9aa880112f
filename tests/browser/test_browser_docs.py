"""Completion's doc links into the docs pages: a Byzer word's doc links to its section of
docs/language.md, and that link opens /docs/language#<section> on its heading."""
from __future__ import annotations

from typing import Any

from browser_support import Server

ML = "/docs/language#machine-learning-and-extensions"


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def test_an_algorithms_doc_links_to_its_section_of_the_language_doc(page: Any, server: Server,
                                                                    open_notebook: Any) -> None:
    nb = server.notebook("doc links", "select 1.0 as x as t;", "")
    open_notebook(page, nb["id"])
    cell(page, 0).locator(".cell-head [data-action=run]").click()  # completion asks the kernel
    cell(page, 0).locator("xpath=self::*[@data-status='done']").wait_for(timeout=60000)

    cell(page, 1).locator(".cm-content").click()
    page.keyboard.type("train t as RandomFo")
    menu = page.locator(".cm-tooltip-autocomplete")
    menu.wait_for()
    assert menu.locator("li .cm-completionLabel").all_inner_texts()[0] == "RandomForest"
    link = menu.locator(".cm-completionInfo a[data-role=doc-link]")
    link.wait_for()
    assert link.get_attribute("href") == ML and link.get_attribute("target") == "_blank"
    assert link.inner_text() == "docs/language.md#machine-learning-and-extensions"

    with page.context.expect_page() as opened:
        link.click()
    docs = opened.value
    docs.wait_for_selector("#app[data-ready='1']", state="attached")
    assert docs.url.endswith(ML)
    heading = docs.locator("h2#machine-learning-and-extensions")
    assert heading.inner_text() == "Machine learning and extensions"
    assert heading.evaluate("h => h.matches(':target') && h.getBoundingClientRect().top < innerHeight")
    # Links to another doc stay in the docs pages; code shows as code, nothing as raw HTML.
    assert docs.locator("[data-role=doc] a[href='/docs/cluster-sql']").count() >= 1
    assert docs.locator("[data-role=doc] pre code").count() > 3
    docs.close()
    assert page.js_errors == []


def test_an_unknown_docs_page_is_a_404(page: Any, server: Server) -> None:
    for path in ("/docs/nope", "/docs/..%2Fconsole%2Fconfig"):
        resp = page.goto(f"{server.url}{path}")
        assert resp is not None and resp.status == 404, path
