import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { allows, atLeast, needs, setRoles, setSite, siteAtLeast } from "../src/roles.js";

// The roles as GET /api/me serves them, from their one definition (console/roles.py).
function servedRoles(what = "served") {
  const python = process.env.PYTHON || new URL("../../.venv/bin/python", import.meta.url).pathname;
  const out = execFileSync(python, ["-c", `import json, console.roles as r; print(json.dumps(r.${what}()))`],
    { cwd: new URL("../..", import.meta.url).pathname, encoding: "utf8" });
  return JSON.parse(out);
}

const meAs = (siteRole) => ({ user: { site_role: siteRole }, roles: servedRoles(), site_roles: servedRoles("served_site") });

test("each role may do what docs/security.md says, and no more", () => {
  setRoles(servedRoles());
  assert.equal(allows("viewer", "help"), true);
  assert.equal(allows("viewer", "run"), false);
  assert.equal(allows("runner", "run-all"), true);
  assert.equal(allows("runner", "interrupt"), true);
  assert.equal(allows("runner", "edit"), false);
  assert.equal(allows("runner", "run-insert"), false, "inserting a cell is editing");
  assert.equal(allows("editor", "delete"), true);
  assert.equal(allows("editor", "restore"), true);
  assert.equal(allows("editor", "share"), false);
  assert.equal(allows("owner", "share"), true);
  assert.equal(needs("select-next"), "", "any reader may move the selection");
});

test("an unknown or missing role counts as the weakest", () => {
  setRoles(servedRoles());
  assert.equal(atLeast(undefined, "runner"), false);
  assert.equal(atLeast("admin?", "viewer"), true);
  assert.equal(atLeast("admin?", needs("help")), true);
});

test("before the server says which roles there are, only reading is offered", () => {
  setRoles(undefined);
  assert.equal(allows("owner", "help"), true);
  assert.equal(allows("owner", "run"), false);
  assert.equal(allows("owner", "share"), false);
});

test("a reader account gets no fork, duplicate, new or import, whatever its notebook role", () => {
  const me = meAs("reader");
  setRoles(me.roles, me);
  for (const action of ["fork", "duplicate", "new-notebook", "new-folder", "import"]) {
    assert.equal(needs(action), "member", action);
    assert.equal(allows("owner", action), false, action);
  }
  assert.equal(allows("viewer", "help"), true);
  assert.equal(siteAtLeast("member"), false);
  setSite(meAs("member"));
  assert.equal(allows("viewer", "fork"), true, "a member viewer may fork");
  assert.equal(allows("viewer", "run"), false);
  setSite(meAs("admin"));
  assert.equal(siteAtLeast("member"), true);
  setSite(null);  // not known yet: nothing that needs a member is offered
  assert.equal(allows("owner", "fork"), false);
});
