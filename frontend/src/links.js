// Read-only links of a notebook (owners): create, copy, revoke. A link shows the notebook and its
// stored outputs at /p/<token> to anyone who has it, and runs nothing (docs/security.md).

import { h } from "./dom.js";
import { errorLine, openPanel, when } from "./overlay.js";

const base = (id) => `/notebooks/${encodeURIComponent(id)}/links`;

export function linksSection(api, notebookId) {
  const list = h("ul.link-list", { dataset: { role: "links" } });
  const status = h("div");
  const create = h("button", { type: "button", text: "Create a read-only link", dataset: { secAction: "create-link" } });
  const el = h("section.links", {}, h("h3", { text: "Read-only links" }), list, create, status);

  async function refresh() {
    status.replaceChildren();
    try {
      const { links } = await api.request("GET", base(notebookId));
      list.replaceChildren(...links.filter((l) => l.active).map(row));
      if (!list.children.length) list.append(h("li.muted", { text: "No active links." }));
    } catch (err) {
      status.replaceChildren(errorLine(err));
    }
  }

  function row(link) {
    const url = new URL(link.url, location.origin).href;
    const input = h("input", { value: url, readOnly: true, "aria-label": "Link", dataset: { role: "link-url" } });
    const copy = h("button", { type: "button", text: "Copy", onclick: () => navigator.clipboard?.writeText(url) });
    const revoke = h("button.danger", { type: "button", text: "Revoke", dataset: { secAction: "revoke-link" } });
    revoke.addEventListener("click", async () => {
      try {
        await api.request("DELETE", `${base(notebookId)}/${encodeURIComponent(link.token)}`);
        await refresh();
      } catch (err) {
        status.replaceChildren(errorLine(err));
      }
    });
    return h("li", { title: `created ${when(link.created_at)}` }, input, copy, revoke);
  }

  create.addEventListener("click", async () => {
    try {
      await api.request("POST", base(notebookId));
      await refresh();
    } catch (err) {
      status.replaceChildren(errorLine(err));
    }
  });
  refresh();
  return el;
}

export function openLinksDialog(api, notebookId) {
  const panel = openPanel("Links", "links-dialog");
  panel.body.append(linksSection(api, notebookId));
  return panel;
}
