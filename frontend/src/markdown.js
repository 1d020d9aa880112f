// Markdown cells rendered with marked, then cleaned by DOMPurify: a cell may hold raw HTML, and
// what reaches the page must not run script, load frames or carry event handlers.
//
// Images from other sites are not fetched unless the server allows them (GET /api/me
// `markdown_remote_images`, CONSOLE_MARKDOWN_REMOTE_IMAGES): each fetch would tell that site who
// opened the notebook, and when. Such an image keeps its alt text and shows its address on hover.
// The page's Content-Security-Policy (console/server/pages.py) refuses them as well.

import { marked } from "marked";
import DOMPurify from "dompurify";

marked.setOptions({ gfm: true, breaks: false });

const PURIFY = {
  USE_PROFILES: { html: true },
  // Media elements fetch their sources too; images are the Markdown way, and are checked below.
  FORBID_TAGS: ["style", "form", "input", "button", "iframe", "object", "embed", "audio", "video", "source",
    "track", "picture"],
  FORBID_ATTR: ["style", "srcset", "poster"],
};

let remoteImages = false;

// The server's answer, once GET /api/me arrives (frontend/src/notebook.js); off until then.
export function allowRemoteImages(on) {
  remoteImages = on === true;
}

export function isRemote(src, base = location.href) {
  let url;
  try {
    url = new URL(src, base);
  } catch {
    return true; // what no browser could fetch from here is dropped, not guessed at
  }
  if (url.protocol === "data:" || url.protocol === "blob:") return false;
  return url.origin !== new URL(base).origin;
}

// Links open in a new tab and never get the opener; remote images lose their source.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.getAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
  if (node.tagName === "IMG" && node.hasAttribute("src") && !remoteImages && isRemote(node.getAttribute("src"))) {
    const src = node.getAttribute("src");
    node.removeAttribute("src");
    node.setAttribute("data-remote-src", src);
    node.setAttribute("title", `image from another site, not loaded: ${src}`);
    node.setAttribute("alt", node.getAttribute("alt") || "image from another site");
  }
});

export function renderMarkdown(source, target) {
  const html = DOMPurify.sanitize(marked.parse(source || ""), PURIFY);
  // The one innerHTML in the app: its input is the sanitizer's output, never raw user text.
  target.innerHTML = html;
  if (!source || !source.trim()) target.classList.add("empty");
  else target.classList.remove("empty");
}
