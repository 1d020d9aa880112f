"""docs/protocol.md lists every message of every hop (console/wire/) with exactly its fields."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path

import console.wire
from console.wire.codec import message_types

for _module in pkgutil.iter_modules(console.wire.__path__):  # each hop's vocabulary registers itself
    importlib.import_module(f"console.wire.{_module.name}")

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def documented() -> dict[str, set[str]]:
    """type -> field names, from every table whose header starts `| type |`."""
    found: dict[str, set[str]] = {}
    in_table = False
    for line in DOC.read_text().splitlines():
        if line.startswith("| type |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        match = re.fullmatch(r"`([a-z_]+)`", cells[0]) if in_table else None
        if match:
            assert match.group(1) not in found, f"{match.group(1)} is documented twice"
            found[match.group(1)] = set(re.findall(r"`([a-z_]+)`", cells[1]))
    return found


def test_every_message_is_documented_with_its_fields() -> None:
    docs = documented()
    code = {name: {f.name for f in dataclasses.fields(cls)} for name, cls in message_types().items()}
    assert sorted(docs) == sorted(code), "docs/protocol.md and console/wire/ list different messages"
    for name, fields in code.items():
        assert docs[name] == fields, f"{name}: documented {sorted(docs[name])}, code has {sorted(fields)}"


def test_every_message_has_a_docstring() -> None:
    for name, cls in message_types().items():
        assert cls.__doc__ and cls.__doc__.strip(), f"{name} needs a docstring"


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end >= 0 else len(text)]


def test_the_browser_tables_are_the_browser_vocabulary() -> None:
    from console.wire.browser import COMMANDS, EVENTS

    for title, classes in (("## Commands (browser → server)", list(COMMANDS.types.values())),
                           ("## Events (server → browser)", list(EVENTS))):
        cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
                 for line in _section(title).splitlines() if line.startswith("| `")]
        rows = {c[0].strip("`"): set(re.findall(r"`([a-z_]+)`", c[1])) for c in cells}
        code = {cls.type: {f.name for f in dataclasses.fields(cls)} for cls in classes}
        assert rows == code, f"{title}: docs {rows}, code {code}"
