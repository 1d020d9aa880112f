// Completion and hover for the cell editors. The kernel answers from its live catalog
// (POST /api/notebooks/<id>/complete, GET .../inspect); the notebook page registers how to ask
// (setAssist). Without a running kernel the page offers MLSQL's own words, so Ctrl+Space always
// shows something.

import { STATEMENT_WORDS, SQL_WORDS } from "./mlsql-lang.js";
import { docNode, hasDocLink } from "./doclinks.js";

let provider = null;

// provider: { complete(source, cursor, kind) -> Promise<{from, to, items, kernel}>, inspect(name) -> Promise<schema> }
export function setAssist(p) {
  provider = p;
}

const LOCAL = [...new Set([...STATEMENT_WORDS, ...SQL_WORDS])].filter((w) => w !== "partitionby" && w !== "errorifexists");

// The words the page itself offers when the kernel cannot answer (pure: tested under node).
export function localItems(kind, typed) {
  if (kind !== "mlsql" || !typed) return [];
  const lower = typed.toLowerCase();
  return LOCAL.filter((w) => w.startsWith(lower) && w !== lower).map((w) => ({ label: w, type: "keyword" }));
}

// The cell kind a header asks for: `--%python` or `#%python` as the first line (pure).
export function kindFromHeader(text) {
  const first = text.split("\n", 1)[0].trim();
  return /^(--|#)%python\b/.test(first) ? "python" : null;
}

// CodeMirror option objects from the kernel's items; `boost` ranks the select's own columns first;
// `info` (a statement's, command's or algorithm's doc) is shown beside the selected option, the
// line naming its section of docs/language.md as a link to that docs page (doclinks.js).
export function toOptions(items) {
  return items.map((i) => {
    const option = { label: i.label, type: i.type, detail: i.detail, boost: i.boost ? Number(i.boost) : 0 };
    if (i.info) option.info = hasDocLink(i.info) ? () => docNode(i.info) : i.info;
    return option;
  });
}

export function completionSource(getKind) {
  return async (context) => {
    const kind = getKind();
    if (kind === "markdown") return null;
    const before = context.matchBefore(/[\w$!{]*$/);
    const afterDot = context.state.sliceDoc(Math.max(0, context.pos - 1), context.pos) === ".";
    if (!context.explicit && !afterDot && (!before || before.from === before.to)) return null;
    const source = context.state.doc.toString();
    let answer = null;
    if (provider) {
      try {
        answer = await provider.complete(source, context.pos, kind);
      } catch {
        answer = null; // a failed request: the page's own words below
      }
    }
    if (context.aborted) return null;
    const typed = before ? before.text : "";
    const items = answer && answer.items.length ? answer.items : localItems(kind, typed);
    if (!items.length) return null;
    const from = answer && answer.items.length ? answer.from : (before ? before.from : context.pos);
    return { from, options: toOptions(items), validFor: /^[\w$]*$/ };
  };
}

// Hover over a table name: its schema, from the kernel (nothing when it has no such table).
const schemas = new Map(); // name -> {at, answer}: a hover repeats on every mouse move

export async function schemaOf(name) {
  if (!provider || !/^!?[A-Za-z_]\w*$/.test(name)) return null;
  const hit = schemas.get(name);
  if (hit && Date.now() - hit.at < 5000) return hit.answer;
  let answer = null;
  try {
    answer = await provider.inspect(name);
  } catch {
    answer = null;
  }
  schemas.set(name, { at: Date.now(), answer });
  return answer;
}

// The schema as lines of text, or a word's doc (a statement, !command, algorithm) as it is (pure).
export function schemaText(schema) {
  if (schema.doc) return schema.doc;
  const head = `${schema.name}: ${schema.rows} row${schema.rows === 1 ? "" : "s"}`;
  return [head, ...schema.columns.map((c) => `  ${c.name}  ${c.type}`)].join("\n");
}
