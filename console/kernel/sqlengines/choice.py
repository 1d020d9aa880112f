"""Which engine runs a select: `set sql.engine = "auto|local|cluster" where type="conf";`.

- local: DuckDB in the kernel (spills to the session's cache folder past the session's memory).
- cluster: Daft on the session's Ray cluster, always (tests, and users who know).
- auto (CONSOLE_SQL_ENGINE's default): the cluster only when the statement's inputs are big
  (their decoded size, from the parquet footers, at least `sql.clusterBytes`, by default a
  quarter of the session's memory, CONSOLE_SESSION_MEMORY) AND the cluster has two or more nodes with CPUs; on one
  machine DuckDB is about 10x faster per query, so everything else stays local. The sizes are
  looked at first: a small statement never makes the kernel connect to Ray. A statement that
  reads an earlier cluster result (a distributed table, whose rows are not in the kernel) runs
  on the cluster whatever its size (router.py).
There is no silent fallback: a big statement in auto that the cluster cannot run fails with the
construct's name and the setting that runs it locally.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.config import SQL_ENGINES

ENGINE_KEY = "sql.engine"
CLUSTER_BYTES_KEY = "sql.clusterBytes"
KEYS = (ENGINE_KEY, CLUSTER_BYTES_KEY)


def session_memory_bytes(cfg: Any) -> int:
    """The session's memory: CONSOLE_SESSION_MEMORY (its kernel and Python workers together)."""
    from console.cluster.limits import session_memory

    return session_memory(cfg)


def duckdb_memory_bytes(cfg: Any) -> int:
    """DuckDB's share: half the session's, the rest left to the kernel's tables and the Python
    workers that count against the same limit; DuckDB spills past it to the session's cache."""
    return session_memory_bytes(cfg) // 2


def check_conf(key: str, value: str) -> str | None:
    """Why a `set sql.… where type="conf"` value is wrong (None when it is fine)."""
    if key == ENGINE_KEY and value.strip().lower() not in SQL_ENGINES:
        return f"sql.engine must be one of {', '.join(SQL_ENGINES)}, not {value!r}"
    if key == CLUSTER_BYTES_KEY and not value.strip().isdigit():
        return f"sql.clusterBytes must be a number of bytes, not {value!r}"
    if key.startswith("sql.") and key not in KEYS:
        return f"unknown setting {key}; the SQL settings are {', '.join(KEYS)}"
    return None


def engine(conf: Mapping[str, str], cfg: Any) -> str:
    return (conf.get(ENGINE_KEY) or cfg.get("SQL_ENGINE") or "auto").strip().lower()


def cluster_bytes(conf: Mapping[str, str], cfg: Any) -> int:
    value = conf.get(CLUSTER_BYTES_KEY, "").strip()
    return int(value) if value.isdigit() else session_memory_bytes(cfg) // 4


def input_bytes(catalog: Any, refs: tuple[str, ...]) -> int:
    """The decoded size of the tables a select reads (footers for loaded files, nbytes in memory)."""
    from console.kernel.catalog import LazyTable

    total = 0
    for ref in refs:
        entry = catalog.entry(ref) if hasattr(catalog, "entry") else catalog.get(ref)
        if isinstance(entry, LazyTable):
            total += entry.table().nbytes if entry.loaded else entry.nbytes
        elif entry is not None:
            total += int(entry.nbytes)
    return total
