"""Read and write tables by format name: parquet, csv, json, text, delta, jdbc, binaryFile, excel (docs/sources.md).

`get_source(fmt)` returns the registered Source; `Source.read(ctx, path, options)` gives a
pyarrow Table and `Source.write(ctx, table, path, mode, options, partition_by)` saves one.
Every user mistake surfaces as SourceError with a message meant for the notebook.

Runs in: the kernel (load, save, and the caches of Python cells' outputs).
"""
from __future__ import annotations

from console.sources import binary, delta, excel, formats, jdbc# noqa: F401  (importing registers the formats)
from console.sources.base import Source, SourceContext, SourceError, get_source, known_formats, register

__all__ = ["Source", "SourceContext", "SourceError", "get_source", "known_formats", "register"]
