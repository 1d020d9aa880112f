"""Pictures from Python cells: `display(fig)` and pyjava's `Utils.show_plt(plt)`.

A matplotlib figure becomes a PNG, sent as one output chunk with stream "image" whose text is
the base64 PNG (messages.OutputEvent); the page draws it where the cell's output is. Figures are
drawn with Agg (the worker has no display) through mplinline, whose plt.show() sends them here.
"""
from __future__ import annotations

import base64
import builtins
import io
import os
import sys
from typing import Any

from console.wire.worker import CellOutput
from console.worker.channel import Channel

_channel: Channel | None = None


def install(channel: Channel) -> None:
    """At worker start: images go to this channel; `display` becomes a builtin (unless one exists)."""
    global _channel
    _channel = channel
    # plt.show() draws into the output (mplinline); a backend chosen in the environment is kept.
    os.environ.setdefault("MPLBACKEND", "module://console.worker.mplinline")
    if not hasattr(builtins, "display"):
        builtins.display = display  # type: ignore[attr-defined]


def png_of(obj: Any) -> bytes:
    """PNG bytes of a matplotlib Figure, the pyplot module (its current figure), Axes, or PNG bytes."""
    if isinstance(obj, (bytes, bytearray)):
        if not bytes(obj[:8]) == b"\x89PNG\r\n\x1a\n":
            raise TypeError("display() takes PNG bytes, a matplotlib figure or pyplot; these bytes are not a PNG")
        return bytes(obj)
    figure = obj
    if hasattr(obj, "gcf"):  # the pyplot module
        figure = obj.gcf()
    elif hasattr(obj, "get_figure") and not hasattr(obj, "savefig"):  # an Axes
        figure = obj.get_figure()
    if not hasattr(figure, "savefig"):
        raise TypeError(f"display() shows matplotlib figures (or pyplot, or PNG bytes); "
                        f"got {type(obj).__module__}.{type(obj).__qualname__}")
    buf = io.BytesIO()
    figure.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def show_png(png: bytes) -> None:
    """Send one PNG as this cell's next output chunk (after the text printed before it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    text = base64.b64encode(png).decode("ascii")
    if _channel is None:  # pyjava outside a worker: nowhere to draw it
        print(f"[image: {len(png)} bytes of PNG, shown only in a notebook]")
        return
    _channel.send(CellOutput(job_id=_channel.job_id, text=text, source="driver", stream="image"))


def display(*objs: Any) -> None:
    """Show each matplotlib figure (or pyplot's current one) as an image in the cell's output."""
    for obj in objs:
        show_png(png_of(obj))


def show_plt(plt: Any, context: Any = None) -> None:
    """pyjava's Utils.show_plt: pyplot's current figure as an image; the figure is then closed.

    Byzer returned the picture as the cell's result table (content, mime); here it is output, so
    the cell's result stays what the code builds. `context` is accepted for Byzer's signature.
    """
    show_png(png_of(plt))
    close = getattr(plt, "close", None)
    if callable(close):
        close()
