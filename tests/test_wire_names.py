"""The page's names for events and commands are the server's: frontend/src/wire-names.js is made
from console/wire/browser.py (python -m console.wire.names), and no page module spells one by hand."""
from __future__ import annotations

import re
from pathlib import Path

from console.wire.browser import COMMANDS, EVENTS
from console.wire.names import JS_MODULE, js_module

SRC = Path(__file__).resolve().parent.parent / "frontend" / "src"


def test_the_frontends_names_are_made_from_the_vocabulary() -> None:
    assert JS_MODULE.read_text(encoding="utf-8") == js_module(), \
        "frontend/src/wire-names.js is stale: run python -m console.wire.names"


def test_no_page_module_dispatches_on_or_sends_a_name_of_its_own() -> None:
    events, commands = "|".join(sorted(e.type for e in EVENTS)), "|".join(sorted(COMMANDS.types))
    # where the page dispatches on an event, or sends a command (a button's action is neither)
    spelled = re.compile(rf'(?:type === |case )"({events})"|send\(\s*"({commands})"')
    found = [f"{p.name}:{n}: {line.strip()}" for p in sorted(SRC.glob("*.js")) if p != JS_MODULE
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if spelled.search(line)]
    assert not found, "names spelled by hand (use EVENT/COMMAND from wire-names.js):\n" + "\n".join(found)
