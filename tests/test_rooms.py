"""The rooms of console/ keep their shape: no import circle, no private names across rooms, and
imports that follow the dependency order of docs/architecture.md (its "Rooms" section).

A room is a folder under console/ (`kernel`, `server`, …) or a top-level module (`config`,
`ids`, …). Imports are read with ast: module-level and function-local ones, relative ones
resolved. Imports under `if TYPE_CHECKING:` count for circles and private names (a module typed
against another depends on it as much as one calling it), but not for the rooms' order: a seam's
Protocol may name the records of the room it types without loading that room at run time.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# coltypes (stdlib only): Spark's names for column types, which the kernel, the server and the
# data panel all show, so that one vocabulary is spelled in one place (issue 30).
# clock (stdlib only): the time every timed part reads, so a test can move it (issue 33).
# errors (UserError): the one shape of a user's error, raised by lang, sources and the kernel (issue 33).
# envlayers: the environment layers' folder and their uv builds, which the kernel resolves and uses and the
# server builds, seals and prunes (the server may not import the kernel).
EVERYWHERE = {"config", "ids", "roles", "protocols", "wire", "coltypes", "clock", "errors", "envlayers"}
# Which rooms each room may import at run time. The kernel process's rooms (lang, sources,
# kernel, worker, actors) and the server process's rooms (store, outputs, server) meet only in
# the rooms used everywhere (and cluster, the Ray head both sides start); nothing but the
# command line imports server/.
MAY_IMPORT: dict[str, set[str]] = {
    "__init__": set(),
    "ids": set(),
    "config": set(),
    "roles": set(),
    "coltypes": set(),
    "clock": set(),
    "errors": {"wire"},  # wire/cell.py: the shape of a failure
    "envlayers": {"config", "errors"},  # parse_size for the layer size limit; EnvError is a UserError
    "wire": {"ids"},
    "protocols": {"config", "ids", "wire"},
    "lang": EVERYWHERE,
    "sources": EVERYWHERE,
    "cluster": EVERYWHERE,
    "actors": EVERYWHERE | {"sources"},
    "worker": EVERYWHERE | {"actors", "sources"},
    "kernel": EVERYWHERE | {"lang", "sources", "cluster", "worker", "actors"},
    "store": EVERYWHERE,
    "outputs": EVERYWHERE | {"store"},
    "notebook_file": EVERYWHERE,
    "interchange": EVERYWHERE | {"notebook_file"},
    "demo": EVERYWHERE | {"notebook_file"},
    # lang (stdlib only): the server reads a notebook's parameters with the parser (lang/params.py);
    # sources: the data panel (server/api/lake.py) lists the lake by the names load uses (sources/lake.py)
    "server": EVERYWHERE | {"store", "outputs", "cluster", "notebook_file", "interchange", "lang", "sources"},
    "cli": EVERYWHERE | {"kernel", "store", "server", "demo"},
    "__main__": {"cli"},
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (a package's __init__ where a name is imported from it)
    names: tuple[str, ...]  # names taken from target by `from … import`; () for `import x`
    line: int
    type_only: bool
    # a package's __init__ that an import of one of its modules runs first (counted in circles only:
    # the import of the module itself is the one the rooms' order and private names judge)
    implicit: bool = False


def modules(package: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (a package is its __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` bodies."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def imports(package: Path) -> list[Import]:
    """Every import of one package module by another, wherever it stands in the file."""
    mods = modules(package)
    found = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        type_only = _type_checking_nodes(tree)
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(tree):
            targets: list[tuple[str, tuple[str, ...]]]
            if isinstance(node, ast.Import):
                targets = [(a.name, ()) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` a name.
                targets = [(f"{base}.{a.name}", ()) if f"{base}.{a.name}" in mods else (base, (a.name,))
                           for a in node.names]
            else:
                continue
            for target, names in targets:
                if target in mods:
                    found.append(Import(name, target, names, node.lineno, id(node) in type_only))
                # Importing a.b.c runs the __init__ of a.b first, and whatever that imports: a
                # package outside the importer's own runs its own imports as part of this one.
                ancestors = {".".join(here[:i]) for i in range(1, len(here) + 1)}
                parts = target.split(".")
                for i in range(1, len(parts)):
                    package = ".".join(parts[:i])
                    if package in mods and package not in ancestors and package != name:
                        found.append(Import(name, package, (), node.lineno, id(node) in type_only, implicit=True))
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def cycles(edges: list[Import]) -> list[str]:
    """One shortest circle per strongly connected group of modules, as a chain `a -> b -> a`
    (and the group's other members, which sit on further circles through the same modules)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph[v]:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    chains: list[str] = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        queue = [start]
        while queue:  # breadth first, inside the group, back to start
            v = queue.pop(0)
            nxt = sorted(w for w in graph[v] if w in group)
            if start in nxt:
                chain = paths[v] + [start]
                others = sorted(group - set(chain))
                chains.append(" -> ".join(chain) + (f" (and {', '.join(others)})" if others else ""))
                break
            for w in nxt:
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
    return sorted(chains)


def private_uses(package: Path, edges: list[Import]) -> list[str]:
    """Private modules or names (leading underscore) that one room takes from another."""
    found = []
    for e in edges:
        if room(e.source) == room(e.target) or e.implicit:
            continue
        if any(_private(p) for p in e.target.split(".")):
            found.append(f"{e.source}:{e.line} imports the private module {e.target}")
        found += [f"{e.source}:{e.line} imports {e.target}.{n}" for n in e.names if _private(n)]
    # module._name, where module was imported from another room
    mods = modules(package)
    for name, path in mods.items():
        aliases: dict[str, str] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in mods})
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names
                                if f"{node.module}.{a.name}" in mods})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                    and node.value.id in aliases and room(aliases[node.value.id]) != room(name)):
                found.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return sorted(found)


