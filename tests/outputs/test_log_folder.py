"""Log files are opened, repaired and removed only at their own place, never through a link (issue 21 §3)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from console.outputs.logfile import LogFolder, relative_path, remove_notebook_logs
from console.wire.browser import OutputEvent


def _chunk(text: str) -> OutputEvent:
    return OutputEvent(text=text, notebook_id="nb", cell_id="c", run_id="r", seq=1)


@pytest.mark.parametrize("notebook_id, run_id", [("../../lake", "r1"), ("nb", "../x"), ("..", "r1"), ("nb", ""),
                                                 ("a/b", "r1"), ("nb", "r1\x00")])
def test_ids_that_are_not_the_stores_name_no_place(tmp_path: Path, notebook_id: str, run_id: str) -> None:
    with pytest.raises(ValueError, match="id of letters"):
        LogFolder(tmp_path).writer(notebook_id, run_id)
    with pytest.raises(ValueError):
        relative_path(notebook_id, run_id)


def test_a_link_on_the_way_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    logs = tmp_path / "data" / "server" / "logs"
    logs.mkdir(parents=True)
    (logs / "nb").symlink_to(outside)  # the notebook's folder is a link out of the data dir
    folder = LogFolder(tmp_path / "data")
    with pytest.raises(OSError):
        folder.writer("nb", "r1")
    with pytest.raises(OSError):
        folder.open(relative_path("nb", "r1"))
    assert list(outside.iterdir()) == []


def test_a_link_in_place_of_the_file_is_refused_and_what_it_names_survives(tmp_path: Path) -> None:
    folder = LogFolder(tmp_path)
    folder.writer("nb", "mine").close()
    victim = tmp_path / "victim.log.gz"
    victim.write_bytes(b"someone else's log")
    link = tmp_path / relative_path("nb", "r1")
    link.symlink_to(victim)
    with pytest.raises(OSError):
        folder.writer("nb", "r1")  # O_NOFOLLOW: no append through it
    with pytest.raises(OSError):
        folder.open(relative_path("nb", "r1"))
    with pytest.raises(OSError):
        folder.repair(relative_path("nb", "r1"), 0)  # no truncation through it either
    assert folder.remove(relative_path("nb", "r1"))  # the link goes, not its target
    assert victim.read_bytes() == b"someone else's log" and not os.path.lexists(link)


def test_removing_a_notebook_whose_folder_is_a_link_removes_only_the_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    logs = tmp_path / "data" / "server" / "logs"
    logs.mkdir(parents=True)
    (logs / "nb").symlink_to(outside)
    remove_notebook_logs(tmp_path / "data", "nb")
    assert (outside / "keep.txt").read_text() == "keep" and not os.path.lexists(logs / "nb")
    remove_notebook_logs(tmp_path / "data", "../../outside")  # not an id: nothing happens
    assert (outside / "keep.txt").exists()


def test_foreign_places_in_the_runs_row_are_refused(tmp_path: Path) -> None:
    folder = LogFolder(tmp_path)
    for rel in ("server/logs/nb/../../x.log.gz", "lake/nb/r.log.gz", "/etc/passwd", "server/logs/nb/r.txt"):
        with pytest.raises(ValueError):
            folder.open(rel)
        with pytest.raises(ValueError):
            folder.remove(rel)


def test_write_read_remove_at_the_right_place(tmp_path: Path) -> None:
    folder = LogFolder(tmp_path)
    w = folder.writer("nb", "r1")
    w.write([_chunk("hello\n")], 1)
    w.close()
    assert (tmp_path / "server" / "logs" / "nb" / "r1.log.gz").is_file()
    fh = folder.open(w.rel)
    assert fh is not None and fh.read(2) == b"\x1f\x8b"
    fh.close()
    remove_notebook_logs(tmp_path, "nb")
    assert not (tmp_path / "server" / "logs" / "nb").exists()
