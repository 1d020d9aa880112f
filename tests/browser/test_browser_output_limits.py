"""Big outputs: the page stays responsive, keeps a bounded number of lines, and a reload shows
the stored head and tail with the "N KB hidden" marker and a link to the full log."""
from __future__ import annotations

import time
import urllib.request
from typing import Any

import pytest

from browser_support import Server


def answers_while(page: Any, until: Any, timeout: float = 120) -> float:
    """The page answers a trivial page.evaluate while `until()` is false; its worst round trip
    (a main-thread stall), printed: how long is not a test's to bound on a shared machine."""
    worst = 0.0
    deadline = time.time() + timeout
    while not until() and time.time() < deadline:
        began = time.perf_counter()
        page.evaluate("1")
        worst = max(worst, time.perf_counter() - began)
        time.sleep(0.05)
    return worst


def check_big_output(page: Any, server: Server, open_notebook: Any, size: int) -> None:
    nb = server.notebook(f"big {size}", f"--script\nbig {size}\nprint 1")
    open_notebook(page, nb["id"])
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()
    # The first poll may come before the cell is even queued; wait for it to start and end.
    page.wait_for_function("() => document.querySelector('section.cell .line')", timeout=60000)
    worst = answers_while(page, lambda: cell.get_attribute("data-status") == "done", timeout=240)
    assert cell.get_attribute("data-status") == "done"
    print(f"longest stall of the page while {size:,} bytes came: {worst:.2f} s")
    page.wait_for_function("() => [...document.querySelectorAll('section.cell .line')].pop().textContent === 'line 1'")
    rendered = cell.locator("[data-role=log-lines] .line").count()
    assert rendered <= 400  # the page keeps a window of lines, not the whole log
    assert "earlier lines" in cell.locator("[data-action=log-more]").inner_text()

    # After a reload the stored copy is head + marker + tail, with the full log one click away.
    page.reload()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    marker = cell.locator("[data-role=hidden-summary]")
    marker.wait_for()
    assert "hidden" in marker.inner_text()
    assert cell.locator("[data-role=hidden-marker]").count() <= 1  # the inline marker, if in the window
    href = marker.locator("[data-role=download-log]").get_attribute("href")
    with urllib.request.urlopen(server.url + href, timeout=60) as resp:
        head = resp.read(1000)
    assert head.startswith(b"x" * 99 + b"\n")
    assert not page.js_errors


def test_5mb_output_keeps_the_page_responsive(page: Any, server: Server, open_notebook: Any) -> None:
    check_big_output(page, server, open_notebook, 5_000_000)


@pytest.mark.slow
def test_50mb_output_does_not_freeze_the_page(page: Any, server: Server, open_notebook: Any) -> None:
    check_big_output(page, server, open_notebook, 50_000_000)
