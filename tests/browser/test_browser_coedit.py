"""Working together on one notebook in Chromium: two logged-in users in two browser contexts type
into the same cell at once and both pages end with the same merged text, stored in the
database; a viewer sees the edit live and cannot type; presence shows who is here and where; a
reload mid-edit loses nothing. The server's half is tests/live/test_coedit*.py."""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest

from browser_support import Server, logged_in, open_as, shown_text, start_login_server, stop_server

SOURCE = "select 1 as a;"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("coedit") / "data",
                             users={"ada": "member", "bob": "member", "vic": "member"})
    yield srv
    stop_server(srv)


# A cell's text as its editor shows it, without the other people's carets and name labels
# (y-codemirror draws those inside the text, with word joiners around them).
TEXT_JS = """(n) => {
  const content = document.querySelectorAll('section.cell .cm-content')[n || 0];
  if (!content) return null;
  return [...content.querySelectorAll('.cm-line')].map((line) => {
    const copy = line.cloneNode(true);
    copy.querySelectorAll('.cm-ySelectionCaret').forEach((c) => c.remove());
    return copy.textContent.replace(/\u2060/g, '');
  }).join('\\n');
}"""


def editor_text(page: Any, n: int = 0) -> str:
    return str(page.evaluate(TEXT_JS, n))


def wait_text(page: Any, want: str, n: int = 0) -> None:
    page.wait_for_function(f"([n, want]) => ({TEXT_JS})(n) === want", arg=[n, want])


def stored(ctx: Any, server: Server, notebook_id: str) -> list[str]:
    r = ctx.request.get(f"{server.url}/api/notebooks/{notebook_id}")
    assert r.ok, r.text()
    return [c["source"] for c in r.json()["cells"]]


def wait_until(pred: Any, timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.1)


@pytest.fixture
def people(browser: Any, team: Server) -> Iterator[dict[str, tuple[Any, dict[str, str]]]]:
    made = {name: logged_in(browser, team, name) for name in ("ada", "bob", "vic")}
    yield made
    for ctx, _ in made.values():
        ctx.close()


def notebook(team: Server, people: dict[str, Any], *sources: str) -> str:
    ctx, headers = people["ada"]
    r = ctx.request.post(team.url + "/api/notebooks", headers=headers, data={
        "name": f"together {time.monotonic_ns()}", "folder": "/",
        "cells": [{"kind": "mlsql", "source": s} for s in sources]})
    assert r.ok, r.text()
    nb_id = str(r.json()["id"])
    for user, role in (("bob", "editor"), ("vic", "viewer")):
        s = ctx.request.post(f"{team.url}/api/notebooks/{nb_id}/shares", headers=headers,
                             data={"user": user, "role": role})
        assert s.ok, s.text()
    return nb_id


