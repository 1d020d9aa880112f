// The notebook toolbar's actions on the notebook as a whole: Share (owners) and History on the
// toolbar; Save version (editors), Environment (its %pip packages), Fork and export as .ipynb for its "More" menu; and who is
// logged in (account.js). notebookMenu(...) returns {tools, items, account} for toolbar.js to
// place; these buttons use data-sec-action, not data-action, so the notebook's own click handler
// leaves them alone.

import { h } from "./dom.js";
import { ask } from "./dialog.js";
import { openShareDialog } from "./share.js";
import { openRevisionsPanel, saveVersion } from "./revisions.js";
import { openEnvironmentPanel } from "./environment.js";
import { needs } from "./roles.js";
import { accountMenu } from "./account.js";

export async function forkNotebook(api, notebookId) {
  const nb = await api.request("POST", `/notebooks/${encodeURIComponent(notebookId)}/fork`);
  location.href = `/notebooks/${encodeURIComponent(nb.id)}`;
}

export function ipynbUrl(api, notebookId) {
  return `${api.base}/notebooks/${encodeURIComponent(notebookId)}/export?format=ipynb`;
}

// "Save version…": the current content as a named revision. flush() (the page's autosave) runs
// first, so the version holds what is on the screen.
export async function saveNamedVersion(api, notebookId, { flush, onSaved } = {}) {
  const label = await ask("Name this version", "", { okText: "Save version" });
  if (!label) return null;
  if (flush) await flush();
  const rev = await saveVersion(api, notebookId, label);
  onSaved?.(rev);
  return rev;
}

// canRestore() says whether the user may restore a revision (editors and up); the page hides
// Share from non-owners, Save version from viewers and runners, and Fork from reader accounts,
// through their data-needs attribute. flush: the page's "save now" (autosave), awaited before a
// version is named.
export function notebookMenu(api, notebookId, { onRestored, onError, canRestore = () => true, flush, onSaved } = {}) {
  const btn = (action, text, title, run, needed) => {
    const b = h("button", { type: "button", dataset: needed ? { secAction: action, needs: needed } : { secAction: action }, title, text });
    b.addEventListener("click", () => Promise.resolve(run()).catch((err) => onError ? onError(err) : console.error(err)));
    return b;
  };
  const account = h("span.account-slot");
  // Who is logged in; the page asked GET /api/me already, this asks again rather than wait on it.
  Promise.resolve(api.me ? api.me() : null).then((me) => account.replaceWith(accountMenu(api, me))).catch(() => {});
  const tools = h("span.sec-tools", { dataset: { role: "nb-tools" } },
    btn("share", "Share", "Share with people and links (owners)", () => openShareDialog(api, notebookId), needs("share")),
    btn("history", "History", "Revisions: diff, restore, versions", () => openRevisionsPanel(api, notebookId, { onRestored, canRestore: canRestore(), flush })));
  const items = [
    btn("save-version", "Save version…", "Keep the current content as a named version (editors)",
      () => saveNamedVersion(api, notebookId, { flush, onSaved }), needs("save-version")),
    btn("environment", "Environment", "The Python packages this notebook's %pip cells added",
      () => openEnvironmentPanel(api, notebookId)),
    btn("fork", "Fork", "Copy into your own workspace (members)", () => forkNotebook(api, notebookId), needs("fork")),
    h("a.button", { href: ipynbUrl(api, notebookId), download: "", title: "Download as a Jupyter notebook", text: "Download .ipynb" }),
  ];
  return { tools, items, account };
}
