// Entry point of the login page (console/server/static/login.html): post the form to /api/login,
// then go where the server sent us from (?next=, same-site paths only).

import "./style.css";

// Only a path on this site. "//evil.example" and "https:..." name other sites, and so do
// "/\t/evil.example" and "/\\evil.example": browsers drop tabs and newlines inside a URL and read a
// backslash as a slash. The server checks the same (console/server/auth.py safe_next).
export function safeNext(raw, origin = location.origin) {
  const next = typeof raw === "string" && raw ? raw : "/";
  if (!next.startsWith("/") || next.startsWith("//") || /[\u0000-\u001f\u007f\\]/.test(next)) return "/";
  let url;
  try {
    url = new URL(next, origin);
  } catch {
    return "/";
  }
  return url.origin === origin ? url.pathname + url.search + url.hash : "/";
}

function start() {
  const form = document.getElementById("login-form");
  const error = form.querySelector(".login-error");
  const api = form.dataset.api || "/api";
  const wanted = safeNext(new URLSearchParams(location.search).get("next"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.hidden = true;
    const data = new FormData(form);
    const res = await fetch(`${api}/login`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ username: data.get("username"), password: data.get("password"), next: wanted }),
    });
    if (res.ok) {
      let next = wanted;
      try {
        next = (await res.json()).next || "/";
      } catch {
        // an older server: keep our own answer
      }
      location.href = safeNext(next);
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
