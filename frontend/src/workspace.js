// The workspace page: a folder tree on the left, the chosen folder's notebooks on the right,
// with create / rename / move / duplicate / delete, import / export and search by name and cell
// text (searchhits.js); each
// notebook shows its owner, and only the actions the caller's role on it allows (GET /api/workspace
// serves the role). "Shared with me" lists other people's notebooks shared with the caller; an
// admin's folder view holds their own notebooks, and "Everyone's notebooks" (scope=all) the rest.

import { h } from "./dom.js";
import { ask, confirmDialog } from "./dialog.js";
import { Banners } from "./banner.js";
import { matchName, joinPath } from "./names.js";
import { allows, setRoles, siteAtLeast } from "./roles.js";
import { accountMenu } from "./account.js";
import { openShareDialog } from "./share.js";
import { cellHits } from "./searchhits.js";

function pageUrl(folder, scope) {
  const q = new URLSearchParams();
  if (folder !== "/") q.set("folder", folder);
  if (scope === "all") q.set("scope", "all");
  const s = q.toString();
  return s ? `/?${s}` : "/";
}

export class WorkspacePage {
  constructor(root, { api }) {
    this.root = root;
    this.api = api;
    const params = new URLSearchParams(location.search);
    this.folder = params.get("folder") || "/";
    this.scope = params.get("scope") === "all" ? "all" : "mine";
    this.shared = params.has("shared"); // the "Shared with me" section instead of a folder
    this.expanded = new Set(["/"]);
    this.index = null; // every notebook, fetched on the first search
  }

  async start() {
    // The account's site role: a reader gets no controls that make or change notebooks (the
    // server refuses them anyway; console/server/access.py).
    this.me = await this.api.me().catch(() => null);
    setRoles(this.me && this.me.roles, this.me); // notebook roles (per row) and the account's site role
    this.writer = siteAtLeast("member");
    this.admin = siteAtLeast("admin");
    if (!this.admin) this.scope = "mine"; // the same listing for everyone else
    this.build();
    await Promise.all([this.shared ? this.showShared(false) : this.showFolder(this.folder, false), this.drawTree()]);
    this.root.dataset.ready = "1";
    window.addEventListener("popstate", () => {
      const params = new URLSearchParams(location.search);
      this.shared = params.has("shared");
      if (this.shared) this.showShared(false);
      else this.showFolder(params.get("folder") || "/", false);
    });
    // Back/Forward from a notebook may restore this page from the browser's cache as it was:
    // a notebook made or renamed since would be missing. Ask the server again.
    window.addEventListener("pageshow", (e) => {
      if (e.persisted) this.refresh();
    });
  }

  build() {
    const btn = (action, text, title) => h("button", { type: "button", dataset: { action }, title, text, hidden: !this.writer });
    this.search = h("input.search", { type: "search", placeholder: "Search notebooks by name and cell text", dataset: { role: "search" } });
    this.fileInput = h("input", { type: "file", accept: ".json,.mlsql,.ipynb,.bznb,.mlnb,application/json", hidden: true, dataset: { role: "import-file" } });
    this.tree = h("nav.tree", { dataset: { role: "tree" } });
    this.crumbs = h("div.crumbs", { dataset: { role: "crumbs" } });
    this.list = h("div.listing", { dataset: { role: "listing" } });
    this.banners = new Banners();
    // An admin may see every notebook; their own are the default view, everyone's a toggle away.
    this.scopeButton = this.admin ? h("button", { type: "button", dataset: { action: "toggle-scope", role: "scope" },
      text: this.scope === "all" ? "My notebooks" : "Everyone's notebooks",
      title: this.scope === "all" ? "Show only your own notebooks and those shared with you" : "Show every notebook on this server (admin)" }) : null;
    this.sections = h("nav.sections", { dataset: { role: "sections" } },
      h("a", { href: "/", dataset: { action: "open-folder", path: "/", role: "section-mine" },
        text: this.scope === "all" ? "Everyone's notebooks" : "My workspace" }),
      h("a", { href: "/?shared=1", dataset: { action: "show-shared", role: "section-shared" }, text: "Shared with me" }),
      // Running sessions of the notebooks the user may run, with Shut down (frontend/src/sessions.js)
      h("a", { href: "/running", dataset: { role: "section-running" }, text: "Running" }));
    this.root.replaceChildren(
      h("header.toolbar", {},
        h("a.home", { href: "/", text: "◧ MLSQL Console" }),
        this.search, h("span.spacer"),
        btn("new-notebook", "+ Notebook", "Create a notebook in this folder"),
        btn("new-folder", "+ Folder", "Create a folder here"),
        btn("import", "Import…", "Import a notebook file into this folder"), this.fileInput,
        this.scopeButton, accountMenu(this.api, this.me)),
      this.banners.el,
      h("div.workspace", {}, h("div.side", {}, this.sections, this.tree), h("section.folder-view", {}, this.crumbs, this.list)));
    this.root.dataset.page = "workspace";

    this.root.addEventListener("click", (e) => this.onClick(e));
    this.search.addEventListener("input", () => this.onSearch());
    this.fileInput.addEventListener("change", () => this.importFile());
  }

