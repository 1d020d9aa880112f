"""Where a `select` runs, and in which dialect.

- `duckdb.py`: Spark SQL -> DuckDB with Spark's answers (the local engine, in the kernel).
- `daft.py`: Spark SQL -> Daft SQL, an allowlist: what it cannot say with Spark's meaning fails
  by name (the cluster engine).
- `cluster.py`: the kernel's Daft driver on the session's Ray cluster (a child process); a
  cluster select's result stays there as files (catalog.DistributedTable).
- `distributed.py`: saving a distributed table from the cluster, and Python cells' direct reads of it.
- `choice.py`: `sql.engine` (auto, local, cluster) and what `auto` decides.
"""
