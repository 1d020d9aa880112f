"""Byzer's own words for completion: statements and commands with their docs, `!command`
subcommands, algorithms and extensions after `train/predict/run/register … as`, their `where`
parameters (`fitParam.0.maxDepth`), and lake tables and paths inside ``load FORMAT.` ``.

Algorithms, extensions and parameters come from the catalog `!show et/<Name>` reads
(extensions.catalog); command docs from the command registry. completion.py asks these first.
"""
from __future__ import annotations

import re
from typing import Any

from console.sources.lake import children, delta_tables

Item = dict[str, str]
DOCS = "docs/language.md"
# One line per statement, shown beside its completion with the section of the language doc.
STATEMENT_DOCS = {
    "load": ("load FORMAT.`path` [where k=\"v\" and …] as t: read a table", "load"),
    "select": ("select … as t: SQL over the session's tables; the last word names the result", "select"),
    "save": ("save [overwrite|append|errorIfExists|ignore] t as FORMAT.`path` [where …]", "save"),
    "set": ("set name = value [where type=\"text|sql|shell|conf|defaultParam\"]: a variable", "set"),
    "connect": ("connect FORMAT where … as alias: options for load/save FORMAT.`alias.table`", "connect"),
    "run": ("run t as Extension.`` where … as out: an extension (Ray, DataSummary, …)",
            "machine-learning-and-extensions"),
    "train": ("train t as Algorithm.`path` where fitParam.0.… as result: fit and save a model",
              "machine-learning-and-extensions"),
    "predict": ("predict t as Algorithm.`path` as out: score a table with a saved model",
                "machine-learning-and-extensions"),
    "register": ("register Algorithm.`path` as fn: a saved model as a SQL function", "register"),
    "include": ("include notebook.`name[#cell]`: run another notebook's cells here", "include"),
    "with": ("with … select …: a select with common table expressions", "select"),
}
ML_HEADS = ("train", "predict", "run", "register")
# `!python env "K=V"` / `!python conf "k=v"`; the others' subcommands come from their help tables.
PYTHON_SUBCOMMANDS = (("env", "a shell prefix or environment variable for Python workers"),
                      ("conf", "a setting of Python cells: schema, dataMode, runIn, pythonExec …"))


def _info(doc: str, anchor: str) -> str:
    return f"{doc}\n{DOCS}#{anchor}"


def statement_items(names: tuple[str, ...]) -> list[Item]:
    items = []
    for name in names:
        item = {"label": name, "type": "keyword", "detail": "statement"}
        if name in STATEMENT_DOCS:
            item["info"] = _info(*STATEMENT_DOCS[name])
        items.append(item)
    return items


def command_items(names: tuple[str, ...]) -> list[Item]:
    """`!name` items with the registry's one-line doc (unknown to it: a plain keyword)."""
    from console.kernel.commands.base import COMMANDS

    items = []
    for label in names:
        spec = COMMANDS.get(label[1:].lower())
        item = {"label": label, "type": "keyword", "detail": "command"}
        if spec is not None:
            item["info"] = _info(f"{spec.doc}\nexample: {spec.example}", "commands")
        items.append(item)
    return items


def subcommand_items(head: str) -> list[Item]:
    """What follows `!delta`, `!fs`, `!show`, `!python`: the commands' own help tables."""
    name = head[1:].lower()
    pairs: tuple[tuple[str, str], ...] = ()
    if name == "delta":
        from console.kernel.commands import delta

        pairs = delta._HELP  # the same room (kernel/): the table `!delta help` prints
    elif name in ("fs", "hdfs"):
        from console.kernel.commands import fs

        pairs = fs._HELP
    elif name == "show":
        from console.kernel.commands.show import SHOW_TOPICS

        pairs = tuple((t, "!show " + t) for t in SHOW_TOPICS if "<" not in t)
    elif name == "python":
        pairs = PYTHON_SUBCOMMANDS
    seen: dict[str, Item] = {}
    for form, doc in pairs:
        word = form.split()[0]
        seen.setdefault(word, {"label": word, "type": "keyword", "detail": f"!{name} {form}",
                               "info": _info(doc, "commands")})
    return list(seen.values())


def describe(word: str) -> str | None:
    """The hover doc of a statement, `!command`, algorithm or extension (None for other words)."""
    lowered = word.lower()
    if lowered in STATEMENT_DOCS:
        return _info(*STATEMENT_DOCS[lowered])
    if word.startswith("!"):
        from console.kernel.commands.base import COMMANDS

        spec = COMMANDS.get(lowered[1:])
        return _info(f"!{spec.name}: {spec.doc}\nexample: {spec.example}", "commands") if spec else None
    entry = next((e for e in _catalog() if str(e["name"]).lower() == lowered), None)
    if entry is None:
        return None
    params = ", ".join(str(p["name"]) for p in entry["params"][:12])
    return _info(f"{entry['name']} ({entry['kind']}): {entry['doc']}\nparameters: {params}",
                 "machine-learning-and-extensions")


def _catalog() -> list[dict[str, Any]]:
    from console.kernel import extensions

    return extensions.catalog()


def module_items(head: str) -> list[Item]:
    """After `train/predict/register … as` the algorithms; after `run … as` the extensions."""
    want = "extension" if head == "run" else "algorithm"
    return [{"label": str(e["name"]), "type": "class", "detail": str(e["kind"]),
             "info": _info(str(e["doc"]), "machine-learning-and-extensions")}
            for e in _catalog() if e["kind"] == want or head == "register" and e["name"] == "Ray"]


def module_of(statement: str) -> str | None:
    """`train t as RandomForest.`p` where …` -> RandomForest; `register RandomForest.`p`` too."""
    m = re.search(r"\b(?:as|register)\s+(\w+)\s*\.", statement, re.I)
    return m.group(1) if m else None


def param_items(name: str | None, typed: str) -> list[Item]:
    """The `where` parameters of an algorithm or extension; `fitParam.N.<param>` for an algorithm's own."""
    entry = next((e for e in _catalog() if name and str(e["name"]).lower() == name.lower()), None)
    if entry is None:
        return []
    params = [(str(p["name"]), str(p.get("doc", ""))) for p in entry["params"]]
    items: list[Item] = []
    group = re.match(r"fitParam\.(\d+)\.", typed, re.I)
    groups = [group.group(1)] if group else ["0"]
    for pname, doc in params:
        if pname.startswith("fitParam.N."):
            continue
        if entry["kind"] == "algorithm" and pname not in _common():
            for g in groups:
                items.append({"label": f"fitParam.{g}.{pname}", "type": "property",
                              "detail": f"{entry['name']} parameter", "info": doc})
        if not group:
            items.append({"label": pname, "type": "property", "detail": f"{entry['name']} option", "info": doc})
    return items


def _common() -> set[str]:
    from console.kernel.ml.estimators import COMMON

    return set(COMMON)


def lake_items(lake: Any, fmt: str, partial: str) -> list[Item]:
    """Inside ``load FORMAT.` ``: delta tables (`db.table`) for delta, else the lake's files and folders."""
    if fmt.lower() == "delta" and "/" not in partial:
        return [{"label": e.name, "type": "class", "detail": "delta table in the lake"} for e in delta_tables(lake)]
    return [{"label": e.name, "type": "text", "detail": f"{e.kind} in the lake"} for e in children(lake, partial)]
