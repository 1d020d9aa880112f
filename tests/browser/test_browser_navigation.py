"""Back and Forward between the workspace and two notebooks, editing in between: every page shows
current data (API answers are never cached; pages restored from the back/forward cache reload)
and no edit conflicts with the user's own earlier one."""
from __future__ import annotations

import re
from typing import Any

from browser_support import Server


def _ready(page: Any) -> None:
    page.wait_for_selector("#app[data-ready='1']", state="attached")


def _names(page: Any) -> list[str]:
    return page.locator(".listing li.notebook .name").all_inner_texts()


def _edit(page: Any, text: str) -> None:
    """Type at the end of the first cell and wait until it is saved."""
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    page.locator("section.cell").first.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)
    # The state as data, not text: "saved" is also in "not saved: …", and the page said "saved"
    # before the typing reached it (it then left with the typing unsent).
    page.wait_for_function("""t => {
        const c = document.querySelector('section.cell .cm-content');
        const s = document.querySelector('[data-role=save-state]');
        return c && c.innerText.endsWith(t) && s && s.dataset.state === 'saved';
    }""", arg=text)


def _wait_source(page: Any, text: str) -> None:
    """The first cell shows `text` (a page restored from the back/forward cache reloads first)."""
    page.locator("section.cell").first.locator(".cm-content", has_text=text).wait_for()
    _ready(page)
    assert page.locator("section.cell").first.locator(".cm-content").inner_text() == text


def test_back_and_forward_show_current_data(page: Any, server: Server) -> None:
    folder = "/nav"
    server.api("POST", "/folders", {"path": folder})
    a = server.notebook("nav first", "select 1 as a as ta;", folder=folder)
    b = server.notebook("nav second", "select 2 as b as tb;", folder=folder)
    page.goto(f"{server.url}/?folder={folder}")
    _ready(page)
    assert sorted(_names(page)) == ["nav first", "nav second"]

    page.click(f".listing a.name[href$='{a['id']}']")
    page.wait_for_url(re.compile(a["id"]))
    _ready(page)
    _edit(page, " -- one")

    page.go_back()  # the workspace
    _ready(page)
    page.go_forward()  # notebook A: its edit, not the content it had when first loaded
    page.wait_for_url(re.compile(a["id"]))
    _wait_source(page, "select 1 as a as ta; -- one")
    _edit(page, " again")  # no conflict with our own earlier edit
    assert page.locator("[data-banner=conflict]").count() == 0

    made = server.notebook("nav third", "", folder=folder)  # made elsewhere while the list was away
    page.go_back()  # the workspace: the new notebook is listed
    _ready(page)
    page.locator(".listing li.notebook .name", has_text="nav third").wait_for()
    assert sorted(_names(page)) == ["nav first", "nav second", "nav third"]
    page.click(f".listing a.name[href$='{b['id']}']")
    page.wait_for_url(re.compile(b["id"]))
    _ready(page)
    _edit(page, " -- two")

    page.go_back()
    _ready(page)
    page.go_forward()  # notebook B, with its edit
    page.wait_for_url(re.compile(b["id"]))
    _wait_source(page, "select 2 as b as tb; -- two")
    _edit(page, " again")
    assert page.locator("[data-banner=conflict]").count() == 0
    stored = {nb["id"]: nb for nb in (server.api("GET", f"/notebooks/{x['id']}") for x in (a, b, made))}
    assert stored[a["id"]]["cells"][0]["source"] == "select 1 as a as ta; -- one again"
    assert stored[b["id"]]["cells"][0]["source"] == "select 2 as b as tb; -- two again"
    assert page.js_errors == []