  async onClick(e) {
    const el = e.target.closest("[data-action]");
    if (!el) return;
    const { action, id, path } = el.dataset;
    const run = async () => {
      switch (action) {
        case "new-notebook": return this.newNotebook();
        case "new-folder": return this.newFolder();
        case "import": return this.fileInput.click();
        case "open-folder":
          e.preventDefault();
          return this.showFolder(path);
        case "show-shared":
          e.preventDefault();
          return this.showShared();
        case "toggle-scope":
          location.href = pageUrl(this.folder, this.scope === "all" ? "mine" : "all");
          return undefined;
        case "share": return openShareDialog(this.api, id);
        case "toggle-folder": return this.toggle(path);
        case "rename": return this.rename(id);
        case "move": return this.move(id);
        case "duplicate": return this.duplicate(id);
        case "delete": return this.remove(id);
        case "rename-folder": return this.renameFolder(path);
        case "delete-folder": return this.removeFolder(path);
        default:
      }
    };
    try {
      await run();
    } catch (err) {
      this.banners.show("action", `${action} failed: ${err.message}`);
    }
  }

  // A folder's listing with each notebook's owner and the caller's role (GET /api/workspace).
  listFolder(folder) {
    return this.api.request("GET", `/workspace?folder=${encodeURIComponent(folder)}&scope=${this.scope}`);
  }

  async showFolder(folder, push = true) {
    const listing = await this.listFolder(folder);
    this.shared = false;
    this.folder = listing.folder;
    this.listing = listing;
    if (push) history.pushState(null, "", pageUrl(folder, this.scope));
    this.root.dataset.section = "folder";
    this.drawCrumbs();
    if (!this.search.value) this.drawListing(listing.folders, listing.notebooks);
    this.tree.querySelectorAll(".current").forEach((n) => n.classList.remove("current"));
    this.tree.querySelector(`[data-path="${CSS.escape(this.folder)}"]`)?.classList.add("current");
  }

  async showShared(push = true) {
    const { notebooks } = await this.api.request("GET", "/workspace/shared");
    this.shared = true;
    this.listing = { folder: this.folder, folders: [], notebooks };
    if (push) history.pushState(null, "", "/?shared=1");
    this.root.dataset.section = "shared";
    this.crumbs.replaceChildren(h("span", { text: "Shared with me" }));
    if (!this.search.value) this.drawListing([], notebooks, { showFolder: true, empty: "Nobody has shared a notebook with you yet." });
    this.tree.querySelectorAll(".current").forEach((n) => n.classList.remove("current"));
  }

  drawCrumbs() {
    const parts = this.folder.split("/").filter(Boolean);
    const crumbs = [h("a", { href: "/", dataset: { action: "open-folder", path: "/" }, text: "workspace" })];
    let path = "";
    for (const p of parts) {
      path += `/${p}`;
      crumbs.push(" / ", h("a", { href: `/?folder=${encodeURIComponent(path)}`, dataset: { action: "open-folder", path }, text: p }));
    }
    this.crumbs.replaceChildren(...crumbs);
  }

