// The dashboard's only script, loaded on every page (the CSP allows this origin's files only):
// copy buttons, and the Analytics tab's chart drawn by uPlot from the page's JSON block.
"use strict";

for (const button of document.querySelectorAll("[data-copy]")) {
  button.addEventListener("click", async () => {
    const source = document.querySelector(button.getAttribute("data-copy"));
    const status = button.parentElement.querySelector("[data-copied]");
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      if (status) status.textContent = "Copied.";
    } catch {
      // No clipboard (an insecure origin, a refused permission): select the text for a manual copy.
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (status) status.textContent = "Selected: press Ctrl+C or ⌘C to copy.";
    }
  });
}

const chart = document.getElementById("chart");
const data = document.getElementById("series");
if (chart && data && window.uPlot) {
  const series = JSON.parse(data.textContent);
  const draw = () => {
    chart.textContent = "";
    if (series.length === 0) {
      chart.textContent = "No requests in this period.";
      return;
    }
    const width = Math.max(280, Math.min(chart.clientWidth || 600, 1100));
    new window.uPlot(
      {
        width,
        height: 260,
        series: [
          {},
          { label: "Requests", stroke: "#1f6feb", width: 2, points: { show: true } },
          { label: "Errors", stroke: "#cf222e", width: 2, points: { show: true } },
        ],
        axes: [{}, { label: "Requests" }],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      },
      [series.map((s) => Date.parse(s.at) / 1000), series.map((s) => s.requests), series.map((s) => s.errors)],
      chart,
    );
  };
  draw();
  let timer;
  window.addEventListener("resize", () => {
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  });
}
