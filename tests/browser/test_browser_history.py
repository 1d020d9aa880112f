"""History in Chromium: "Save version…" names the current content, the History panel compares two
old revisions with cells named by position and first line (not by id), and a restore makes a new
revision that the page shows."""
from __future__ import annotations

from typing import Any

from browser_support import Server, reveal


def test_save_a_version_compare_two_old_revisions_and_restore(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("history", "select 1 as a;\nselect 2 as b;", ("markdown", "# notes"))
    c0 = nb["cells"][0]["id"]
    url = f"/notebooks/{nb['id']}"
    server.api("PATCH", f"{url}/cells/{c0}", {"base_revision": 1, "source": "select 1 as a;\nselect 3 as b;"})
    server.api("POST", f"{url}/cells", {"base_revision": 2, "kind": "python", "source": "print('top')", "position": 0})

    open_notebook(page, nb["id"])
    reveal(page, "[data-sec-action=save-version]").click()  # in the toolbar's More menu
    page.fill("[data-role=dialog-input]", "first draft")
    page.click("[data-role=dialog-ok]")
    page.wait_for_function(f"""async () => {{
        const r = await fetch('/api{url}/revisions');
        const {{ revisions }} = await r.json();
        return revisions[0].label === 'first draft';
    }}""")

    page.click("[data-sec-action=history]")
    panel = page.locator("[data-role=revisions-panel]")
    first = panel.locator("[data-role=revisions] li").first
    assert first.inner_text().startswith("#3 · first draft · admin")
    # Two old revisions: 1 and 2, neither of them the current content.
    panel.locator("[data-role=diff-from]").select_option("1")
    panel.locator("[data-role=diff-to]").select_option("2")
    panel.locator("[data-sec-action=compare]").click()
    heading = panel.locator("[data-role=diff-cell]").first
    heading.wait_for()
    assert heading.inner_text() == "cell 1 (mlsql): select 1 as a; — changed"
    assert c0 not in panel.locator("[data-role=revision-diff]").inner_text()  # named by place, not id
    assert "+select 3 as b;" in panel.locator("pre.diff").first.inner_text()
    # 1 -> 3: the Python cell came in at the top, the edited one moved down.
    panel.locator("[data-role=diff-to]").select_option("3")
    panel.locator("[data-sec-action=compare]").click()
    panel.locator("[data-role=diff-cell][data-status=added]").wait_for()
    texts = panel.locator("[data-role=diff-cell]").all_inner_texts()
    assert texts == ["cell 1 (python): print('top') — added",
                     "cell 2 (mlsql): select 1 as a; — changed (was cell 1)"], texts

    # Revision 1 against the current content, then restore it: a new revision, history kept.
    panel.locator("[data-sec-action=show-revision][data-number='1']").click()
    panel.locator("[data-sec-action=restore]").click()
    page.wait_for_function("() => !document.querySelector('[data-role=revisions-panel]')")
    page.wait_for_function(f"""async () => {{
        const r = await fetch('/api{url}');
        const nb = await r.json();
        return nb.revision === 4 && nb.cells.length === 2;
    }}""")
    numbers = [r["number"] for r in server.api("GET", f"{url}/revisions")["revisions"]]
    assert numbers == [4, 3, 2, 1]
    assert not page.js_errors
