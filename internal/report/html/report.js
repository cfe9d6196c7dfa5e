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
      var t = g.querySelector("title");
      if (!t) { return; }
      if (on) { on.classList.remove("on"); }
      on = g; g.classList.add("on");
      tip.textContent = t.textContent; tip.hidden = false;
    }
    document.querySelectorAll("g.copy").forEach(function (g) {
      g.addEventListener("mouseenter", function () { show(g); });
      g.addEventListener("focus", function () { show(g); });
      g.addEventListener("click", function (e) { show(g); e.stopPropagation(); });
    });
    document.addEventListener("click", function () { tip.hidden = true; if (on) { on.classList.remove("on"); on = null; } });
    var root = document.documentElement;
    root.setAttribute("data-ready", String(Math.round(performance.now())));
    root.setAttribute("data-height", String(root.scrollHeight));
  });
})();
