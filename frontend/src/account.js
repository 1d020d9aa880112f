// Who is logged in, in every page's toolbar: the account's name and site role, a password change
// and logout. In single-user mode there is no login to leave: the menu says so and how to give the
// local admin a password for when the server runs with logins.

import { h } from "./dom.js";
import { errorLine, openPanel } from "./overlay.js";

// The password change answers with a fresh login (all others were revoked): its CSRF token must
// replace the one the page holds, or the next write would be refused.
function adoptToken(token) {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta && token) meta.setAttribute("content", token);
}

export function openPasswordDialog(api, me) {
  const panel = openPanel("Change password", "password-dialog");
  const field = (role, label, autocomplete) => h("input", { type: "password", required: true, autocomplete, "aria-label": label, placeholder: label, dataset: { role } });
  const current = field("password-current", "Current password", "current-password");
  const next = field("password-new", "New password (at least 8 characters)", "new-password");
  const again = field("password-again", "New password again", "new-password");
  const status = h("div", { dataset: { role: "password-status" } });
  const ok = h("button.primary", { type: "submit", text: "Change password", dataset: { secAction: "change-password" } });
  const form = h("form.password-form", {}, current, next, again, ok, status);
  panel.body.append(h("p.muted", { text: `Account ${me.user.username}. Your other logins are signed out.` }), form);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    status.replaceChildren();
    if (next.value !== again.value) {
      status.append(errorLine(new Error("The two new passwords differ.")));
      return;
    }
    ok.disabled = true;
    try {
      const res = await api.request("POST", "/me/password", { old_password: current.value, new_password: next.value });
      adoptToken(res && res.csrf_token);
      form.replaceChildren(h("p", { dataset: { role: "password-done" }, text: "Password changed. Your other logins were signed out." }));
    } catch (err) {
      status.append(errorLine(err));
    } finally {
      ok.disabled = false;
    }
  });
  current.focus();
  return panel;
}

export async function logout(api) {
  await api.request("POST", "/logout");
  location.href = "/login";
}

// The toolbar's account part for GET /api/me's answer `me`; empty when nobody is known.
export function accountMenu(api, me) {
  const box = h("span.account", { dataset: { role: "account" } });
  const user = me && me.user;
  if (!user) return box;
  const name = h("span.account-name", { dataset: { role: "account-name" }, title: `${user.display_name || user.username} (${user.site_role})`, text: user.username });
  const role = h("span.account-role", { dataset: { role: "account-role" }, text: user.site_role });
  box.append(name, role);
  if (me.single_user) {
    box.append(h("span.account-note", {
      dataset: { role: "single-user" },
      title: `No login in single-user mode. To log in as ${user.username} later: mlsql-console users passwd ${user.username}`,
      text: "single-user" }));
    return box;
  }
  const pw = h("button", { type: "button", dataset: { secAction: "password" }, text: "Password…", title: "Change your password" });
  const out = h("button", { type: "button", dataset: { secAction: "logout" }, text: "Log out" });
  pw.addEventListener("click", () => openPasswordDialog(api, me));
  out.addEventListener("click", () => logout(api).catch(() => { location.href = "/login"; }));
  box.append(pw, out);
  return box;
}
