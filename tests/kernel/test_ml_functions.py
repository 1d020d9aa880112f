"""Byzer's vector functions over DOUBLE[] in SQL (0-based indices, NULL in gives NULL out)."""
from __future__ import annotations

from console.kernel.session import Session


def test_vector_functions(session: Session) -> None:
    out = session.run_cell(
        "select * from values (array(1.0, 3.0, 2.0), array(1, 1, 1)), (null, array(0, 0, 1)) as t(a, b) as v;\n"
        "select vec_argmax(a) as am, vec_dense(array(1, 2)) as d, vec_concat(array(a, vec_dense(b))) as c,\n"
        "vec_slice(a, array(0, 2)) as s, vec_mean(a) as m, vec_wise_add(a, b) as w, vec_inplace_ew_mul(a, 2) as x,\n"
        "round(vec_cosine(vec_dense(b), array(0.0, 0.0, 2.0)), 6) as cs, a[0] as first from v as o;")
    assert out.ok, out.error
    assert session.tables["o"].to_pylist() == [
        {"am": 1, "d": [1.0, 2.0], "c": [1.0, 3.0, 2.0, 1.0, 1.0, 1.0], "s": [1.0, 2.0], "m": 2.0,
         "w": [2.0, 4.0, 3.0], "x": [2.0, 6.0, 4.0], "cs": 0.57735, "first": 1.0},
        {"am": None, "d": [1.0, 2.0], "c": None, "s": None, "m": None, "w": None, "x": None, "cs": 1.0,
         "first": None}]
    bad = session.run_cell("select vec_wise_add(array(1.0), array(1.0, 2.0)) as w as o2;")
    assert not bad.ok and bad.error is not None and "vectors of different lengths: 1 and 2" in bad.error.message
