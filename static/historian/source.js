// Bring the first cited span into view and give it focus for keyboard and screen-reader users.
(function () {
  "use strict";
  var mark = document.getElementById("h-mark-first");
  if (mark) { mark.scrollIntoView({block: "center"}); mark.focus({preventScroll: true}); }
})();
