"""Docs that promise something checkable: the README settings table and the notebook format."""
from __future__ import annotations

import json
import re
from pathlib import Path

from console.config import SETTINGS
from console.notebook_file import parse_notebook

ROOT = Path(__file__).resolve().parents[1]


def _settings_table() -> list[list[str]]:
    """Rows of the first table under '## Settings' in README.md whose first cell is `CONSOLE_…`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Settings\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, "README.md has no '## Settings' section"
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"`CONSOLE_\w+`", cells[0]):
            rows.append(cells)
    return rows


def _shown_default(value: object) -> str:
    if value is None or value == []:
        return "`(empty)`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def test_readme_settings_table_matches_config() -> None:
    rows = _settings_table()
    assert [r[0] for r in rows] == [f"`{s.env}`" for s in SETTINGS], "names or order differ"
    for row, setting in zip(rows, SETTINGS, strict=True):
        assert row[1] == _shown_default(setting.default), f"{setting.env}: default"
        assert row[2] == setting.help, f"{setting.env}: help"


def test_notebook_format_example_parses() -> None:
    text = (ROOT / "docs" / "notebook-format.md").read_text(encoding="utf-8")
    example = re.search(r"```json\n(.*?)```", text, re.S)
    assert example, "docs/notebook-format.md shows a JSON example"
    nb = parse_notebook(json.loads(example.group(1)))
    assert {c["kind"] for c in nb["cells"]} == {"mlsql", "python", "markdown"}


def test_documented_api_routes_exist(app) -> None:  # type: ignore[no-untyped-def]
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/api/[^`]*)`", text, re.M)
    assert len(rows) > 20
    adapter = app.url_map.bind("localhost")
    for method, path in rows:
        path = re.sub(r"\[.*?\]|\?.*$", "", path)
        path = path.replace("<id>", "nb1").replace("<cell_id>", "c1").replace("<n>", "1").replace("<share_id>", "1")
        adapter.match(path, method=method)  # raises NotFound / MethodNotAllowed when undocumented


def test_the_job_body_documented_is_the_one_decoded() -> None:
    """docs/api.md's POST /api/jobs row names exactly the fields JobBody declares, in its order."""
    from console.server.jobs.jobs import JOB_BODY_FIELDS

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    row = re.search(r"^\| `POST /api/jobs` \| `\{([^}]*)\}`", text, re.M)
    assert row, "docs/api.md has a POST /api/jobs row with its body"
    documented = [name.strip().rstrip("?") for part in row.group(1).split(",") for name in part.split(r"\|")]
    assert tuple(documented) == JOB_BODY_FIELDS


def test_each_typed_body_is_documented_with_its_fields() -> None:
    """docs/api.md's row for each endpoint with a typed body (server/validate.py @body) lists exactly
    the dataclass's fields, `name?` for one that may be left out."""
    import importlib
    import pkgutil

    import console.server
    import console.server.api
    from console.server.validate import BODIES, documented_form

    # each endpoint module declares its bodies, in every wing of server/ (api/, jobs/, live/, sessions/)
    for module in pkgutil.walk_packages(console.server.__path__, "console.server."):
        importlib.import_module(module.name)
    assert {"POST /api/login", "POST /api/folders/shares", "PUT /api/notebooks/<id>/dashboard"} <= set(BODIES)
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert BODIES, "no typed body registered"
    for endpoint, cls in BODIES.items():
        row = re.search(r"^\| `" + re.escape(endpoint) + r"(?:\?[^`]*)?` \| `\{([^`]*)\}`", text, re.M)
        assert row, f"docs/api.md has no row for {endpoint} with its body"
        documented = sorted(_top_level_names(row.group(1)))
        assert documented == sorted(documented_form(cls)), f"{endpoint}: {documented} vs {documented_form(cls)}"


def _top_level_names(fields: str) -> list[str]:
    r"""`a, b?: [{kind, source}], c? \| d?` -> ["a", "b?", "c?", "d?"]: the names outside any nested shape."""
    names, depth, word = [], 0, ""
    for ch in fields + ",":
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            names.extend(name.strip() for name in word.split(":")[0].split(r"\|"))  # `cron? \| every_minutes?`
            word = ""
            continue
        if depth == 0 or ch not in "]}":
            word += ch if depth == 0 else ""
    return names
