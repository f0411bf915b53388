// Ask with live progress: post the form to the SSE endpoint, list each finished step, then insert the answer.
// Without JavaScript the form posts normally and the server redirects to the answer page.
(function () {
  "use strict";
  var form = document.getElementById("h-ask");
  if (!form || !window.fetch || !window.TextDecoder) { return; }
  var progress = document.getElementById("h-progress");
  var result = document.getElementById("h-result");

  function step(text, kind) {
    var li = document.createElement("li");
    li.textContent = text;  // never innerHTML: details may echo document text
    if (kind) { li.className = "h-step-" + kind; }
    progress.appendChild(li);
    return li;
  }

  function handle(name, data) {
    if (name === "node") {
      step(data.node.replace("_", " ") + " — " + (data.detail || "done") + " (" + Math.round(data.ms) + " ms)");
    } else if (name === "done") {
      step("answer ready: " + data.standing, "done");  // the run's standing, in the words of its badge
      return fetch(data.url + "?partial=1", {credentials: "same-origin"}).then(function (r) { return r.text(); })
        .then(function (html) {
          result.innerHTML = html;  // server-rendered and autoescaped
          history.pushState({}, "", data.url);
          var heading = result.querySelector("h2");
          if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus(); }
        });
    } else if (name === "error") {
      step("failed: " + data.message, "error");
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    progress.hidden = false;
    progress.innerHTML = "";
    result.innerHTML = "";
    step("asking…");
    fetch(form.getAttribute("data-stream"), {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: {"Accept": "text/event-stream"}
    }).then(function (response) {
      if (!response.ok) {
        return response.text().then(function (t) {
          step("failed (" + response.status + "): " + window.historianRefusal(t), "error");
        });
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      var pending = Promise.resolve();
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { return pending; }
          buffer += decoder.decode(chunk.value, {stream: true});
          var events = buffer.split("\n\n");
          buffer = events.pop();
          events.forEach(function (block) {
            var name = "message", data = "";
            block.split("\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) { name = line.slice(7); }
              else if (line.indexOf("data: ") === 0) { data += line.slice(6); }
            });
            if (data) { pending = pending.then(function () { return handle(name, JSON.parse(data)); }); }
          });
          return pump();
        });
      }
      return pump();
    }).catch(function (err) {
      step("failed: " + err, "error");
    }).then(function () { button.disabled = false; });
  });
})();
