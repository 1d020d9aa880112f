// The notebook toolbar's menu of actions on the notebook as a whole: Share (owners), History,
// Fork, export as .ipynb. notebook.js adds notebookMenu(...) to its toolbar; these buttons use
// data-sec-action, not data-action, so the notebook's own click handler leaves them alone.

import { h } from "./dom.js";
import { openShareDialog } from "./share.js";
import { openRevisionsPanel } from "./revisions.js";
import { needs } from "./roles.js";

export async function forkNotebook(api, notebookId) {
  const nb = await api.request("POST", `/notebooks/${encodeURIComponent(notebookId)}/fork`);
  location.href = `/notebooks/${encodeURIComponent(nb.id)}`;
}

export function ipynbUrl(api, notebookId) {
  return `${api.base}/notebooks/${encodeURIComponent(notebookId)}/export?format=ipynb`;
}

// canRestore() says whether the user may restore a revision (editors and up); the page hides
// Share from non-owners, and Fork from reader accounts, through their data-needs attribute.
export function notebookMenu(api, notebookId, { onRestored, onError, canRestore = () => true } = {}) {
  const btn = (action, text, title, run, needed) => {
    const b = h("button", { type: "button", dataset: needed ? { secAction: action, needs: needed } : { secAction: action }, title, text });
    b.addEventListener("click", () => Promise.resolve(run()).catch((err) => onError ? onError(err) : console.error(err)));
    return b;
  };
  return h("span.sec-tools", { dataset: { role: "sec-tools" } },
    btn("share", "Share", "Share with people and links (owners)", () => openShareDialog(api, notebookId), needs("share")),
    btn("history", "History", "Revisions: diff and restore", () => openRevisionsPanel(api, notebookId, { onRestored, canRestore: canRestore() })),
    btn("fork", "Fork", "Copy into your own workspace (members)", () => forkNotebook(api, notebookId), needs("fork")),
    h("a.button", { href: ipynbUrl(api, notebookId), download: "", title: "Download as a Jupyter notebook", text: ".ipynb" }));
}
