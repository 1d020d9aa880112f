"""A notebook's own packages (`%pip install` / `!pip install`): built with uv from a wheelhouse the
test writes itself (no network), layered on the base, seen by that notebook's Python cells only."""
from __future__ import annotations

import importlib.metadata
import socket
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from console import lang
from console.config import load_config
from console.kernel.session import Session
from tests.support.wheels import make_wheel


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    make_wheel(folder, "consoletestpkg", "1.2", '__version__ = "1.2"\n')
    make_wheel(folder, "consoletestoldray", "1.0", "", requires=("ray==2.50.0",))
    return folder


@pytest.fixture
def sessions(tmp_path: Path, wheelhouse: Path) -> Iterator[Any]:
    """Sessions of different notebooks on one data dir, built from the wheelhouse only."""
    made: list[Session] = []

    def make(session_id: str, **settings: Any) -> Session:
        cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "PIP_INDEX_URL": "none",
                           "PIP_FIND_LINKS": str(wheelhouse), **settings})
        events: list[Any] = []
        s = Session(cfg, events.append, session_id=session_id)
        s.events = events  # type: ignore[attr-defined]
        made.append(s)
        return s

    yield make
    for s in made:
        s.shutdown()


def printed(s: Session) -> str:
    return "".join(e.text for e in s.events if e.type == "output" and e.stream == "stdout")  # type: ignore[attr-defined]


IMPORT = "import consoletestpkg\nprint('version', consoletestpkg.__version__)\n"


def test_pip_lines_of_a_python_cell_compile_to_pip_commands() -> None:
    stmts = lang.parse_cell("%pip install 'a==1' b  # two\nx = 1\n  %pip list\nprint(x)\n", 1, "python")
    pips = [s for s in stmts if isinstance(s, lang.Command)]
    assert [(s.args, s.line) for s in pips] == [(("install", "a==1", "b"), 1), (("list",), 3)]
    run = next(s for s in stmts if isinstance(s, lang.Run))
    assert run.options["code"].split("\n")[:4] == ["", "x = 1", "", "print(x)"]  # lines keep their numbers
    assert all(isinstance(s, lang.Command) for s in lang.parse_cell("%pip install a\n\n", 1, "python"))


def test_a_notebook_installs_a_package_and_only_it_sees_it(sessions: Any) -> None:
    a = sessions("nb-a")
    out = a.run_cell("%pip install consoletestpkg==1.2\n", kind="python", cell=1)
    assert out.ok, out.error
    assert out.result is not None and [c["name"] for c in out.result.columns] == ["package", "version", "requested"]
    assert out.result.rows == [["consoletestpkg", "1.2", "consoletestpkg==1.2"]]
    out = a.run_cell(IMPORT, kind="python", cell=2)
    assert out.ok, out.error
    assert "version 1.2" in printed(a)

    b = sessions("nb-b")
    out = b.run_cell(IMPORT, kind="python", cell=1)
    assert not out.ok and "No module named 'consoletestpkg'" in out.error.message

    # The same lock in another notebook shares the layer; `!pip` in MLSQL is the same command.
    b.run_cell("!pip install consoletestpkg==1.2;", cell=2)
    assert a.notebook_env().layer().path == b.notebook_env().layer().path is not None
    assert b.run_cell(IMPORT, kind="python", cell=3).ok

    # A new kernel of notebook A (same session id) finds its environment again without uv.
    a.shutdown()
    again = sessions("nb-a")
    assert again.notebook_env().requirements == ["consoletestpkg==1.2"]
    out = again.run_cell(IMPORT, kind="python", cell=1)
    assert out.ok, out.error

    # Uninstalled, it is gone from the next cell.
    out = again.run_cell("%pip uninstall consoletestpkg\n", kind="python", cell=2)
    assert out.ok, out.error
    assert not again.run_cell(IMPORT, kind="python", cell=3).ok


def test_a_base_package_at_another_version_is_refused(sessions: Any) -> None:
    a = sessions("nb-ray")
    base = importlib.metadata.version("ray")
    assert a.run_cell("%pip install consoletestpkg==1.2\n", kind="python", cell=1).ok
    out = a.run_cell("%pip install ray==2.50.0\n", kind="python", cell=2)
    assert not out.ok
    assert f"the base environment has ray {base}" in out.error.message
    assert "ray==2.50.0 is refused" in out.error.message
    assert a.notebook_env().requirements == ["consoletestpkg==1.2"]
    assert a.run_cell(IMPORT, kind="python", cell=3).ok  # the previous environment still works
    # A dependency that wants another ray: refused the same way, naming the base's version.
    out = a.run_cell("!pip install consoletestoldray;", cell=4)
    assert not out.ok
    assert f"a dependency would replace a base package (ray {base}" in out.error.message, out.error.message
    assert "ray==2.50.0" in out.error.message  # uv's words: who asked for it
    assert a.run_cell(IMPORT, kind="python", cell=5).ok


