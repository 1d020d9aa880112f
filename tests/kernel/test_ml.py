"""train -> predict -> register -> select f(…) in one kernel session (one fitParam group, fitted in the kernel)."""
from __future__ import annotations

import json

import pytest

from console.kernel.session import Session

JSON_LINES = """{"features":[5.1,3.5,1.4,0.2],"label":0.0}
{"features":[4.9,3.0,1.4,0.2],"label":0.0}
{"features":[4.7,3.2,1.3,0.2],"label":0.0}
{"features":[5.0,3.6,1.4,0.2],"label":0.0}
{"features":[7.0,3.2,4.7,1.4],"label":1.0}
{"features":[6.4,3.2,4.5,1.5],"label":1.0}
{"features":[6.9,3.1,4.9,1.5],"label":1.0}
{"features":[6.3,3.3,6.0,2.5],"label":2.0}
{"features":[5.8,2.7,5.1,1.9],"label":2.0}
{"features":[7.1,3.0,5.9,2.1],"label":2.0}"""
# The same rows through jsonStr, Byzer's usual way to make example data.
JSON_DATA = "set jsonStr=\'\'\'\n" + JSON_LINES + "\n\'\'\';\nload jsonStr.`jsonStr` as data;\n" \
    "select vec_dense(features) as features, label from data as data1;"
_VALUES = ", ".join(f"(array({', '.join(map(str, r['features']))}), {r['label']})"
                    for r in map(json.loads, JSON_LINES.splitlines()))
DATA = (f"select cast(features as double[]) as features, cast(label as double) as label "
        f"from values {_VALUES} as t(features, label) as data1;")


def ok(session: Session, text: str) -> None:
    out = session.run_cell(text)
    assert out.ok, out.error


def rows(session: Session, name: str) -> dict[str, list[str]]:
    table = session.tables[name]
    out: dict[str, list[str]] = {}
    for n, v in zip(table.column("name").to_pylist(), table.column("value").to_pylist(), strict=True):
        out.setdefault(n, []).append(v)
    return out


def test_train_predict_register_select(session: Session) -> None:
    ok(session, DATA)
    ok(session, 'train data1 as RandomForest.`models/rf` where keepVersion="true" and evaluateTable="data1" '
                'and `fitParam.0.maxDepth`="3" and `fitParam.0.seed`="7" as result;')
    result = rows(session, "result")
    assert result["status"] == ["success"] and result["algIndex"] == ["0"]
    assert result["alg"] == ["sklearn.ensemble.RandomForestClassifier"]
    assert "accuracy: 1.0" in result["metrics"][0] and "f1: " in result["metrics"][0]
    assert result["trainParams"] == ["Map(maxDepth -> 3, seed -> 7)"]
    folder = session.source_context().lake / "models/rf/_model_0"
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["algorithm"] == "RandomForest" and meta["version"] == 0
    assert meta["groups"][0]["metrics"]["accuracy"] == 1.0
    assert (folder / "model/0/model.pkl").exists()

    ok(session, "predict data1 as RandomForest.`models/rf` as predicted;")
    predicted = session.tables["predicted"]
    assert predicted.column_names == ["features", "label", "probability", "prediction"]
    assert predicted.column("prediction").to_pylist() == predicted.column("label").to_pylist()
    assert all(len(p) == 3 and abs(sum(p) - 1) < 1e-9 for p in predicted.column("probability").to_pylist())

    ok(session, "register RandomForest.`models/rf` as rf_predict;\n"
                "select vec_argmax(rf_predict(features)) as p, label from data1 as out;")
    out = session.tables["out"]
    assert out.column("p").to_pylist() == [int(v) for v in out.column("label").to_pylist()]


def test_versions_and_auto_select(session: Session) -> None:
    ok(session, DATA)
    for _ in range(2):
        ok(session, 'train data1 as LogisticRegression.`models/lr` where evaluateTable="data1";')
    lake = session.source_context().lake / "models/lr"
    assert sorted(p.name for p in lake.iterdir()) == ["_model_0", "_model_1"]
    ok(session, 'train data1 as LogisticRegression.`models/lr` where keepVersion="false";')
    assert sorted(p.name for p in lake.iterdir()) == ["_model_0"]
    # Choosing among several fitParam groups (algIndex, autoSelectByMetric) is in test_ml_ray.py:
    # two groups train as Ray tasks.


def test_regression_and_kmeans(session: Session) -> None:
    ok(session, "select array(x * 1.0) as features, 2.0 * x + 1.0 as label from range(20) t(x) as line;")
    ok(session, 'train line as LinearRegression.`models/line` where evaluateTable="line" as r;')
    assert rows(session, "r")["metrics"][0].startswith("rmse: ")
    ok(session, "register LinearRegression.`models/line` as lin; select lin(array(100.0)) as y as o;")
    assert session.tables["o"].column("y").to_pylist() == [pytest.approx(201.0)]
    ok(session, DATA)
    ok(session, 'train data1 as KMeans.`models/km` where k="3" and seed="1";\n'
                'predict data1 as KMeans.`models/km` as clustered;')
    clusters = session.tables["clustered"].column("prediction").to_pylist()
    assert len(set(clusters)) == 3 and clusters[:4] == [clusters[0]] * 4


@pytest.mark.parametrize("text, message", [
    ("train data1 as RandomForst.`m`;", "unknown algorithm 'RandomForst'; did you mean RandomForest?"),
    ('train data1 as RandomForest.`m` where maxDepht="2";', "RandomForest has no parameter 'maxDepht'"),
    ('train data1 as RandomForest.`m` where labelCol="lable";', "did you mean 'label'?"),
    ("predict data1 as RandomForest.`nowhere`;", "no model at nowhere"),
    ("run data1 as RandomForest.`m`;", "RandomForest is an algorithm: use train"),
])
def test_errors_name_what_exists(session: Session, text: str, message: str) -> None:
    ok(session, DATA)
    out = session.run_cell(text)
    assert not out.ok and out.error is not None
    assert message in out.error.message
    assert out.error.line == 1


def test_model_trained_with_another_algorithm(session: Session) -> None:
    ok(session, DATA)
    ok(session, "train data1 as RandomForest.`models/m`;")
    out = session.run_cell("predict data1 as GBTs.`models/m`;")
    assert not out.ok and out.error is not None
    assert "was trained with RandomForest, not GBTs" in out.error.message


def test_jsonstr_data_train_predict_register(session: Session) -> None:
    out = session.run_cell(JSON_DATA)
    assert out.ok, out.error
    assert session.tables["data1"].num_rows == 10
    ok(session, 'train data1 as RandomForest.`models/js` where evaluateTable="data1" as r;\n'
                'register RandomForest.`models/js` as f;\n'
                'select vec_argmax(f(features)) as p, label from data1 as o;')
    o = session.tables["o"]
    assert o.column("p").to_pylist() == [int(v) for v in o.column("label").to_pylist()]
