// The data panel: a sidebar that folds away, showing the lake (GET /api/lake): its delta tables
// with version, rows, size and partitions, each one's schema and history with time travel as one
// click, the other folders and files, the roots paths resolve in; and an upload drop zone. What
// it inserts is an ordinary MLSQL cell (`load …`), through insertCell(source) given by the page.

import { h, keepDrawn } from "./dom.js";
import { madeOf } from "./rundetails.js";

const LOAD_FORMAT = { csv: "csv", tsv: "csv", json: "json", jsonl: "json", parquet: "parquet", xlsx: "excel", txt: "text" };

// `load` of a lake table or file, named after it (pure: tested under node).
export function loadStatement(name, kind, version = null) {
  const base = name.replace(/\/$/, "").split("/").pop().replace(/\.[^.]*$/, "").replace(/\W+/g, "_").replace(/^_+|_+$/g, "") || "t";
  const table = /^\d/.test(base) ? `t_${base}` : base;
  if (kind === "delta") {
    const label = name.split(".").pop().replace(/\W+/g, "_");
    return version === null
      ? `load delta.\`${name}\` as ${label};`
      : `load delta.\`${name}\` where versionAsOf="${version}" as ${label}_v${version};`;
  }
  const ext = (name.match(/\.([A-Za-z0-9]+)$/) || [])[1];
  const format = LOAD_FORMAT[(ext || "").toLowerCase()] || "parquet";
  const options = format === "csv" ? ' where header="true" and inferSchema="true"' : "";
  return `load ${format}.\`${name}\`${options} as ${table};`;
}

// The first 20 rows of a table as a cell of their own (pure).
export function previewStatement(load, table) {
  return `${load ? `${load}\n` : ""}select * from ${table} limit 20 as ${table}_preview;`;
}

export function formatBytes(n) {
  if (n === null || n === undefined) return "?";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}

const WIDTH_KEY = "console.dataPanelWidth";
const MIN_WIDTH = 260;
const NOTEBOOK_MIN = 480; // what the notebook keeps beside the panel when it is dragged wider

// The panel's width within what the window leaves the notebook (pure).
export function clampWidth(px, windowWidth) {
  return Math.round(Math.max(MIN_WIDTH, Math.min(px, windowWidth - NOTEBOOK_MIN)));
}

// A schema as the panel shows it: [{name, type}] (types in Spark's names, console/coltypes.py).
function schemaTable(columns) {
  return h("table.data-schema", { dataset: { role: "data-schema" } }, h("tbody", {},
    (columns || []).map((c) => h("tr", {}, h("td", { text: c.name }), h("td.type", { text: c.type })))));
}

// A file's schema answer: its columns, or why there are none yet (no session for a Parquet file).
function schemaView(answer) {
  if (!answer.columns) return [h("p.muted", { dataset: { role: "data-schema-note" }, text: answer.note || "no columns" })];
  const out = [h("h4", { text: "Schema" }), schemaTable(answer.columns)];
  if (answer.sampled) out.push(h("p.muted", { text: "types from its first MiB, as the load infers them from all of it" }));
  return out;
}

export class DataPanel {
  // insertCell(source, run): a new MLSQL cell below the selected one, holding source (run it too).
  constructor({ api, notebookId, insertCell }) {
    this.api = api;
    this.notebookId = notebookId;
    this.insertCell = insertCell;
    this.session = h("ul.data-list", { dataset: { role: "data-session" } });
    // The variable explorer's Python half: the session's globals (name, type, size, a short value).
    this.variables = h("div.data-variables", { dataset: { role: "data-variables" } });
    this.status = h("div.data-status", { dataset: { role: "data-status" }, role: "status" });
    this.tables = h("ul.data-list", { dataset: { role: "data-tables" } });
    this.entries = h("ul.data-list", { dataset: { role: "data-entries" } });
    this.roots = h("ul.data-roots", { dataset: { role: "data-roots" } });
    this.file = h("input", { type: "file", accept: ".csv,.tsv,.json,.jsonl,.parquet,.xlsx", hidden: true, dataset: { role: "upload-input" } });
    const choose = h("button", { type: "button", text: "choose a file", dataset: { role: "upload-choose" } });
    this.drop = h("div.drop-zone", { dataset: { role: "upload-drop" } },
      h("span", { text: "Drop a CSV, JSON, Parquet or Excel file here, or " }), choose, this.file);
    const refresh = h("button", { type: "button", text: "↻", title: "Refresh", "aria-label": "Refresh the lake", dataset: { role: "data-refresh" } });
    const close = h("button.close", { type: "button", text: "×", title: "Close the data panel", "aria-label": "Close the data panel" });
    // Its left edge: drag (or arrow keys) to make it wider or narrower; the notebook keeps the rest.
    this.grip = h("div.data-resize", { dataset: { role: "data-resize" }, role: "separator", tabIndex: 0,
      "aria-orientation": "vertical", "aria-label": "Resize the data panel", title: "Drag to resize" });
    this.el = h("aside.data-panel", { dataset: { role: "data-panel" }, hidden: true, "aria-label": "Data" },
      this.grip, h("div.data-head", {}, h("h2", { text: "Data" }), refresh, close),
      this.drop, this.status,
      h("h3", { text: "This session's tables" }), this.session,
      h("h3", { text: "Python variables" }), this.variables,
      h("h3", { text: "Delta tables in the lake" }), this.tables,
      h("h3", { text: "Files and folders" }), this.entries,
      h("h3", { text: "Where paths resolve" }), this.roots);
    choose.addEventListener("click", () => this.file.click());
    this.file.addEventListener("change", () => this.file.files[0] && this.upload(this.file.files[0]));
    refresh.addEventListener("click", () => this.refresh());
    close.addEventListener("click", () => this.toggle(false));
    this.drop.addEventListener("dragover", (e) => {
      e.preventDefault();
      this.drop.classList.add("over");
    });
    this.drop.addEventListener("dragleave", () => this.drop.classList.remove("over"));
    this.drop.addEventListener("drop", (e) => {
      e.preventDefault();
      this.drop.classList.remove("over");
      const f = e.dataTransfer && e.dataTransfer.files[0];
      if (f) this.upload(f);
    });
  }

