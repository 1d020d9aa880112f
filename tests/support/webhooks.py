"""A webhook receiver for the jobs tests: a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A webhook receiver on 127.0.0.1: records each POST's JSON; answers `codes` in turn (then 200)."""

    def __init__(self, codes: list[int] | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.codes = list(codes or [])
        self._posted = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._posted:
                    outer.bodies.append(body)
                    code = outer.codes.pop(0) if outer.codes else 200
                    outer._posted.notify_all()
                self.send_response(code)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The bodies once `n` POSTs have come (AssertionError when they have not in `timeout`)."""
        with self._posted:
            if not self._posted.wait_for(lambda: len(self.bodies) >= n, timeout):
                raise AssertionError(f"{n} webhook POSTs did not come in {timeout:.0f} s: {self.bodies}")
            return list(self.bodies)

    def close(self) -> None:
        self.httpd.shutdown()
