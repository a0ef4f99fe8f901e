/**
 * The status page's charts (README, "Status page"): plain browser JavaScript, inlined in the page
 * with `page-script.ts` inside one function scope. SVG built with DOM calls, names and labels set as
 * text, never as markup: app names come from keys and tokens. Three kinds: bars per time step
 * (requests, errors on top), lines per time step (latency percentiles, gaps where nothing was
 * counted) and horizontal bars per row (tokens, cost).
 */
export const CHARTS_SCRIPT = String.raw`
const SVG_NS = "http://www.w3.org/2000/svg";
const W = 560, H = 200, LEFT = 52, RIGHT = 10, TOP = 12, BOTTOM = 24;

function svgEl(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const name of Object.keys(attrs)) node.setAttribute(name, String(attrs[name]));
  if (parent) parent.appendChild(node);
  return node;
}

function svgText(parent, x, y, text, className, anchor) {
  const node = svgEl("text", { x: x, y: y, class: className, "text-anchor": anchor || "start" }, parent);
  node.textContent = text;
  return node;
}

function tooltip(node, text) {
  svgEl("title", {}, node).textContent = text;
}

/** The smallest of 1, 2, 2.5, 5 × 10^n at or above value: the y axis' top. */
function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function pad2(n) {
  return n < 10 ? "0" + n : String(n);
}

function clockOf(unixSeconds) {
  const date = new Date(unixSeconds * 1000);
  return pad2(date.getHours()) + ":" + pad2(date.getMinutes());
}

function newChart(container, label, width, height) {
  container.textContent = "";
  return svgEl("svg", { viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": label, class: "chart" }, container);
}

/** Grid lines with the y values, and a few time labels under the steps. */
function timeAxes(svg, max, points, formatY) {
  const plot = H - TOP - BOTTOM;
  for (let i = 0; i <= 4; i++) {
    const y = TOP + plot * (1 - i / 4);
    svgEl("line", { x1: LEFT, x2: W - RIGHT, y1: y, y2: y, class: "grid" }, svg);
    svgText(svg, LEFT - 6, y + 4, formatY((max * i) / 4), "tick", "end");
  }
  const every = Math.max(1, Math.ceil(points.length / 6));
  for (let j = 0; j < points.length; j += every) {
    svgText(svg, LEFT + ((W - LEFT - RIGHT) * (j + 0.5)) / points.length, H - 6, clockOf(points[j].t), "tick", "middle");
  }
}

/** Requests per step as bars, the step's errors in red over them. */
function drawRate(container, points, stepLabel) {
  const svg = newChart(container, "Requests and errors " + stepLabel, W, H);
  const max = niceMax(Math.max(0, ...points.map((p) => p.requests)));
  timeAxes(svg, max, points, (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1)));
  const slot = (W - LEFT - RIGHT) / points.length;
  const width = Math.max(1, slot * 0.8);
  const plot = H - TOP - BOTTOM;
  points.forEach((p, i) => {
    if (p.requests === 0) return;
    const x = LEFT + slot * i + (slot - width) / 2;
    const height = (plot * p.requests) / max;
    const bar = svgEl("rect", { x: x, y: H - BOTTOM - height, width: width, height: height, class: "bar" }, svg);
    tooltip(bar, clockOf(p.t) + ": " + p.requests + " requests, " + p.errors + " errors");
    if (p.errors > 0) {
      const errorHeight = (plot * p.errors) / max;
      const errorBar = svgEl("rect", { x: x, y: H - BOTTOM - errorHeight, width: width, height: errorHeight, class: "bar-error" }, svg);
      tooltip(errorBar, clockOf(p.t) + ": " + p.errors + " errors");
    }
  });
}

/** p50, p90 and p99 per step as lines; a step without requests breaks them. */
function drawLatency(container, points, formatMs) {
  const keys = ["p50", "p90", "p99"];
  const svg = newChart(container, "Latency percentiles", W, H);
  let top = 0;
  for (const p of points) for (const k of keys) if (p[k] !== null && p[k] > top) top = p[k];
  const max = niceMax(top);
  timeAxes(svg, max, points, (v) => (v === 0 ? "0" : formatMs(v)));
  const slot = (W - LEFT - RIGHT) / points.length;
  const plot = H - TOP - BOTTOM;
  keys.forEach((k, n) => {
    let d = "";
    let open = false;
    points.forEach((p, i) => {
      if (p[k] === null) {
        open = false;
        return;
      }
      const x = LEFT + slot * (i + 0.5);
      const y = H - BOTTOM - (plot * p[k]) / max;
      d += (open ? " L " : " M ") + x.toFixed(1) + " " + y.toFixed(1);
      open = true;
      const dot = svgEl("circle", { cx: x, cy: y, r: 2, class: k }, svg);
      tooltip(dot, clockOf(p.t) + " " + k + ": " + formatMs(p[k]));
    });
    if (d !== "") svgEl("path", { d: d.trim(), class: "line " + k }, svg);
    svgEl("rect", { x: W - RIGHT - 150 + n * 50, y: 2, width: 10, height: 10, class: k }, svg);
    svgText(svg, W - RIGHT - 136 + n * 50, 11, k, "label");
  });
}

/**
 * One bar per row (the first 10 by total), stacked from the given parts, its total written after it.
 * parts: [{ key, className, label }]
 */
function drawHBars(container, label, rows, parts, formatTotal) {
  const shown = rows
    .map((row) => ({ row: row, total: parts.reduce((sum, part) => sum + row[part.key], 0) }))
    .sort((a, b) => b.total - a.total)
    .slice(0, 10);
  const lineHeight = 22;
  const height = Math.max(1, shown.length) * lineHeight + 8;
  const width = 600;
  const svg = newChart(container, label, width, height);
  if (shown.length === 0) {
    svgText(svg, 4, 18, "Nothing counted in this range.", "label");
    return;
  }
  const nameWidth = 150, valueWidth = 110;
  const max = Math.max(...shown.map((s) => s.total)) || 1;
  const span = width - nameWidth - valueWidth;
  shown.forEach((s, i) => {
    const y = 4 + i * lineHeight;
    const name = s.row.name.length > 24 ? s.row.name.slice(0, 23) + "…" : s.row.name;
    tooltip(svgText(svg, nameWidth - 8, y + 14, name, "label", "end"), s.row.name);
    let x = nameWidth;
    for (const part of parts) {
      const length = (span * s.row[part.key]) / max;
      if (length <= 0) continue;
      const bar = svgEl("rect", { x: x, y: y + 3, width: length, height: lineHeight - 8, class: part.className }, svg);
      tooltip(bar, s.row.name + " " + part.label + ": " + s.row[part.key]);
      x += length;
    }
    svgText(svg, x + 6, y + 14, formatTotal(s.total), "value");
  });
}
`;
