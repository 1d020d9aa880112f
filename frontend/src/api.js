// The JSON API under /api: one function per endpoint, errors as ApiError (409 as Conflict).

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

// A write based on a stale revision; currentRevision is what the server holds now.
export class Conflict extends ApiError {
  get currentRevision() {
    return this.body.current_revision;
  }
}

// The login's CSRF token (the csrf_token cookie); empty in single-user mode, which has no cookie.
export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) return meta.content;
  const m = document.cookie.match(/(?:^|;\s*)csrf_token=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

export function createApi(base = "/api") {
  async function request(method, path, body, prefetched) {
    const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
    if (method !== "GET") init.headers["X-CSRF-Token"] = csrfToken();
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    // A failed prefetch (network) is simply asked again.
    const res = (prefetched && (await prefetched.catch(() => null))) || (await fetch(base + path, init));
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = { error: text.slice(0, 200) };
    }
    if (res.status === 409) throw new Conflict(res.status, data);
    // Not logged in (or the login expired): main.js shows the login form.
    if (res.status === 401) document.dispatchEvent(new CustomEvent("console-login-required"));
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }
  const nb = (id) => `/notebooks/${encodeURIComponent(id)}`;
  // A response console/server/static/prefetch.js started before this bundle ran; used once.
  const prefetched = (key) => {
    const p = window.consolePrefetch && window.consolePrefetch[key];
    if (p) window.consolePrefetch[key] = null;
    return p || undefined;
  };
  const cell = (id, cellId) => `${nb(id)}/cells/${encodeURIComponent(cellId)}`;
  const q = (params) => {
    const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== "")).toString();
    return s ? `?${s}` : "";
  };

  return {
    base,
    request,
    me: () => request("GET", "/me"),
    login: (username, password) => request("POST", "/login", { username, password }),
    logout: () => request("POST", "/logout"),
    // workspace
    listFolder: (folder = "/") => request("GET", `/notebooks${q({ folder })}`),
    // notebook names and cell text, of the notebooks the caller may read (console/server/api/search.py)
    search: (text) => request("GET", `/search${q({ q: text })}`),

    createFolder: (path) => request("POST", "/folders", { path }),
    renameFolder: (path, newPath) => request("POST", "/folders/rename", { path, new_path: newPath }),
    deleteFolder: (path, recursive = false) => request("DELETE", `/folders${q({ path, recursive: recursive ? "1" : "" })}`),
    createNotebook: (body) => request("POST", "/notebooks", body),
    renameNotebook: (id, name) => request("POST", `${nb(id)}/rename`, { name }),
    moveNotebook: (id, folder) => request("POST", `${nb(id)}/move`, { folder }),
    duplicateNotebook: (id, body = {}) => request("POST", `${nb(id)}/duplicate`, body),
    deleteNotebook: (id) => request("DELETE", nb(id)),
    // The body is the notebook file itself (JSON); the folder goes in the query.
    importNotebook: (data, folder) => request("POST", `/notebooks/import${q({ folder })}`, data),
    exportUrl: (id) => `${base}${nb(id)}/export`,
    // one notebook
    getNotebook: (id) => request("GET", nb(id), undefined, prefetched("notebook")),
    putNotebook: (id, body) => request("PUT", nb(id), body),
    addCell: (id, body) => request("POST", `${nb(id)}/cells`, body),
    patchCell: (id, cellId, body) => request("PATCH", cell(id, cellId), body),
    // a cell's result or chart onto the notebook's dashboard (console/server/api/dashboards.py); url: its page
    pinTile: (id, cellId, kind) => request("POST", `${nb(id)}/dashboard/tiles`, { cell_id: cellId, kind })
      .then((d) => ({ ...d, url: `/d/${encodeURIComponent(id)}` })),
    moveCell: (id, cellId, body) => request("POST", `${cell(id, cellId)}/move`, body),
    deleteCell: (id, cellId, baseRevision) => request("DELETE", `${cell(id, cellId)}${q({ base_revision: baseRevision })}`, { base_revision: baseRevision }),
    // The latest run of each cell as replay events (output head + hidden marker + tail).
    getRuns: (id) => request("GET", `${nb(id)}/runs`, undefined, prefetched("runs")),
    logUrl: (runId) => `${base}/runs/${encodeURIComponent(runId)}/log`,
    // completion and hover, answered by the caller's kernel (console/server/api/complete.py)
    complete: (id, body) => request("POST", `${nb(id)}/complete`, body),
    // the data panel (console/server/api/lake.py): the lake's tables and files, and uploads into it
    lake: () => request("GET", "/lake"),
    lakeTable: (name) => request("GET", `/lake/tables/${encodeURIComponent(name)}`),
    lakeFiles: (path) => request("GET", `/lake/files${q({ path })}`),
    sessionTables: (id) => request("GET", `/lake/session/${encodeURIComponent(id)}`),
    // the variable explorer: the session's tables and Python globals (console/server/api/lake.py)
    sessionVariables: (id) => request("GET", `/lake/session/${encodeURIComponent(id)}/variables`),
    // A listed file's columns; Parquet and Excel are read by the notebook's session.
    fileSchema: (id, path) => request("GET", `/lake/session/${encodeURIComponent(id)}/schema${q({ path })}`),
    // The body is the file itself; the answer holds the `load` statement for it.
    upload: async (file, { folder, overwrite } = {}) => {
      const url = `${base}/lake/upload${q({ name: file.name, folder, overwrite: overwrite ? "true" : undefined })}`;
      const res = await fetch(url, { method: "POST", body: file, credentials: "same-origin",
        headers: { "X-CSRF-Token": csrfToken(), "Content-Type": "application/octet-stream", Accept: "application/json" } });
      const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
      if (!res.ok) throw new ApiError(res.status, data);
      return data;
    },
    inspect: (id, name) => request("GET", `${nb(id)}/inspect${q({ name })}`),
    // A cell's whole result as the caller's kernel keeps it: a page, sorted ([[column, "asc"|"desc"]]).
    resultPage: (id, cellId, offset, limit, sort) => request("GET", `${cell(id, cellId)}/result${q({
      offset, limit, sort: sort && sort.length ? JSON.stringify(sort) : undefined })}`),
    // The whole result as a file: {blob, name}. Errors come as JSON, like every other answer.
    downloadResult: async (id, cellId, format, sort) => {
      const url = `${base}${cell(id, cellId)}/result/download/${format}${q({ sort: sort && sort.length ? JSON.stringify(sort) : undefined })}`;
      const res = await fetch(url, { credentials: "same-origin" });
      if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
      const m = (res.headers.get("Content-Disposition") || "").match(/filename="?([^";]+)"?/);
      return { blob: await res.blob(), name: m ? m[1] : "" };
    },
  };
}