  bindResize() {
    const saved = Number(localStorage.getItem(WIDTH_KEY));
    if (saved) this.setWidth(saved, false);
    this.grip.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      this.grip.setPointerCapture(e.pointerId);
      this.grip.classList.add("dragging");
      const move = (ev) => this.setWidth(window.innerWidth - ev.clientX, false);
      const up = () => {
        this.grip.classList.remove("dragging");
        this.grip.removeEventListener("pointermove", move);
        this.grip.removeEventListener("pointerup", up);
        this.setWidth(this.el.getBoundingClientRect().width);
      };
      this.grip.addEventListener("pointermove", move);
      this.grip.addEventListener("pointerup", up);
    });
    this.grip.addEventListener("keydown", (e) => {
      const step = { ArrowLeft: 24, ArrowRight: -24 }[e.key];
      if (!step) return;
      e.preventDefault();
      this.setWidth(this.el.getBoundingClientRect().width + step);
    });
  }

  setWidth(px, save = true) {
    const width = clampWidth(px, window.innerWidth);
    document.body.style.setProperty("--data-width", `${width}px`);
    if (save) localStorage.setItem(WIDTH_KEY, String(width));
  }

  toggle(show = this.el.hidden) {
    if (show && !this.resizeBound) {
      this.resizeBound = true;
      this.bindResize();
    }
    this.el.hidden = !show;
    document.body.classList.toggle("data-open", show);
    if (show) this.refresh();
  }

  say(text, tone = "") {
    this.status.textContent = text;
    this.status.dataset.tone = tone;
  }

  async refresh() {
    let lake;
    try {
      lake = await this.api.lake();
    } catch (err) {
      this.say(`Could not list the lake: ${err.message}`, "error");
      return;
    }
    this.limit = lake.upload;
    this.refreshSession();
    // Drawn again, closed: the lake lists refresh only when asked (opening the panel, the button),
    // and an opened row's schema or note may be what changed (a Parquet file's columns once the
    // session has run).
    this.tables.replaceChildren(...(lake.tables.length ? lake.tables.map((t) => this.tableRow(t))
      : [h("li.empty", { text: "No delta tables yet: save … as delta.`db.table` writes one." })]));
    this.entries.replaceChildren(...(lake.entries.length ? lake.entries.map((e) => this.entryRow(e))
      : [h("li.empty", { text: "Nothing else in the lake." })]));
    this.roots.replaceChildren(...lake.roots.map((r) => h("li", {}, h("code", { text: r.path }), ` ${r.note}`)),
      h("li", { text: "/tmp is private to each session: cells do not see a file in the machine's /tmp. Upload it here instead." }));
  }

  // After each run ends (notebook-live.js): what the run made shows without a click.
  refreshIfOpen() {
    if (!this.el.hidden) this.refreshSession();
  }

  // After every run: the rows that did not change are kept (keepDrawn), so a run ending under the
  // user's pointer does not take a Preview button or a selected value away.
  async refreshSession() {
    let answer = { tables: [], python: null, kernel: false };
    try {
      answer = await this.api.sessionVariables(this.notebookId);
    } catch {
      // a viewer has no session of its own: the section says so below
    }
    this.showVariables(answer);
    keepDrawn(this.session, answer.tables.length ? answer.tables.map((t) => {
      const preview = h("button", { type: "button", text: "Preview", title: "Insert and run a cell showing its first 20 rows", dataset: { role: "preview" } });
      preview.addEventListener("click", () => this.insertCell(previewStatement("", t.name), true));
      const columns = t.columns.map((c) => `${c.name} ${c.type}`).join(", ");
      return h("li", { dataset: { sessionTable: t.name }, title: columns }, h("span.data-name", { text: t.name }),
        h("span.data-facts", { text: `${t.rows.toLocaleString("en-US")} rows · ${t.columns.length} columns` }), preview);
    }) : [h("li.empty", { text: answer.kernel ? "No tables yet." : "No session yet: run a cell to start one." })]);
  }

  showVariables(answer) {
    const items = answer.python;
    if (!items) {
      // null: no Python worker yet, or a cell is running (the list is what it was until it ends)
      if (!this.variables.querySelector("table")) {
        this.variables.replaceChildren(h("p.empty", { text: answer.kernel ? "No Python cell has run yet."
          : "No session yet: run a cell to start one." }));
      }
      return;
    }
    if (!items.length) {
      this.variables.replaceChildren(h("p.empty", { text: "No variables yet." }));
      return;
    }
    if (!this.varRows || !this.variables.contains(this.varRows)) {
      const head = h("tr", {}, ...["name", "type", "size", "value"].map((t) => h("th", { text: t })));
      this.varRows = h("tbody");
      this.variables.replaceChildren(h("table.data-vars", {}, h("thead", {}, head), this.varRows));
    }
    keepDrawn(this.varRows, items.map((v) => h("tr", { dataset: { variable: v.name } }, h("td.data-name", { text: v.name }),
      h("td", { text: v.type }), h("td", { text: v.size }), h("td.data-value", { text: v.value, title: v.value }))));
  }

  tableRow(t) {
    const facts = t.error ? t.error : [`v${t.version}`, t.rows === null || t.rows === undefined ? null : `${t.rows.toLocaleString("en-US")} rows`,
      formatBytes(t.size), t.partition_columns && t.partition_columns.length ? `partitioned by ${t.partition_columns.join(", ")}` : null,
      t.last_change ? `changed ${new Date(t.last_change).toLocaleString()}` : null].filter(Boolean).join(" · ");
    const insert = h("button", { type: "button", text: "Insert load", dataset: { role: "insert-load" } });
    insert.addEventListener("click", () => this.insertCell(loadStatement(t.name, "delta")));
    const preview = h("button", { type: "button", text: "Preview", title: "Insert and run a cell showing its first 20 rows", dataset: { role: "preview" } });
    const load = loadStatement(t.name, "delta");
    preview.addEventListener("click", () => this.insertCell(previewStatement(load, load.match(/ as (\w+);$/)[1]), true));
    const details = h("details.data-table", { dataset: { table: t.name } },
      h("summary", {}, h("span.data-name", { text: t.name }), h("span.data-facts", { text: facts })));
    const body = h("div.data-body");
    details.append(insert, preview, body);
    details.addEventListener("toggle", () => details.open && !body.childElementCount && this.fillTable(t.name, body));
    return h("li", {}, details);
  }

  async fillTable(name, body) {
    let t;
    try {
      t = await this.api.lakeTable(name);
    } catch (err) {
      body.replaceChildren(h("p.data-error", { text: err.message }));
      return;
    }
    const schema = schemaTable(t.schema);
    // Which runs wrote and read each version (GET /api/lineage): only runs of notebooks you may view.
    const lineage = await this.api.request("GET", `/lineage?table=${encodeURIComponent(name)}`).catch(() => null);
    const byVersion = new Map(((lineage && lineage.versions) || []).map((v) => [v.version, v]));
    const runLink = (r) => h("a", { href: `/notebooks/${encodeURIComponent(r.notebook_id)}`, text: r.notebook || r.notebook_id,
      title: `run ${r.run_id} of cell ${r.cell_id}, ${new Date(r.started_at).toLocaleString()}` });
    const history = h("ul.data-history", { dataset: { role: "data-history" } }, (t.history || []).map((v) => {
      const travel = h("button", { type: "button", text: `Load v${v.version}`, title: "Insert a cell that reads this version (time travel)", dataset: { role: "load-version", version: String(v.version) } });
      travel.addEventListener("click", () => this.insertCell(loadStatement(name, "delta", v.version)));
      const when = v.timestamp ? new Date(v.timestamp).toLocaleString() : "";
      const runs = byVersion.get(v.version);
      const who = runs ? h("div.data-lineage", { dataset: { role: "data-lineage", version: String(v.version) } },
        runs.writes.length ? h("span", {}, "written by ", ...runs.writes.slice(0, 3).map(runLink)) : null,
        ...runs.writes.slice(0, 3).map(madeOf),
        runs.reads.length ? h("span", {}, ` · read by ${runs.reads.length} run(s): `, ...runs.reads.slice(0, 3).map(runLink)) : null)
        : null;
      return h("li", {}, travel, h("span", { text: ` ${v.operation || "?"} ${when}` }), who);
    }));
    // Upstream and downstream (GET /api/lineage): what this table's versions were made from, and
    // what was made from it, through the notebooks' cells; a small graph drawn as two rows.
    const node = (n) => h("span.lineage-node", { dataset: { name: n.name, table: n.table ? "1" : "0" },
      text: `${n.name}${n.versions.length ? ` v${n.versions.join(", v")}` : ""}` });
    const up = (lineage && lineage.upstream) || [];
    const down = (lineage && lineage.downstream) || [];
    const graph = up.length || down.length ? h("div.data-graph", { dataset: { role: "data-graph" } },
      h("div", { dataset: { role: "data-upstream" } }, "made from: ", ...(up.length ? up.map(node) : ["nothing recorded"])),
      h("div", { dataset: { role: "data-downstream" } }, "used to make: ", ...(down.length ? down.map(node) : ["nothing recorded"])))
      : null;
    body.replaceChildren(h("h4", { text: "Schema" }), schema, h("h4", { text: "History" }), history,
      ...(graph ? [h("h4", { text: "Lineage" }), graph] : []));
  }

  async fillFile(path, body) {
    body.replaceChildren(h("p.muted", { text: "reading its columns…" }));
    let answer;
    try {
      answer = await this.api.fileSchema(this.notebookId, path);
    } catch (err) {
      body.replaceChildren(h("p.data-error", { dataset: { role: "data-schema-note" },
        text: err.status === 403 ? "Its columns show to those who may run this notebook." : err.message }));
      return;
    }
    body.replaceChildren(...schemaView(answer));
  }

  // A file: its load. A folder: what is in it, on opening (a saved parquet/CSV folder loads whole).
  entryRow(e) {
    const insert = h("button", { type: "button", text: "Insert load", dataset: { role: "insert-load" } });
    insert.addEventListener("click", () => this.insertCell(loadStatement(e.name, e.kind)));
    const size = e.size === null || e.size === undefined ? "" : ` · ${formatBytes(e.size)}`;
    if (e.kind !== "folder") {
      // A file opens to its columns, as a delta table does (GET …/schema: the load's own reading).
      const body = h("div.data-body");
      const file = h("details.data-file", { dataset: { entry: e.name } },
        h("summary", {}, h("span.data-name", { text: e.name }), h("span.data-facts", { text: `file${size}` })), insert, body);
      file.addEventListener("toggle", () => file.open && !body.childElementCount && this.fillFile(e.name, body));
      return h("li", {}, file);
    }
    const inner = h("ul.data-list");
    const details = h("details", { dataset: { entry: e.name } },
      h("summary", {}, h("span.data-name", { text: e.name }), h("span.data-facts", { text: "folder" })), insert, inner);
    details.addEventListener("toggle", async () => {
      if (!details.open || inner.childElementCount) return;
      try {
        const listing = await this.api.lakeFiles(e.name);
        inner.replaceChildren(...listing.entries.map((c) => this.entryRow(c)));
      } catch (err) {
        inner.replaceChildren(h("li.data-error", { text: err.message }));
      }
    });
    return h("li", {}, details);
  }

  async upload(file, overwrite = false) {
    const max = this.limit && this.limit.max_bytes;
    if (max && file.size > max) {
      this.say(`${file.name} is ${formatBytes(file.size)}; uploads take at most ${formatBytes(max)} (CONSOLE_UPLOAD_MAX_BYTES).`, "error");
      return;
    }
    this.say(`Uploading ${file.name} (${formatBytes(file.size)})…`);
    let answer;
    try {
      answer = await this.api.upload(file, { overwrite });
    } catch (err) {
      if (err.status === 409 && !overwrite) {
        const replace = h("button", { type: "button", text: "Replace it", dataset: { role: "upload-replace" } });
        replace.addEventListener("click", () => this.upload(file, true));
        this.say(`${err.message} `, "error");
        this.status.append(replace);
        return;
      }
      this.say(`${file.name} was not uploaded: ${err.message}`, "error");
      return;
    }
    const insert = h("button", { type: "button", text: "Insert its load", dataset: { role: "upload-insert" } });
    insert.addEventListener("click", () => this.insertCell(answer.load));
    this.say(`Uploaded to the lake as ${answer.path} (${formatBytes(answer.bytes)}). `, "ok");
    const columns = h("div.data-body", { dataset: { role: "upload-schema" } });
    this.status.append(insert, columns);
    this.file.value = "";
    await Promise.all([this.refresh(), this.fillFile(answer.path, columns)]);
  }
}