def test_two_editors_type_at_once_and_a_viewer_watches(team: Server, people: dict[str, Any]) -> None:
    nb_id = notebook(team, people, SOURCE)
    ada, bob, vic = (open_as(people[n][0], team, nb_id) for n in ("ada", "bob", "vic"))
    # Ada types at the end of the line, Bob at its start, interleaved keystroke by keystroke.
    ada.locator("section.cell .cm-content").first.click()
    ada.keyboard.press("End")
    bob.locator("section.cell .cm-content").first.click()
    bob.keyboard.press("Home")
    for a_char, b_char in itertools.zip_longest(" -- ada was here", "/* bob */ ", fillvalue=""):
        ada.keyboard.type(a_char)
        bob.keyboard.type(b_char)
    want = "/* bob */ select 1 as a; -- ada was here"
    for page in (ada, bob, vic):
        wait_text(page, want)
    # Each sees the other's cursor with a name in their colour.
    ada.locator(".cm-ySelectionCaret").first.wait_for(state="attached")
    # Stored within seconds of the last keystroke: the REST API sees the merged text.
    ctx, _ = people["ada"]
    wait_until(lambda: stored(ctx, team, nb_id) == [want], what="merged text stored")
    for page in (ada, bob):
        page.locator("[data-role=save-state][data-state=saved]").wait_for()
        assert page.locator("[data-banner=conflict]").count() == 0
    # The viewer saw it live and cannot type.
    vic.locator("section.cell .cell-editor").first.click()
    vic.keyboard.type("drop everything; ")
    time.sleep(0.5)
    assert editor_text(vic) == want
    assert stored(ctx, team, nb_id) == [want]
    # Presence: everyone is shown on every page, with the cell each is in.
    for page in (ada, bob, vic):
        page.wait_for_function("() => document.querySelectorAll('[data-role=avatar]').length === 3")
        users = page.locator("[data-role=avatar]").evaluate_all("els => els.map(e => e.dataset.user)")
        assert sorted(users) == ["ada", "bob", "vic"]
    bob.wait_for_function(
        "() => document.querySelector('[data-role=avatar][data-user=ada]').dataset.cells.length > 0")
    assert bob.locator("section.cell [data-role=peers] [data-user=ada]").count() == 1
    # A page that goes away leaves the others' presence.
    vic.close()
    # A closed page's socket usually says goodbye at once; on a loaded machine it may take until
    # the server's ping timeout.
    ada.wait_for_function("() => document.querySelectorAll('[data-role=avatar]').length === 2", timeout=60000)
    for page in (ada, bob):
        assert not page.js_errors


def test_cells_added_moved_and_retyped_reach_the_other_page(team: Server, people: dict[str, Any]) -> None:
    nb_id = notebook(team, people, "first;", "second;")
    ada, bob = (open_as(people[n][0], team, nb_id) for n in ("ada", "bob"))
    ada.locator("section.cell .cm-content").first.click()
    ada.keyboard.press("Escape")
    ada.keyboard.press("b")  # a cell below the first, editing it
    ada.keyboard.type("## notes")
    ada.keyboard.press("Escape")
    ada.keyboard.press("m")  # Markdown
    ada.keyboard.press("Shift+ArrowUp")  # moved to the top
    bob.wait_for_function("() => document.querySelectorAll('section.cell').length === 3")
    bob.wait_for_function("() => document.querySelector('section.cell').dataset.kind === 'markdown'")
    assert shown_text(bob.locator("section.cell").first.locator("[data-role=markdown]")).strip() == "notes"
    ctx, _ = people["bob"]
    wait_until(lambda: stored(ctx, team, nb_id) == ["## notes", "first;", "second;"], what="structure stored")
    # Bob deletes the last cell; Ada's page follows.
    bob.locator("section.cell").nth(2).locator("[data-action=delete]").click()
    ada.wait_for_function("() => document.querySelectorAll('section.cell').length === 2")
    wait_until(lambda: stored(ctx, team, nb_id) == ["## notes", "first;"], what="delete stored")
    assert not ada.js_errors and not bob.js_errors


def test_a_reload_mid_edit_loses_nothing(team: Server, people: dict[str, Any]) -> None:
    nb_id = notebook(team, people, SOURCE)
    ada, bob = (open_as(people[n][0], team, nb_id) for n in ("ada", "bob"))
    ada.locator("section.cell .cm-content").first.click()
    ada.keyboard.press("End")
    ada.keyboard.type(" -- typed then reloaded")
    ada.reload()  # at once: before the server's save delay has passed
    ada.wait_for_selector("#app[data-ready='1'][data-connection='live']", state="attached")
    want = SOURCE + " -- typed then reloaded"
    wait_text(ada, want)
    wait_text(bob, want)
    ctx, _ = people["ada"]
    wait_until(lambda: stored(ctx, team, nb_id) == [want], what="stored after the reload")
    # A rename over REST after live saves is not a conflict (the page keeps up with the revision).
    ada.fill("[data-role=name]", "renamed together")
    ada.keyboard.press("Enter")
    ada.locator("[data-role=save-state][data-state=saved]").wait_for()
    assert ada.locator("[data-banner=conflict]").count() == 0
    r = ctx.request.get(f"{team.url}/api/notebooks/{nb_id}")
    assert r.json()["name"] == "renamed together"
