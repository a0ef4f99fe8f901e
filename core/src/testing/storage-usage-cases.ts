/**
 * The conformance cases of usage counters (docs/plugins.md, "Usage counters"): `addUsage` adds per
 * hour, app, developer and model, exactly, whatever the labels' characters and however many calls
 * run at once; `readUsage` answers the hours of the days asked for. Registered by `testStorage`;
 * each case is skipped for a storage that has neither method (it keeps no usage counters).
 */
import { beforeEach, expect, it } from "vitest";
import type { Storage, UsageCounts, UsageDelta, UsageRange, UsageRow } from "../plugin.ts";
import { DAY_MS, dayOf } from "../usage/usage-days.ts";
import type { KitContext } from "./storage-owner-cases.ts";

/** A UTC day `back` days ago: recent, so no retention has dropped it. */
const daysAgo = (back: number) => dayOf(Date.now() - back * DAY_MS);

const ZERO: UsageCounts = { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNanoUsd: 0 };

function delta(hour: string, app: string, developer: string, model: string, counts: Partial<UsageCounts> = {}): UsageDelta {
  return { hour, app, developer, model, ...ZERO, requests: 1, ...counts };
}

const keyOf = (row: UsageRow) => JSON.stringify([row.hour, row.app, row.developer, row.model]);

/** Rows added up per key and sorted, as the core reads them: a plugin may repeat a key. */
export function summedRows(rows: readonly UsageRow[]): UsageRow[] {
  const sums = new Map<string, UsageRow>();
  for (const row of rows) {
    const sum = sums.get(keyOf(row));
    if (sum === undefined) sums.set(keyOf(row), { ...row });
    else for (const field of Object.keys(ZERO) as Array<keyof UsageCounts>) sum[field] += row[field];
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
}

export function usageCases(kit: KitContext): void {
  let storage: Storage;
  beforeEach(() => void (storage = kit.storage));
  /** The storage's rows of `range`, summed; the case is skipped for a storage without usage counters. */
  const read = async (range: UsageRange) => summedRows(await storage.readUsage!(range));
  const day = daysAgo(3);
  const whole = { firstDay: day, lastDay: day };

  it("has both addUsage and readUsage, or neither (then the core counts in memory)", () => {
    expect(typeof storage.addUsage === "function").toBe(typeof storage.readUsage === "function");
  });

  it("reads back what was added per hour, app, developer and model, repeated keys added up within a call and across calls", async (ctx) => {
    if (!storage.addUsage) return ctx.skip();
    const counts = { requests: 2, errors: 1, inputTokens: 100, outputTokens: 20, costNanoUsd: 1_234 };
    await storage.addUsage([delta(`${day}T13`, "app", "dev", "p/m", counts), delta(`${day}T13`, "app", "dev", "p/m", counts), delta(`${day}T14`, "app", "dev", "p/m")]);
    await storage.addUsage([delta(`${day}T13`, "app", "dev", "p/m", counts), delta(`${day}T13`, "app", "dev2", "p/m"), delta(`${day}T13`, "app", "dev", "p/n")]);
    expect(await read(whole)).toEqual(
      summedRows([
        { ...delta(`${day}T13`, "app", "dev", "p/m"), requests: 6, errors: 3, inputTokens: 300, outputTokens: 60, costNanoUsd: 3_702 },
        delta(`${day}T13`, "app", "dev", "p/n"),
        delta(`${day}T13`, "app", "dev2", "p/m"),
        delta(`${day}T14`, "app", "dev", "p/m"),
      ]),
    );
  });

  it("answers the hours of the days asked for, both ends included, and nothing for days without counters", async (ctx) => {
    if (!storage.addUsage) return ctx.skip();
    const [before, first, last, after] = [daysAgo(12), daysAgo(11), daysAgo(10), daysAgo(9)];
    const hours = [`${before}T23`, `${first}T00`, `${first}T23`, `${last}T00`, `${last}T23`, `${after}T00`];
    await storage.addUsage(hours.map((hour) => delta(hour, "app", "dev", "p/m")));
    expect((await read({ firstDay: first, lastDay: last })).map((row) => row.hour)).toEqual(hours.slice(1, 5));
    expect((await read({ firstDay: last, lastDay: last })).map((row) => row.hour)).toEqual(hours.slice(3, 5));
    expect(await read({ firstDay: daysAgo(30), lastDay: daysAgo(20) })).toEqual([]);
    expect(await storage.readUsage!({ firstDay: daysAgo(1), lastDay: daysAgo(0) })).toEqual([]);
  });

  it("keeps labels of any characters apart: separators, escapes, empty strings, case, non-ASCII", async (ctx) => {
    if (!storage.addUsage) return ctx.skip();
    const labels = ["a", "A", "", "a|b", "a%7Cb", "a:b", "a\tb", "a\nb", "%", "__proto__", "ünï ✓", "x".repeat(300)];
    const deltas = labels.flatMap((label, i) => [
      delta(`${day}T01`, label, "dev", "p/m", { inputTokens: i + 1 }),
      delta(`${day}T01`, "app", label, "p/m", { inputTokens: 100 + i }),
      delta(`${day}T01`, "app", "dev", `p/${label}`, { inputTokens: 200 + i }),
    ]);
    // `app|dev` split the other way round: one label's separator must not make another key.
    deltas.push(delta(`${day}T01`, "a", "b|dev", "p/m", { inputTokens: 999 }));
    await storage.addUsage(deltas);
    const expected = summedRows(deltas);
    expect(expected.length).toBe(deltas.length);
    expect(await read(whole)).toEqual(expected);
  });

  it("loses no increment to 40 calls at once, and adds large counts exactly", async (ctx) => {
    if (!storage.addUsage) return ctx.skip();
    const big = 2 ** 51;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        storage.addUsage!([delta(`${day}T05`, "app", "dev", "p/m", { errors: 1, outputTokens: 3, costNanoUsd: 7 }), delta(`${day}T05`, "app", `dev-${i % 4}`, "p/m")]),
      ),
    );
    await storage.addUsage([delta(`${day}T06`, "app", "dev", "p/m", { costNanoUsd: big })]);
    await storage.addUsage([delta(`${day}T06`, "app", "dev", "p/m", { costNanoUsd: big - 1, inputTokens: big })]);
    const rows = await read(whole);
    expect(rows).toEqual([
      { ...delta(`${day}T05`, "app", "dev", "p/m"), requests: 40, errors: 40, outputTokens: 120, costNanoUsd: 280 },
      ...[0, 1, 2, 3].map((i) => ({ ...delta(`${day}T05`, "app", `dev-${i}`, "p/m"), requests: 10 })),
      { ...delta(`${day}T06`, "app", "dev", "p/m"), requests: 2, inputTokens: big, costNanoUsd: 2 * big - 1 },
    ]);
  });

  it("takes an empty call", async (ctx) => {
    if (!storage.addUsage) return ctx.skip();
    await storage.addUsage([]);
    expect(await read(whole)).toEqual([]);
  });
}
