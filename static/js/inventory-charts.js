// Draws the Memory home charts with the vendored Chart.js from the page's json_script data.
(function () {
  // Every chart counts entries, proposals or findings: the value axis starts at zero and ticks
  // only at whole numbers. The category axis is offset so each bar sits centred on its tick and
  // none is cut at the edges. Each chart gets its own options object: Chart.js writes the
  // resolved scales back into the options it is given, so a shared object would hand the line
  // chart's axes (no offset, not from zero) to the bar charts.
  function options(offset) {
    return {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: {
        x: { type: "category", offset: offset },
        y: { type: "linear", beginAtZero: true, min: 0, suggestedMax: 1, ticks: { precision: 0 } },
      },
    };
  }
  function draw() {
    var node = document.getElementById("inventory-data");
    if (!node || typeof Chart === "undefined") return;
    var data = JSON.parse(node.textContent);
    function bar(id, map, label) {
      var el = document.getElementById(id);
      if (!el) return;
      new Chart(el, {
        type: "bar",
        data: { labels: Object.keys(map), datasets: [{ label: label, data: Object.values(map) }] },
        options: options(true),
      });
    }
    var h = document.getElementById("chart-history");
    if (h) {
      new Chart(h, {
        type: "line",
        data: {
          labels: data.history.map(function (p) { return p.day; }),
          datasets: [
            { label: "active", data: data.history.map(function (p) { return p.active; }) },
            { label: "inactive", data: data.history.map(function (p) { return p.inactive; }) },
          ],
        },
        options: options(data.history.length < 2),
      });
    }
    bar("chart-importance", data.importance, "entries");
    bar("chart-auto", data.auto, "deactivations");
    bar("chart-pending", data.pending, "pending");
    bar("chart-findings", data.findings, "findings");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
