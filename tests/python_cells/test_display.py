"""Pictures from Python cells: display(fig) and Utils.show_plt(plt) become "image" outputs (base64 PNG)."""
from __future__ import annotations

import base64
from typing import Any

import pytest

from console.kernel.job import PythonCellError, PythonJob
from console.worker import display

PNG = b"\x89PNG\r\n\x1a\n"

CELL = """
import matplotlib.pyplot as plt
from pyjava.api import Utils

print("before")
fig, ax = plt.subplots(figsize=(2, 2))
ax.plot([1, 2, 3], [3, 1, 2])
display(fig)
print("between")
plt.figure(figsize=(3, 1))
plt.bar(["a", "b"], [1, 2])
Utils.show_plt(plt)
print("after", len(plt.get_fignums()), plt.get_backend().lower())
"""


def test_figures_become_png_outputs_in_order(runtime: Any, events: Any) -> None:
    assert runtime.run(PythonJob(code=CELL)) is None
    outputs = [e for e in events if e.type == "output" and e.source == "driver"]
    order = [("image" if e.stream == "image" else e.text.strip()) for e in outputs if e.text.strip()]
    # show_plt closed its figure; the backend is the worker's own (plt.show() draws into the output)
    assert order == ["before", "image", "between", "image", "after 1 module://console.worker.mplinline"], order
    images = [base64.b64decode(e.text, validate=True) for e in outputs if e.stream == "image"]
    assert all(png.startswith(PNG) and len(png) > 500 for png in images)
    assert images[0] != images[1]


def test_display_of_something_else_says_what_it_takes(runtime: Any) -> None:
    with pytest.raises(PythonCellError) as err:
        runtime.run(PythonJob(code="display({'not': 'a figure'})\n", code_line=3))
    assert err.value.kind == "python" and err.value.line == 3
    assert "display() shows matplotlib figures" in err.value.message and "builtins.dict" in err.value.message


def test_png_of_accepts_figures_axes_and_png_bytes() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    ax = fig.add_subplot()
    assert display.png_of(fig).startswith(PNG)
    assert display.png_of(ax).startswith(PNG)
    assert display.png_of(PNG + b"rest") == PNG + b"rest"
    with pytest.raises(TypeError, match="not a PNG"):
        display.png_of(b"GIF89a")
