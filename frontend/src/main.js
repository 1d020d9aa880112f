// Entry point: read the page's configuration from the root element once, then start the
// workspace or the notebook page depending on the URL.

import "uplot/dist/uPlot.min.css";
import "./style.css";
import "./jobs.css";
import "./comments.css";
import "./dashboard.css";
import { createApi } from "./api.js";
import { WorkspacePage } from "./workspace.js";
import { NotebookPage } from "./notebook.js";
import { JobsPage, attachJobs } from "./jobs.js";
import { SessionsPage } from "./sessions.js";
import { DocsPage } from "./docs.js";
import { attachComments } from "./comments.js";
import { DashboardPage, attachDashboardLink } from "./dashboard.js";

function start() {
  const root = document.getElementById("app");
  const d = root.dataset;
  const config = {
    api: d.api || "/api",
    socketNamespace: d.socketNamespace || "/",
    socketPath: d.socketPath || "/socket.io",
    userId: d.userId || "",
  };
  const api = createApi(config.api);
  // A login that expired while the page was open: log in again and come back here.
  document.addEventListener("console-login-required", () => {
    location.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
  });
  const m = location.pathname.match(/^\/notebooks\/([^/]+)\/?$/);
  const jobs = /^\/jobs\/?$/.test(location.pathname);
  const running = /^\/running\/?$/.test(location.pathname);
  const doc = location.pathname.match(/^\/docs\/([^/]+)\/?$/); // the user docs (docs.js)
  const dash = location.pathname.match(/^\/d\/([^/]+)\/?$/); // a notebook's dashboard (dashboard.js)
  const page = dash ? new DashboardPage(root, { api, notebookId: decodeURIComponent(dash[1]) }) : m
    ? new NotebookPage(root, { api, config, notebookId: decodeURIComponent(m[1]) })
    : jobs ? new JobsPage(root, { api })
      : running ? new SessionsPage(root, { api })
        : doc ? new DocsPage(root, { api, name: decodeURIComponent(doc[1]) }) : new WorkspacePage(root, { api, config });
  // Tests and the page-load benchmark read these.
  window.consolePage = page;
  page.start();
  if (m) attachJobs(page, api); // Schedule…, the parameter form, "run by job" (jobs.js)
  if (m) attachComments(page, api); // comments on cells (comments.js)
  if (m) attachDashboardLink(page); // the toolbar's link to the notebook's dashboard (dashboard.js)
}

start();
