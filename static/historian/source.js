// Bring the cited span into view, its top about a third of the way down the window (not flush at the top edge,
// where a link's #fragment would leave it), and give it focus for keyboard and screen-reader users.
(function () {
  "use strict";
  var mark = document.getElementById("h-mark-first");
  if (!mark) { return; }
  function place() {
    var top = mark.getBoundingClientRect().top + window.pageYOffset;
    window.scrollTo(0, Math.max(0, top - window.innerHeight * 0.35));
  }
  place();
  mark.focus({preventScroll: true});
  window.addEventListener("load", place);  // after the browser's own jump to the #fragment
})();