def order_breaks(edges: list[Import]) -> list[str]:
    """Run-time imports of a room that MAY_IMPORT does not allow it."""
    found = []
    for e in edges:
        src, dst = room(e.source), room(e.target)
        if e.type_only or e.implicit or src == dst:
            continue
        if src not in MAY_IMPORT:
            found.append(f"{e.source}: room {src!r} has no place in MAY_IMPORT (tests/test_rooms.py)")
        elif dst not in MAY_IMPORT[src]:
            found.append(f"{e.source}:{e.line} imports {e.target} (room {src!r} may import only "
                         f"{', '.join(sorted(MAY_IMPORT[src])) or 'nothing'})")
    return sorted(set(found))


CONSOLE = ROOT / "console"


def test_no_import_circle() -> None:
    found = cycles(imports(CONSOLE))
    assert not found, "import circles:\n" + "\n".join(found)


def test_no_room_uses_another_rooms_private_names() -> None:
    found = private_uses(CONSOLE, imports(CONSOLE))
    assert not found, "private names used across rooms:\n" + "\n".join(found)


def test_rooms_import_in_dependency_order() -> None:
    found = order_breaks(imports(CONSOLE))
    assert not found, "imports against the rooms' order:\n" + "\n".join(found)


# The kernel process's rooms speak their own hops' vocabularies (wire/cell.py, wire/kernel.py,
# wire/worker.py): the browser's events are the server's to make (issue 33 item 4).
KERNEL_SIDE = ("lang", "sources", "kernel", "worker", "actors")


def browser_words_in_the_kernel(edges: list[Import]) -> list[str]:
    return sorted(f"{e.source}:{e.line} imports {e.target}" for e in edges
                  if room(e.source) in KERNEL_SIDE and e.target == "console.wire.browser")


def test_the_kernel_side_never_speaks_the_browsers_vocabulary() -> None:
    found = browser_words_in_the_kernel(imports(CONSOLE))
    assert not found, "kernel-side modules importing wire/browser.py:\n" + "\n".join(found)


def test_order_is_the_architecture_tables() -> None:
    """MAY_IMPORT lets a room import only rooms above it (or in its row) in docs/architecture.md's rooms table."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Rooms and their contracts", 1)[1]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    rank = {name: i for i, row in enumerate(rows) for name in re.findall(r"`(\w+)(?:/|\.py)`", row)}
    assert set(rank) == set(MAY_IMPORT) - {"__init__", "__main__"}, "the table and MAY_IMPORT name other rooms"
    upward = [f"{src} -> {dst}" for src, dsts in MAY_IMPORT.items() if src in rank
              for dst in dsts if rank[dst] > rank[src]]
    assert not upward, "MAY_IMPORT allows imports of rooms below in the table: " + ", ".join(upward)


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """The walker finds relative, function-local and aliased imports, and each check reports."""
    pkg = tmp_path / "console"
    (pkg / "kernel").mkdir(parents=True)
    (pkg / "server").mkdir()
    files = {
        "__init__.py": "",
        "kernel/__init__.py": "",
        "kernel/a.py": "from . import b\n",
        "kernel/b.py": "def f():\n    from console.kernel.a import x\n",
        "kernel/_hidden.py": "",
        "server/__init__.py": "",
        "server/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from console.kernel import _hidden\n"
                       "import console.kernel.b as kb\nkb._g()\nfrom ..kernel.b import _h\n",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text, encoding="utf-8")
    edges = imports(pkg)
    assert cycles(edges) == ["console.kernel.a -> console.kernel.b -> console.kernel.a"]
    # Importing a module of another package runs that package's __init__, and what it imports.
    (pkg / "store").mkdir()
    (pkg / "store/__init__.py").write_text("from console.server import c\n", encoding="utf-8")
    (pkg / "store/d.py").write_text("", encoding="utf-8")
    (pkg / "server/e.py").write_text("from console.store import d\n", encoding="utf-8")
    (pkg / "server/c.py").write_text(files["server/c.py"] + "from console.server import e\n", encoding="utf-8")
    assert "console.server.c -> console.server.e -> console.store -> console.server.c" in cycles(imports(pkg))
    for rel in ("store/__init__.py", "store/d.py", "server/e.py"):
        (pkg / rel).unlink()
    (pkg / "store").rmdir()
    (pkg / "server/c.py").write_text(files["server/c.py"], encoding="utf-8")
    assert private_uses(pkg, edges) == [
        "console.server.c:3 imports the private module console.kernel._hidden",
        "console.server.c:5 uses console.kernel.b._g",
        "console.server.c:6 imports console.kernel.b._h",
    ]
    assert order_breaks(edges) == [
        "console.server.c:4 imports console.kernel.b (room 'server' may import only " + ", ".join(
            sorted(MAY_IMPORT["server"])) + ")",
        "console.server.c:6 imports console.kernel.b (room 'server' may import only " + ", ".join(
            sorted(MAY_IMPORT["server"])) + ")",
    ]
    (pkg / "wire").mkdir()
    speaking = {"wire/__init__.py": "", "wire/browser.py": "", "kernel/c.py": "from console.wire.browser import X\n"}
    for rel, text in speaking.items():
        (pkg / rel).write_text(text, encoding="utf-8")
    assert browser_words_in_the_kernel(imports(pkg)) == ["console.kernel.c:1 imports console.wire.browser"]
    # And on the real tree the walker sees the command line starting the server.
    assert any(e.source == "console.cli" and room(e.target) == "server" for e in imports(CONSOLE))
