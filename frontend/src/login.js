// Entry point of the login page (console/server/static/login.html): post the form to /api/login,
// then go where the server sent us from (?next=, same-site paths only).

import "./style.css";

function safeNext() {
  const next = new URLSearchParams(location.search).get("next") || "/";
  // Only a path on this site: "//evil.example" or "https://..." would be an open redirect.
  return next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

function start() {
  const form = document.getElementById("login-form");
  const error = form.querySelector(".login-error");
  const api = form.dataset.api || "/api";
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.hidden = true;
    const data = new FormData(form);
    const res = await fetch(`${api}/login`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ username: data.get("username"), password: data.get("password") }),
    });
    if (res.ok) {
      location.href = safeNext();
      return;
    }
    let message = `login failed (HTTP ${res.status})`;
    try {
      message = (await res.json()).error || message;
    } catch {
      // not JSON: keep the status line
    }
    error.textContent = message;
    error.hidden = false;
  });
  document.body.dataset.ready = "1";
}

start();
