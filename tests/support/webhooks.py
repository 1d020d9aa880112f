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
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                self.send_response(outer.codes.pop(0) if outer.codes else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
