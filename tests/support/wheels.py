"""Wheels the tests write themselves: a local wheelhouse for `%pip install` without a network."""
from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def make_wheel(folder: Path, name: str, version: str, body: str, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel written as the zip it is (METADATA, WHEEL, RECORD with each file's hash);
    `requires`: its dependencies (Requires-Dist)."""
    dist = f"{name}-{version}.dist-info"
    depends = "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{name}/__init__.py": body,
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{depends}",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return wheel
