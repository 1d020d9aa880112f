"""data_roots: file paths must resolve inside them (or the lake), whatever `..` or symlinks say."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from console.sources import SourceContext, SourceError, get_source


@pytest.fixture
def fenced(tmp_path: Path) -> SourceContext:
    data = tmp_path / "data"
    allowed = tmp_path / "allowed"
    for d in (data, allowed, tmp_path / "secret"):
        d.mkdir()
    (tmp_path / "secret" / "keys.txt").write_text("hunter2\n")
    (allowed / "ok.txt").write_text("fine\n")
    return SourceContext(data_dir=data, data_roots=[allowed])


def test_inside_a_root_is_allowed(fenced: SourceContext, tmp_path: Path) -> None:
    assert get_source("text").read(fenced, str(tmp_path / "allowed" / "ok.txt"), {}).num_rows == 1
    get_source("text").write(fenced, pa.table({"value": ["x"]}), str(tmp_path / "allowed" / "out"),
                             "overwrite", {}, [])


def test_outside_is_refused_with_the_roots_named(fenced: SourceContext, tmp_path: Path) -> None:
    target = str(tmp_path / "secret" / "keys.txt")
    with pytest.raises(SourceError) as err:
        get_source("text").read(fenced, target, {})
    assert err.value.message == (f"path {target} is outside the allowed data roots: "
                                 f"{tmp_path / 'allowed'}, {tmp_path / 'data' / 'lake'}")
    with pytest.raises(SourceError, match="outside the allowed data roots"):
        get_source("parquet").write(fenced, pa.table({"a": [1]}), "/tmp/mnist_out", "overwrite", {}, [])
    assert not (tmp_path / "secret" / "mnist_out").exists()


def test_dotdot_escape_is_refused(fenced: SourceContext, tmp_path: Path) -> None:
    sneaky = str(tmp_path / "allowed" / ".." / "secret" / "keys.txt")
    with pytest.raises(SourceError, match="outside the allowed data roots"):
        get_source("text").read(fenced, sneaky, {})


def test_symlink_escape_is_refused(fenced: SourceContext, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret", tmp_path / "allowed" / "link")
    with pytest.raises(SourceError, match="outside the allowed data roots"):
        get_source("text").read(fenced, str(tmp_path / "allowed" / "link" / "keys.txt"), {})
    with pytest.raises(SourceError, match="outside the allowed data roots"):
        get_source("text").write(fenced, pa.table({"value": ["x"]}), str(tmp_path / "allowed" / "link" / "new"),
                                 "overwrite", {}, [])


def test_relative_paths_resolve_in_the_lake_which_is_always_a_root(fenced: SourceContext, tmp_path: Path) -> None:
    with pytest.raises(SourceError) as err:
        get_source("json").read(fenced, "rel/x", {})
    assert err.value.message.startswith("path rel/x does not exist: relative paths resolve in the lake (lake:), "
                                        "so this one was looked for there; absolute paths may be under ")
    get_source("json").write(fenced, pa.table({"a": [1]}), "rel/x", "overwrite", {}, [])
    assert (tmp_path / "data" / "lake" / "rel" / "x").is_dir()
    assert get_source("json").read(fenced, "rel/x", {}).num_rows == 1


def test_a_path_that_is_itself_a_symlink_out_is_refused(fenced: SourceContext, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret" / "keys.txt", tmp_path / "allowed" / "keys.txt")
    with pytest.raises(SourceError, match="path .*allowed/keys.txt is outside the allowed data roots"):
        get_source("text").read(fenced, str(tmp_path / "allowed" / "keys.txt"), {})
    with pytest.raises(SourceError, match="path .*allowed/keys.txt is outside the allowed data roots"):
        get_source("text").write(fenced, pa.table({"value": ["x"]}), str(tmp_path / "allowed" / "keys.txt"),
                                 "overwrite", {}, [])
    assert (tmp_path / "secret" / "keys.txt").read_text() == "hunter2\n"


def test_delta_lake_names_are_always_allowed_but_delta_paths_are_fenced(fenced: SourceContext, tmp_path: Path) -> None:
    delta = get_source("delta")
    delta.write(fenced, pa.table({"a": [1]}), "db.t", "overwrite", {}, [])
    assert delta.read(fenced, "db.t", {}).num_rows == 1
    assert delta.read(fenced, str(tmp_path / "allowed" / ".." / "data" / "lake" / "db" / "t"), {}).num_rows == 1
    with pytest.raises(SourceError, match="outside the allowed data roots"):
        delta.write(fenced, pa.table({"a": [1]}), str(tmp_path / "secret" / "t"), "overwrite", {}, [])
    with pytest.raises(SourceError, match="inside the server's private data folder"):
        delta.read(fenced, str(tmp_path / "allowed" / ".." / "data" / "db" / "t"), {})
