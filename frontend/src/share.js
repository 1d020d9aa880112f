// The share dialog (owners): who has which role on this notebook, add someone by user name,
// change or remove a role, and the notebook's read-only links (links.js).

import "./sharing.css";
import { h } from "./dom.js";
import { linksSection } from "./links.js";
import { errorLine, openPanel } from "./overlay.js";
import { roles } from "./roles.js";

const base = (id) => `/notebooks/${encodeURIComponent(id)}/shares`;

// The roles the server serves, weakest first; without a value the weakest is selected.
function roleSelect(value) {
  return h("select", { "aria-label": "Role", dataset: { role: "share-role" } },
    roles().map((r) => h("option", { value: r.name, selected: r.name === value, text: `${r.name} (${r.can})` })));
}

export function openShareDialog(api, notebookId) {
  const panel = openPanel("Share", "share-dialog");
  const list = h("ul.share-list", { dataset: { role: "shares" } });
  const status = h("div");
  const user = h("input", { placeholder: "user name", "aria-label": "User name", dataset: { role: "share-user" }, list: "share-users" });
  const users = h("datalist", { id: "share-users" });
  const role = roleSelect();
  const add = h("button.primary", { type: "submit", text: "Share", dataset: { secAction: "share" } });
  const form = h("form.share-add", {}, user, users, role, add);
  panel.body.append(h("section", {}, h("h3", { text: "People" }), list, form, status), linksSection(api, notebookId));

  async function set(name, r) {
    status.replaceChildren();
    try {
      await api.request("POST", base(notebookId), { user: name, role: r });
      await refresh();
      return true;
    } catch (err) {
      status.replaceChildren(errorLine(err));
      return false;
    }
  }

  function row(share) {
    const select = roleSelect(share.role);
    select.addEventListener("change", () => set(share.username, select.value));
    const remove = h("button.danger", { type: "button", text: "Remove", dataset: { secAction: "unshare" } });
    remove.addEventListener("click", async () => {
      try {
        await api.request("DELETE", `${base(notebookId)}/${share.id}`);
        await refresh();
      } catch (err) {
        status.replaceChildren(errorLine(err));
      }
    });
    return h("li", { dataset: { user: share.username || "" } }, h("span.share-name", { text: share.username || "?" }), select, remove);
  }

  async function refresh() {
    try {
      const { shares } = await api.request("GET", base(notebookId));
      list.replaceChildren(...shares.map(row));
      if (!shares.length) list.append(h("li.muted", { text: "Only you (and admins) can open this notebook." }));
    } catch (err) {
      status.replaceChildren(errorLine(err));
    }
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = user.value.trim();
    if (name && (await set(name, role.value))) user.value = "";
  });
  api.request("GET", "/users").then(({ users: all }) => {
    users.replaceChildren(...all.map((u) => h("option", { value: u.username, text: u.display_name })));
  }).catch(() => {});
  refresh();
  user.focus();
  return panel;
}
