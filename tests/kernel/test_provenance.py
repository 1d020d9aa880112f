"""A save names what its table was made of: the loads behind it, through the catalog, and a model's
training run (console/kernel/provenance.py), so a model's lineage can be told (issue 32 item 3)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from console.kernel.session import Session
from console.protocols import CellOutcome
from console.wire.kernel import ManifestEntry


def _writes(outcome: CellOutcome) -> list[ManifestEntry]:
    assert outcome.ok, outcome.error
    return [e for e in outcome.io if e.access == "write"]


def test_a_save_names_the_loads_of_earlier_cells_through_selects(session: Session, tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": [1, 2, 3], "label": [0, 1, 0]}), tmp_path / "in.parquet")
    session.run_cell("select 1 as a, 2 as b as seed;\nsave overwrite seed as delta.`feat.base`;",
                     cell="c0", run_id="r0")
    first = session.run_cell(f"load parquet.`{tmp_path}/in.parquet` as raw;\n"
                             "load delta.`feat.base` as base;", cell="c1", run_id="r1")
    assert first.ok, first.error
    mixed = session.run_cell("select r.x, b.a from raw r cross join base b as joined;\n"
                             "select * from joined where x > 1 as kept;", cell="c2", run_id="r2")
    assert mixed.ok, mixed.error
    (written,) = _writes(session.run_cell("save overwrite kept as delta.`feat.kept`;", cell="c3", run_id="r3"))
    by_format = {s.format: s for s in written.sources}
    assert set(by_format) == {"parquet", "delta"}, written.sources
    assert by_format["parquet"].path.endswith("in.parquet") and by_format["parquet"].digest
    assert by_format["delta"].table == "feat.base" and by_format["delta"].version == 0
    assert {s.run_id for s in written.sources} == {"r1"}  # the run that read them, not the one that saved
    assert not written.model and written.trained_by == ""


def test_a_table_rebound_to_new_rows_forgets_the_old_sources(session: Session, tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": [1]}), tmp_path / "a.parquet")
    session.run_cell(f"load parquet.`{tmp_path}/a.parquet` as t;", cell="c1", run_id="r1")
    session.run_cell("select 5 as x as t;", cell="c2", run_id="r2")
    (written,) = _writes(session.run_cell("save overwrite t as delta.`feat.t`;", cell="c3", run_id="r3"))
    assert written.sources == []


def test_train_records_its_model_with_the_data_it_learned_from(session: Session, tmp_path: Path) -> None:
    pq.write_table(pa.table({"f1": [0.0, 1.0, 0.1, 0.9] * 5, "label": [0, 1, 0, 1] * 5}), tmp_path / "t.parquet")
    session.run_cell(f"load parquet.`{tmp_path}/t.parquet` as d;", cell="c1", run_id="r1")
    out = session.run_cell("select vec_dense(array(f1)) as features, label from d as train_set;\n"
                           f"train train_set as LogisticRegression.`{tmp_path / 'model_lr'}`;", cell="c2", run_id="r2")
    (model,) = _writes(out)
    assert model.format == "model" and model.model and model.trained_by == "r2"
    assert [s.path.endswith("t.parquet") for s in model.sources] == [True]
