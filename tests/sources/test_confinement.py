"""The server's data folder is private to it: relative paths resolve in the lake, and neither a
path, a jdbc url naming a file, nor a symlink reaches the store or the secret key beside it,
with or without CONSOLE_DATA_ROOTS (issue 11's reproductions, at the sources level)."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from console.sources import SourceContext, SourceError, get_source

SECRET = "cookie-signing-key\n"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder as the server leaves it: the store, the secret key, a stray file, the lake."""
    data = tmp_path / "data"
    (data / "lake").mkdir(parents=True)
    (data / "cache" / "other-session").mkdir(parents=True)
    (data / "cache" / "other-session" / "t.txt").write_text("theirs\n")
    db = sqlite3.connect(data / "console.db")
    db.executescript("create table shares(notebook text, user text, role text);"
                     "insert into shares values ('nb1', 'alice', 'owner');")
    db.commit()
    db.close()
    (data / "secret_key").write_text(SECRET)
    (data / "dummy.txt").write_text("keep me\n")
    return data


def _shares(data: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(data / "console.db") as db:
        return list(db.execute("select * from shares"))


@pytest.fixture(params=["no roots", "roots"])
def ctx(request: pytest.FixtureRequest, data: Path, tmp_path: Path) -> SourceContext:
    """Both ways a server runs: CONSOLE_DATA_ROOTS unset, and set to a folder beside the data."""
    (tmp_path / "allowed").mkdir()
    roots = [tmp_path / "allowed"] if request.param == "roots" else []
    return SourceContext(data_dir=data, data_roots=roots, own_roots=[data / "cache" / "mine"])


@pytest.mark.parametrize("fmt, path", [("binaryFile", "console.db"), ("text", "secret_key"),
                                       ("text", "dummy.txt")])
def test_relative_paths_resolve_in_the_lake_not_the_data_folder(ctx: SourceContext, fmt: str, path: str) -> None:
    with pytest.raises(SourceError) as err:
        get_source(fmt).read(ctx, path, {})
    assert err.value.message.startswith(f"path {path} does not exist: ")


@pytest.mark.parametrize("path", ["../console.db", "../secret_key", "{data}/secret_key", "{data}/lake/../console.db",
                                  "{data}/cache/other-session/t.txt", "{data}"])
def test_the_data_folder_outside_the_lake_is_refused(ctx: SourceContext, data: Path, path: str) -> None:
    shown = path.format(data=data)
    with pytest.raises(SourceError) as err:
        get_source("binaryFile").read(ctx, shown, {})
    assert err.value.message.startswith(f"path {shown} is inside the server's private data folder; ")
    assert str(data / "lake") in err.value.message


def test_a_symlink_in_the_lake_to_the_secret_is_refused(ctx: SourceContext, data: Path) -> None:
    os.symlink(data / "secret_key", data / "lake" / "key.txt")
    with pytest.raises(SourceError, match="path key.txt is inside the server's private data folder"):
        get_source("text").read(ctx, "key.txt", {})


def test_a_save_never_lands_in_the_data_folder(ctx: SourceContext, data: Path) -> None:
    t = pa.table({"value": ["x"]})
    # The reproduction: this replaced <data_dir>/dummy.txt with a folder. Now it is the lake's.
    get_source("csv").write(ctx, t, "dummy.txt", "overwrite", {}, [])
    assert (data / "dummy.txt").read_text() == "keep me\n"
    assert (data / "lake" / "dummy.txt").is_dir()
    for path in ("../dummy.txt", "../secret_key", str(data / "secret_key"), "../cache/other-session"):
        with pytest.raises(SourceError, match="inside the server's private data folder"):
            get_source("text").write(ctx, t, path, "overwrite", {}, [])
    assert (data / "secret_key").read_text() == SECRET
    assert (data / "dummy.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("path", [".", "{data}/lake", "{data}/cache/mine"])
def test_a_save_cannot_swap_away_a_whole_root(ctx: SourceContext, data: Path, path: str) -> None:
    (data / "lake" / "keep").mkdir()
    target = path.format(data=data)
    with pytest.raises(SourceError, match=f"cannot save to {target}: it is .* which is or holds a data root"):
        get_source("csv").write(ctx, pa.table({"a": [1]}), target, "overwrite", {}, [])
    assert (data / "lake" / "keep").is_dir()


def test_a_root_holding_the_data_folder_does_not_open_it(data: Path, tmp_path: Path) -> None:
    from console.sources.paths import sql_roots

    ctx = SourceContext(data_dir=data, data_roots=[tmp_path])
    with pytest.raises(SourceError, match="inside the server's private data folder"):
        get_source("text").read(ctx, str(data / "secret_key"), {})
    (tmp_path / "beside.txt").write_text("ok\n")
    assert get_source("text").read(ctx, str(tmp_path / "beside.txt"), {}).num_rows == 1
    assert data not in sql_roots(ctx) and tmp_path not in sql_roots(ctx)  # DuckDB cannot carve it out
    # Named explicitly, a folder below the data folder is opened (an uploads folder, say).
    (data / "uploads").mkdir()
    (data / "uploads" / "u.txt").write_text("up\n")
    below = SourceContext(data_dir=data, data_roots=[data / "uploads"])
    assert get_source("text").read(below, str(data / "uploads" / "u.txt"), {}).num_rows == 1
    assert sql_roots(below) == [(data / "lake").resolve(), (data / "uploads").resolve()]


def test_a_legitimate_relative_load_and_save_in_the_lake_still_work(ctx: SourceContext, data: Path) -> None:
    t = pa.table({"x": [1, 2, 3]})
    get_source("parquet").write(ctx, t, "x", "overwrite", {}, [])
    get_source("parquet").write(ctx, t, "sub/y", "overwrite", {}, [])
    assert get_source("parquet").read(ctx, "x", {}).equals(t)
    assert get_source("parquet").read(ctx, str(data / "lake" / "sub" / "y"), {}).equals(t)
    get_source("delta").write(ctx, t, "ai_model.mnist_model", "overwrite", {}, [])
    assert get_source("delta").read(ctx, "ai_model.mnist_model", {}).equals(t)
    own = data / "cache" / "mine" / "t"
    get_source("parquet").write(ctx, t, str(own), "overwrite", {}, [])
    assert get_source("parquet").read(ctx, str(own), {}).equals(t)


# -- jdbc urls that name a local file -------------------------------------------------------------

@pytest.mark.parametrize("url", ["sqlite:///{data}/console.db", "jdbc:sqlite:{data}/console.db",
                                 "sqlite:///file:{data}/console.db?uri=true", "sqlite:///file://localhost{data}/console.db",
                                 "sqlite+pysqlite:///../console.db", "jdbc:sqlite:../console.db",
                                 "duckdb:///{data}/console.db"])
def test_a_jdbc_url_naming_the_store_is_refused(ctx: SourceContext, data: Path, url: str) -> None:
    url = url.format(data=data)
    before = _shares(data)
    with pytest.raises(SourceError, match=r"path .*console\.db is inside the server's private data folder"):
        get_source("jdbc").write(ctx, pa.table({"notebook": ["nb1"], "user": ["mallory"], "role": ["owner"]}),
                                 "shares", "append", {"url": url}, [])
    with pytest.raises(SourceError, match="inside the server's private data folder"):
        get_source("jdbc").read(ctx, "shares", {"url": url})
    assert _shares(data) == before


def test_a_jdbc_file_outside_the_roots_is_refused(data: Path, tmp_path: Path) -> None:
    (tmp_path / "allowed").mkdir()
    ctx = SourceContext(data_dir=data, data_roots=[tmp_path / "allowed"])
    with pytest.raises(SourceError, match=f"path {tmp_path}/shop.db is outside the allowed data roots"):
        get_source("jdbc").read(ctx, "items", {"url": f"sqlite:///{tmp_path}/shop.db"})
    assert not (tmp_path / "shop.db").exists()


def test_a_relative_sqlite_file_lives_in_the_lake(ctx: SourceContext, data: Path) -> None:
    jdbc = get_source("jdbc")
    jdbc.write(ctx, pa.table({"a": [1, 2]}), "t", "overwrite", {"url": "sqlite:///mine.db"}, [])
    assert (data / "lake" / "mine.db").is_file() and not (data / "mine.db").exists()
    assert jdbc.read(ctx, "t", {"url": "jdbc:sqlite:mine.db"}).num_rows == 2
    assert jdbc.read(ctx, "t", {"url": "sqlite://", "directQuery": "select 7 as n"}).to_pydict() == {"n": [7]}


@pytest.mark.parametrize("query", ["vacuum into '{data}/copy.db'", "attach '{data}/console.db' as c"])
def test_a_direct_query_cannot_open_other_files(ctx: SourceContext, data: Path, query: str) -> None:
    jdbc = get_source("jdbc")
    jdbc.write(ctx, pa.table({"a": [1]}), "t", "overwrite", {"url": "sqlite:///mine.db"}, [])
    with pytest.raises(SourceError, match="too many attached databases"):
        jdbc.read(ctx, "t", {"url": "sqlite:///mine.db", "directQuery": query.format(data=data)})
    assert not (data / "copy.db").exists()


# -- symlinks in folders ----------------------------------------------------------------------------

@pytest.fixture
def linked(data: Path, tmp_path: Path) -> Path:
    """A folder in the lake with a data file, a link to a file inside it, and one to the secret."""
    folder = data / "lake" / "logs"
    (folder / "part").mkdir(parents=True)
    (folder / "part" / "a.txt").write_text("one\n")
    os.symlink(folder / "part" / "a.txt", folder / "again.txt")
    return folder


def test_a_symlink_out_of_a_loaded_folder_is_refused(ctx: SourceContext, data: Path, linked: Path) -> None:
    assert get_source("text").read(ctx, "logs", {}).column("value").to_pylist() == ["one", "one"]
    os.symlink(data / "secret_key", linked / "leak.txt")
    for fmt in ("text", "binaryFile", "csv"):
        with pytest.raises(SourceError) as err:
            get_source(fmt).read(ctx, "logs", {})
        assert err.value.message == ("path logs holds leak.txt, a symbolic link that leads outside it; "
                                     "links out of a loaded folder are not followed")


def test_a_linked_folder_out_of_a_loaded_folder_is_refused(ctx: SourceContext, data: Path, linked: Path) -> None:
    os.symlink(data, linked / "part" / "everything")
    with pytest.raises(SourceError, match="path logs holds part/everything, a symbolic link that leads outside it"):
        get_source("binaryFile").read(ctx, "logs", {})


def test_a_linked_folder_inside_is_listed_once(ctx: SourceContext, linked: Path) -> None:
    os.symlink(linked / "part", linked / "alias")
    assert get_source("text").read(ctx, "logs", {}).num_rows == 2  # part/a.txt and again.txt, not alias/


def test_an_append_does_not_write_through_a_linked_partition(ctx: SourceContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    t = pa.table({"k": ["a"], "v": [1]})
    get_source("parquet").write(ctx, t, "parts", "overwrite", {}, ["k"])
    os.symlink(outside, ctx.lake / "parts" / "k=b")
    with pytest.raises(SourceError, match="path parts holds k=b, a symbolic link that leads outside it"):
        get_source("parquet").write(ctx, pa.table({"k": ["b"], "v": [2]}), "parts", "append", {}, ["k"])
    assert list(outside.iterdir()) == []
    # A link that stays inside is not data, and no write goes through it either.
    (ctx.lake / "parts" / "k=b").unlink()
    os.symlink(ctx.lake / "parts" / "k=a", ctx.lake / "parts" / "k=b")
    with pytest.raises(SourceError, match="cannot append to .*parts: k=b is a symbolic link"):
        get_source("parquet").write(ctx, pa.table({"k": ["b"], "v": [2]}), "parts", "append", {}, ["k"])
    assert len(list((ctx.lake / "parts" / "k=a").iterdir())) == 1


def test_a_delta_db_folder_that_links_out_is_refused(ctx: SourceContext, data: Path) -> None:
    os.symlink(data, data / "lake" / "evil")
    with pytest.raises(SourceError, match="path evil.t is inside the server's private data folder"):
        get_source("delta").write(ctx, pa.table({"a": [1]}), "evil.t", "overwrite", {}, [])
    assert not (data / "t").exists()
