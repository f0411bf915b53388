// Poll the running reindex job and move the progress bar; reload when it finishes.
(function () {
  "use strict";
  var box = document.getElementById("h-job");
  if (!box || box.dataset.active !== "true") return;
  var url = box.dataset.jobUrl;
  function set(id, value) { var el = document.getElementById(id); if (el) el.textContent = value; }
  function tick() {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (job) {
        var bar = document.getElementById("h-progress");
        bar.value = job.percent;
        bar.textContent = job.percent + "%";
        set("h-state", job.state);
        set("h-phase", job.phase);
        set("h-done", job.progress.done);
        set("h-total", job.progress.total);
        set("h-percent", job.percent);
        if (job.state === "queued" || job.state === "running") {
          setTimeout(tick, 700);
        } else {
          window.location.reload();
        }
      })
      .catch(function () { setTimeout(tick, 2000); });
  }
  tick();
})();
