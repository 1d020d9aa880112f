// What a notebook role may do on the page: which controls to show and which actions to take.
// Only for clarity: the server checks every request (console/server/access.py), so a hidden button
// is a courtesy to the user, never the thing that stops them.
//
// The roles themselves, weakest first with what each can do, come from the server
// (GET /api/me `roles`, defined once in console/roles.py); the page keeps no list of its own.
// Until they arrive no role is known, and only what any reader may do is offered.

let served = []; // [{name, can}], weakest first

export function setRoles(roles) {
  served = Array.isArray(roles) ? roles.filter((r) => r && typeof r.name === "string") : [];
}

export function roles() {
  return served;
}

// The weakest role each page action needs; actions not listed (help, moving the selection,
// leaving an editor) need only to see the notebook.
const NEEDS = {
  run: "runner", "run-next": "runner", "run-from": "runner", "run-all": "runner",
  interrupt: "runner", restart: "runner",
  "run-insert": "editor", "insert-above": "editor", "insert-below": "editor",
  "add-mlsql": "editor", "add-python": "editor", "add-markdown": "editor",
  delete: "editor", "move-up": "editor", "move-down": "editor",
  "kind-mlsql": "editor", "kind-python": "editor", "kind-markdown": "editor",
  edit: "editor", save: "editor", rename: "editor", restore: "editor",
  share: "owner",
};

function index(role) {
  return served.findIndex((r) => r.name === role);
}

// An unknown role (an older server that does not say) gets the least: the server decides anyway.
export function rank(role) {
  return Math.max(index(role), 0);
}

// needed "" (or missing): any reader. A needed role the server did not serve is never met.
export function atLeast(role, needed) {
  if (!needed) return true;
  const need = index(needed);
  return need >= 0 && rank(role) >= need;
}

export function needs(action) {
  return NEEDS[action] || "";
}

export function allows(role, action) {
  return atLeast(role, needs(action));
}
