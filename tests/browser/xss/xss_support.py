"""Helpers of the XSS tests: payloads, a multi-user server process, and the check that nothing ran."""
from __future__ import annotations
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
import pytest


REPO = Path(__file__).resolve().parents[3]


PASSWORD = "correct horse battery"


PAYLOADS = [
    '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    "<script>window.__xss=(window.__xss||0)+1</script>",
    '<svg onload="window.__xss=(window.__xss||0)+1"></svg>',
    '<iframe srcdoc="<script>parent.__xss=(parent.__xss||0)+1</script>"></iframe>',
    '"><a href="javascript:window.__xss=1" id="xss-link">x</a>',
]


XSS = "".join(PAYLOADS)


@dataclass
class Server:
    url: str
    data_dir: Path
    proc: subprocess.Popen[bytes]

    def store(self) -> Any:
        from console.store import Store

        return Store(f"sqlite:///{self.data_dir / 'console.db'}", run_migrations=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_assets() -> None:
    dist = REPO / "console" / "web" / "static" / "dist" / "main.js"
    newest = max(p.stat().st_mtime for p in (REPO / "frontend" / "src").rglob("*") if p.is_file())
    if not dist.exists() or dist.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True, timeout=180)


def assert_inert(page: Any) -> None:
    """Nothing executed, and nothing executable made it into the DOM."""
    page.wait_for_timeout(300)  # let any onerror/onload fire
    assert page.evaluate("window.__xss") is None
    assert page.dialogs == []
    active = page.evaluate("""() => document.querySelectorAll(
        '[onerror], [onload], iframe, script:not([src]), a[href^="javascript:"]').length""")
    assert active == 0
