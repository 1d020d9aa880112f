// Markdown cells rendered with marked, then cleaned by DOMPurify: a cell may hold raw HTML, and
// what reaches the page must not run script, load frames or carry event handlers.

import { marked } from "marked";
import DOMPurify from "dompurify";

marked.setOptions({ gfm: true, breaks: false });

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
};

// Links open in a new tab and never get the opener.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.getAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

export function renderMarkdown(source, target) {
  const html = DOMPurify.sanitize(marked.parse(source || ""), PURIFY);
  // The one innerHTML in the app: its input is the sanitizer's output, never raw user text.
  target.innerHTML = html;
  if (!source || !source.trim()) target.classList.add("empty");
  else target.classList.remove("empty");
}
