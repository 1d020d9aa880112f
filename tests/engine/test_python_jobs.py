"""The Python statements compile to the right PythonJob (the runtime itself is tested with Ray elsewhere)."""
from __future__ import annotations

import pyarrow as pa

import pytest

from console.engine import Session
from console.runtime.job import PythonJob


class FakeRuntime:
    """Records the jobs the engine compiles; answers with a fixed table (Ray is the runtime's to test)."""

    def __init__(self, answer: pa.Table | None = None) -> None:
        self.jobs: list[PythonJob] = []
        self.answer = answer if answer is not None else pa.table({"a": [1, 2]})
        self.interrupted = 0
        self.shut = False

    def run(self, job: PythonJob) -> pa.Table | None:
        self.jobs.append(job)
        return self.answer

    def interrupt(self) -> None:
        self.interrupted += 1

    def shutdown(self) -> None:
        self.shut = True


@pytest.fixture
def fake_runtime(session: Session) -> FakeRuntime:
    rt = FakeRuntime()
    session._runtime = rt
    return rt

SEED_CELL = """--%python
--%input=mnist
--%output=mnist_model
--%cache=true

from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
ray_context.build_result([])
"""


def _mnist(session: Session) -> None:
    assert session.run_cell("select id as image, id % 10 as label from range(20) t(id) as mnist;").ok


def test_seed_python_cell_compiles_and_caches(session: Session, fake_runtime: FakeRuntime) -> None:
    _mnist(session)
    settings = ('!python env "PYTHON_ENV=source /x/activate";\n!python conf "runIn=driver";\n'
                '!python conf "schema=file";\n!python conf "dataMode=model";')
    assert session.run_cell(settings).ok
    out = session.run_cell(SEED_CELL, kind="python", cell=3)
    assert out.ok, out.error
    (job,) = fake_runtime.jobs
    assert job.input_name == "mnist" and job.input_table is session.tables["mnist"]
    assert job.output_name == "mnist_model_0" and job.code_line == 1
    assert job.conf == {"runIn": "driver", "schema": "file", "dataMode": "model"}
    assert job.env == {"PYTHON_ENV": "source /x/activate"}
    assert job.code.split("\n")[:6] == ["", "", "", "", "", "from pyjava.api.mlsql import RayContext"]
    assert out.tables_changed == ["mnist_model_0", "mnist_model"]
    assert out.result is not None and out.result.name == "mnist_model" and out.result.total_rows == 2
    assert (session.cache_dir / "mnist_model").exists()  # survives a restart: <data_dir>/cache/<session>
    assert session.tables["mnist_model"].equals(fake_runtime.answer)


def test_ray_statement_merges_conf_model_conftable_and_partitions(session: Session, fake_runtime: FakeRuntime) -> None:
    _mnist(session)
    cell = """!python conf "schema=st(field(a,long))";
select 'rayAddress' as k, '127.0.0.1:10001' as v as ct;
select 1 as start as model;
run mnist as TableRepartition.`` where partitionNum="3" as mnist3;
run command as Ray.`` where inputTable="mnist3" and outputTable="pred" and model="model"
  and confTable="ct" and extra="yes" and code='''
print("${who}")
''';"""
    assert session.run_cell('set who = "me";').ok
    out = session.run_cell(cell)
    assert out.ok, out.error
    (job,) = fake_runtime.jobs
    assert job.num_partitions == 3 and job.input_name == "mnist3"
    assert job.model_table is session.tables["model"]
    assert job.conf == {"schema": "st(field(a,long))", "extra": "yes", "rayAddress": "127.0.0.1:10001"}
    assert job.code == '\nprint("me")\n' and job.code_line == 6
    assert out.result is not None and out.result.name == "pred"


def test_ray_on_short_form_and_empty_result(session: Session) -> None:
    rt = FakeRuntime()
    rt.answer = None  # type: ignore[assignment]
    session._runtime = rt
    _mnist(session)
    out = session.run_cell("!ray on mnist '''print(1)''' named out;")
    assert out.ok and rt.jobs[0].input_name == "mnist" and rt.jobs[0].code == "print(1)"
    assert session.tables["out"].schema.names == ["value"] and session.tables["out"].num_rows == 0


def test_python_error_keeps_catalog(session: Session) -> None:
    from console.runtime.job import PythonCellError

    class Failing(FakeRuntime):
        def run(self, job):  # type: ignore[no-untyped-def]
            raise PythonCellError("python", "ZeroDivisionError: division by zero", line=7, traceback="tb")

    session._runtime = Failing()
    _mnist(session)
    before = dict(session.tables)
    out = session.run_cell("--%python\n--%input=mnist\n--%output=o\n1/0", cell=2)
    assert not out.ok and out.error is not None
    assert (out.error.kind, out.error.line, out.error.traceback) == ("python", 7, "tb")
    assert session.tables == before


def test_missing_input_table_is_named(session: Session, fake_runtime: FakeRuntime) -> None:
    out = session.run_cell("--%python\n--%input=nope\nprint(1)")
    assert not out.ok and out.error is not None
    assert out.error.message == "input table 'nope' not found; tables in this session: none yet"
    assert fake_runtime.jobs == []


def test_interrupt_reaches_runtime(session: Session, fake_runtime: FakeRuntime) -> None:
    session.interrupt()
    assert fake_runtime.interrupted == 1
    assert session.run_cell("select 1 as a as t;").ok  # a new cell starts un-interrupted
    session.shutdown()
    assert fake_runtime.shut


def test_runtime_created_lazily(session: Session) -> None:
    assert session._runtime is None
    assert session.run_cell("select 1 as a as t;").ok
    assert session._runtime is None
