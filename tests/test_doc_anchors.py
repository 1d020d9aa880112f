"""The sections completion and hover docs link to (console/kernel/completion_byzer.py) are headings
of docs/language.md, under the anchors the docs page gives them (frontend/src/doclinks.js slugify)."""
from __future__ import annotations

import re
from pathlib import Path

from console.kernel import completion_byzer

LANGUAGE = Path(__file__).resolve().parents[1] / "docs" / "language.md"


def slugify(text: str) -> str:
    """doclinks.js's slugify: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text.strip().lower()))


def test_every_linked_section_is_a_heading_of_the_language_doc() -> None:
    assert completion_byzer.DOCS == "docs/language.md"
    text = LANGUAGE.read_text(encoding="utf-8")
    anchors = {slugify(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}
    linked = {anchor for _, anchor in completion_byzer.STATEMENT_DOCS.values()}
    linked |= set(re.findall(r"_info\([^)]*?\"([\w-]+)\"\)", Path(completion_byzer.__file__).read_text()))
    assert {"commands", "machine-learning-and-extensions", "load"} <= linked
    assert linked <= anchors, sorted(linked - anchors)
    assert slugify("run … as Ray") == "run--as-ray"  # the same as the node test of doclinks.js
