// The knowledge map: live progress on /map (the form posts to the SSE endpoint; on "done" the page opens the
// stored map), and the graph view on a map's page (cytoscape, vendored; nodes are entities and conflicts,
// edges are cited relations and conflict sides; clicking an edge opens the passage it stands on).
// Without JavaScript the form posts normally and the server redirects to the map; the lists below the graph
// carry every citation.
(function () {
  "use strict";

  function streamForm(form) {
    var progress = document.getElementById("h-progress");
    function step(text, kind) {
      var li = document.createElement("li");
      li.textContent = text;  // never innerHTML: details may echo document text
      if (kind) { li.className = "h-step-" + kind; }
      progress.appendChild(li);
    }
    form.addEventListener("submit", function (event) {
      if (!window.fetch || !window.TextDecoder) { return; }
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      progress.hidden = false;
      progress.textContent = "";
      step("mapping…");
      fetch(form.getAttribute("data-stream"), {
        method: "POST", body: new FormData(form), credentials: "same-origin", headers: {"Accept": "text/event-stream"}
      }).then(function (response) {
        if (!response.ok) {
          return response.text().then(function (t) {
            step("failed (" + response.status + "): " + window.historianRefusal(t), "error");
          });
        }
        var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) { return; }
            buffer += decoder.decode(chunk.value, {stream: true});
            var blocks = buffer.split("\n\n");
            buffer = blocks.pop();
            blocks.forEach(function (block) {
              var name = "message", data = "";
              block.split("\n").forEach(function (line) {
                if (line.indexOf("event: ") === 0) { name = line.slice(7); }
                else if (line.indexOf("data: ") === 0) { data += line.slice(6); }
              });
              if (!data) { return; }
              var payload = JSON.parse(data);
              if (name === "node") {
                step(payload.node.replace(/_node$/, "").replace("_", " ") + " — " + (payload.detail || "done") + " (" + Math.round(payload.ms) + " ms)");
              } else if (name === "done") {
                step("map ready", "done");
                window.location.assign(payload.url);
              } else if (name === "error") {
                step("failed: " + payload.message, "error");
              }
            });
            return pump();
          });
        }
        return pump();
      }).catch(function (err) { step("failed: " + err, "error"); })
        .then(function () { button.disabled = false; });
    });
  }

  var COLOURS = {person: "#1f5f8b", place: "#2e7d32", organisation: "#8d5a00", event: "#6a1b9a", date: "#555", conflict: "#b00020"};

  function drawGraph(box) {
    var status = document.getElementById("h-graph-status");
    if (!window.cytoscape) { status.textContent = "The graph view needs JavaScript; the lists below hold the whole map."; return; }
    fetch(box.getAttribute("data-graph"), {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (graph) {
      var elements = [];
      graph.nodes.forEach(function (n) {
        elements.push({group: "nodes", data: {id: n.id, label: n.label.length > 40 ? n.label.slice(0, 39) + "…" : n.label, type: n.type}});
      });
      graph.edges.forEach(function (e) {
        elements.push({group: "edges", data: {id: e.id, source: e.source, target: e.target, label: e.label, kind: e.kind, href: e.href}});
      });
      var cy = window.cytoscape({
        container: box, elements: elements, wheelSensitivity: 0.3,
        layout: {name: "cose", animate: false, randomize: false, nodeRepulsion: 8000, idealEdgeLength: 90},
        style: [
          {selector: "node", style: {"label": "data(label)", "font-size": 10, "text-wrap": "wrap", "text-max-width": 120,
            "background-color": function (n) { return COLOURS[n.data("type")] || "#777"; }, "color": "#222", "width": 18, "height": 18}},
          {selector: "node[type = 'conflict']", style: {"shape": "diamond", "width": 26, "height": 26, "color": "#b00020"}},
          {selector: "edge", style: {"width": 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle", "label": "data(label)",
            "font-size": 8, "line-color": "#999", "target-arrow-color": "#999", "text-rotation": "autorotate"}},
          {selector: "edge[kind = 'conflict']", style: {"line-color": "#b00020", "target-arrow-color": "#b00020", "line-style": "dashed"}}
        ]
      });
      cy.on("tap", "edge", function (evt) {
        var href = evt.target.data("href");
        if (href) { window.location.assign(href); }
      });
      box.setAttribute("data-nodes", String(cy.nodes().length));
      box.setAttribute("data-edges", String(cy.edges().length));
      status.textContent = cy.nodes().length + " nodes, " + cy.edges().length + " edges drawn.";
      window.historianMap = cy;
    }).catch(function (err) { status.textContent = "The graph could not be drawn (" + err + "); the lists below hold the whole map."; });
  }

  var form = document.getElementById("h-map");
  if (form) { streamForm(form); }
  var box = document.getElementById("h-graph");
  if (box) { drawGraph(box); }
})();
