"""The sources contract: SourceContext, SourceError, the Source base class and the format registry."""
from __future__ import annotations

from collections.abc import Mapping

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from console.errors import UserError

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads


class SourceError(UserError):
    """A user error in a load or save (missing path, bad option, mode conflict): shown as is.
    The session places it at the statement's format or path (kernel/errors.py data_error_position)."""

    kind = "data"

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass
class SourceContext:
    """What a read or write may depend on besides its arguments.

    data_dir: the server's data folder. Only its lake (<data_dir>/lake, where relative paths and
      delta table names resolve) and own_roots are reachable; the rest of it (the store, the
      secret key, other sessions' caches) is refused whatever data_roots say.
    connections: alias -> options recorded by `connect FORMAT where … as alias;`.
    data_roots: CONSOLE_DATA_ROOTS; when non-empty, file paths must resolve inside one of these
      folders, the lake or own_roots.
    own_roots: folders of the product that this session may always use (its cache).
    """

    data_dir: Path
    connections: dict[str, dict[str, str]] = field(default_factory=dict)
    data_roots: list[Path] = field(default_factory=list)
    own_roots: list[Path] = field(default_factory=list)
    # The session's ${…} variables as they are now: `load jsonStr.`var`` reads one's text.
    variables: Mapping[str, str] = field(default_factory=dict)

    @property
    def lake(self) -> Path:
        return Path(self.data_dir) / "lake"


MODES = {"overwrite": "overwrite", "append": "append", "errorifexists": "errorIfExists",
         "error": "errorIfExists", "default": "errorIfExists", "ignore": "ignore"}


def normalize_mode(mode: str) -> str:
    """Return the canonical save mode (overwrite|append|errorIfExists|ignore), case-insensitively."""
    canonical = MODES.get((mode or "").strip().lower())
    if canonical is None:
        raise SourceError(f"unknown save mode '{mode}'; use one of: overwrite, append, errorIfExists, ignore")
    return canonical


def exists_error(what: str) -> SourceError:
    return SourceError(f"{what} already exists; use `save overwrite` to replace it "
                       f"or `save append` to add to it")


def schema_text(schema: "pa.Schema") -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)


def schema_mismatch(what: str, existing: "pa.Schema", new: "pa.Schema", hint: str = "") -> SourceError:
    return SourceError(f"cannot append to {what}: the schemas differ\n"
                       f"  existing: {schema_text(existing)}\n"
                       f"  new:      {schema_text(new)}" + (f"\n{hint}" if hint else ""))


def option(options: dict[str, str], name: str, default: str | None = None) -> str | None:
    """An option by name, case-insensitively (MLSQL users write both inferSchema and inferschema)."""
    if name in options:
        return options[name]
    lowered = name.lower()
    for key, value in options.items():
        if key.lower() == lowered:
            return value
    return default


def bool_option(options: dict[str, str], name: str, default: bool) -> bool:
    value = option(options, name)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in {"true", "1", "yes"}:
        return True
    if text in {"false", "0", "no"}:
        return False
    raise SourceError(f"option {name} must be true or false, got '{value}'")


def int_option(options: dict[str, str], name: str) -> int | None:
    value = option(options, name)
    if value is None or str(value).strip() == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise SourceError(f"option {name} must be an integer, got '{value}'") from None


def char_option(options: dict[str, str], name: str, default: str) -> str:
    value = option(options, name, default)
    assert value is not None
    # Spark accepts "\t" written as two characters in a where clause.
    value = {"\\t": "\t", "\\n": "\n", "\\\\": "\\"}.get(value, value)
    if len(value) != 1:
        raise SourceError(f"option {name} must be a single character, got '{value}'")
    return value


class Source:
    """One format family member. Subclasses override read and, when writable, write."""

    name: str = ""

    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        raise SourceError(f"format {self.name} cannot be loaded")

    def dataset(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pads.Dataset | None":
        """A pyarrow dataset whose to_table() is exactly what read() gives, pinned to the files
        (or version) of this moment, so a load need not read the rows yet (console/kernel/catalog.py).
        None: this load is read at once (the format, or options such as a version range, need it)."""
        return None

    def write(self, ctx: SourceContext, table: "pa.Table", path: str, mode: str,
              options: dict[str, str], partition_by: list[str]) -> None:
        raise SourceError(f"format {self.name} cannot be saved")


_REGISTRY: dict[str, Source] = {}
S = TypeVar("S", bound=type[Source])


def register(*names: str) -> Callable[[S], S]:
    """Class decorator: one instance of the class serves every given format name."""

    def deco(cls: S) -> S:
        for name in names:
            instance = cls()
            instance.name = name
            _REGISTRY[name.lower()] = instance
        return cls

    return deco


def known_formats() -> list[str]:
    return sorted(s.name for s in _REGISTRY.values())


def get_source(fmt: str) -> Source:
    """The source registered under fmt (case-insensitive), or a SourceError listing known formats."""
    source = _REGISTRY.get((fmt or "").strip().lower())
    if source is None:
        raise SourceError(f"unknown format '{fmt}'; known formats: {', '.join(known_formats())}")
    return source
