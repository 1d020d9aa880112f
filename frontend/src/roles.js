// What a notebook role may do on the page: which controls to show and which actions to take.
// Only for clarity: the server checks every request (console/server/access.py), so a hidden button
// is a courtesy to the user, never the thing that stops them.

export const ROLES = ["viewer", "runner", "editor", "owner"];

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

// An unknown role (an older server that does not say) gets the least: the server decides anyway.
export function rank(role) {
  const i = ROLES.indexOf(role);
  return i < 0 ? 0 : i;
}

export function atLeast(role, needed) {
  return rank(role) >= rank(needed);
}

export function needs(action) {
  return NEEDS[action] || "viewer";
}

export function allows(role, action) {
  return atLeast(role, needs(action));
}
