"""matplotlib's backend in cell workers: plt.show() draws the open figures into the cell's output.

Selected with MPLBACKEND=module://console.worker.mplinline (display.install). Drawing is Agg's;
show() sends each open figure as a PNG output chunk (display.show_png) and closes it, as
Jupyter's inline backend does, instead of Agg's "non-interactive, cannot be shown" warning.
"""
from __future__ import annotations

from typing import Any

from matplotlib._pylab_helpers import Gcf
from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

from console.worker import display

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase


def show(*args: Any, **kwargs: Any) -> None:
    """Every open figure as an image, oldest first; then they are closed."""
    import matplotlib.pyplot as plt

    for manager in Gcf.get_all_fig_managers():
        display.show_png(display.png_of(manager.canvas.figure))
    plt.close("all")
