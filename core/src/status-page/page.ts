/**
 * The page of `GET /ui` (README, "Status page"): one HTML document with its style sheet and script
 * inline, nothing fetched from elsewhere but `ui/status.json`. It holds no figure and no secret, so
 * it is served without a key; its content security policy allows exactly its own sheet and script
 * (by their hashes), requests to the router only, and no framing: the page where an admin key is
 * typed runs nothing else.
 */
import { createHash } from "node:crypto";
import { CHARTS_SCRIPT } from "./page-charts.ts";
import { MAIN_SCRIPT } from "./page-script.ts";
import { PAGE_STYLE } from "./page-style.ts";

const SCRIPT = `(() => {\n"use strict";\n${CHARTS_SCRIPT}\n${MAIN_SCRIPT}\n})();\n`;

/** A usage table's head: the cells `usageCells` of the script fills. */
const USAGE_HEAD = `<thead><tr><th>name</th><th class="num">requests</th><th class="num">errors</th><th class="num">prompt tokens</th><th class="num">completion tokens</th><th class="num">cost</th></tr></thead><tbody></tbody>`;

function tile(id: string, label: string): string {
  return `<div class="tile"><span class="label">${label}</span><span class="value" id="${id}">–</span></div>`;
}

function usageSection(scope: "app" | "model", title: string): string {
  return `<section class="wide"><h2>${title} <small id="${scope}-scope"></small></h2>
<div class="charts-2"><div id="${scope}-tokens"></div><div id="${scope}-cost"></div></div>
<table id="by-${scope}">${USAGE_HEAD}</table></section>`;
}

const BODY = `<header>
<h1>modelmux status</h1>
<form id="key-form" autocomplete="off">
<label for="key">Admin key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" size="32">
<button type="submit">Show status</button>
</form>
<button id="forget" type="button" hidden>Forget key</button>
<p id="message" role="status" data-kind="info">Enter an admin key (one with admin: true) to see this router's status.</p>
</header>
<main id="status" hidden>
<nav><button type="button" data-range="hour" aria-pressed="true">Last hour</button><button type="button" data-range="day" aria-pressed="false">Last day</button><span class="note" id="updated"></span></nav>
<div class="tiles">${tile("requests", "Requests")}${tile("rate", "Request rate")}${tile("errors", "Errors")}${tile("p50", "Latency p50")}${tile("p90", "Latency p90")}${tile("p99", "Latency p99")}</div>
<section><h2 id="rate-title">Requests per minute</h2><div id="rate-chart"></div></section>
<section><h2>Latency</h2><div id="latency-chart"></div></section>
<section><h2>Errors by code</h2><table id="errors-table"><thead><tr><th>code</th><th class="num">requests</th></tr></thead><tbody></tbody></table></section>
<section><h2>Targets <small>(this router's circuits, and its upstream attempts of the last 5 minutes)</small></h2>
<table id="targets"><thead><tr><th>model</th><th>provider</th><th>health</th><th>circuit</th><th class="num">failures in a row</th><th>probe in</th><th class="num">attempts</th><th class="num">failed</th></tr></thead><tbody></tbody></table></section>
${usageSection("app", "By app")}
${usageSection("model", "By model")}
<section class="wide"><h2>Rate limits <small>(latest counters this router saw; shared by every router on one limiter store)</small></h2>
<p id="limits-off" hidden>No rate limits are configured.</p>
<table id="limit-rules"><thead><tr><th>rule</th><th>limit</th></tr></thead><tbody></tbody></table>
<table id="limit-latest"><thead><tr><th>key</th><th>left</th><th>resets</th><th>seen</th></tr></thead><tbody></tbody></table>
</section>
</main>`;

function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The page's HTML and the headers it is served with. */
export function statusPage(): { html: Buffer; headers: Record<string, string> } {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>modelmux status</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
${BODY}
<script>${SCRIPT}</script>
</body>
</html>
`;
  const policy = [
    "default-src 'none'",
    `script-src ${sha256(SCRIPT)}`,
    `style-src ${sha256(PAGE_STYLE)}`,
    "connect-src 'self'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    html: Buffer.from(html, "utf8"),
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": policy,
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    },
  };
}
