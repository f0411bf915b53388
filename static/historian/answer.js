// The context panel beside an answer's findings (wide screens): choosing "Read it in its context" under a finding,
// or a finding's number in the answer, shows that finding with the sentences around it in the panel. Delegated from
// the document, so it also serves an answer the ask page inserts without a reload. On a phone, or without this
// script, each finding's context unfolds in place.
(function () {
  "use strict";
  var wide = window.matchMedia("(min-width: 1100px)");

  function panelOf(node) {
    var answer = node.closest(".h-answer");
    return answer && answer.querySelector(".h-context-panel");
  }

  function show(finding) {
    var panel = panelOf(finding);
    if (!panel) { return false; }
    function put(name, text) { panel.querySelector('[data-panel="' + name + '"]').textContent = text; }  // never innerHTML
    function part(selector) { var el = finding.querySelector(selector); return el ? el.textContent : ""; }
    put("n", "[" + finding.getAttribute("value") + "]");
    put("before", part(".h-before"));
    put("text", part("blockquote"));
    put("after", part(".h-after"));
    var source = finding.querySelector(".h-cite-link"), link = panel.querySelector('[data-panel="link"]');
    if (source) {
      link.setAttribute("href", source.getAttribute("href"));
      link.textContent = source.textContent.replace(/^\[\d+\]\s*/, "");
    }
    Array.prototype.forEach.call(panel.closest(".h-answer").querySelectorAll(".h-in-panel"), function (li) {
      li.classList.remove("h-in-panel");
    });
    finding.classList.add("h-in-panel");
    return true;
  }

  document.addEventListener("click", function (event) {
    if (!wide.matches || !event.target.closest) { return; }
    var summary = event.target.closest(".h-context summary");
    if (summary) {  // read it beside the answer instead of unfolding it in place
      if (show(summary.closest("li"))) {
        event.preventDefault();
        panelOf(summary).focus({preventScroll: true});  // keyboard and screen-reader users follow it there
      }
      return;
    }
    var marker = event.target.closest(".h-answer .h-marker");
    if (marker) {
      var finding = document.getElementById((marker.getAttribute("href") || "").slice(1));
      if (finding) { show(finding); }
    }
  });
})();
