// Grouped bar charts drawn as SVG and rendered to PNG with resvg, for the
// benchmark report: no browser and no canvas build needed.
import { Resvg } from "@resvg/resvg-js";

export interface Panel {
  title: string;
  unit: string;
  /** The bars' groups (p50, p90, p99…) and, for each series, one value per group. */
  groups: string[];
  series: { label: string; values: (number | undefined)[] }[];
}

const COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2"];
const WIDTH = 520;
const HEIGHT = 300;
const PAD = { top: 40, right: 16, bottom: 56, left: 56 };

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A round step for the axis: 1, 2 or 5 times a power of ten. */
function step(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough || 1));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? power * 10;
}

function panel(p: Panel, x0: number): string {
  const values = p.series.flatMap((s) => s.values).filter((v): v is number => v !== undefined);
  const tick = step(Math.max(1, ...values));
  const top = Math.ceil(Math.max(1, ...values) / tick) * tick;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const groupW = plotW / p.groups.length;
  const barW = (groupW * 0.7) / p.series.length;
  const parts: string[] = [
    `<text x="${x0 + WIDTH / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(p.title)}</text>`,
  ];
  for (let v = 0; v <= top; v += tick) {
    parts.push(
      `<line x1="${x0 + PAD.left}" x2="${x0 + WIDTH - PAD.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${x0 + PAD.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v}</text>`,
    );
  }
  parts.push(
    `<text x="${x0 + 14}" y="${PAD.top + plotH / 2}" font-size="11" transform="rotate(-90 ${x0 + 14} ${PAD.top + plotH / 2})" text-anchor="middle">${escape(p.unit)}</text>`,
  );
  p.groups.forEach((group, g) => {
    const gx = x0 + PAD.left + g * groupW + groupW * 0.15;
    p.series.forEach((s, i) => {
      const v = s.values[g];
      if (v === undefined) return;
      const bx = gx + i * barW;
      parts.push(
        `<rect x="${bx}" y="${y(v)}" width="${barW - 2}" height="${y(0) - y(v)}" fill="${COLOURS[i % COLOURS.length]}"/>`,
        `<text x="${bx + (barW - 2) / 2}" y="${y(v) - 3}" text-anchor="middle" font-size="10">${v}</text>`,
      );
    });
    parts.push(
      `<text x="${gx + groupW * 0.35}" y="${PAD.top + plotH + 16}" text-anchor="middle" font-size="12">${escape(group)}</text>`,
    );
  });
  p.series.forEach((s, i) => {
    const lx = x0 + PAD.left + i * 150;
    const ly = HEIGHT - 14;
    parts.push(
      `<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${COLOURS[i % COLOURS.length]}"/>`,
      `<text x="${lx + 14}" y="${ly}" font-size="11">${escape(s.label)}</text>`,
    );
  });
  return parts.join("\n");
}

/** The panels side by side, as a PNG. */
export function renderPng(panels: Panel[], caption: string): Buffer {
  const width = WIDTH * panels.length;
  const height = HEIGHT + 24;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...panels.map((p, i) => panel(p, i * WIDTH)),
    `<text x="${width / 2}" y="${height - 6}" text-anchor="middle" font-size="11" fill="#555">${escape(caption)}</text>`,
    `</svg>`,
  ].join("\n");
  return new Resvg(svg, { font: { loadSystemFonts: true }, background: "white" }).render().asPng();
}
