"""The webhook's POST itself (console/server/jobs/webhook.py) against real receivers on 127.0.0.1:
certificates are checked through the pinned connection, and a redirect is not followed."""
from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from console.server.jobs import webhook


class _Hits(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).hits.append(self.path)
        if self.path == "/away":  # a public receiver sending the server on to an internal one
            self.send_response(307)
            self.send_header("Location", "/internal")
        else:
            self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    _Hits.hits = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()


def test_a_redirect_is_answered_not_followed(receiver: ThreadingHTTPServer) -> None:
    url = f"http://localhost:{receiver.server_port}/away"
    assert webhook.post(url, b"{}", allow_private=True, timeout=5) == 307
    assert _Hits.hits == ["/away"]
    with pytest.raises(webhook.Refused, match="not a public address"):
        webhook.post(url, b"{}", allow_private=False, timeout=5)
    assert _Hits.hits == ["/away"]  # refused before connecting


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_checks_the_certificate_against_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    _Hits.hits = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    srv.socket = tls.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"https://localhost:{srv.server_port}/hook"
        with pytest.raises(ssl.SSLCertVerificationError):  # a certificate nobody vouches for
            webhook.post(url, b"{}", allow_private=True, timeout=5)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now it is trusted: the name matches
        assert webhook.post(url, b"{}", allow_private=True, timeout=5) == 204
        assert _Hits.hits == ["/hook"]
    finally:
        srv.shutdown()
