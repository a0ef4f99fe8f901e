/**
 * The status page in a real browser (README, "Status page"): a router on 127.0.0.1 with the echo
 * provider and prices, known traffic from two apps on two models (JSON, a stream, a 404), then
 * `GET /ui` in headless Chromium: the admin key typed in, the figures it shows checked against that
 * traffic exactly (requests, errors by code, tokens and cost by app and model, the targets and their
 * circuits, the rate-limit counters), a 401 and a 403 shown for keys that are not admin keys, and a
 * screenshot saved under test/output/ui/. Every wait is bounded.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { createPricing } from "../core/src/operations/pricing.ts";
import { CHROMIUM_PATH, chromiumGate } from "./helpers/chromium-gate.ts";
import { startHarness, testConfig, type Harness } from "./helpers/harness.ts";
import { until } from "./helpers/wait.ts";

const { skip } = chromiumGate("the status page in Chromium");
const OUTPUT = join(import.meta.dirname, "output", "ui");

const KEY_A = "sk-app-a-0123456789";
const KEY_B = "sk-app-b-0123456789";
const ADMIN_KEY = "sk-admin-0123456789";
const X = "echo/echo-1";
const Y = "echo/echo-2";
const PRICES = { [X]: { input: 2.5, output: 10 }, [Y]: { input: 0.4, output: 1.6 } };
const pricing = createPricing(PRICES);
const REQUEST_LIMIT = 1000;
/** A page's wait for its figures: a refresh is every 5 s, the first read is at once. */
const WAIT_MS = 10_000;

