// The floor page's live parts: every element with data-live="URL" is fetched again each second
// and replaced; img[data-refresh] is reloaded every that many milliseconds. Nothing else.
"use strict";
(function () {
  var PERIOD_MS = 1000;
  var stale = false;

  function showStale(on) {
    if (on === stale) { return; }
    stale = on;
    var banner = document.getElementById("stale");
    if (banner) { banner.hidden = !on; }
  }

  function refresh(el) {
    if (el.dataset.busy === "1") { return; }
    el.dataset.busy = "1";
    fetch(el.dataset.live, {credentials: "same-origin", cache: "no-store",
                            headers: {"X-Requested-With": "fetch"}})
      .then(function (response) {
        if (response.status === 401) { window.location.assign("/login"); return null; }
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        if (html !== null && html !== el.dataset.last) {
          el.innerHTML = html;
          el.dataset.last = html;
        }
        showStale(false);
      })
      .catch(function () { showStale(true); })
      .finally(function () { el.dataset.busy = "0"; });
  }

  function start() {
    document.querySelectorAll("[data-live]").forEach(function (el) {
      setInterval(function () { refresh(el); }, PERIOD_MS);
    });
    document.querySelectorAll("img[data-refresh]").forEach(function (img) {
      var base = img.getAttribute("src").split("?")[0];
      setInterval(function () { img.src = base + "?t=" + Date.now(); },
                  Math.max(2000, parseInt(img.dataset.refresh, 10) || 15000));
    });
  }

  document.addEventListener("DOMContentLoaded", start);
}());
