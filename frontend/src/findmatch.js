// Finding and replacing text across a notebook's cells, as pure functions (tested under node):
// a matcher from the find bar's query and toggles, every match of every cell in order, and the
// edits that replace them. findbar.js draws the bar and applies the edits to the shared document.

// A matcher for `query` ({caseSensitive, regex}): {find(text) -> [{from, to, groups}]} or {error}.
export function makeMatcher(query, { caseSensitive = false, regex = false } = {}) {
  if (!query) return { find: () => [] };
  let re;
  try {
    re = new RegExp(regex ? query : query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), caseSensitive ? "g" : "gi");
  } catch (err) {
    return { error: String(err.message || err).replace(/^Invalid regular expression: /, "") };
  }
  return {
    find(text) {
      const out = [];
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        if (m[0] === "") { // an empty match (^, \b, x*) marks nothing: step over it
          re.lastIndex += 1;
          continue;
        }
        out.push({ from: m.index, to: m.index + m[0].length, groups: [...m], named: m.groups });
      }
      return out;
    },
  };
}

// Every match of every cell, top to bottom: [{cellId, from, to, groups, named}].
// cells: [{id, text}].
export function findAll(cells, matcher) {
  const out = [];
  for (const { id, text } of cells) for (const m of matcher.find(text)) out.push({ cellId: id, ...m });
  return out;
}

// The text a regex replacement inserts for one match: $& the match, $1..$99 its groups, $<name>
// a named group, $$ a dollar (String.prototype.replace's rules, without $` and $').
export function expandReplacement(replacement, match, regex) {
  if (!regex) return replacement;
  return replacement.replace(/\$(\$|&|\d{1,2}|<([^>]*)>)/g, (all, what, name) => {
    if (what === "$") return "$";
    if (what === "&") return match.groups[0];
    if (name !== undefined) return match.named && name in match.named ? match.named[name] ?? "" : all;
    const n = Number(what);
    if (n >= 1 && n < match.groups.length) return match.groups[n] ?? "";
    return all;
  });
}

// The edits that replace `matches` ([{cellId, from, to, groups}]), per cell from the last match to
// the first so each offset still holds when it is applied: [{cellId, from, to, insert}].
export function replacementEdits(matches, replacement, regex) {
  const byCell = new Map();
  for (const m of matches) {
    if (!byCell.has(m.cellId)) byCell.set(m.cellId, []);
    byCell.get(m.cellId).push({ cellId: m.cellId, from: m.from, to: m.to, insert: expandReplacement(replacement, m, regex) });
  }
  return [...byCell.values()].flatMap((edits) => edits.sort((a, b) => b.from - a.from));
}

// Applies edits (as replacementEdits makes them) to plain texts: {cellId: text} -> a new map.
export function applyEdits(texts, edits) {
  const out = { ...texts };
  for (const e of edits) out[e.cellId] = out[e.cellId].slice(0, e.from) + e.insert + out[e.cellId].slice(e.to);
  return out;
}

// Which match to show after the texts changed: the first at or after where the shown one was.
export function nearestMatch(matches, order, at) {
  if (!matches.length) return -1;
  if (!at) return 0;
  const rank = (m) => order.indexOf(m.cellId);
  const i = matches.findIndex((m) => rank(m) > rank(at) || (m.cellId === at.cellId && m.from >= at.from));
  return i < 0 ? 0 : i;
}
