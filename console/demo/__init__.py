"""The demo notebook: the seed tutorial's distributed-MNIST notebook, written into the store once.

seed_notebook.json holds its cells in the product's file format; only the PYTHON_ENV line differs
from the tutorial (':' = nothing to activate: the console's own Python runs the cell).

Runs in: the server and the CLI (`mlsql-console demo`, `datasets`).
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from console.notebook_file import parse_notebook

DEMO_DATA = Path("/tmp/mnist")  # the path the tutorial loads, kept unchanged


def seed_notebook() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("seed_notebook.json").read_text(encoding="utf-8")
    return parse_notebook(json.loads(text))


def install_demo(store: Any, owner_id: int | None) -> tuple[str, bool]:
    """Import the demo notebook unless one with its name exists; returns (notebook id, created)."""
    nb = seed_notebook()
    existing = store.find_notebooks(name=nb["name"])
    if existing:
        return existing[0].id, False
    folder = nb["metadata"].get("folder", "/")
    rec = store.create_notebook(nb["name"], folder, owner_id=owner_id, cells=nb["cells"])
    return rec.id, True