  drawListing(folders, notebooks, { showFolder = false, empty = "" } = {}) {
    const rows = [];
    const write = (tag, action, data, text) => (this.writer ? h(tag, { type: "button", dataset: { action, ...data }, text }) : null);
    // Per notebook, what its role allows (the server refuses the rest anyway).
    const may = (nb, action, tag, text, needed = action) => (allows(nb.role, needed) ? h(tag, { type: "button", dataset: { action, id: nb.id }, text }) : null);
    for (const f of folders) {
      rows.push(h("li.row.folder", { dataset: { path: f.path } },
        h("a.name", { href: `/?folder=${encodeURIComponent(f.path)}`, dataset: { action: "open-folder", path: f.path }, text: `${f.name}/` }),
        h("span.spacer"),
        write("button", "rename-folder", { path: f.path }, "Rename"),
        write("button", "delete-folder", { path: f.path }, "Delete")));
    }
    for (const nb of notebooks) {
      rows.push(h("li.row.notebook", { dataset: { id: nb.id, name: nb.name } },
        h("a.name", { href: `/notebooks/${encodeURIComponent(nb.id)}`, text: nb.name, title: nb.name }),
        showFolder ? h("span.where", { text: nb.folder }) : null,
        h("span.owner", { dataset: { role: "owner" }, title: "Owner", text: nb.mine ? "me" : (nb.owner || "—") }),
        nb.role && !nb.mine ? h("span.nb-role", { dataset: { role: "nb-role" }, text: nb.role }) : null,
        h("span.when", { text: new Date(nb.updated_at).toLocaleString() }),
        h("span.spacer"),
        may(nb, "rename", "button", "Rename"),
        may(nb, "move", "button", "Move"),
        write("button", "duplicate", { id: nb.id }, "Duplicate"),
        may(nb, "share", "button", "Share"),
        h("a.button", { href: this.api.exportUrl(nb.id), download: "", text: "Export" }),
        h("a.button", { href: `${this.api.exportUrl(nb.id)}?format=ipynb`, download: "", text: ".ipynb" }),
        may(nb, "delete", "button.danger", "Delete", "delete-notebook")));
    }
    if (!rows.length) rows.push(h("li.empty", { text: this.search.value ? "No notebook name matches." : empty || "This folder is empty." }));
    this.list.replaceChildren(h("ul", {}, rows));
  }

  // ------------------------------------------------------------------ the tree

  async drawTree() {
    this.tree.replaceChildren(await this.treeNode({ path: "/", name: "workspace" }));
    this.tree.querySelector(`[data-path="${CSS.escape(this.folder)}"]`)?.classList.add("current");
  }

  async treeNode(folder) {
    const open = this.expanded.has(folder.path);
    const node = h("div.tree-node", {},
      h("div.tree-label", { dataset: { path: folder.path } },
        h("button.twisty", { type: "button", dataset: { action: "toggle-folder", path: folder.path }, text: open ? "▾" : "▸" }),
        h("a", { href: `/?folder=${encodeURIComponent(folder.path)}`, dataset: { action: "open-folder", path: folder.path }, text: folder.name })));
    if (open) {
      const { folders } = await this.listFolder(folder.path);
      const kids = await Promise.all(folders.map((f) => this.treeNode(f)));
      node.append(h("div.tree-kids", {}, kids));
    }
    return node;
  }

  async toggle(path) {
    if (this.expanded.has(path)) this.expanded.delete(path);
    else this.expanded.add(path);
    await this.drawTree();
  }

  async refresh() {
    this.index = null;
    await Promise.all([this.shared ? this.showShared(false) : this.showFolder(this.folder, false), this.drawTree()]);
    if (this.search.value) await this.onSearch();
  }

  // ------------------------------------------------------------------ search

