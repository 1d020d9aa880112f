"""The mlsql-console command: init, demo, run's lazy import, and serve (production and --dev)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from console.cli import main
from console.store import Store

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seeds"


@pytest.fixture(autouse=True)
def _no_console_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("CONSOLE_"):
            monkeypatch.delenv(key)


def test_module_entry_point() -> None:
    out = subprocess.run([sys.executable, "-m", "console", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for command in ("serve", "init", "run", "datasets", "demo"):
        assert command in out.stdout


def test_init_creates_data_dir_and_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["init", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    private = data / "server"  # the server's own folder, which user code cannot see
    assert (private / "console.db").exists() and (private / "secret_key").exists()
    assert not (data / "console.db").exists() and not (data / "secret_key").exists()
    store = Store(f"sqlite:///{private / 'console.db'}")
    assert store.get_user_by_name("admin").is_admin
    store.close()


def test_demo_writes_the_seed_notebook_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import console.demo

    monkeypatch.setattr(console.demo, "DEMO_DATA", tmp_path)  # data "exists": nothing generated
    data = tmp_path / "data"
    first = CliRunner().invoke(main, ["demo", "--data-dir", str(data)])
    assert first.exit_code == 0 and "written" in first.output, first.output
    second = CliRunner().invoke(main, ["demo", "--data-dir", str(data)])
    assert "already there" in second.output
    store = Store(f"sqlite:///{data / 'server' / 'console.db'}")
    [info] = store.find_notebooks()
    cells = store.get_notebook(info.id).cells
    store.close()
    assert [c.kind for c in cells] == ["mlsql", "mlsql", "python", "mlsql"]
    assert cells[0].source == "load parquet.`/tmp/mnist` as mnist;"
    assert cells[1].source.splitlines()[0] == '!python env "PYTHON_ENV=:";'
    assert cells[2].source.startswith("--%python\n--%input=mnist\n--%output=mnist_model\n--%cache=true\n")
    assert cells[3].source == "save overwrite mnist_model as delta.`ai_model.mnist_model`;"


@pytest.mark.skipif(not SEED.exists(), reason="the seed article is not next to this checkout")
def test_demo_cells_are_the_seed_text() -> None:
    seed = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SEED.glob("*.txt")))
    cells = json.loads((ROOT / "console" / "demo" / "seed_notebook.json").read_text(encoding="utf-8"))["cells"]
    python = cells[2]["source"]
    assert python in seed and python.endswith("ray_context.build_result(model_binary)")
    assert "def create_tf_model():    \n" in python  # trailing spaces kept, character for character
    for line in cells[1]["source"].splitlines()[1:]:
        assert line in seed
    assert cells[0]["source"] in seed and cells[3]["source"] in seed


def test_run_prints_results_and_fails_with_the_cell_line_and_column(tmp_path: Path) -> None:
    ok = tmp_path / "ok.mlsql"
    ok.write_text("select 1 as a, 'x' as b as t;\n")
    result = CliRunner().invoke(main, ["run", str(ok), "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert "-- cell 1: t" in result.output and "x" in result.output
    bad = tmp_path / "bad.mlsql"
    bad.write_text("select 1 as a as t;\nload parquet.`/no/such/dir` as m;\n")
    result = CliRunner().invoke(main, ["run", str(bad), "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 1
    assert "error: cell 1, line 2, column 15: path /no/such/dir does not exist" in result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("extra", [[], ["--dev"]], ids=["gunicorn", "dev"])
def test_serve_answers_health(tmp_path: Path, extra: list[str]) -> None:
    port = _free_port()
    cmd = [sys.executable, "-m", "console", "serve", "--port", str(port), "--data-dir", str(tmp_path), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                    assert json.load(r) == {"status": "ok", "database": "sqlite"}
                    break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode()  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "server did not answer in 60 s"
                time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
