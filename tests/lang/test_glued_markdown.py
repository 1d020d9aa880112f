"""Byzer's `--%markdown` with the text glued on (issue 28): `--%markdown以上为…` is a markdown cell."""
from __future__ import annotations

import json

import pytest

from console.interchange import read_any
from console.lang import ParseError, parse_cell


@pytest.mark.parametrize("text", ["--%markdown以上为数据准备\n## 说明", "--%markdown# Title\ntext", "#%markdown\n# x",
                                  "--%MARKDOWN说明 a = b"])
def test_a_glued_markdown_header_makes_a_markdown_cell(text: str) -> None:
    assert parse_cell(text, cell=1) == []  # nothing to run, no "unsupported cell type"


def test_another_word_after_markdown_is_still_refused_by_name() -> None:
    with pytest.raises(ParseError, match="unsupported cell type 'markdownish'"):
        parse_cell("--%markdownish\nselect 1 as a as t;", cell=1)


def test_a_byzer_file_with_glued_chinese_markdown_imports_as_markdown() -> None:
    byzer = {"name": "nb", "cell_list": [{"content": "--%markdown以上为数据准备\n更多说明"},
                                         {"content": "select 1 as a as t;"}]}
    nb = read_any(json.loads(json.dumps(byzer)), "bznb")
    assert [(c["kind"], c["source"]) for c in nb["cells"]] == [("markdown", "以上为数据准备\n更多说明"),
                                                             ("mlsql", "select 1 as a as t;")]
