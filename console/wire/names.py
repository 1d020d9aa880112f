"""The browser vocabulary's names for the frontend: frontend/src/wire-names.js is made from here.

The page dispatches on event types and sends commands by name; spelled by hand in JavaScript they
drifted from console/wire/browser.py with nothing to say so. `python -m console.wire.names` writes
the module; tests/test_wire_names.py fails when the committed file and the vocabulary differ.
"""
from __future__ import annotations

import sys
from pathlib import Path

from console.wire.browser import COMMANDS, EVENTS

JS_MODULE = Path(__file__).resolve().parents[2] / "frontend" / "src" / "wire-names.js"


def _table(name: str, types: list[str]) -> str:
    rows = "".join(f'  {t.upper()}: "{t}",\n' for t in sorted(types))
    return f"export const {name} = Object.freeze({{\n{rows}}});\n"


def js_module() -> str:
    """The module's whole text: EVENT (server -> page) and COMMAND (page -> server) by name."""
    return ("// Made by `python -m console.wire.names` from console/wire/browser.py: do not edit.\n"
            "// The events the server sends the page (EVENT) and the commands the page sends (COMMAND);\n"
            "// tests/test_wire_names.py fails when this file and the server's vocabulary differ.\n\n"
            + _table("EVENT", [e.type for e in EVENTS]) + "\n" + _table("COMMAND", list(COMMANDS.types)))


if __name__ == "__main__":
    JS_MODULE.write_text(js_module(), encoding="utf-8")
    print(f"wrote {JS_MODULE}", file=sys.stderr)
