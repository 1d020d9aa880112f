"""register ScriptUDF (Byzer's Python form) as DuckDB functions: types, classes, NULLs and clear errors."""
from __future__ import annotations

import pytest

from console.kernel.session import Session


def ok(session: Session, text: str) -> None:
    out = session.run_cell(text)
    assert out.ok, out.error


def test_byzer_echo_and_plus(session: Session) -> None:
    ok(session, """register ScriptUDF.`` as echoFun where
and lang="python"
and dataType="map(string,string)"
and code='''
def apply(self,m):
    return m
''';
register ScriptUDF.`` as plusFun where lang="python" and dataType="double" and code='''
def apply(self, a, b):
    return a + b
''';
select echoFun(map("a","b")) as res, plusFun(1, 2.5) as s as output;""")
    assert session.tables["output"].to_pylist() == [{"res": [("a", "b")], "s": 3.5}]


def test_class_annotations_nulls_and_arrays(session: Session) -> None:
    ok(session, """register ScriptUDF.`` as shout where lang="python" and className="Text" and code='''
class Text:
    def apply(self, s):
        return s.upper() + "!"
''';
register ScriptUDF.`` as lengths where lang="python" and dataType="array(double)" and code='''
def apply(self, s: str):
    return [float(len(w)) for w in s.split()]
''';
select shout(w) as loud, lengths(w) as ls from values ('hi there'), (null) as t(w) as o;""")
    assert session.tables["o"].to_pylist() == [{"loud": "HI THERE!", "ls": [2.0, 5.0]},
                                               {"loud": None, "ls": None}]


@pytest.mark.parametrize("text, kind, message, line", [
    ('register ScriptUDF.`` as f where lang="scala" and code=\'\'\'def apply(a:Seq[String])={a.last}\'\'\';',
     "data", 'lang="scala" needs a JVM', 1),
    ('register ScriptUDF.`` as f where lang="python" and udfType="udaf" and code=\'\'\'x\'\'\';',
     "data", "only udf is supported", 1),
    ("register ScriptUDF.`` as f where lang=\"python\" and code='''\ndef apply(self, x)\n    return x''';",
     "python", "ScriptUDF f: expected ':'", 2),
    ("register ScriptUDF.`` as f where lang=\"python\" and code='''def run(self, x): return x''';",
     "data", "the code defines no function 'apply' (it defines: run)", 1),
    ('register ScriptUDF.`` as f where lang="python" and dataType="struct" and code=\'\'\'def apply(self): 1\'\'\';',
     "data", "unknown type 'struct'", 1),
])
def test_errors(session: Session, text: str, kind: str, message: str, line: int) -> None:
    out = session.run_cell(text)
    assert not out.ok and out.error is not None
    assert (out.error.kind, out.error.line) == (kind, line)
    assert message in out.error.message


def test_failing_row_names_the_function(session: Session) -> None:
    ok(session, "register ScriptUDF.`` as boom where lang=\"python\" and code='''def apply(self, x):\n"
                "    return 1/0''';")
    out = session.run_cell('select boom("a") as b as o;')
    assert not out.ok and out.error is not None
    assert "ScriptUDF boom failed on row 1" in out.error.message and "ZeroDivisionError" in out.error.message
