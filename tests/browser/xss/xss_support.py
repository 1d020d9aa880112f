"""Helpers of the XSS tests: the payloads and the check that none of them ran; `Server` is the
one live-server harness's child process (tests/support/live_server.py)."""
from __future__ import annotations

from typing import Any

from tests.support.live_server import ServerProcess as Server

__all__ = ["PASSWORD", "PAYLOADS", "XSS", "Server", "assert_inert"]

PASSWORD = "correct horse battery"


PAYLOADS = [
    '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    "<script>window.__xss=(window.__xss||0)+1</script>",
    '<svg onload="window.__xss=(window.__xss||0)+1"></svg>',
    '<iframe srcdoc="<script>parent.__xss=(parent.__xss||0)+1</script>"></iframe>',
    '"><a href="javascript:window.__xss=1" id="xss-link">x</a>',
]


XSS = "".join(PAYLOADS)


def assert_inert(page: Any) -> None:
    """Nothing executed, and nothing executable made it into the DOM."""
    page.wait_for_timeout(300)  # let any onerror/onload fire
    assert page.evaluate("window.__xss") is None
    assert page.dialogs == []
    active = page.evaluate("""() => document.querySelectorAll(
        '[onerror], [onload], iframe, script:not([src]), a[href^="javascript:"]').length""")
    assert active == 0
