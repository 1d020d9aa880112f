// Starts the notebook page's two API reads while the main bundle is still downloading and
// parsing; frontend/src/api.js takes these responses instead of asking again. A separate file
// (not an inline script) so a strict Content-Security-Policy can still allow it.
(function () {
  var m = location.pathname.match(/^\/notebooks\/([^/]+)\/?$/);
  var root = document.getElementById("app");
  if (!m || !root || !window.fetch) return;
  var base = (root.dataset.api || "/api") + "/notebooks/" + m[1];
  var opts = { headers: { Accept: "application/json" }, credentials: "same-origin" };
  window.consolePrefetch = { notebook: fetch(base, opts), runs: fetch(base + "/runs", opts) };
})();
