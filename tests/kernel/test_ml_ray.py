"""Two fitParam groups trained side by side as Ray tasks (through the cell worker), then used in SQL."""
from __future__ import annotations

from console.kernel.session import Session
from tests.kernel.test_ml import DATA, ok, rows


def test_two_groups_train_in_parallel_on_ray(ray_session: Session) -> None:
    s = ray_session
    ok(s, DATA)
    ok(s, 'train data1 as RandomForest.`models/rf2` where evaluateTable="data1" '
          'and `fitParam.0.maxDepth`="1" and `fitParam.0.numTrees`="1" and `fitParam.0.seed`="3" '
          'and `fitParam.1.maxDepth`="4" and `fitParam.1.seed`="3" and `fitParam.1.impurity`="nope" as result;')
    result = rows(s, "result")
    assert result["algIndex"] == ["0", "1"]
    # group 1's bad impurity fails in its own Ray task and is reported, not raised
    assert result["status"] == ["success", "fail"]
    assert "nope" in result["message"][1]
    assert "Ray tasks" in "".join(getattr(e, "text", "") for e in s.events)  # type: ignore[attr-defined]
    ok(s, 'train data1 as RandomForest.`models/rf3` where evaluateTable="data1" '
          'and `fitParam.0.maxDepth`="1" and `fitParam.0.numTrees`="1" and `fitParam.0.seed`="3" '
          'and `fitParam.1.maxDepth`="4" and `fitParam.1.seed`="3" as result2;')
    result = rows(s, "result2")
    assert result["status"] == ["success", "success"]
    accuracy = [float(m.split("accuracy: ")[1]) for m in result["metrics"]]
    assert accuracy[1] == 1.0 and accuracy[0] < 1.0  # one stump cannot tell three classes apart
    # register picks the best group by f1 (group 1), so the SQL function classifies every row
    ok(s, "register RandomForest.`models/rf3` as rf;\n"
          "select vec_argmax(rf(features)) as p, label from data1 as out;")
    out = s.tables["out"]
    assert out.column("p").to_pylist() == [int(v) for v in out.column("label").to_pylist()]


def test_register_picks_a_group_by_index_and_auto_select_names_a_missing_metric(ray_session: Session) -> None:
    s = ray_session
    ok(s, DATA)
    # a group that fails is a status row, not a failed cell; the good group is the one loaded
    ok(s, 'train data1 as NaiveBayes.`models/nb` where evaluateTable="data1" and '
          '`fitParam.0.modelType`="gaussian" and `fitParam.1.featuresCol`="label" as nb;')
    assert rows(s, "nb")["status"] == ["success", "success"]
    ok(s, 'register NaiveBayes.`models/nb` as nb0 where algIndex="0";\n'
          'select vec_argmax(nb0(features)) as p, label from data1 as o;')
    assert s.tables["o"].column("p").to_pylist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    out = s.run_cell('register NaiveBayes.`models/nb` as nb1 where autoSelectByMetric="rmse";')
    assert not out.ok and out.error is not None
    assert "no group of model models/nb has the metric 'rmse'" in out.error.message
