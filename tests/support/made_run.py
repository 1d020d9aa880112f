"""The product as a new user starts it: `make run` in a process group of its own, and the demo run over REST.

`MadeRun` runs the README's command itself (make's setup, `mlsql-console demo`, `mlsql-console
serve`), on a free port (CONSOLE_PORT) and a data dir of the test's, with the environment a user
has plus what the test adds (CONSOLE_SINGLE_USER=false for login mode, CONSOLE_SANDBOX=on …), and
stops it by its process group. `run_demo` is Run all of the demo notebook through
`POST /api/notebooks/<id>/run`, the way a script would, until every cell has ended.

Also a command for .ci/run's smoke of `make run` (issue 30):

    python -m tests.support.made_run http://127.0.0.1:PORT    # exit 0 when the demo ran to done
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from console.server.auth import CSRF_HEADER
from tests.support.live_server import REPO, free_port, server_env

DEMO_FOLDER = "/demo"
_PASSWORD = re.compile(r"log in as user: demo\s+password: (\S+)")


class Api:
    """JSON calls to a server, with a session cookie and the CSRF token once logged in."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.csrf = ""

    def login(self, name: str, password: str) -> None:
        status, body = self.call("POST", "/login", {"username": name, "password": password})
        assert status == 200, body
        self.csrf = body["csrf_token"]

    def call(self, method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **({CSRF_HEADER: self.csrf} if self.csrf else {})}
        req = urllib.request.Request(self.url + "/api" + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                return exc.code, json.loads(raw or b"null")
            except ValueError:
                return exc.code, raw.decode(errors="replace")

    def get(self, path: str) -> Any:
        status, body = self.call("GET", path)
        assert status == 200, (path, status, body)
        return body


def demo_notebook(api: Api) -> dict[str, Any]:
    """The notebook `mlsql-console demo` wrote (make run's), as its reader sees it."""
    listed = api.get(f"/notebooks?folder={DEMO_FOLDER}")["notebooks"]
    if not listed:  # a member finds it among what is shared with her
        listed = api.get("/workspace/shared")["notebooks"]
    assert len(listed) == 1, listed
    return dict(api.get(f"/notebooks/{listed[0]['id']}"))


def run_all(api: Api, notebook: dict[str, Any], timeout: float = 900, body: dict[str, Any] | None = None,
            ) -> list[dict[str, Any]]:
    """Run all over REST; each cell's finished run, in cell order (what the page draws from)."""
    status, started = api.call("POST", f"/notebooks/{notebook['id']}/run", body or {"all": True})
    assert status == 202, started
    ids = set(started["run_ids"])
    deadline = time.monotonic() + timeout
    while True:
        runs = api.get(f"/notebooks/{notebook['id']}/runs")["runs"]
        mine = {cell: run for cell, run in runs.items() if run.get("id") in ids or run.get("run_id") in ids}
        ended = all(r["status"] not in ("queued", "running") for r in mine.values())
        if len(mine) == len(ids) and ended:
            return [mine[c["id"]] for c in notebook["cells"] if c["id"] in mine]
        if time.monotonic() > deadline:
            raise TimeoutError(f"Run all did not end in {timeout:g} s: "
                               f"{[(c, r['status']) for c, r in mine.items()]}")
        time.sleep(0.5)


def text_of(run: dict[str, Any]) -> str:
    """What a stored run shows: its output lines and its error."""
    parts = []
    for event in run.get("events", []):
        if event.get("type") == "output":
            parts.append(event.get("text", ""))
        elif event.get("type") == "error":
            parts.append(f"ERROR: {event.get('message', '')}\n")
    return "".join(parts)


class MadeRun:
    """`make run` on a free port and a data dir of the test's; stop() ends its process group."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None, timeout: float = 300) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"make-run-{self.port}.log"
        full = server_env({"CONSOLE_PORT": str(self.port), **(env or {})})
        full.pop("PYTHONPATH", None)  # as a user's shell has it: make's own venv finds the product
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(["make", "--no-print-directory", "run", f"DATA_DIR={data_dir}"],
                                         cwd=REPO, env=full, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"make run exited with {self.proc.returncode}:\n{self.log_text()[-3000:]}")
            try:
                urllib.request.urlopen(self.url + "/api/health", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    tail = self.log_text()[-3000:]
                    raise RuntimeError(f"make run did not answer in {timeout:g} s:\n{tail}") from None
                time.sleep(0.2)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def demo_password(self) -> str:
        """The demo user's password, which `mlsql-console demo` printed once."""
        found = _PASSWORD.search(self.log_text())
        assert found, self.log_text()[-2000:]
        return found.group(1)

    def api(self, user: str | None = None, password: str | None = None) -> Api:
        api = Api(self.url)
        if user is not None:
            api.login(user, password or self.demo_password())
        return api

    def stop(self) -> None:
        """SIGTERM to the group make started (make, its shell, the server), then SIGKILL after 30 s."""
        if self.proc.poll() is None or _group_alive(self.proc.pid):
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + 30
            # poll() reaps make once it exits: unreaped, make stays a zombie of this process's,
            # a member of its group, and every stop waited the whole 30 s (the server had
            # ended in ~6).
            while (self.proc.poll() is None or _group_alive(self.proc.pid)) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _group_alive(self.proc.pid):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def main(argv: list[str]) -> int:
    """CI's smoke: Run all of the demo notebook on a server `make run` started; 0 when every cell is done."""
    api = Api(argv[0])
    notebook = demo_notebook(api)
    runs = run_all(api, notebook)
    statuses = [r["status"] for r in runs]
    print(f"demo notebook {notebook['id']}: {statuses}")
    if statuses != ["done"] * len(notebook["cells"]):
        for run in runs:
            if run["status"] != "done":
                print(text_of(run)[-4000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
