// Live progress of a scoring job: poll the run's API (same origin, the session's cookie) every two
// seconds, update the numbers, and reload the page once the job has ended so the results show.
(function () {
  "use strict";
  var panel = document.querySelector("[data-testid=progress]");
  if (!panel) { return; }
  var running = { queued: true, running: true };
  if (!running[panel.dataset.state]) { return; }
  var bar = panel.querySelector("progress");
  function show(progress) {
    panel.querySelector("[data-progress-state]").textContent = progress.state;
    panel.querySelector("[data-progress-done]").textContent = progress.done;
    panel.querySelector("[data-progress-total]").textContent = progress.total;
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
  }
  function poll() {
    fetch(panel.dataset.runUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (run) {
        if (!run || !run.progress) { return; }
        show(run.progress);
        if (running[run.progress.state]) { window.setTimeout(poll, 2000); } else { window.location.reload(); }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 2000);
})();
