"""Parser details the golden files do not show: positions, case, semicolons in strings, parse_cell kinds."""
from __future__ import annotations

import pytest

from console.lang import (
    Load, ParseError, PythonSetting, Run, Save, Select, Set, T, parse, parse_cell, read_header, substitute_statement,
    tokenize,
)


def test_tokens_carry_line_column_offset() -> None:
    toks = tokenize("load\n  parquet.`a;b` as t;")
    assert [(t.type, t.value, t.line, t.column, t.offset) for t in toks[:4]] == [
        (T.WORD, "load", 1, 1, 0), (T.WORD, "parquet", 2, 3, 7), (T.SYMBOL, ".", 2, 10, 14),
        (T.BACKQUOTED, "a;b", 2, 11, 15)]
    assert toks[-1].type is T.EOF


def test_keywords_any_case_and_last_semicolon_optional() -> None:
    (stmt,) = parse("LoAd CSV.`x.csv` WHERE header='true' AS t")
    assert isinstance(stmt, Load) and stmt.format == "CSV" and stmt.options == {"header": "true"}


def test_semicolons_and_escapes_inside_strings() -> None:
    stmts = parse("select 'a;b' as x, \"c;d\" as y as t; set v = \"q\\\"uote;\";")
    assert isinstance(stmts[0], Select) and stmts[0].sql == "select 'a;b' as x, \"c;d\" as y"
    assert isinstance(stmts[1], Set) and stmts[1].value == 'q"uote;'


def test_select_keeps_start_position_for_error_mapping() -> None:
    (stmt,) = parse("\n\n   select *\n from t as u;")
    assert isinstance(stmt, Select) and (stmt.sql_line, stmt.sql_column) == (3, 4)
    assert stmt.source == "select *\n from t as u"


def test_save_mode_word_can_be_a_table_name() -> None:
    (stmt,) = parse("save append as parquet.`p`;")
    assert isinstance(stmt, Save) and stmt.table == "append" and stmt.mode == "errorIfExists"
    (stmt,) = parse("save OVERWRITE t as parquet.`p`;")
    assert isinstance(stmt, Save) and stmt.mode == "overwrite"


def test_error_str_names_cell_line_column_and_has_caret() -> None:
    with pytest.raises(ParseError) as info:
        parse("load parquet.`x` as t;\nsave t as ;", cell=4)
    err = info.value
    assert (err.cell, err.line, err.column) == (4, 2, 11)
    assert str(err).startswith("cell 4, line 2, column 11: expected a format such as parquet")
    assert str(err).endswith("save t as ;\n          ^")


def test_python_setting_splits_at_first_equals() -> None:
    (stmt,) = parse('!python env "PYTHON_ENV=source a=b";')
    assert isinstance(stmt, PythonSetting) and (stmt.key, stmt.value) == ("PYTHON_ENV", "source a=b")


def test_header_lines_become_blank_lines() -> None:
    text = "--%python\n--%input=t\nprint(1)\n#%output=o\nprint(2)"
    head = read_header(text)
    assert head.kind == "python" and head.params == {"input": "t", "output": "o"}
    assert head.body.split("\n") == ["", "", "print(1)", "", "print(2)"]


def test_python_kind_without_header_and_markdown_cells() -> None:
    stmts = parse_cell("print(1)", kind="python")
    run = next(s for s in stmts if isinstance(s, Run))
    assert run.options["inputTable"] == "command" and run.options["code"] == "print(1)"
    assert len(run.options["outputTable"]) == 32 + 2  # uuid hex + "_0", as MLSQL names it
    assert parse_cell("--%markdown\n# title") == []
    assert parse_cell("# title", kind="markdown") == []


def test_mlsql_cell_with_python_header_is_python() -> None:
    stmts = parse_cell("--%python\n--%output=o\nx = 1", kind="mlsql")
    assert [type(s).__name__ for s in stmts] == ["Run", "Select"]
    assert stmts[1].sql == "select * from o_0"


def test_unknown_variable_names_it_with_position() -> None:
    text = "set a = '1';\nload parquet.`/d/${a}/${nope}` as t;"
    stmt = parse(text)[1]
    with pytest.raises(ParseError) as info:
        substitute_statement(stmt, {"a": "1"}, cell=2, cell_text=text)
    assert (info.value.line, info.value.column) == (2, 23)
    assert "${nope}" in info.value.message


def test_code_substitution_is_lenient() -> None:
    (stmt,) = parse("!ray on t '''print('${x}', '${y}')''' named o;")
    out = substitute_statement(stmt, {"x": "1"})
    assert out.options["code"] == "print('1', '${y}')"
