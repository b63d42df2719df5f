// Draws the Memory home charts with the vendored Chart.js from the page's json_script data.
(function () {
  function draw() {
    var node = document.getElementById("inventory-data");
    if (!node || typeof Chart === "undefined") return;
    var data = JSON.parse(node.textContent);
    var opts = { responsive: true, maintainAspectRatio: false, animation: false };
    function bar(id, map, label) {
      var el = document.getElementById(id);
      if (!el) return;
      new Chart(el, {
        type: "bar",
        data: { labels: Object.keys(map), datasets: [{ label: label, data: Object.values(map) }] },
        options: opts,
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
        options: opts,
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
