"use strict";
// Errors and blocked requests are written into the page (#page-errors), so
// that a test reading the DOM back sees them; the tip shows a copy's
// request and answer on hover, focus or tap.
(function () {
  var errors = [];
  function note(s) {
    errors.push(s);
    var el = document.getElementById("page-errors");
    if (el) { el.textContent = errors.join("\n"); el.hidden = false; }
  }
  window.addEventListener("error", function (e) { note("error: " + (e.message || e.type)); });
  document.addEventListener("securitypolicyviolation", function (e) { note("blocked: " + e.violatedDirective + " " + e.blockedURI); });
  document.addEventListener("DOMContentLoaded", function () {
    var tip = document.getElementById("tip"), on = null;
    function show(g) {
      // A zoom's copy shows the tip of its row in the section's timeline.
      var src = g.dataset.ref ? document.getElementById(g.dataset.ref) : g;
      var t = src && src.querySelector("title");
      if (!t) { return; }
      if (on) { on.classList.remove("on"); }
      on = g; g.classList.add("on");
      tip.textContent = t.textContent; tip.hidden = false;
    }
    // One listener each for the whole page: a big run draws thousands of copies.
    function copyOf(e) { return e.target && e.target.closest ? e.target.closest("g.copy") : null; }
    document.addEventListener("mouseover", function (e) { var g = copyOf(e); if (g) { show(g); } });
    document.addEventListener("focusin", function (e) { var g = copyOf(e); if (g) { show(g); } });
    document.addEventListener("click", function (e) {
      var g = copyOf(e);
      if (g) { show(g); return; }
      tip.hidden = true;
      if (on) { on.classList.remove("on"); on = null; }
    });
    var root = document.documentElement;
    root.setAttribute("data-ready", String(Math.round(performance.now())));
    root.setAttribute("data-height", String(root.scrollHeight));
  });
})();