  // The API lists one folder at a time, so the first search walks the tree once and keeps it.
  async allNotebooks() {
    if (this.index) return this.index;
    const out = [];
    const walk = async (folder) => {
      const listing = await this.listFolder(folder);
      out.push(...listing.notebooks);
      await Promise.all(listing.folders.map((f) => walk(f.path)));
    };
    await walk("/");
    this.index = out;
    return out;
  }

  async onSearch() {
    const query = this.search.value.trim();
    if (!query) {
      this.drawListing(this.listing.folders, this.listing.notebooks);
      return;
    }
    const [hits, inCells] = await Promise.all([
      this.allNotebooks().then((all) => all.filter((nb) => matchName(nb.name, query))),
      this.api.search(query).catch(() => null)]);
    if (this.search.value.trim() !== query) return;
    this.drawListing([], hits, { showFolder: true });
    if (inCells) this.list.append(cellHits(inCells));
  }

  // ------------------------------------------------------------------ actions

  async newNotebook() {
    const name = await ask("Name of the new notebook", "Untitled");
    if (!name) return;
    const nb = await this.api.createNotebook({ name, folder: this.folder, cells: [{ kind: "mlsql", source: "" }] });
    location.href = `/notebooks/${encodeURIComponent(nb.id)}`;
  }

  async newFolder() {
    const name = await ask("Name of the new folder", "");
    if (!name) return;
    await this.api.createFolder(joinPath(this.folder, name));
    this.expanded.add(this.folder);
    await this.refresh();
  }

  notebook(id) {
    return (this.listing.notebooks.find((n) => n.id === id)) || (this.index || []).find((n) => n.id === id);
  }

  async rename(id) {
    const nb = this.notebook(id);
    const name = await ask("Rename notebook", nb ? nb.name : "");
    if (!name) return;
    await this.api.renameNotebook(id, name);
    await this.refresh();
  }

  async move(id) {
    const nb = this.notebook(id);
    const folder = await ask("Move to folder (a path such as /team/mnist)", nb ? nb.folder : this.folder, { okText: "Move" });
    if (!folder) return;
    await this.api.moveNotebook(id, folder);
    this.expanded.add(folder);
    await this.refresh();
  }

  async duplicate(id) {
    const nb = this.notebook(id);
    await this.api.duplicateNotebook(id, { name: nb ? `${nb.name} (copy)` : undefined });
    await this.refresh();
  }

  async remove(id) {
    const nb = this.notebook(id);
    if (!(await confirmDialog(`Delete the notebook "${nb ? nb.name : id}" with its outputs and history?`))) return;
    await this.api.deleteNotebook(id);
    await this.refresh();
  }

  async renameFolder(path) {
    const target = await ask("Rename or move the folder to", path);
    if (!target || target === path) return;
    await this.api.renameFolder(path, target.startsWith("/") ? target : joinPath(path.replace(/\/[^/]*$/, "") || "/", target));
    await this.refresh();
  }

  async removeFolder(path) {
    if (!(await confirmDialog(`Delete the folder ${path} and every notebook in it?`))) return;
    await this.api.deleteFolder(path, true);
    if (this.folder.startsWith(path)) this.folder = "/";
    await this.refresh();
  }

  async importFile() {
    const file = this.fileInput.files[0];
    this.fileInput.value = "";
    if (!file) return;
    const text = await file.text();
    let data;
    if (/\.mlsql$/i.test(file.name)) {
      // A .mlsql script is one MLSQL cell (DESIGN §4).
      data = { format: "mlsql-console-notebook", version: 1, name: file.name.replace(/\.mlsql$/i, ""), cells: [{ kind: "mlsql", source: text }] };
    } else {
      try {
        data = JSON.parse(text);
      } catch {
        this.banners.show("import", `${file.name} is not a JSON notebook file.`);
        return;
      }
    }
    try {
      const nb = await this.api.importNotebook(data, this.folder);
      this.banners.show("import", `Imported "${nb.name}".`, [["Open it", () => { location.href = `/notebooks/${encodeURIComponent(nb.id)}`; }, "open"]], "info");
      await this.refresh();
    } catch (err) {
      this.banners.show("import", `Could not import ${file.name}: ${err.message}`);
    }
  }
}