def test_an_unresolvable_requirement_names_itself_and_keeps_the_environment(sessions: Any) -> None:
    a = sessions("nb-bad")
    assert a.run_cell("%pip install consoletestpkg==1.2\n", kind="python", cell=1).ok
    assert a.run_cell(IMPORT, kind="python", cell=2).ok
    out = a.run_cell("x = 1\n%pip install consoletestpkg==9.9\n", kind="python", cell=3)
    assert not out.ok
    msg = out.error.message
    assert "do not resolve (consoletestpkg==9.9)" in msg and "uv says" in msg
    assert "unsatisfiable" in msg  # uv's own words
    assert out.error.line == 2
    out = a.run_cell("!pip install nosuchpackage;", cell=4)
    assert not out.ok and "do not resolve (nosuchpackage)" in out.error.message
    a.events.clear()  # type: ignore[attr-defined]
    out = a.run_cell(IMPORT, kind="python", cell=4)
    assert out.ok, out.error
    assert "version 1.2" in printed(a)


def test_a_layer_past_the_size_limit_is_refused_naming_it(sessions: Any, tmp_path: Path) -> None:
    a = sessions("nb-big", PIP_MAX_SIZE="200")
    out = a.run_cell("%pip install consoletestpkg==1.2\n", kind="python", cell=1)
    assert not out.ok
    assert "over CONSOLE_PIP_MAX_SIZE (200)" in out.error.message, out.error.message
    assert a.notebook_env().requirements == []
    assert [p.name for p in (tmp_path / "data" / "envs").iterdir()] == []  # nothing left behind


def test_a_build_past_the_time_limit_stops_naming_it(sessions: Any) -> None:
    # An index that accepts connections and never answers: uv waits until the limit stops it.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    try:
        a = sessions("nb-slow", PIP_INDEX_URL=f"http://127.0.0.1:{server.getsockname()[1]}/simple",
                      PIP_FIND_LINKS="", PIP_TIMEOUT_SECONDS=2.0)
        out = a.run_cell("%pip install somepackage\n", kind="python", cell=1)
        assert not out.ok
        assert "stopped after 2 s (CONSOLE_PIP_TIMEOUT_SECONDS)" in out.error.message
        assert a.notebook_env().requirements == []
    finally:
        stop.set()
        server.close()
        for c in held:
            c.close()


def test_a_new_kernel_builds_the_layer_again_when_the_data_dir_lost_it(sessions: Any, tmp_path: Path) -> None:
    import os
    import shutil

    a = sessions("nb-lost")
    assert a.run_cell("!pip install consoletestpkg==1.2;", cell=1).ok
    a.shutdown()
    envs = tmp_path / "data" / "envs"
    for folder, _dirs, _files in os.walk(envs):
        os.chmod(folder, 0o755)  # layers are read-only inside
    shutil.rmtree(envs)
    again = sessions("nb-lost")
    out = again.run_cell(IMPORT, kind="python", cell=1)
    assert out.ok, out.error
    assert "version 1.2" in printed(again)
    assert any(p.name != ".uv-cache" for p in envs.iterdir())


def test_the_server_start_prunes_layers_unused_for_the_keep_days(sessions: Any, tmp_path: Path) -> None:
    """A layer no kernel used for CONSOLE_ENV_KEEP_DAYS goes when the server starts; one in use stays,
    and using a layer (a new kernel finding it) counts as use."""
    import os
    import time

    from console.server import create_app

    a = sessions("nb-old")
    assert a.run_cell("!pip install consoletestpkg==1.2;", cell=1).ok
    envs = tmp_path / "data" / "envs"
    (old,) = [p for p in envs.iterdir() if not p.name.startswith(".")]
    fresh = envs / ("f" * 24)
    fresh.mkdir()
    stale_build = envs / ".build-0123456789ab"
    stale_build.mkdir()
    month = time.time() - 30 * 86400
    for p in (old, stale_build):
        os.utime(p, (month, month))
    b = sessions("nb-old")  # a new kernel of the notebook finds the layer: it is used now
    assert b.run_cell(IMPORT, kind="python", cell=1).ok
    assert old.stat().st_mtime > month + 86400
    os.utime(old, (month, month))
    create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "ENV_KEEP_DAYS": 10})
    assert not old.exists() and not stale_build.exists() and fresh.is_dir()
    create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True})  # default 14 days: a new one stays
    assert fresh.is_dir()


@pytest.mark.slow
def test_a_package_from_the_real_index(tmp_path: Path) -> None:
    """The one test that leaves the wheelhouse: the machine's own package index (its pip
    configuration, as a user's notebook gets it), for a small pure-Python package the base lacks."""
    cfg = load_config({"DATA_DIR": str(tmp_path / "data")})
    events: list[Any] = []
    s = Session(cfg, events.append, session_id="real-index")
    try:
        out = s.run_cell("%pip install tabulate==0.9.0\nimport tabulate\nprint('tabulate', tabulate.__version__)\n",
                         kind="python", cell=1)
        assert out.ok, out.error
        text = "".join(e.text for e in events if e.type == "output" and e.stream == "stdout")
        assert "tabulate 0.9.0" in text
    finally:
        s.shutdown()
