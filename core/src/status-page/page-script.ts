/**
 * The status page's script (README, "Status page"): plain browser JavaScript, inlined in the page.
 * It asks for an admin key and keeps it in one variable of this scope only (no storage, no cookie:
 * a reload asks again), reads `ui/status.json` with it every few seconds (relative, so the page
 * works where the router is mounted), and fills the page in: everything from the reply is set as
 * text, never as markup. A 401 or 403 stops the refreshing and says why. The charts are
 * `page-charts.ts`.
 */
export const MAIN_SCRIPT = String.raw`
const REFRESH_MS = 5000;
let key = "";
let status = null;
let range = "hour";
let timer = 0;
let generation = 0;

const $ = (id) => document.getElementById(id);

function say(text, kind) {
  const message = $("message");
  message.textContent = text;
  message.dataset.kind = kind;
}

function formatCount(n) {
  return Math.round(n).toLocaleString("en-US");
}

function formatCost(n) {
  if (n === 0) return "$0";
  return "$" + (n >= 1 ? n.toFixed(2) : n >= 0.01 ? n.toFixed(4) : n.toFixed(6));
}

function formatMs(v) {
  if (v === null || v === undefined) return "–";
  if (v < 10) return v.toFixed(2) + " ms";
  if (v < 1000) return Math.round(v) + " ms";
  return (v / 1000).toFixed(2) + " s";
}

function formatDuration(ms) {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60 ? " " + (s % 60) + "s" : "");
  if (s < 86400) return Math.floor(s / 3600) + "h" + (s % 3600 >= 60 ? " " + Math.floor((s % 3600) / 60) + "m" : "");
  return Math.floor(s / 86400) + "d" + (s % 86400 >= 3600 ? " " + Math.floor((s % 86400) / 3600) + "h" : "");
}

function showForm(visible) {
  $("key-form").hidden = !visible;
  $("forget").hidden = visible;
  $("status").hidden = visible || status === null;
}

function stop() {
  generation++;
  clearTimeout(timer);
}

async function load(asked) {
  clearTimeout(timer);
  let reply;
  let body = null;
  try {
    reply = await fetch("ui/status.json", { headers: { authorization: "Bearer " + key }, cache: "no-store" });
    body = await reply.json().catch(() => null);
  } catch (error) {
    if (asked !== generation) return;
    say("The router did not answer (" + error.message + "). Trying again.", "error");
    timer = setTimeout(() => load(asked), REFRESH_MS);
    return;
  }
  if (asked !== generation) return;
  if (reply.status === 200 && body !== null) {
    status = body;
    showForm(false);
    say("", "info");
    render();
    timer = setTimeout(() => load(asked), REFRESH_MS);
    return;
  }
  const reason = body && body.error && body.error.message ? " " + body.error.message : "";
  if (reply.status === 401 || reply.status === 403) {
    stop();
    key = "";
    status = null;
    showForm(true);
    say(
      reply.status === 401
        ? "401: this key was not accepted." + reason
        : "403: this key is not an admin key; the status page needs a key with admin: true." + reason,
      "error",
    );
    return;
  }
  say("The status could not be read (" + reply.status + ")." + reason + " Trying again.", "error");
  timer = setTimeout(() => load(asked), REFRESH_MS);
}

function setValue(node, text, value) {
  node.textContent = text;
  if (value !== undefined && value !== null) node.dataset.value = String(value);
  else delete node.dataset.value;
}

/** Replaces a table's body: one row per item, each cell { field, text, value, num, badge }. */
function fillTable(id, items, cellsOf, emptyText) {
  const body = $(id).tBodies[0];
  body.textContent = "";
  if (items.length === 0) {
    const row = body.insertRow();
    row.className = "empty";
    const cell = row.insertCell();
    cell.colSpan = $(id).tHead.rows[0].cells.length;
    cell.textContent = emptyText;
    return;
  }
  for (const item of items) {
    const row = body.insertRow();
    const cells = cellsOf(item);
    row.dataset.name = cells[0].text;
    for (const spec of cells) {
      const cell = row.insertCell();
      cell.dataset.field = spec.field;
      if (spec.num) cell.className = "num";
      if (spec.badge) {
        const badge = document.createElement("span");
        badge.className = "badge " + spec.badge;
        badge.textContent = spec.text;
        cell.appendChild(badge);
        if (spec.value !== undefined) cell.dataset.value = String(spec.value);
      } else if (spec.parts) {
        for (const part of spec.parts) {
          const span = document.createElement("span");
          span.className = "counter";
          span.dataset.counter = part.counter;
          span.dataset.value = String(part.value);
          span.textContent = part.text;
          cell.appendChild(span);
        }
      } else setValue(cell, spec.text, spec.value);
    }
  }
}

function usageCells(row) {
  return [
    { field: "name", text: row.name },
    { field: "requests", text: formatCount(row.requests), value: row.requests, num: true },
    { field: "errors", text: formatCount(row.errors), value: row.errors, num: true },
    { field: "prompt_tokens", text: formatCount(row.prompt_tokens), value: row.prompt_tokens, num: true },
    { field: "completion_tokens", text: formatCount(row.completion_tokens), value: row.completion_tokens, num: true },
    { field: "cost_usd", text: formatCost(row.cost_usd), value: row.cost_usd, num: true },
  ];
}

function amountOf(name, n) {
  if (name === "cost") return formatCost(n);
  return formatCount(n) + " " + name;
}

/** "990 of 1,000 requests left", "$49.20 of $50 left". */
function leftText(name, left, limit) {
  const number = name === "cost" ? formatCost : formatCount;
  const of = limit === undefined ? "" : " of " + number(limit);
  return number(left) + of + (name === "cost" ? "" : " " + name) + " left";
}

/** A limit's numbers as words: "100 requests · 10,000 tokens per 1m". */
function describeLimit(limit) {
  if (limit === null) return "not limited";
  const parts = Object.keys(limit).filter((k) => k !== "window_ms").map((k) => amountOf(k, limit[k]));
  return parts.join(" · ") + " per " + formatDuration(limit.window_ms);
}

function drawUsage(scopeName, usageRows) {
  const tokens = [
    { key: "prompt_tokens", className: "seg-a", label: "prompt tokens" },
    { key: "completion_tokens", className: "seg-b", label: "completion tokens" },
  ];
  drawHBars($(scopeName + "-tokens"), "Tokens by " + scopeName, usageRows, tokens, (t) => formatCount(t) + " tokens");
  drawHBars($(scopeName + "-cost"), "Cost by " + scopeName, usageRows, [{ key: "cost_usd", className: "seg-a", label: "cost" }], formatCost);
}

function render() {
  if (status === null) return;
  const r = status.ranges[range];
  for (const button of document.querySelectorAll("[data-range]")) button.setAttribute("aria-pressed", String(button.dataset.range === range));
  const generated = new Date(status.generated_at);
  $("updated").textContent =
    "Updated " + generated.toLocaleTimeString() + "; this router has counted since " + new Date(status.since).toLocaleString() + ".";
  setValue($("requests"), formatCount(r.requests), r.requests);
  setValue($("rate"), r.rate_per_min.toFixed(2) + "/min", r.rate_per_min);
  setValue($("errors"), formatCount(r.errors), r.errors);
  for (const k of ["p50", "p90", "p99"]) setValue($(k), formatMs(r.latency_ms[k]), r.latency_ms[k]);
  const stepLabel = r.step_s === 60 ? "per minute" : "per " + r.step_s / 60 + " minutes";
  $("rate-title").textContent = "Requests " + stepLabel;
  drawRate($("rate-chart"), r.series, stepLabel);
  drawLatency($("latency-chart"), r.series, formatMs);

  const codes = Object.keys(r.errors_by_code).sort((a, b) => r.errors_by_code[b] - r.errors_by_code[a] || (a < b ? -1 : 1));
  fillTable("errors-table", codes, (code) => [
    { field: "code", text: code },
    { field: "count", text: formatCount(r.errors_by_code[code]), value: r.errors_by_code[code], num: true },
  ], "No errors in this range.");

  const shared = r.usage.scope === "shared";
  for (const id of ["app-scope", "model-scope"]) $(id).textContent = shared ? "(every router sharing the usage counters)" : "(this router)";
  fillTable("by-app", r.usage.by_app, usageCells, "No requests in this range.");
  fillTable("by-model", r.usage.by_model, usageCells, "No requests in this range.");
  drawUsage("app", r.usage.by_app);
  drawUsage("model", r.usage.by_model);

  fillTable("targets", status.targets, (t) => [
    { field: "model", text: t.model },
    { field: "provider", text: t.provider },
    { field: "health", text: t.health, badge: t.health, value: t.health },
    { field: "circuit", text: t.circuit, badge: t.circuit, value: t.circuit },
    { field: "failures", text: formatCount(t.failures), value: t.failures, num: true },
    { field: "probe_in", text: t.probe_in_ms === undefined ? "–" : formatDuration(t.probe_in_ms), value: t.probe_in_ms },
    { field: "attempts", text: formatCount(t.recent.attempts), value: t.recent.attempts, num: true },
    { field: "failures_recent", text: formatCount(t.recent.failures), value: t.recent.failures, num: true },
  ], "No targets are configured.");

  const limits = status.rate_limits;
  $("limits-off").hidden = limits !== null;
  $("limit-rules").hidden = limits === null;
  $("limit-latest").hidden = limits === null;
  if (limits === null) return;
  fillTable("limit-rules", limits.rules, (rule) => [
    { field: "rule", text: rule.scope + ":" + rule.name },
    { field: "limit", text: describeLimit(rule.limit) },
  ], "No rules.");
  const generatedMs = generated.getTime();
  fillTable("limit-latest", limits.latest, (seen) => [
    { field: "key", text: seen.key },
    {
      field: "remaining",
      parts: Object.keys(seen.remaining).map((name) => ({
        counter: name,
        value: seen.remaining[name],
        text: leftText(name, seen.remaining[name], seen.limit[name]),
      })),
    },
    { field: "reset", text: Object.keys(seen.reset_ms).map((name) => name + " in " + formatDuration(seen.reset_ms[name])).join(", ") || "–" },
    { field: "seen", text: formatDuration(Math.max(0, generatedMs - Date.parse(seen.seen_at))) + " ago" },
  ], "No request has been counted yet.");
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("key");
  key = input.value.trim();
  input.value = "";
  if (key === "") {
    say("Enter an admin key.", "error");
    return;
  }
  stop();
  say("Loading…", "info");
  load(generation);
});

$("forget").addEventListener("click", () => {
  stop();
  key = "";
  status = null;
  showForm(true);
  say("The key is forgotten.", "info");
});

for (const button of document.querySelectorAll("[data-range]")) {
  button.addEventListener("click", () => {
    range = button.dataset.range;
    render();
  });
}
`;
