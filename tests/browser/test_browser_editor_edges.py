"""The editor's sharp edges in Chromium: Escape in the completion list, undoing a deletion, the
toolbar at 1000 and 1400 px, a grouped pie, Run all stopping at a failure, a re-run's dimmed output."""
from __future__ import annotations

from typing import Any

from browser_support import Server, reveal, shown_text

SCRIPT = "--script\n"


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def wait_status(page: Any, status: str, n: int = 0, timeout: float = 60000) -> None:
    cell(page, n).locator(f"xpath=self::*[@data-status='{status}']").wait_for(timeout=timeout)


def cell_ids(page: Any) -> list[str]:
    return page.locator("section.cell").evaluate_all("cs => cs.map(c => c.dataset.cellId)")


def test_escape_closes_only_the_completion_list_and_z_undoes_a_delete(page: Any, server: Server,
                                                                     open_notebook: Any) -> None:
    nb = server.notebook("edges", "select 1 as a as first;", "select 2 as b as second;")
    open_notebook(page, nb["id"])
    ids = cell_ids(page)
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    wait_status(page, "done", 0)
    cell(page, 0).locator("[data-role=result]").wait_for()
    # Hovering a statement word shows its doc, naming its section of the language doc.
    cell(page, 0).locator(".cm-line").first.hover(position={"x": 12, "y": 6})
    hover = page.locator("[data-role=schema]")
    hover.wait_for()
    assert "docs/language.md#select" in hover.inner_text()
    page.mouse.move(5, 400)

    editor = cell(page, 1).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    page.keyboard.type("\nsel")
    page.locator(".cm-tooltip-autocomplete").wait_for()
    page.keyboard.press("Escape")
    page.locator(".cm-tooltip-autocomplete").wait_for(state="detached")
    assert page.evaluate("() => !!document.activeElement.closest('.cm-editor')")  # still typing
    page.keyboard.type("dd")
    page.keyboard.type("ar")  # insert-above and run-from, were they command keys
    assert cell_ids(page) == ids
    assert editor.inner_text().endswith("selddar")

    # Now leave the editor for real and delete the first cell, which has a result.
    page.keyboard.press("Escape")
    cell(page, 0).click(position={"x": 300, "y": 10})
    page.keyboard.press("Escape")
    page.keyboard.type("dd")
    page.wait_for_function("() => document.querySelectorAll('section.cell').length === 1")
    banner = page.locator("[data-banner=undo-delete]")
    assert "deleted" in banner.inner_text()
    page.keyboard.press("z")
    page.wait_for_function("() => document.querySelectorAll('section.cell').length === 2")
    assert cell_ids(page) == ids
    assert "select 1 as a as first;" in shown_text(cell(page, 0))
    assert cell(page, 0).locator("[data-role=result]").count() == 1  # with its output
    # The banner's button does the same, and the store has the cell back under its own id.
    cell(page, 1).click(position={"x": 300, "y": 10})
    page.keyboard.press("Escape")
    page.keyboard.type("dd")
    page.wait_for_function("() => document.querySelectorAll('section.cell').length === 1")
    page.click("[data-banner-action=undo-delete]")
    page.wait_for_function("() => document.querySelectorAll('section.cell').length === 2")
    assert cell_ids(page) == ids
    page.wait_for_function("() => document.querySelector('[data-role=save-state]').dataset.state === 'saved'")
    page.wait_for_timeout(1500)  # the server stores the live document a second after the last change
    assert [c["id"] for c in server.api("GET", f"/notebooks/{nb['id']}")["cells"]] == ids
    assert not page.js_errors


def test_the_toolbar_fits_on_one_line_at_1000_and_1400_px(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("a notebook with a rather long name that the toolbar has to cut somewhere", "select 1 as a;")
    for width in (1000, 1400):
        page.set_viewport_size({"width": width, "height": 800})
        open_notebook(page, nb["id"])
        assert page.evaluate("() => document.documentElement.scrollWidth") == width
        bar = page.locator("header.toolbar").bounding_box()
        assert bar["height"] < 56, bar  # one line
        run_all = page.locator("[data-action=run-all]").bounding_box()
        assert run_all["height"] < 36 and run_all["x"] + run_all["width"] <= width
        for sel in ("[data-action=run-all]", "[data-action=interrupt]", "[data-action=restart]",
                    "[data-sec-action=share]", "[data-sec-action=history]", "[data-action=clear-all]",
                    "a[href$='export?outputs=1']", "[data-sec-action=save-version]", "[data-sec-action=fork]",
                    "a[href$='format=ipynb']", "[data-action=help]"):
            control = reveal(page, sel)
            assert control.is_visible(), (width, sel)
            box = control.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (width, sel, box)
            page.keyboard.press("Escape")
        # Every icon of a cell has words: a tooltip and an accessible name.
        names = cell(page).locator(".cell-head button").evaluate_all(
            "bs => bs.map(b => b.getAttribute('aria-label') || b.textContent.trim())")
        assert all(len(n) > 3 for n in names), names
    reveal(page, "[data-action=help]").click()
    assert page.locator("[data-role=help]").is_visible()
    assert not page.js_errors


def test_a_grouped_pie_draws_one_pie_per_series_and_says_so(page: Any, server: Server, open_notebook: Any) -> None:
    rows = [("north", "banana", 372), ("north", "apple", 100), ("south", "banana", 589), ("south", "apple", 40)]
    select = " union all ".join(f"select '{r}' as region, '{f}' as fruit, {n} as n" for r, f, n in rows)
    nb = server.notebook("pie", f"{select} as sales;")
    c0 = nb["cells"][0]["id"]
    chart = {"type": "pie", "x": "fruit", "y": ["n"], "agg": "sum", "group": "region"}
    server.api("PATCH", f"/notebooks/{nb['id']}/cells/{c0}", {"view": {"mode": "chart", "chart": chart},
                                                              "base_revision": nb["revision"]})
    open_notebook(page, nb["id"])
    cell(page).locator(".cell-head [data-action=run]").click()
    wait_status(page, "done")
    pies = cell(page).locator("[data-role=pie]")
    pies.nth(1).wait_for()
    assert pies.count() == 2
    titles = pies.locator(".pie-title").all_inner_texts()
    assert any("north" in t and "472" in t for t in titles) and any("south" in t and "629" in t for t in titles)
    assert "one pie each" in cell(page).locator("[data-role=pie-note]").inner_text()
    assert not page.js_errors


def test_run_all_stops_at_a_failing_cell_and_a_rerun_dims_the_old_output(page: Any, server: Server,
                                                                        open_notebook: Any) -> None:
    nb = server.notebook("stops", SCRIPT + "sleep 1.5\nprint 2", "select * from no_such_table as t;",
                         SCRIPT + "print 3")
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "error", 1)
    wait_status(page, "cancelled", 2)
    assert cell(page, 2).locator("[data-role=not-run]").count() == 1  # quiet: tests/browser/test_browser_walkthrough.py
    assert "stopped at cell 2" in page.locator("[data-banner=run-all]").inner_text()
    assert cell(page, 2).locator(".line").count() == 0
    assert cell(page, 0).locator(".line").count() == 2

    # Run the first cell again: its old lines stay, dimmed, until the new run's output comes.
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    wait_status(page, "running", 0)
    output = cell(page, 0).locator("[data-role=output]")
    assert "stale" in (output.get_attribute("class") or "")
    assert output.locator(".line").count() == 2
    wait_status(page, "done", 0)
    page.wait_for_function(
        "() => !document.querySelector('section.cell [data-role=output]').classList.contains('stale')")
    assert not page.js_errors
