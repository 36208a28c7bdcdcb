// The console's one script. The counts of a store may take a while to
// read (some engines visit every key), so pages are sent without them
// and this script loads them at once:
//   - the overview's table, from the rows-only address in data-src of
//     #live, then again every few seconds while the tab is visible;
//   - a queue's panel of counts (#counts), from its data-src, once.
(function () {
  "use strict";

  function load(src) {
    return fetch(src, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) {
        return r.text().then(function (html) {
          if (!r.ok && !html) throw new Error(r.status);
          return { ok: r.ok, html: html };
        });
      });
  }

  var counts = document.getElementById("counts");
  if (counts && counts.getAttribute("data-src")) {
    load(counts.getAttribute("data-src"))
      .then(function (res) { counts.innerHTML = res.html; })
      .catch(function () {
        var p = document.createElement("p");
        p.className = "error";
        p.setAttribute("role", "alert");
        p.textContent = "The counts could not be loaded; reload the page to try again.";
        counts.replaceChildren(p);
      })
      .finally(function () { counts.setAttribute("aria-busy", "false"); });
  }

  var live = document.getElementById("live");
  var rows = document.getElementById("queue-rows");
  if (!live || !rows) return;
  var src = live.getAttribute("data-src");
  var every = 3000;
  var busy = false;

  function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    load(src)
      .then(function (res) {
        if (!res.ok) throw new Error("not ok");
        rows.innerHTML = res.html;
        rows.setAttribute("aria-busy", "false");
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

  refresh();
  setInterval(refresh, every);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) refresh();
    live.className = document.hidden ? "live off" : "live";
  });
})();
