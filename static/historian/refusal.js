// The message of a refused progress stream (a 429, a 503): its error event, or the JSON error, else nothing more.
// Shared by ask.js and map.js, which show it beside the status.
window.historianRefusal = function (body) {
  "use strict";
  var data = /^data: (.*)$/m.exec(body);
  try {
    var parsed = JSON.parse(data ? data[1] : body);
    return parsed.message || (parsed.error && parsed.error.message) || "";
  } catch (e) { return ""; }
};
