"""Property: any text, and any mutation of a fixture, parses to statements or raises ParseError, nothing else."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.lang import ParseError, parse, parse_cell

_FOLDER = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURES = sorted([*_FOLDER.glob("*.mlsql"), *_FOLDER.glob("byzer/*.mlsql")])
TEXTS = [p.read_text(encoding="utf-8") for p in FIXTURES]
# Characters the grammar cares about, so random text reaches deep into the parser.
ALPHABET = st.sampled_from(list("abcdefghijklmnopqrstuvwxyz ASELECTLOADSAVE_01.;,=!`'\"${}()-/*%#\n\t"))
PIECES = st.sampled_from(["load ", "select ", "save ", "set ", "connect ", "run ", "!python ", "!ray on ",
                          "include ", "register ", " as ", " where ", " and ", "partitionBy ", "'''", "`",
                          "${x}", "--%python\n", "#%input=t\n", "!if ", "!fi", "!assert ", "!fs -ls ", " named ",
                          "train ", "predict ", ";", "=", '"', "'", "/*", "*/", "--"])
QUICK = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(text: str) -> None:
    for fn in (parse, parse_cell):
        try:
            result = fn(text, cell=1)
        except ParseError as exc:
            assert exc.line >= 1 and exc.column >= 1
            str(exc)
        else:
            assert isinstance(result, list)


@QUICK
@given(st.lists(st.one_of(st.text(ALPHABET, max_size=12), PIECES), max_size=25).map("".join))
def test_random_text(text: str) -> None:
    _check(text)


@QUICK
@given(st.text(max_size=200))
def test_any_unicode(text: str) -> None:
    _check(text)


@QUICK
@given(st.sampled_from(TEXTS), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 6),
                                                  st.one_of(st.text(ALPHABET, max_size=4), PIECES)), max_size=4))
def test_mutated_fixtures(text: str, edits: list[tuple[int, int, str]]) -> None:
    for pos, cut, insert in edits:
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + cut:]
    _check(text)
