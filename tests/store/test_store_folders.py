"""Folders: implied by notebooks or explicit; listing, rename with everything below, delete."""
from __future__ import annotations

import pytest

from console.store import Exists, Invalid, NotFound, Store


def test_listing(store: Store) -> None:
    store.create_notebook("top", "/")
    store.create_notebook("deep", "/team/a/b")
    store.create_notebook("a1", "/team/a")
    store.create_folder("/team/empty")
    store.create_folder("/solo")
    root = store.list_folder("/")
    assert root.folders == ["/solo", "/team"] and [n.name for n in root.notebooks] == ["top"]
    team = store.list_folder("/team/")
    assert team.path == "/team" and team.folders == ["/team/a", "/team/empty"] and team.notebooks == []
    a = store.list_folder("/team/a")
    assert a.folders == ["/team/a/b"] and [n.name for n in a.notebooks] == ["a1"]
    assert store.list_folder("/missing").folders == []
    assert store.folder_exists("/team/a/b") and not store.folder_exists("/team/b")


def test_like_wildcards_are_literal(store: Store) -> None:
    store.create_notebook("x", "/a_b/c")
    store.create_notebook("y", "/axb/c")
    store.create_notebook("z", "/a%/c")
    assert store.list_folder("/a_b").folders == ["/a_b/c"]
    store.rename_folder("/a_b", "/renamed")
    assert sorted(store.list_folder("/").folders) == ["/a%", "/axb", "/renamed"]


def test_rename_moves_everything_below(store: Store, user) -> None:
    nb = store.create_notebook("n", "/old/sub")
    store.create_folder("/old/empty")
    store.set_share(user.id, "viewer", folder_path="/old/sub")
    assert store.rename_folder("/old", "/new/place") == "/new/place"
    assert store.get_notebook(nb.id).folder == "/new/place/sub"
    assert store.list_folder("/new/place").folders == ["/new/place/empty", "/new/place/sub"]
    assert not store.folder_exists("/old")
    assert store.list_shares(user_id=user.id)[0].folder_path == "/new/place/sub"


def test_rename_errors(store: Store) -> None:
    store.create_notebook("n", "/a")
    store.create_notebook("m", "/b")
    with pytest.raises(Invalid):
        store.rename_folder("/a", "/a/inside")
    with pytest.raises(Exists):
        store.rename_folder("/a", "/b")
    with pytest.raises(NotFound):
        store.rename_folder("/nope", "/c")
    with pytest.raises(Invalid):
        store.rename_folder("/", "/c")
    with pytest.raises(Exists):
        store.create_folder("/a")


def test_delete(store: Store) -> None:
    nb = store.create_notebook("n", "/full/x")
    store.create_folder("/empty")
    with pytest.raises(Exists, match="not empty"):
        store.delete_folder("/full")
    assert store.get_notebook(nb.id)
    assert store.delete_folder("/empty") == 0
    assert store.delete_folder("/full", recursive=True) == 1
    with pytest.raises(NotFound):
        store.get_notebook(nb.id)
    assert store.list_folder("/").folders == []
    with pytest.raises(NotFound):
        store.delete_folder("/empty")


def test_paths_are_case_sensitive_in_rename_delete_and_listing(store: Store) -> None:
    # SQLite's LIKE ignores ASCII case: renaming /team used to move /TEAM/proj along with it.
    theirs = store.create_notebook("theirs", "/TEAM/proj")
    store.create_folder("/TEAM/empty")
    mine = store.create_notebook("mine", "/team/x")
    store.rename_folder("/team", "/mine")
    assert store.get_notebook(theirs.id).folder == "/TEAM/proj"
    assert store.get_notebook(mine.id).folder == "/mine/x"
    assert store.list_folder("/TEAM").folders == ["/TEAM/empty", "/TEAM/proj"]
    assert [n.name for n in store.notebooks_under("/mine")] == ["mine"]
    store.create_notebook("again", "/team/y")
    assert store.delete_folder("/team", recursive=True) == 1
    assert store.get_notebook(theirs.id).folder == "/TEAM/proj" and store.folder_exists("/TEAM/empty")
    assert [n.name for n in store.notebooks_under("/TEAM")] == ["theirs"]


def test_percent_underscore_and_non_ascii_prefixes_are_literal(store: Store) -> None:
    store.create_notebook("a", "/50%/x")
    store.create_notebook("b", "/50%off/x")
    store.create_notebook("c", "/a_/x")
    store.create_notebook("d", "/ab/x")
    store.create_notebook("e", "/Ärger/x")
    store.create_notebook("f", "/ärger/x")
    store.rename_folder("/50%", "/p")
    store.rename_folder("/a_", "/q")
    store.rename_folder("/ärger", "/r")
    assert sorted(store.list_folder("/").folders) == sorted(["/50%off", "/p", "/q", "/r", "/ab", "/Ärger"])
    assert [n.name for n in store.notebooks_under("/Ärger")] == ["e"]


@pytest.mark.parametrize("bad", ["/a\u202eb", "/x/\u2066y", "/\u202a", "/z\u2069"])
def test_bidi_override_characters_are_refused_in_folders(store: Store, bad: str) -> None:
    with pytest.raises(Invalid):
        store.create_folder(bad)
    with pytest.raises(Invalid):
        store.create_notebook("n", bad)


@pytest.mark.parametrize("bad", ["evil\u202etxt.exe", "a\u202ab", "\u2067x", "y\u2068", "bad\ud800"])
def test_bidi_override_characters_and_surrogates_are_refused_in_names(store: Store, bad: str) -> None:
    with pytest.raises(Invalid):
        store.create_notebook(bad)
    nb = store.create_notebook("fine")
    with pytest.raises(Invalid):
        store.rename_notebook(nb.id, bad)
