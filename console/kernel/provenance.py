"""Where each catalog table's rows came from, so a save can say what its table was made of.

A run's manifest names what each statement read and wrote (console/kernel/manifest.py), but a
table is often written cells after the loads it came from: the seed loads `/tmp/mnist` in cell 1,
trains on it in cell 3 (`--%output=mnist_model` under `dataMode=model`) and saves the model in
cell 4. So the session keeps, for each catalog name, the loads its rows derive from (followed
through selects, Python cells, extensions and `train`) and, for a model, the run that trained it.
A save then writes them into its entry (`sources`, `model`, `trained_by`), and the server can name
a model's training run and the table versions it read.

The derivation is by name, as the statements say: a select derives from the tables its SQL names,
a Python cell from its input (and model/conf tables), anything else from its input table. It is
what the notebook's text says, not a trace of the bytes: a Python cell that reads a file itself
is not seen (its own loads are not statements).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from console import lang
from console.wire.kernel import SOURCES_PER_WRITE, ManifestEntry, SourceRef

MAX_SOURCES = 64  # inputs one catalog name keeps (a long chain of unions stays bounded)


@dataclass(frozen=True)
class Derivation:
    """The loads a catalog table derives from; a model's training run."""

    sources: tuple[SourceRef, ...] = ()
    dropped: int = 0  # sources past MAX_SOURCES
    model: bool = False
    trained_by: str = ""


def source_of(entry: ManifestEntry, run_id: str) -> SourceRef:
    """A load's manifest entry as an input of whatever is made from it."""
    return SourceRef(entry.format, entry.path[:1024], entry.table, entry.version, entry.digest, run_id[:64])


def merge(parts: Iterable[Derivation], loaded: Iterable[SourceRef] = ()) -> Derivation:
    """The union of the parts' sources (each once, in order) and the loads made now; a model only
    when exactly one part is (a select over one model table stays that model; a join of two is data)."""
    seen: dict[tuple[str, str, int | None], SourceRef] = {}
    dropped = 0
    models = []
    for part in parts:
        dropped += part.dropped
        if part.model:
            models.append(part.trained_by)
        for s in part.sources:
            seen.setdefault((s.format, s.path, s.version), s)
    for s in loaded:
        seen.setdefault((s.format, s.path, s.version), s)
    sources = list(seen.values())
    dropped += max(0, len(sources) - MAX_SOURCES)
    one_model = len(models) == 1
    return Derivation(tuple(sources[:MAX_SOURCES]), dropped, one_model, models[0] if one_model else "")


def inputs_of(stmt: lang.Statement, sql_refs: tuple[str, ...] = ()) -> list[str]:
    """The catalog names a statement reads (a select's come from its SQL: `sql_refs`)."""
    if isinstance(stmt, lang.Select):
        return list(sql_refs)
    if isinstance(stmt, lang.Run):
        names = [stmt.options.get("inputTable") or stmt.input]
        names += [stmt.options.get(k, "") for k in ("model", "confTable", "evaluateTable")]
        return [n for n in names if n and n.lower() != "command"]
    return []


def lookup(derived: Mapping[str, Derivation], names: Iterable[str]) -> list[Derivation]:
    return [d for d in (derived.get(n.lower()) for n in names) if d is not None]


def on_write(entry: ManifestEntry, d: Derivation | None) -> ManifestEntry:
    """A save's entry with what its table was made of."""
    if d is None:
        return entry
    return replace(entry, sources=list(d.sources[:SOURCES_PER_WRITE]),
                   sources_dropped=min(2**31, d.dropped + max(0, len(d.sources) - SOURCES_PER_WRITE)),
                   model=d.model, trained_by=d.trained_by)


__all__ = ["Derivation", "MAX_SOURCES", "inputs_of", "lookup", "merge", "on_write", "source_of"]
