"""Python statements compile to the right PythonJob; running them on Ray is tested in tests/python_cells.

These tests stop at `build_job`, the pure step between a parsed statement and the runtime, so
they need no Ray and no stand-in for it.
"""
from __future__ import annotations


from console.kernel.session import Session
from console.kernel.python_jobs import build_job
from console.lang import Run, parse, parse_cell
from console.kernel.job import PythonJob

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


def _job(session: Session, statements: list) -> PythonJob:
    (run,) = [s for s in statements if isinstance(s, Run) and s.et.lower() == "ray"]
    return build_job(session, run)


def test_seed_python_cell_compiles_to_a_ray_job_and_a_cache(session: Session) -> None:
    _mnist(session)
    settings = ('!python env "PYTHON_ENV=source /x/activate";\n!python conf "runIn=driver";\n'
                '!python conf "schema=file";\n!python conf "dataMode=model";')
    assert session.run_cell(settings).ok
    statements = parse_cell(SEED_CELL, cell=3, kind="python")
    job = _job(session, statements)
    assert job.input_name == "mnist" and job.input_table is session.tables["mnist"]
    assert job.output_name == "mnist_model_0" and job.code_line == 1
    assert job.conf == {"runIn": "driver", "schema": "file", "dataMode": "model"}
    assert job.env == {"PYTHON_ENV": "source /x/activate"}
    # header lines become blank lines, so Python's line numbers are the cell's
    assert job.code.split("\n")[:6] == ["", "", "", "", "", "from pyjava.api.mlsql import RayContext"]
    kinds = [type(s).__name__ for s in statements]
    assert kinds == ["Run", "Save", "Load"]  # cache=true: saved to the session's disk cache, loaded back


def test_ray_statement_merges_conf_model_conftable_and_partitions(session: Session) -> None:
    _mnist(session)
    setup = """!python conf "schema=st(field(a,long))";
select 'rayAddress' as k, '127.0.0.1:10001' as v as ct;
select 1 as start as model;
run mnist as TableRepartition.`` where partitionNum="3" as mnist3;"""
    assert session.run_cell('set who = "me";').ok
    assert session.run_cell(setup).ok
    run = """run command as Ray.`` where inputTable="mnist3" and outputTable="pred" and model="model"
  and confTable="ct" and extra="yes" and code='''
print("${who}")
''';"""
    from console.lang import substitute_statement

    (stmt,) = parse(run)
    stmt = substitute_statement(stmt, session.variables)
    job = build_job(session, stmt)
    assert job.num_partitions == 3 and job.input_name == "mnist3"
    assert job.model_table is session.tables["model"]
    assert job.conf == {"schema": "st(field(a,long))", "extra": "yes", "rayAddress": "127.0.0.1:10001"}
    assert job.code == '\nprint("me")\n' and job.code_line == 2
    assert job.output_name == "pred"


def test_ray_on_short_form(session: Session) -> None:
    _mnist(session)
    job = _job(session, parse("!ray on mnist '''print(1)''' named out;"))
    assert job.input_name == "mnist" and job.code == "print(1)" and job.output_name == "out"


def test_missing_input_table_is_named_before_any_python_runs(session: Session) -> None:
    out = session.run_cell("--%python\n--%input=nope\nprint(1)")
    assert not out.ok and out.error is not None
    assert out.error.message == "input table 'nope' not found; tables in this session: none yet"
    assert session._runtime is None  # nothing was started for a job that cannot run


def test_runtime_created_lazily(session: Session) -> None:
    assert session._runtime is None
    assert session.run_cell("select 1 as a as t;").ok
    assert session._runtime is None
