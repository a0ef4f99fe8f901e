/**
 * The status page's style sheet (README, "Status page"), inlined in the page: light and dark by the
 * browser's preference, tiles, tables and the charts' colours. The charts set no style attributes
 * (the page's content security policy allows only this sheet), only classes.
 */
export const PAGE_STYLE = String.raw`
:root { color-scheme: light dark; --bg: #f7f7f8; --card: #fff; --ink: #1b1d22; --muted: #5f6470; --line: #dcdee3;
  --accent: #2f6fdf; --accent2: #8fb3f2; --bad: #d23c3c; --warn: #c98a0b; --good: #23884a; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171b; --card: #1e2127; --ink: #e6e8ec; --muted: #9aa0ab; --line: #343842; --accent: #6b9cf5; --accent2: #34507f; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--ink); }
header { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: center; padding: 14px 24px; background: var(--card); border-bottom: 1px solid var(--line); }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 15px; margin: 0 0 8px; }
h2 small { font-weight: normal; color: var(--muted); }
form { display: flex; gap: 8px; align-items: center; }
input, button { font: inherit; padding: 5px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--ink); }
button { cursor: pointer; }
button[aria-pressed="true"], button[type="submit"] { background: var(--accent); border-color: var(--accent); color: #fff; }
#message { margin: 0; }
#message[data-kind="error"] { color: var(--bad); font-weight: 600; }
main { padding: 16px 24px 32px; display: grid; gap: 16px; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); }
main > nav, main > .tiles { grid-column: 1 / -1; }
nav { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
nav .note { color: var(--muted); margin-left: auto; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-width: 0; overflow-x: auto; }
section.wide { grid-column: 1 / -1; }
.tiles { display: grid; gap: 12px; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.tile .label { display: block; color: var(--muted); font-size: 12px; }
.tile .value { display: block; font-size: 22px; font-weight: 600; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; white-space: normal; vertical-align: bottom; }
td.num, th.num { text-align: right; }
tr.empty td { color: var(--muted); font-style: italic; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; background: var(--muted); }
.badge.closed, .badge.ok { background: var(--good); }
.badge.open, .badge.down { background: var(--bad); }
.badge.half-open, .badge.probing, .badge.degraded { background: var(--warn); }
.badge.idle { background: var(--muted); }
.charts-2 { display: grid; gap: 8px; grid-template-columns: 1fr 1fr; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .tick, svg .label { fill: var(--muted); font-size: 11px; }
svg .value { fill: var(--ink); font-size: 11px; }
svg .bar { fill: var(--accent); }
svg .bar-error { fill: var(--bad); }
svg .seg-a { fill: var(--accent); }
svg .seg-b { fill: var(--accent2); }
svg path.line { fill: none; stroke-width: 2; }
svg .p50 { stroke: var(--good); fill: var(--good); }
svg .p90 { stroke: var(--warn); fill: var(--warn); }
svg .p99 { stroke: var(--bad); fill: var(--bad); }
.counter + .counter::before { content: " · "; color: var(--muted); }
`;
