"""TensorFlow's start-up notices are shown as system output, never dropped; its errors stay stderr."""
from __future__ import annotations

import pytest

from console.actors.capture import stream_of


@pytest.mark.parametrize("line, stream", [
    ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n", "system"),
    ("I0000 00:00:1795967549.039418   17413 cudart_stub.cc:31] Could not find cuda drivers on your machine, "
     "GPU will not be used.\n", "system"),
    ("W0000 00:00:1795967549.039418   17413 port.cc:153] oneDNN custom operations are on.\n", "system"),
    ("Traceback (most recent call last):\n", "stderr"),
    ("I0000 looks like a notice but is the user's own text\n", "stderr"),
])
def test_notices_on_stderr(line: str, stream: str) -> None:
    assert stream_of("stderr", line) == stream


CUINIT = "E0000 00:00:1795967549.039418   17413 cuda_executor.cc:1] failed call to cuInit: UNKNOWN ERROR (303)\n"


def test_cuinit_is_a_notice_only_without_a_gpu() -> None:
    assert stream_of("stderr", CUINIT, gpu=False) == "system"
    assert stream_of("stderr", CUINIT, gpu=True) == "stderr"  # a real CUDA failure still shows
    assert stream_of("stderr", CUINIT.replace("(303)", "(999)"), gpu=False) == "stderr"


def test_stdout_is_never_reclassified() -> None:
    assert stream_of("stdout", "I0000 00:00:1.0   1 x.cc:1] hello\n") == "stdout"
