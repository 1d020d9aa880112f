"""The pyjava names old MLSQL scripts import: each exists, works where we have an equivalent and
otherwise fails on use with what it was and what to use instead. Runs cells through the worker's
own `execute` (no Ray, no kernel)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from console.worker.cell import execute, new_globals
from console.worker.context import PythonContext


def _run(code: str) -> PythonContext:
    context = PythonContext("", [], {"schema": "st(field(a,long))"}, table=pa.table({"a": [1, 2]}))
    execute(code, 1, context, new_globals())
    return context


def test_from_pyjava_import_raycontext_and_its_context_attribute() -> None:
    context = _run(
        "from pyjava import RayContext\n"
        "from pyjava.api.mlsql import RayContext as FromApi\n"
        "assert RayContext is FromApi\n"
        "assert RayContext.context is context\n"  # the running cell's context, on the class
        "rc = RayContext.connect(globals(), None)\n"
        "assert rc.context is context\n"  # and on an instance
        "RayContext.context.build_result([{'a': r['a'] * 10} for r in rc.collect()])\n")
    out = context.output()
    assert out is not None and out.column("a").to_pylist() == [10, 20]


def test_raycontext_context_outside_a_cell_says_so() -> None:
    from pyjava import RayContext

    with pytest.raises(AttributeError, match="no cell is running"):
        RayContext.context  # noqa: B018
    assert not hasattr(RayContext, "context")  # introspection sees no value, and no error


@pytest.mark.parametrize("code,was,instead", [
    ("from pyjava.api.mlsql import PythonProjectContext\nPythonProjectContext()",
     "Python project run", "build_result_from_dir"),
    ("from pyjava.api.serve import RayDataServer\nRayDataServer.options(name='s').remote(1)",
     "served one partition", "map_iter"),
    ("import pyjava.serializers as s\ns.ArrowStreamSerializer()",
     "between Spark's JVM and the Python worker", "build_result"),
    ("from pyjava.serializers import ArrowStreamPandasSerializer\nArrowStreamPandasSerializer('UTC', True, True)",
     "Arrow stream protocol", "fetch_once_as_rows"),
])
def test_names_without_an_equivalent_import_and_fail_on_use(code: str, was: str, instead: str) -> None:
    with pytest.raises(NotImplementedError, match=r"in MLSQL; it has no equivalent") as err:
        _run(code)
    assert was in str(err.value) and instead in str(err.value)


def test_serializers_constants_stay() -> None:
    from pyjava.serializers import SpecialLengths

    assert SpecialLengths.END_OF_DATA_SECTION == -1 and SpecialLengths.START_ARROW_STREAM == -6


def test_unknown_pyjava_name_is_an_attribute_error() -> None:
    import pyjava

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        pyjava.Nope  # noqa: B018
