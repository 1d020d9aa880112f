// Links into the user docs, which the app serves as pages (GET /docs/<name>, console/server/api/userdocs.py,
// rendered by docs.js). Completion and hover docs name their section as `docs/language.md#load`
// (console/kernel/completion_byzer.py); docNode shows such a line as a link to /docs/language#load.
// The docs page gives its headings the ids slugify computes, so the two always agree.

const REF = /^docs\/([a-z0-9][a-z0-9-]*)\.md(?:#([\w-]+))?$/;

// A heading's anchor as GitHub makes it (pure): lower case, punctuation dropped, each space a hyphen.
export function slugify(text) {
  return String(text).trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

// `docs/language.md#load` -> `/docs/language#load`; null for anything else (pure).
export function docHref(ref) {
  const m = REF.exec(String(ref).trim());
  if (!m) return null;
  return `/docs/${m[1]}${m[2] ? `#${m[2]}` : ""}`;
}

// The text of a doc as nodes: each line that names a docs section becomes a link that opens in a
// new tab; the rest stays text (textContent only: the doc may quote user words).
export function docNode(text) {
  const out = document.createElement("span");
  String(text).split("\n").forEach((line, i) => {
    if (i) out.append("\n");
    const href = docHref(line);
    if (!href) {
      out.append(line);
      return;
    }
    const a = document.createElement("a");
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.dataset.role = "doc-link";
    a.textContent = line.trim();
    out.append(a);
  });
  return out;
}

// Whether a doc's text names a docs section (then docNode has a link to show; pure).
export function hasDocLink(text) {
  return String(text).split("\n").some((line) => docHref(line) !== null);
}