function config(): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1", "echo-2"] } },
    {
      auth: {
        api_keys: [
          { key: KEY_A, app: "app-a", developer: "alice" },
          { key: KEY_B, app: "app-b", developer: "bob" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      pricing: PRICES,
      rate_limit: { app: { requests: REQUEST_LIMIT, tokens: 1_000_000, window: "1h" } },
    },
  );
}

interface Tally {
  requests: number;
  errors: number;
  prompt: number;
  completion: number;
  cost: number;
}

const tally = (): Tally => ({ requests: 0, errors: 0, prompt: 0, completion: 0, cost: 0 });

/** The page's money format, for the text beside the exact value. */
function formatCost(n: number): string {
  if (n === 0) return "$0";
  return `$${n >= 1 ? n.toFixed(2) : n >= 0.01 ? n.toFixed(4) : n.toFixed(6)}`;
}

describe.skipIf(skip !== undefined)("the status page in Chromium", () => {
  let h: Harness;
  let browser: Browser;
  let origin: string;
  const byApp: Record<string, Tally> = { "app-a": tally(), "app-b": tally() };
  const byModel: Record<string, Tally> = { [X]: tally(), [Y]: tally(), "-": tally() };
  const counted = (app: string, model: string, usage?: { prompt_tokens: number; completion_tokens: number } | null, error = false) => {
    const cost = usage ? (pricing.costOf(model, usage) ?? 0) : 0;
    for (const t of [byApp[app]!, byModel[model]!]) {
      t.requests++;
      if (error) t.errors++;
      t.prompt += usage?.prompt_tokens ?? 0;
      t.completion += usage?.completion_tokens ?? 0;
      t.cost += cost;
    }
  };

  beforeAll(async () => {
    h = await startHarness(config(), "http");
    origin = h.baseURL.replace(/\/v1$/, "");
    const client = (apiKey: string) => new OpenAI({ baseURL: h.baseURL, apiKey, maxRetries: 0 });
    const a = client(KEY_A);
    const b = client(KEY_B);
    for (let i = 0; i < 5; i++) {
      const reply = await a.chat.completions.create({ model: X, messages: [{ role: "user", content: `question number ${i} from app a` }] });
      counted("app-a", X, reply.usage);
    }
    for (let i = 0; i < 3; i++) {
      const reply = await b.chat.completions.create({ model: Y, messages: [{ role: "user", content: `b asks ${"more ".repeat(i + 1)}` }] });
      counted("app-b", Y, reply.usage);
    }
    await expect(a.chat.completions.create({ model: "nobody/nothing", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ status: 404 });
    counted("app-a", "-", null, true);
    const stream = await b.chat.completions.create({ model: X, messages: [{ role: "user", content: "stream this back" }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toBeDefined();
    counted("app-b", X, usage);
    // A request is counted once its reply has ended, just after the client has read it: wait for all 10.
    const hourRequests = async () =>
      ((await (await fetch(`${origin}/ui/status.json`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { ranges: { hour: { requests: number } } }).ranges.hour.requests;
    await until(async () => (await hourRequests()) === 10, "the 10 requests counted", 5_000, 50);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"], timeout: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function openPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(WAIT_MS);
    const reply = await page.goto(`${origin}/ui`, { timeout: WAIT_MS });
    expect(reply?.status()).toBe(200);
    return page;
  }

  async function enterKey(page: Page, key: string): Promise<void> {
    await page.fill("#key", key);
    await page.click("#key-form button[type=submit]");
  }

  const cell = (page: Page, table: string, name: string, field: string) => page.locator(`#${table} tr[data-name="${name}"] td[data-field="${field}"]`);

  it("shows the traffic's figures exactly once the admin key is entered, keeping the key in the page only", async () => {
    const page = await openPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));
    await expect.poll(() => page.locator("#message").textContent()).toContain("admin key");
    expect(await page.locator("#status").isHidden()).toBe(true);

    await enterKey(page, ADMIN_KEY);
    await page.locator("#status").waitFor({ state: "visible" });
    await expect.poll(() => page.locator("#requests").textContent(), { timeout: WAIT_MS }).toBe("10");
    expect(await page.locator("#errors").textContent()).toBe("1");
    expect(await page.locator("#p50").getAttribute("data-value")).toMatch(/^\d/);
    expect(await cell(page, "errors-table", "model_not_found", "count").textContent()).toBe("1");
    expect(await page.locator("#errors-table tbody tr").count()).toBe(1);

    for (const [table, expected] of [["by-app", byApp], ["by-model", byModel]] as const) {
      expect(await page.locator(`#${table} tbody tr`).count()).toBe(Object.keys(expected).length);
      for (const [name, t] of Object.entries(expected)) {
        expect(await cell(page, table, name, "requests").textContent(), `${table} ${name}`).toBe(String(t.requests));
        expect(await cell(page, table, name, "errors").textContent(), `${table} ${name}`).toBe(String(t.errors));
        expect(await cell(page, table, name, "prompt_tokens").textContent(), `${table} ${name}`).toBe(t.prompt.toLocaleString("en-US"));
        expect(await cell(page, table, name, "completion_tokens").textContent(), `${table} ${name}`).toBe(t.completion.toLocaleString("en-US"));
        const cost = cell(page, table, name, "cost_usd");
        expect(Number(await cost.getAttribute("data-value")), `${table} ${name} cost`).toBeCloseTo(t.cost, 12);
        expect(await cost.textContent(), `${table} ${name} cost`).toBe(formatCost(t.cost));
      }
    }
    expect(byApp["app-a"]!.cost).toBeGreaterThan(0);
    expect(await page.locator("#app-scope").textContent()).toBe("(this router)");

    expect(await page.locator("#targets tbody tr").count()).toBe(2);
    for (const [model, attempts] of [[X, 6], [Y, 3]] as const) {
      expect(await cell(page, "targets", model, "circuit").textContent()).toBe("closed");
      expect(await cell(page, "targets", model, "health").textContent()).toBe("ok");
      expect(await cell(page, "targets", model, "attempts").textContent()).toBe(String(attempts));
      expect(await cell(page, "targets", model, "failures_recent").textContent()).toBe("0");
    }

    expect(await cell(page, "limit-rules", "app:*", "limit").textContent()).toBe("1,000 requests · 1,000,000 tokens per 1h");
    // The 404 was refused before the rate limit counted it: 5 requests for app-a, 4 for app-b.
    for (const [app, used] of [["app-a", 5], ["app-b", 4]] as const) {
      const left = page.locator(`#limit-latest tr[data-name="app:${app}"] [data-counter="requests"]`);
      expect(await left.getAttribute("data-value")).toBe(String(REQUEST_LIMIT - used));
      expect(await left.textContent()).toBe(`${(REQUEST_LIMIT - used).toLocaleString("en-US")} of 1,000 requests left`);
    }

    // The charts are drawn: a bar for the minute with traffic, the latency lines, a bar per app and model.
    expect(await page.locator("#rate-chart svg rect.bar").count()).toBeGreaterThan(0);
    expect(await page.locator("#latency-chart svg path.line").count()).toBe(3);
    expect(await page.locator("#app-tokens svg rect").count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator("#model-cost svg rect").count()).toBeGreaterThanOrEqual(2);

    // The key lives in a variable of the script: not in the field, storage or cookies.
    expect(await page.inputValue("#key")).toBe("");
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([0, 0, ""]);

    await page.click("button[data-range=day]");
    expect(await page.locator("#rate-title").textContent()).toBe("Requests per 10 minutes");
    expect(await page.locator("#requests").textContent()).toBe("10");
    await page.click("button[data-range=hour]");

    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, "status-page.png"), fullPage: true, timeout: WAIT_MS });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("says 403 for a key that is not an admin key and 401 for an unknown one, and shows no figures", async () => {
    const page = await openPage();
    await enterKey(page, KEY_A);
    await expect.poll(() => page.locator("#message").textContent(), { timeout: WAIT_MS }).toContain("403");
    expect(await page.locator("#message").textContent()).toContain("not an admin key");
    expect(await page.locator("#message").getAttribute("data-kind")).toBe("error");
    expect(await page.locator("#status").isHidden()).toBe(true);
    expect(await page.locator("#key-form").isVisible()).toBe(true);

    await enterKey(page, "sk-nobody-0123456789");
    await expect.poll(() => page.locator("#message").textContent(), { timeout: WAIT_MS }).toContain("401");
    expect(await page.locator("#status").isHidden()).toBe(true);
    await page.close();
  }, 60_000);
});
