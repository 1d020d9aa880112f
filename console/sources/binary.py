"""binaryFile: each file as one row (path, modificationTime, length, content), as Spark's binaryFile reads it."""
from __future__ import annotations

import datetime as dt
import fnmatch
from typing import TYPE_CHECKING

from console.sources.base import Source, SourceContext, SourceError, option, register
from console.sources.paths import data_files, resolve

if TYPE_CHECKING:
    import pyarrow as pa


@register("binaryFile")
class BinaryFileSource(Source):
    """Load only. Option pathGlobFilter keeps files whose name matches (e.g. "*.png")."""

    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa

        files = data_files(resolve(ctx, path), (), path, ctx)
        pattern = option(options, "pathGlobFilter")
        if pattern:
            files = [f for f in files if fnmatch.fnmatch(f.name, pattern)]
        paths, stamps, sizes, contents = [], [], [], []
        for f in files:
            try:
                stat = f.stat()
                contents.append(f.read_bytes())
            except OSError as exc:
                raise SourceError(f"cannot read {f}: {exc.strerror}") from None
            paths.append(f"file:{f}")
            stamps.append(dt.datetime.fromtimestamp(stat.st_mtime, dt.timezone.utc))
            sizes.append(stat.st_size)
        return pa.table({
            "path": pa.array(paths, pa.string()),
            "modificationTime": pa.array(stamps, pa.timestamp("us", tz="UTC")),
            "length": pa.array(sizes, pa.int64()),
            "content": pa.array(contents, pa.binary()),
        })
