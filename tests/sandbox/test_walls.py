"""User code never reaches the server's private state (issue 11 §1), tried as a hostile member.

Every test runs as "mallory", a member with no share on anything, in a notebook of her own, on a
real server in login mode whose kernels and Ray head run in the sandbox. Each one fails on the
code before the sandbox: there the store and the key sat in the data dir, kernels ran with the
server's environment and settings (the store's URL included), and a kernel's /proc showed the
server.
"""
from __future__ import annotations

import json
import os
from typing import Any

import pytest

from walled_support import Walled, text_of

PROBE = """
import json, os
def probe(paths):
    seen = {}
    for what, path in paths.items():
        try:
            if os.path.isdir(path):
                seen[what] = "LISTED " + " ".join(sorted(os.listdir(path)))
            else:
                with open(path, "rb") as fh:
                    seen[what] = "READ %d bytes" % len(fh.read())
        except OSError as exc:
            seen[what] = "REFUSED " + type(exc).__name__
    return seen
"""


def _paths(walled: Walled) -> dict[str, str]:
    return {"store": str(walled.db_path), "key": str(walled.key_path),
            "server_environ": f"/proc/{os.getpid()}/environ", "server_fds": f"/proc/{os.getpid()}/fd",
            "private": str(walled.db_path.parent)}


def _assert_walled(seen: dict[str, str]) -> None:
    for what in ("store", "key", "server_environ", "server_fds"):
        assert seen[what].startswith("REFUSED"), (what, seen[what])
    assert "console.db" not in seen["private"] and "secret_key" not in seen["private"], seen["private"]


def _probe_cell(paths: dict[str, str], in_actor: bool) -> str:
    call = f"probe({paths!r})"
    if in_actor:
        body = f"""
import json
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Prober:
    def run(self, paths):
{PROBE.replace(chr(10), chr(10) + '        ')}
        return probe(paths)

seen = ray.get(Prober.remote().run.remote({paths!r}))
"""
    else:
        body = PROBE + f"\nseen = {call}\n"
    return "--%python\n" + body + "print('SEEN ' + json.dumps(seen, sort_keys=True).replace(chr(34), chr(39)))\n"


def _parse_seen(run: dict[str, Any]) -> dict[str, str]:
    assert run["status"] == "done", text_of(run)[:4000]
    for event in run.get("events", []):
        for line in str(event.get("text", "")).splitlines():
            if line.startswith("SEEN "):
                return json.loads(line[len("SEEN "):].replace("'", '"'))
    raise AssertionError(f"no probe output: {text_of(run)[-3000:]}")


def test_a_python_cell_cannot_open_the_store_the_key_or_the_servers_proc(walled: Walled) -> None:
    before = walled.snapshot()
    (run,) = walled.member().run(("python", _probe_cell(_paths(walled), in_actor=False)))
    _assert_walled(_parse_seen(run))
    assert walled.snapshot() == before


def test_a_ray_actor_cannot_open_the_store_the_key_or_the_servers_proc(walled: Walled) -> None:
    (run,) = walled.member().run(("python", _probe_cell(_paths(walled), in_actor=True)))
    _assert_walled(_parse_seen(run))


def test_a_kernel_gets_neither_the_database_url_nor_the_secret(walled: Walled,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # What a server may carry in its environment; a kernel started now must get none of it.
    monkeypatch.setenv("CONSOLE_DATABASE_URL", "postgresql://console:hunter2-s1@127.0.0.1/console")
    monkeypatch.setenv("PGPASSWORD", "hunter2-s1")
    monkeypatch.setenv("CONSOLE_SECRET_KEY", "cookie-key-s1")
    cell = ("--%python\nimport os, json\n"
            "print('ENV ' + json.dumps(dict(os.environ)))\n"
            "try:\n    print('PID1 ' + open('/proc/1/environ', 'rb').read().decode('utf-8', 'replace'))\n"
            "except OSError as exc:\n    print('PID1 refused', exc)\n")
    (run,) = walled.member().run(("python", cell))
    assert run["status"] == "done", text_of(run)[-2000:]
    shown = text_of(run)
    secret = walled.key_path.read_text().strip()
    for leak in ("hunter2-s1", "cookie-key-s1", secret, str(walled.db_path), "PGPASSWORD", "CONSOLE_DATABASE_URL"):
        assert leak not in shown, leak
    config = [e for e in run["events"] if "ENV " in str(e.get("text", ""))]
    assert config, shown[-2000:]


def test_mlsql_cells_cannot_read_or_write_the_store(walled: Walled) -> None:
    db, key, data = walled.db_path, walled.key_path, walled.data_dir
    keep = data / "dummy.txt"
    keep.write_text("keep me\n")
    before = walled.snapshot()
    attempts = [
        f'set x = `cat {db}` where type="shell";\nselect "${{x}}" as v as t;',
        f"set x = `cat {key}` where type=\"shell\";\nselect \"${{x}}\" as v as t;",
        f"load binaryFile.`{db}` as t;",
        "load binaryFile.`console.db` as t;",
        "load text.`secret_key` as t;",
        f"load text.`{key}` as t;",
        f"select * from read_text('{db}') as t;",
        f"select 'alice-private' as notebook_id, 2 as user_id, 'owner' as role as s;\n"
        f'save append s as jdbc.`shares` where url="sqlite:///{db}";',
        f"select 1 as a as t;\nsave overwrite t as csv.`{keep}`;",
        f"select 1 as a as t;\nsave overwrite t as csv.`{db}`;",
    ]
    member = walled.member()
    for source in attempts:
        runs = member.run(source)
        assert runs[-1]["status"] == "error" or any(r["status"] == "error" for r in runs), (source, text_of(runs[-1]))
        shown = "".join(text_of(r) for r in runs)
        assert "SQLite format" not in shown and walled.key_path.read_text().strip() not in shown, source
    assert walled.snapshot() == before
    assert keep.is_file() and keep.read_text() == "keep me\n"
    # A relative save lands in the lake, if anywhere; the data dir's own files stay as they are.
    member.run("select 1 as a as t;\nsave overwrite t as csv.`dummy.txt`;")
    assert keep.is_file() and keep.read_text() == "keep me\n"
    assert walled.snapshot() == before


def test_the_private_folder_and_its_files_are_owner_only(walled: Walled) -> None:
    assert walled.db_path.parent.stat().st_mode & 0o777 == 0o700
    assert walled.db_path.stat().st_mode & 0o777 == 0o600
    assert walled.key_path.stat().st_mode & 0o777 == 0o600
    assert not (walled.data_dir / "console.db").exists() and not (walled.data_dir / "secret_key").exists()
