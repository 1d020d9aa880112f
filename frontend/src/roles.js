// What a notebook role may do on the page: which controls to show and which actions to take.
// Only for clarity: the server checks every request (console/server/access.py), so a hidden button
// is a courtesy to the user, never the thing that stops them.
//
// The roles themselves, weakest first with what each can do, come from the server
// (GET /api/me `roles`, defined once in console/roles.py); the page keeps no list of its own.
// Until they arrive no role is known, and only what any reader may do is offered.
//
// The account's site role (reader, member, admin; GET /api/me `user.site_role` and `site_roles`)
// works the same way: an action may need a site role instead of a notebook role (NEEDS below), and
// a reader account never gets the controls that make a notebook of its own or run one.

let served = []; // [{name, can}], weakest first
let servedSite = []; // [{name, can, cap}], weakest first
let siteRole = "";

const named = (list) => (Array.isArray(list) ? list.filter((r) => r && typeof r.name === "string") : []);

// `me` (GET /api/me), when given, also sets the account's site role.
export function setRoles(roles, me) {
  served = named(roles);
  if (me !== undefined) setSite(me);
}

export function setSite(me) {
  servedSite = named(me && me.site_roles);
  siteRole = (me && me.user && typeof me.user.site_role === "string") ? me.user.site_role : "";
}

export function roles() {
  return served;
}

// The weakest role each page action needs: a notebook role, or a site role for what makes a
// notebook of one's own (the server: "member" rows of console/server/access.py). Actions not
// listed (help, moving the selection, leaving an editor) need only to see the notebook.
const NEEDS = {
  fork: "member", duplicate: "member", "data-panel": "member", "new-notebook": "member", "new-folder": "member", import: "member",
  run: "runner", "run-next": "runner", "run-from": "runner", "run-all": "runner",
  interrupt: "runner", restart: "runner",
  "run-insert": "editor", "insert-above": "editor", "insert-below": "editor",
  "add-mlsql": "editor", "add-python": "editor", "add-markdown": "editor",
  delete: "editor", "undo-delete": "editor", "move-up": "editor", "move-down": "editor",
  "kind-mlsql": "editor", "kind-python": "editor", "kind-markdown": "editor",
  edit: "editor", save: "editor", rename: "editor", restore: "editor", "save-version": "editor",
  schedule: "editor", // POST /api/jobs needs the editor role on the notebook (console/server/jobs/jobs.py)
  // the notebook as a whole (workspace rows, the notebook's menu)
  move: "owner", "delete-notebook": "owner", share: "owner",
};

function index(role) {
  return served.findIndex((r) => r.name === role);
}

// An unknown role (an older server that does not say) gets the least: the server decides anyway.
export function rank(role) {
  return Math.max(index(role), 0);
}

function siteIndex(role) {
  return servedSite.findIndex((r) => r.name === role);
}

// True when the account's site role is `needed` or stronger (never while it is unknown).
export function siteAtLeast(needed) {
  const need = siteIndex(needed);
  return need >= 0 && siteIndex(siteRole) >= need;
}

// needed "" (or missing): any reader. A needed role the server did not serve is never met. A
// needed site role ("member") is checked against the account, whatever `role` is.
export function atLeast(role, needed) {
  if (!needed) return true;
  if (siteIndex(needed) >= 0) return siteAtLeast(needed);
  const need = index(needed);
  return need >= 0 && rank(role) >= need;
}

export function needs(action) {
  return NEEDS[action] || "";
}

export function allows(role, action) {
  return atLeast(role, needs(action));
}
