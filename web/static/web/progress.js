// Live progress of a scoring job: poll the job's API (same origin, the session's cookie) every two
// seconds, update the numbers and the job's problems (served redacted: no held-back document named),
// and reload the page once the job has ended so the results show.
(function () {
  "use strict";
  var panel = document.querySelector("[data-testid=progress]");
  if (!panel) { return; }
  var running = { queued: true, running: true };
  if (!running[panel.dataset.state]) { return; }
  var bar = panel.querySelector("progress");
  var list = panel.querySelector("[data-testid=job-problems]");
  function problem(kind, item) {
    var li = document.createElement("li");
    li.className = "problem-" + kind;
    li.dataset.problem = kind;
    var strong = document.createElement("strong");
    strong.textContent = kind;
    li.appendChild(strong);
    var where = [item.file ? item.file + (item.line ? ":" + item.line : "") : "",
      item.document_id ? "document " + item.document_id : "", item.field ? "field " + item.field : "",
      item.documents && item.documents.length ? "documents: " + item.documents.join(", ") : ""];
    li.appendChild(document.createTextNode(": " + item.message + " "));
    where.forEach(function (text) {
      if (!text) { return; }
      var span = document.createElement("span");
      span.className = "sub";
      span.textContent = text + " ";
      li.appendChild(span);
    });
    return li;
  }
  function show(job) {
    panel.querySelector("[data-progress-state]").textContent = job.status;
    panel.querySelector("[data-progress-done]").textContent = job.progress.done;
    panel.querySelector("[data-progress-total]").textContent = job.progress.total;
    panel.querySelector("[data-progress-chunks]").hidden = !job.progress.chunks_total;
    panel.querySelector("[data-progress-chunks-done]").textContent = job.progress.chunks_done;
    panel.querySelector("[data-progress-chunks-total]").textContent = job.progress.chunks_total;
    bar.max = Math.max(job.progress.total, 1);
    bar.value = job.progress.done;
    list.replaceChildren();
    job.errors.forEach(function (item) { list.appendChild(problem("error", item)); });
    job.warnings.forEach(function (item) { list.appendChild(problem("warning", item)); });
  }
  function poll() {
    fetch(panel.dataset.jobUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (job) {
        if (!job) { return; }
        show(job);
        if (running[job.status]) { window.setTimeout(poll, 2000); } else { window.location.reload(); }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 2000);
})();
