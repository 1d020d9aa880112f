// Highlighting for MLSQL cells: a small CodeMirror stream tokenizer, table-driven.
//
// A stream parser rather than lang-sql: MLSQL's statements (load/save/set/connect/run/!python)
// and its '''block strings''' and `backquoted paths` are not SQL, and a mis-parse in a full SQL
// grammar colours the rest of the cell wrongly, while a line tokenizer recovers at the next token.

export const STATEMENT_WORDS = new Set([
  "load", "save", "select", "set", "connect", "run", "train", "predict", "register",
  "include", "insert", "explain", "as", "where", "options", "and", "or", "not",
  "overwrite", "append", "errorifexists", "ignore", "partitionby", "named", "on",
]);

export const SQL_WORDS = new Set([
  "from", "join", "left", "right", "inner", "outer", "full", "cross", "group", "by", "order",
  "having", "limit", "union", "all", "distinct", "case", "when", "then", "else", "end", "in",
  "is", "null", "like", "between", "with", "asc", "desc", "over", "partition", "cast", "exists",
  "true", "false", "into", "values", "table", "using",
]);

function readBlockString(stream, state) {
  while (!stream.eol()) {
    if (stream.match("'''")) {
      state.block = false;
      return "string";
    }
    stream.next();
  }
  return "string";
}

function readBlockComment(stream, state) {
  while (!stream.eol()) {
    if (stream.match("*/")) {
      state.comment = false;
      return "comment";
    }
    stream.next();
  }
  return "comment";
}

export const mlsqlStream = {
  name: "mlsql",
  startState: () => ({ block: false, comment: false }),
  token(stream, state) {
    if (state.block) return readBlockString(stream, state);
    if (state.comment) return readBlockComment(stream, state);
    if (stream.eatSpace()) return null;
    if (stream.match("--")) {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match("/*")) {
      state.comment = true;
      return readBlockComment(stream, state);
    }
    if (stream.match("'''")) {
      state.block = true;
      return readBlockString(stream, state);
    }
    if (stream.match(/^!\w+/)) return "keyword"; // !python, !ray, !desc ...
    if (stream.match(/^\$\{[^}]*\}?/)) return "variableName.special";
    const ch = stream.peek();
    if (ch === "'" || ch === '"') {
      stream.next();
      let escaped = false;
      let c;
      while ((c = stream.next()) !== undefined) {
        if (c === ch && !escaped) break;
        escaped = !escaped && c === "\\";
      }
      return "string";
    }
    if (ch === "`") {
      stream.next();
      stream.skipTo("`") ? stream.next() : stream.skipToEnd();
      return "string.special";
    }
    if (stream.match(/^-?\d+(\.\d+)?([eE][-+]?\d+)?/)) return "number";
    if (stream.match(/^[A-Za-z_][\w]*/)) {
      const word = stream.current().toLowerCase();
      if (STATEMENT_WORDS.has(word)) return "keyword";
      if (SQL_WORDS.has(word)) return "keyword";
      // "parquet.`/p`", "delta.`db.t`", "Ray.``": the format before a backquoted path
      if (stream.peek() === "." && stream.string.charAt(stream.pos + 1) === "`") return "typeName";
      return "variableName";
    }
    if (stream.match(/^[;=<>!+\-*/%,().]/)) return "punctuation";
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: "--", block: { open: "/*", close: "*/" } } },
};
