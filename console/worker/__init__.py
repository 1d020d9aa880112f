"""The cell worker: runs Python cells as a Ray driver. Runs in: the worker process.

Started by the kernel through the user's PYTHON_ENV (`python -m console.worker.main FD`); holds
the pyjava API (`context`, `RayContext`) that `pyjava/` re-exports.
"""
