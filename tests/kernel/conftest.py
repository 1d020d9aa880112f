"""Engine fixtures: a Session over a temporary data dir, and the events it emits."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from console.config import load_config
from console.kernel.session import Session


@pytest.fixture
def events() -> list[Any]:
    return []


@pytest.fixture
def session(tmp_path: Path, events: list[Any]) -> Session:
    # The data dir is a folder of its own: notebooks may not touch it (only its lake), while
    # tests keep their input files next to it in tmp_path.
    s = Session(load_config({"DATA_DIR": str(tmp_path / "data")}), events.append, session_id="nb-1")
    yield s
    s.shutdown()
