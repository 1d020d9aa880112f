"""The MLSQL parser: a table from leading keyword to a small `_parse_<statement>` method each."""
from __future__ import annotations

import dataclasses
from typing import Callable

from console.lang import ast
from console.lang.errors import ParseError, snippet_at
from console.lang.tokens import T, Token, tokenize

ET_NAMES = {"ray": "Ray", "tablerepartition": "TableRepartition"}
_MODES = {m.lower(): m for m in ast.SAVE_MODES}
_SET_TYPES = {t.lower(): t for t in ast.SET_TYPES}


def _describe(tok: Token) -> str:
    if tok.type is T.EOF:
        return "the end of the cell"
    text = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    return repr(text)


class Parser:
    """Parses one cell's text; `parse()` returns its statements in order."""

    STATEMENTS: dict[str, Callable[["Parser", Token], ast.Statement]] = {}

    def __init__(self, text: str, cell: str | int | None = None) -> None:
        self.text = text
        self.cell = cell
        self.tokens = tokenize(text, cell)
        self.i = 0

    # ------------------------------------------------------------------ token helpers
    def _peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def _next(self) -> Token:
        tok = self._peek()
        if tok.type is not T.EOF:
            self.i += 1
        return tok

    def error(self, tok: Token, expected: str | None, message: str | None = None) -> ParseError:
        msg = message or f"expected {expected}, found {_describe(tok)}"
        return ParseError(msg, self.cell, tok.line, tok.column, expected, snippet_at(self.text, tok.line, tok.column))

    def _word(self, *words: str) -> Token:
        """The next token, which must be one of `words` (any case)."""
        tok = self._next()
        if not tok.is_word(*words):
            raise self.error(tok, " or ".join(repr(w) for w in words))
        return tok

    def _symbol(self, ch: str) -> Token:
        tok = self._next()
        if tok.type is not T.SYMBOL or tok.value != ch:
            raise self.error(tok, repr(ch))
        return tok

    def _name(self, what: str) -> str:
        """A table, alias or column name: a word or a backquoted name."""
        tok = self._next()
        if tok.type is T.WORD or (tok.type is T.BACKQUOTED and tok.value):
            return tok.value
        if tok.type is T.VARIABLE:  # `as ${t}`: substituted when the statement runs
            return tok.text
        raise self.error(tok, what)

    def _dotted(self, first: Token) -> str:
        """first.word.word… — qualified names and dotted numbers, joined without spaces."""
        parts = [first.value]
        while self._peek().value == "." and self._peek().type is T.SYMBOL \
                and self._peek(1).type is T.WORD and self._peek(1).offset == self._peek().end:
            self.i += 1
            parts.append(self._next().value)
        return ".".join(parts)

    def _format_path(self, what: str = "a format such as parquet") -> tuple[str, str]:
        """FORMAT.`path` (or FORMAT.word.word) as in load/save/include/run."""
        tok = self._next()
        if tok.type is not T.WORD:
            raise self.error(tok, what)
        self._symbol(".")
        path_tok = self._next()
        if path_tok.type in (T.BACKQUOTED, T.STRING, T.VARIABLE):
            return tok.value, path_tok.value if path_tok.type is not T.VARIABLE else path_tok.text
        if path_tok.type is T.WORD:
            return tok.value, self._dotted(path_tok)
        raise self.error(path_tok, "a path in backquotes, such as `/data/file`")

    def _value(self, what: str) -> Token:
        """An option or set value: a string, block string, backquoted text, ${var}, word or number."""
        tok = self._next()
        if tok.type is T.VARIABLE:  # substituted when the statement runs, like ${…} inside strings
            return dataclasses.replace(tok, value=tok.text)
        if tok.type in (T.STRING, T.BLOCK, T.BACKQUOTED):
            return tok
        if tok.type is T.SYMBOL and tok.value == "-" and self._peek().type is T.WORD:
            num = self._next()
            return dataclasses.replace(tok, type=T.WORD, value="-" + self._dotted(num), end=num.end)
        if tok.type is T.WORD:
            value = self._dotted(tok)
            return dataclasses.replace(tok, value=value)
        raise self.error(tok, what)

    def _options(self) -> tuple[dict[str, str], dict[str, Token]]:
        """[where|options] k="v" and k2='''v2''' …; returns the values and the value tokens."""
        options: dict[str, str] = {}
        where: dict[str, Token] = {}
        if not self._peek().is_word("where", "options", "and"):
            return options, where
        if self._next().is_word("where", "options") and self._peek().is_word("and") \
                and not (self._peek(1).type is T.SYMBOL and self._peek(1).value == "="):
            self._next()  # `where and k=v`: Byzer accepts an empty first condition
        while True:
            key_tok = self._next()
            if key_tok.type is T.WORD:
                key = self._dotted(key_tok)
            elif key_tok.type is T.BACKQUOTED and key_tok.value:
                key = key_tok.value
            else:
                raise self.error(key_tok, 'an option such as key="value"')
            self._symbol("=")
            val = self._value('an option value such as "value"')
            options[key] = val.value
            where[key] = val
            if not self._peek().is_word("and"):
                return options, where
            self._next()

    def _at(self, start: Token) -> ast.Position:
        return {"line": start.line, "column": start.column, "offset": start.offset}

    # ------------------------------------------------------------------ statements
    def parse(self) -> list[ast.Statement]:
        out: list[ast.Statement] = []
        while True:
            tok = self._peek()
            if tok.type is T.EOF:
                return out
            if tok.type is T.SEMI:
                self._next()
                continue
            key = tok.value.lower() if tok.type is T.WORD else ""
            if tok.type is T.SYMBOL and tok.value == "!" and self._peek(1).type is T.WORD:
                key = "!" + self._peek(1).value.lower()
            method = self.STATEMENTS.get(key)
            if method is None and key.startswith("!"):
                method = Parser._parse_command
            if method is None:
                raise self.error(tok, "a statement: " + ", ".join(k for k in self.STATEMENTS if k != "with"))
            stmt = method(self, self._next())
            end = self._peek()
            if end.type not in (T.SEMI, T.EOF):
                raise self.error(end, "';'")
            out.append(dataclasses.replace(stmt, source=self.text[stmt.offset:end.offset].rstrip()))

    def _parse_load(self, start: Token) -> ast.Statement:
        fmt, path = self._format_path()
        options, _ = self._options()
        self._word("as")
        return ast.Load(format=fmt, path=path, options=options, table=self._name("a table name"), **self._at(start))

    def _parse_select(self, start: Token) -> ast.Statement:
        first = self.i - 1
        while self._peek().type not in (T.SEMI, T.EOF):
            self._next()
        body = self.tokens[first:self.i]
        end = self._peek()
        if len(body) < 3 or not body[-2].is_word("as") or body[-1].type not in (T.WORD, T.BACKQUOTED):
            raise self.error(end, "'as <table>' at the end of the select",
                             "a select must end with 'as <table>' to name its result")
        sql = self.text[start.offset:body[-2].offset].rstrip()
        return ast.Select(sql=sql, table=body[-1].value, sql_line=start.line, sql_column=start.column,
                          **self._at(start))

    def _parse_save(self, start: Token) -> ast.Statement:
        mode = "errorIfExists"
        tok = self._peek()
        if tok.type is T.WORD and tok.value.lower() in _MODES and not self._peek(1).is_word("as"):
            mode = _MODES[self._next().value.lower()]
        table = self._name("a table name (or a mode: overwrite, append, errorIfExists, ignore)")
        self._word("as")
        fmt, path = self._format_path()
        options, _ = self._options()
        partition_by: list[str] = []
        if self._peek().is_word("partitionby"):
            self._next()
            partition_by.append(self._name("a column name"))
            while self._peek().value == "," and self._peek().type is T.SYMBOL:
                self._next()
                partition_by.append(self._name("a column name"))
            if not options:
                options, _ = self._options()
        return ast.Save(mode=mode, table=table, format=fmt, path=path, options=options,
                        partition_by=tuple(partition_by), **self._at(start))

    def _parse_set(self, start: Token) -> ast.Statement:
        key_tok = self._next()
        if key_tok.type is not T.WORD:
            raise self.error(key_tok, "a variable name")
        key = self._dotted(key_tok)
        self._symbol("=")
        value = self._value('a value such as "text" or `command`')
        options, where = self._options()
        kind = options.get("type")
        if kind is not None:
            if kind.lower() not in _SET_TYPES:
                raise self.error(where["type"], "one of " + ", ".join(ast.SET_TYPES), f"unknown set type {kind!r}; "
                                 "expected one of " + ", ".join(ast.SET_TYPES))
            options["type"] = _SET_TYPES[kind.lower()]
        return ast.Set(key=key, value=value.value, options=options, **self._at(start))

    def _parse_connect(self, start: Token) -> ast.Statement:
        fmt = self._next()
        if fmt.type is not T.WORD:
            raise self.error(fmt, "a format such as jdbc")
        options, _ = self._options()
        self._word("as")
        return ast.Connect(format=fmt.value, options=options, alias=self._name("a connection alias"), **self._at(start))

    def _parse_python(self, start: Token) -> ast.Statement:
        self._next()  # "python"
        sub = self._next()
        if not sub.is_word("env", "conf"):
            raise self.error(sub, "env or conf", f"unknown !python command {_describe(sub)}; expected env or conf")
        arg = self._next()
        if arg.type not in (T.STRING, T.BLOCK):
            raise self.error(arg, '"key=value"')
        key, eq, value = arg.value.partition("=")
        if not eq or not key.strip():
            raise self.error(arg, '"key=value"',
                             f'!python {sub.value.lower()} needs "key=value", found {_describe(arg)}')
        return ast.PythonSetting(scope=sub.value.lower(), key=key.strip(), value=value, **self._at(start))

    def _parse_ray(self, start: Token) -> ast.Statement:
        self._next()  # "ray"
        self._word("on")
        if self._peek().type is T.STRING:  # !ray on "${t}" as Byzer writes it
            table = self._next().value
        else:
            table = self._name("a table name")
        code = self._next()
        if code.type not in (T.BLOCK, T.STRING):
            raise self.error(code, "the code as '''…'''")
        self._word("named")
        out = self._name("an output table name")
        options = {"inputTable": table, "outputTable": out, "code": code.value}
        return ast.Run(input=table, et="Ray", options=options, code_line=code.line, **self._at(start))

    def _parse_run(self, start: Token) -> ast.Statement:
        verb = start.value.lower()
        table = self._name("a table name (or command)")
        self._word("as")
        et, path = self._format_path("an extension or algorithm such as DataSummary or RandomForest")
        et = ET_NAMES.get(et.lower(), et)
        options, where = self._options()
        output = None
        if self._peek().is_word("as"):
            self._next()
            output = self._name("an output table name")
        code_line = 1
        if verb == "run" and et == "Ray":
            if "code" not in options:
                raise self.error(self._peek(), "code='''…'''", "run … as Ray needs code='''…''' in its where clause")
            code_line = where["code"].line
        elif verb == "run" and et == "TableRepartition":
            num = options.get("partitionNum")
            if num is None or not num.isdigit() or int(num) < 1:
                tok = where.get("partitionNum", self._peek())
                raise self.error(tok, 'partitionNum="N"', 'TableRepartition needs partitionNum="N" with N >= 1')
            if output is None:
                raise self.error(self._peek(), "'as <table>'", "TableRepartition needs 'as <table>' to name its result")
        return ast.Run(input=table, et=et, path=path, options=options, output=output, code_line=code_line,
                       verb=verb, **self._at(start))

    def _parse_command(self, start: Token) -> ast.Statement:
        """!name args…; (any name): words, -flags and paths written without spaces are one argument."""
        name_tok = self._next()
        args: list[str] = []
        prev: Token | None = None
        while self._peek().type not in (T.SEMI, T.EOF):
            tok = self._next()
            quoted = tok.type in (T.STRING, T.BLOCK, T.BACKQUOTED)
            if prev is not None and tok.offset == prev.end and not quoted \
                    and prev.type not in (T.STRING, T.BLOCK, T.BACKQUOTED):
                args[-1] += tok.text
            else:
                args.append(tok.value if quoted else tok.text)
            prev = tok
        raw = self.text[name_tok.end:self._peek().offset].strip()
        return ast.Command(name=name_tok.value, args=tuple(args), raw=raw, **self._at(start))

    def _parse_include(self, start: Token) -> ast.Statement:
        fmt, path = self._format_path("notebook.`name#cell`")
        options, _ = self._options()
        return ast.Include(format=fmt, path=path, options=options, **self._at(start))

    def _parse_register(self, start: Token) -> ast.Statement:
        et, path = self._format_path("an extension such as Ray")
        self._word("as")
        fn = self._name("a function name")
        options, _ = self._options()
        return ast.Register(et=et, path=path, function=fn, options=options, **self._at(start))


Parser.STATEMENTS = {
    "load": Parser._parse_load,
    "select": Parser._parse_select,
    "with": Parser._parse_select,
    "save": Parser._parse_save,
    "set": Parser._parse_set,
    "connect": Parser._parse_connect,
    "run": Parser._parse_run,
    "train": Parser._parse_run,
    "predict": Parser._parse_run,
    "include": Parser._parse_include,
    "register": Parser._parse_register,
    "!python": Parser._parse_python,
    "!ray": Parser._parse_ray,
}


def parse(text: str, cell: str | int | None = None) -> list[ast.Statement]:
    """Parse a cell of MLSQL statements; raises ParseError with the cell's line and column."""
    return Parser(text, cell).parse()
