// Refreshes the table of the overview every few seconds while the tab
// is visible, from the rows-only address in data-src.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var rows = document.getElementById("queue-rows");
  if (!live || !rows) return;
  var src = live.getAttribute("data-src");
  var every = 3000;
  var busy = false;

  function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    fetch(src, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (!r.ok) throw new Error(r.status);
        return r.text();
      })
      .then(function (html) {
        rows.innerHTML = html;
        live.className = "live";
        live.textContent = "live";
        live.title = "Updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {
        live.className = "live stale";
        live.textContent = "reconnecting";
      })
      .finally(function () { busy = false; });
  }

  setInterval(refresh, every);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) refresh();
    live.className = document.hidden ? "live off" : "live";
  });
})();
