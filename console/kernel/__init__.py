"""The kernel process: one per (user, notebook) session. Runs in: the kernel process.

`main` is its entry point (`python -m console.kernel.main`); `session.Session` is the engine
(catalog, DuckDB, statements); `python_runtime.PythonRuntime` drives the cell worker.
Nothing is imported here, so the server can name these modules without loading DuckDB.
"""
