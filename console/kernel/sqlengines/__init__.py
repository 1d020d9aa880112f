"""Where a `select` runs, and in which dialect.

- `duckdb.py`: Spark SQL -> DuckDB with Spark's answers (the local engine, in the kernel).
- `daft.py`: Spark SQL -> Daft SQL, an allowlist: what it cannot say with Spark's meaning fails
  by name (the cluster engine).
- `cluster.py`: the kernel's Daft driver on the session's Ray cluster (a child process).
- `choice.py`: `sql.engine` (auto, local, cluster) and what `auto` decides.
"""
