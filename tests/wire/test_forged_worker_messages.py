"""A cell is untrusted by its kernel too: what it writes on its own worker's socket (issue 21 §1).

The cell runs inside the worker, so its socket to the kernel is the cell's for the taking: the
last argument of the worker's command line names it. A real kernel Session runs real Python
cells here; on the code before console/wire/ the kernel unpickled whatever came (code of the
cell's choosing) and read a result table from any path a cell_done named.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.config import load_config
from console.kernel.session import Session

SOCKET = """
import os, sys
_fd = int(open("/proc/self/cmdline", "rb").read().split(b"\\0")[-2])
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    events: list[Any] = []
    s = Session(load_config({"DATA_DIR": str(tmp_path / "data"), "SANDBOX": "off"}), events.append,
                session_id="forger")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


def test_a_line_that_is_not_a_worker_message_stops_the_worker_with_the_reason(session: Any) -> None:
    out = session.run_cell("--%python\n" + SOCKET + """
os.write(_fd, b'{"type": "cell_output", "job_id": "j", "text": 5, "source": "driver", "stream": "stdout"}\\n')
import time; time.sleep(30)
""", kind="python")
    assert not out.ok and out.error.kind == "worker", out.error
    assert "broke the protocol" in out.error.message and "must be a string" in out.error.message, out.error
    again = session.run_cell("--%python\nprint('a fresh worker')\n", kind="python")
    assert again.ok, again.error


def test_a_pickle_is_not_a_message(session: Any, tmp_path: Path) -> None:
    """What multiprocessing's Connection used to unpickle: a reduce that runs code in the kernel."""
    marker = tmp_path / "ran-in-the-kernel"
    out = session.run_cell("--%python\n" + SOCKET + f"""
import pickle, struct
class Boom:
    def __reduce__(self):
        return (open, ({str(marker)!r}, "w"))
data = pickle.dumps(Boom())
os.write(_fd, struct.pack("!i", len(data)) + data + b"\\n")  # the frame the old Connection read, ended as a line
import time; time.sleep(30)
""", kind="python")
    assert not out.ok and "broke the protocol" in out.error.message, out.error
    assert not marker.exists()


def test_a_result_is_read_only_from_the_path_the_kernel_gave(session: Any, tmp_path: Path) -> None:
    import pyarrow as pa

    elsewhere = tmp_path / "elsewhere.arrow"
    with pa.OSFile(str(elsewhere), "wb") as sink, pa.ipc.new_file(sink, pa.schema([("secret", pa.string())])) as w:
        w.write_table(pa.table({"secret": ["not yours"]}))
    out = session.run_cell(f"""--%python
import sys
from console.wire.worker import CellDone
channel = sys.stdout.channel
channel.send(CellDone(job_id=channel.job_id, result_path={str(elsewhere)!r}, error=None))
import time; time.sleep(30)
""", kind="python")
    assert not out.ok and "not at the path it was given" in out.error.message, out.error
    assert "not yours" not in str(out)
