"""Progress redraws collapse before storage, and the stored chunks still render what a terminal shows."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from console.outputs.collapse import LineCollapser, render, terminal


def feed_all(pieces: list[str]) -> list[str]:
    c = LineCollapser()
    return [c.feed(p) for p in pieces]


def test_carriage_return_redraws_keep_only_last_state() -> None:
    wire = feed_all(["start\n", "\r 10%", "\r 50%", "\r100%\n", "done\n"])
    assert wire == ["start\n", " 10%", "\r 50%", "\r100%\n", "done\n"]
    assert render(wire) == "start\n100%\ndone\n"


def test_many_redraws_in_one_piece_become_one_line() -> None:
    bar = "".join(f"\r{i:3d}%" for i in range(101)) + "\n"
    assert feed_all([bar]) == ["100%\n"]


def test_keras_backspace_redraw_is_a_replace() -> None:
    first = "1/10 [==>....] - loss: 0.9"
    second = "\b" * len(first) + "\r" + "2/10 [====>..] - loss: 0.8"
    wire = feed_all([first, second, "\n"])
    assert wire == [first, "\r2/10 [====>..] - loss: 0.8", "\n"]


def test_ansi_codes_are_removed_even_when_split() -> None:
    wire = feed_all(["\x1b[32mgreen\x1b[", "0m text\x1b[2K\n"])
    assert render(wire) == "green text\n"
    assert all("\x1b" not in w for w in wire)


def test_crlf_split_across_pieces_is_a_newline() -> None:
    assert render(feed_all(["line one\r", "\nline two\r\n"])) == "line one\nline two\n"


def test_wire_text_has_at_most_a_leading_carriage_return() -> None:
    for w in feed_all(["a\rb\bc\n", "x\ry", "\rz\nq\r", "w\n"]):
        assert "\b" not in w and "\r" not in w[1:]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab\r\n\b\x1b[m0", max_size=12), max_size=12))
def test_render_of_collapsed_equals_terminal(pieces: list[str]) -> None:
    # The final newline releases whatever is held back (a trailing "\r", a partial escape code).
    pieces = [*pieces, "\n"]
    assert render(feed_all(pieces)) == terminal("".join(pieces))
