// A docs page (/docs/<name>): the markdown of docs/<name>.md (GET /api/docs/<name>,
// console/server/api/userdocs.py) through the markdown cells' own renderer (markdown.js: marked, then
// DOMPurify), then ids on the headings (slugify, as completion's doc links compute them) so
// `/docs/language#load` lands on its section. Links to another doc (`security.md#x`) stay in the
// docs pages and in this tab; links within the page scroll it.

import "./docs.css";
import { h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { slugify } from "./doclinks.js";

const DOC_LINK = /^([a-z0-9][a-z0-9-]*)\.md(#[\w-]*)?$/;

// Headings get GitHub's anchors; a repeated one gets -1, -2, … like GitHub's.
export function addHeadingIds(article) {
  const seen = new Map();
  for (const el of article.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const base = slugify(el.textContent);
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    el.id = n ? `${base}-${n}` : base;
  }
}

function keepInDocs(article) {
  for (const a of article.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    const m = DOC_LINK.exec(href);
    if (m) a.setAttribute("href", `/docs/${m[1]}${m[2] || ""}`);
    if (m || href.startsWith("#")) {
      a.removeAttribute("target"); // the renderer opens every link in a new tab; these are the docs' own
      a.removeAttribute("rel");
    }
  }
}

export class DocsPage {
  constructor(root, { api, name }) {
    this.root = root;
    this.api = api;
    this.name = name;
  }

  async start() {
    document.title = `${this.name} · MLSQL Console docs`;
    const article = h("article.markdown-view.docs-article", { dataset: { role: "doc" } });
    this.root.replaceChildren(h("header.toolbar", {}, h("a.button", { href: "/", text: "← Workspace" }),
      h("h1.nb-name", { text: `Docs: ${this.name}` })), h("main.docs-page", {}, article));
    try {
      const doc = await this.api.request("GET", `/docs/${encodeURIComponent(this.name)}`);
      renderMarkdown(doc.markdown, article);
      addHeadingIds(article);
      keepInDocs(article);
      const title = article.querySelector("h1");
      if (title) document.title = `${title.textContent} · MLSQL Console`;
    } catch (err) {
      article.replaceChildren(h("p.error", { dataset: { role: "doc-error" }, text: err.message }));
    }
    this.root.dataset.ready = "1";
    // The address's #section: the browser looked for it before the headings existed. Navigating
    // to it again (in place, no history entry) scrolls there and makes it the :target.
    if (location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)))) {
      location.replace(location.hash);
    }
  }
}
