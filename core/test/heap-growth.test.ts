import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { limitHeapGrowth, SERVE_HEAP_GROWING_PERCENT } from "../src/heap-growth.ts";
import { startNode } from "../../test/helpers/run-process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHURN = fileURLToPath(new URL("./fixtures/old-generation-churn.ts", import.meta.url));

describe("limitHeapGrowth", () => {
  it("sets V8's heap growing percent unless node was given one", () => {
    const set: string[] = [];
    const record = (flags: string) => void set.push(flags);
    expect(limitHeapGrowth(["--enable-source-maps", ""], record)).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`]);
    // On node's command line, in NODE_OPTIONS, in either spelling: the user's value wins.
    for (const given of [["--heap-growing-percent=80"], ["--max-old-space-size=512 --heap_growing_percent=80"], ["--heap-growing-percent", "80"]]) {
      expect(limitHeapGrowth(given, record)).toBe(false);
    }
    expect(set).toHaveLength(1);
    // A flag whose name merely starts the same is not the user's choice of this one.
    expect(limitHeapGrowth(["--heap-growing-percentage-of-nothing=1"], record)).toBe(true);
  });

  it("keeps the old generation's garbage down in a running process (the flag takes effect after start)", async () => {
    const peak = async (limit: boolean) => {
      const child = startNode(["--max-semi-space-size=1", "--import", "tsx", CHURN], { cwd: ROOT, env: { ...process.env, LIMIT: limit ? "1" : "0" }, timeLimitMs: 60_000 });
      const { code } = await child.exited;
      expect(code, child.stderr()).toBe(0);
      return (JSON.parse(child.stdout()) as { peakOldBytes: number }).peakOldBytes;
    };
    const [unlimited, limited] = await Promise.all([peak(false), peak(true)]);
    // Measured: ~53 MB at V8's own factor, ~26 MB at 50%.
    expect(limited).toBeLessThan(unlimited * 0.75);
  }, 60_000);
});
