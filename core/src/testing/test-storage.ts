/**
 * The storage conformance kit (README, "Stored completions" and "Plugins"): the battery every
 * storage plugin must pass, against the `Storage` contract itself, with no router around it. It
 * checks that the plugin states the contract this core speaks (`contract: 2`), then each case gets
 * a fresh storage from `create()` and closes it afterwards. The battery runs once for the owner
 * `default` (API keys without `app`) and once for an app with an unusual name;
 * `storage-owner-cases.ts` adds what keeps owners apart, metadata keys of any string, and the
 * model filter's two names; `storage-usage-cases.ts` the usage counters of a storage that keeps them.
 * A plugin's test file is a few lines:
 *
 * @example
 * import { testStorage } from "@modelmux/core/testing";
 * import plugin, { createMyStorage } from "../src/index.ts";
 *
 * testStorage({
 *   name: "my-storage (memory)",
 *   plugin,
 *   create: async () => createMyStorage({}),
 *   ttl: { create: async (ttlMs) => createMyStorage({ ttlMs }) },
 * });
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CompletionListQuery, CompletionOwner, Storage, StorageDefinition, StoredCompletion } from "../plugin.ts";
import { storageContractProblem } from "../plugins/storage-contract-check.ts";
import { idsOf, listQuery, sampleCompletion, saveAll, T0, walkPages, type SampleOptions } from "./storage-samples.ts";
import { ownerCases, type KitContext } from "./storage-owner-cases.ts";
import { usageCases } from "./storage-usage-cases.ts";

export { sampleCompletion } from "./storage-samples.ts";

export interface StorageConformanceOptions {
  /** Shown in the describe block: `storage conformance: <name>`. */
  name: string;
  /** The plugin's definition (its default export): the kit checks it states `contract: 2`, as the core does when it loads it. */
  plugin: StorageDefinition<never>;
  /** A fresh, empty storage; called once per case. */
  create(): Promise<Storage>;
  /** When given, the TTL case runs on a storage made with this `ttlMs` (`storage.ttl`). */
  ttl?: { create(ttlMs: number): Promise<Storage> };
  /** When set, every case is skipped and this says why (e.g. "Redis is not reachable"). */
  skip?: string;
}

/** The owners the battery runs for: keys without `app`, and an app name no key layout may take apart. */
const BATTERY_OWNERS: readonly CompletionOwner[] = ["default", "Kit App/1:c:ü"];

/**
 * Registers the conformance battery for a storage as a vitest `describe` block.
 */
export function testStorage(options: StorageConformanceOptions): void {
  const title = `storage conformance: ${options.name}`;
  if (options.skip !== undefined) {
    describe(title, () => it.skip(`skipped: ${options.skip}`, () => {}));
    return;
  }
  describe(title, () => {
    it("states the storage contract this core speaks (`contract: 2` in defineStorage), or the core refuses it at load", () => {
      // A JavaScript caller may leave `plugin` out: say so rather than fail on a property of undefined.
      expect(options.plugin, "testStorage needs `plugin`, the plugin's default export").toBeDefined();
      expect(storageContractProblem(options.plugin)).toBeUndefined();
    });
    const kit: KitContext = { storage: undefined as unknown as Storage, opened: [] };
    beforeEach(async () => {
      kit.storage = await options.create();
      kit.opened.push(kit.storage);
    });
    afterEach(async () => {
      await Promise.all(kit.opened.splice(0).map((s) => s.close?.()));
    });
    it("is ready on a working backend, when it has a `ready` hook (GET /readyz asks it)", async () => {
      await kit.storage.ready?.();
    });
    for (const owner of BATTERY_OWNERS) describe(`owner '${owner}'`, () => battery(kit, owner, options.ttl));
    describe("owners, metadata keys, model names", () => ownerCases(kit));
    describe("usage counters (skipped for a storage that keeps none)", () => usageCases(kit));
  });
}

/** Every case of one owner's completions. */
function battery(kit: KitContext, owner: CompletionOwner, ttl: StorageConformanceOptions["ttl"]): void {
  let storage: Storage;
  beforeEach(() => void (storage = kit.storage));
  const sample = (id: string, options: Omit<SampleOptions, "owner"> = {}): StoredCompletion => sampleCompletion(id, { ...options, owner });
  const query = (q: Partial<CompletionListQuery> = {}) => listQuery(owner, q);

  it("gets back exactly what was saved, messages and metadata included", async () => {
    const entry = sample("chatcmpl-Kit1", { metadata: { user: "alice", n: "42", empty: "" } });
    await storage.saveCompletion(entry);
    expect(await storage.getCompletion(owner, "chatcmpl-Kit1")).toEqual(entry);
  });

  it("keeps ids and values that look like numbers as strings, and ids of any characters apart", async () => {
    const ids = ["123", "007", "1e3", "true", "a/b", "a:b", "../x", "Chat-X", "chat-x", "ünï code ✓"];
    await saveAll(storage, ids.map((id, i) => sample(id, { createdAt: T0 + i, metadata: { n: "123" } })));
    for (const [i, id] of ids.entries()) expect(await storage.getCompletion(owner, id)).toEqual(sample(id, { createdAt: T0 + i, metadata: { n: "123" } }));
    expect(await idsOf(storage, owner)).toEqual(ids);
    expect(await idsOf(storage, owner, { metadata: { n: "123" } })).toEqual(ids);
  });

  it("answers undefined for an id never stored, and lists nothing when empty", async () => {
    expect(await storage.getCompletion(owner, "chatcmpl-missing")).toBeUndefined();
    expect(await storage.listCompletions(query())).toEqual({ data: [], hasMore: false });
  });

  it("lists by createdAt, then storing order; desc is the exact reverse", async () => {
    await saveAll(storage, [
      sample("c", { createdAt: T0 + 3000 }),
      sample("a", { createdAt: T0 + 1000 }),
      sample("b1", { createdAt: T0 + 2000 }),
      sample("b2", { createdAt: T0 + 2000 }),
      sample("d", { createdAt: T0 + 4000 }),
    ]);
    expect(await idsOf(storage, owner)).toEqual(["a", "b1", "b2", "c", "d"]);
    expect(await idsOf(storage, owner, { order: "desc" })).toEqual(["d", "c", "b2", "b1", "a"]);
    const page = await storage.listCompletions(query({ limit: 5 }));
    expect(page!.hasMore).toBe(false);
  });

  it("pages with `after` across page boundaries in both orders (25 items, limit 10)", async () => {
    // Three items per createdAt, so ties straddle page boundaries.
    const all = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
    await saveAll(storage, all.map((id, i) => sample(id, { createdAt: T0 + Math.floor(i / 3) * 1000 })));
    for (const order of ["asc", "desc"] as const) {
      const { ids, pages } = await walkPages(storage, query({ limit: 10, order }));
      expect(pages).toEqual([[10, true], [10, true], [5, false]]);
      expect(ids).toEqual(order === "asc" ? all : [...all].reverse());
    }
    const first = await storage.listCompletions(query({ limit: 25 }));
    expect(first!.hasMore).toBe(false);
    expect((await storage.listCompletions(query({ after: "p24" })))!).toEqual({ data: [], hasMore: false });
    expect((await storage.listCompletions(query({ after: "p00", order: "desc" })))!).toEqual({ data: [], hasMore: false });
  });

  it("answers undefined when `after` names no stored completion", async () => {
    await storage.saveCompletion(sample("x"));
    expect(await storage.listCompletions(query({ after: "chatcmpl-nope" }))).toBeUndefined();
    expect(await storage.listCompletions(query({ after: "chatcmpl-nope", model: "kit/alpha" }))).toBeUndefined();
  });

  it("filters by model, by one metadata pair, and by two pairs together", async () => {
    await saveAll(storage, [
      sample("m1", { createdAt: T0 + 1, model: "kit/alpha", metadata: { team: "a", env: "prod" } }),
      sample("m2", { createdAt: T0 + 2, model: "kit/beta", metadata: { team: "a", env: "dev" } }),
      sample("m3", { createdAt: T0 + 3, model: "kit/alpha", metadata: { team: "b", env: "prod" } }),
      sample("m4", { createdAt: T0 + 4, model: "kit/beta", metadata: { team: "a", env: "prod" } }),
    ]);
    expect(await idsOf(storage, owner, { model: "kit/alpha" })).toEqual(["m1", "m3"]);
    expect(await idsOf(storage, owner, { model: "kit/beta", order: "desc" })).toEqual(["m4", "m2"]);
    expect(await idsOf(storage, owner, { model: "kit/gamma" })).toEqual([]);
    expect(await idsOf(storage, owner, { metadata: { team: "a" } })).toEqual(["m1", "m2", "m4"]);
    expect(await idsOf(storage, owner, { metadata: { team: "a", env: "prod" } })).toEqual(["m1", "m4"]);
    expect(await idsOf(storage, owner, { metadata: { team: "a", env: "prod" }, model: "kit/beta" })).toEqual(["m4"]);
    expect(await idsOf(storage, owner, { metadata: { team: "c" } })).toEqual([]);
    expect(await idsOf(storage, owner, { metadata: { team: "a", env: "staging" } })).toEqual([]);
  });

  it("pages through filtered lists with `after` in both orders", async () => {
    const entries = Array.from({ length: 30 }, (_, i) =>
      sample(`f${String(i).padStart(2, "0")}`, { createdAt: T0 + i * 10, model: i % 2 ? "kit/odd" : "kit/even", metadata: { third: String(i % 3 === 0) } }),
    );
    await saveAll(storage, entries);
    const want = entries.filter((_, i) => i % 2 === 0 && i % 3 === 0).map((e) => e.completion.id); // 0, 6, 12, 18, 24
    for (const order of ["asc", "desc"] as const) {
      const expected = order === "asc" ? want : [...want].reverse();
      const both = await walkPages(storage, query({ limit: 2, order, model: "kit/even", metadata: { third: "true" } }));
      expect(both).toEqual({ ids: expected, pages: [[2, true], [2, true], [1, false]] });
      const byMeta = await walkPages(storage, query({ limit: 4, order, metadata: { third: "true" } }));
      expect(byMeta.pages).toEqual([[4, true], [4, true], [2, false]]);
    }
  });

  it("replaces metadata on update, returns the record, and the filters follow", async () => {
    await saveAll(storage, [
      sample("u1", { createdAt: T0 + 1, metadata: { stage: "new", keep: "x" } }),
      sample("u2", { createdAt: T0 + 2, metadata: { stage: "done" } }),
    ]);
    const updated = await storage.updateMetadata(owner, "u1", { stage: "done" });
    expect(updated).toEqual(sample("u1", { createdAt: T0 + 1, metadata: { stage: "done" } }));
    expect(await storage.getCompletion(owner, "u1")).toEqual(updated);
    expect(await idsOf(storage, owner, { metadata: { stage: "new" } })).toEqual([]);
    expect(await idsOf(storage, owner, { metadata: { keep: "x" } })).toEqual([]);
    // u1 keeps its place by createdAt in the index it joined late.
    expect(await idsOf(storage, owner, { metadata: { stage: "done" } })).toEqual(["u1", "u2"]);
    expect(await idsOf(storage, owner, { metadata: { stage: "done" }, order: "desc" })).toEqual(["u2", "u1"]);
    expect(await idsOf(storage, owner)).toEqual(["u1", "u2"]);
    await storage.updateMetadata(owner, "u1", { stage: "new" });
    expect(await idsOf(storage, owner, { metadata: { stage: "new" } })).toEqual(["u1"]);
    expect(await idsOf(storage, owner, { metadata: { stage: "done" } })).toEqual(["u2"]);
    expect(await storage.updateMetadata(owner, "u1", {})).toEqual(sample("u1", { createdAt: T0 + 1 }));
  });

  it("answers undefined when updating an id never stored", async () => {
    expect(await storage.updateMetadata(owner, "chatcmpl-missing", { a: "b" })).toBeUndefined();
    expect(await storage.getCompletion(owner, "chatcmpl-missing")).toBeUndefined();
  });

  it("deletes: true once, then gone from get, lists, filtered lists and cursors", async () => {
    await saveAll(storage, ["d1", "d2", "d3"].map((id, i) => sample(id, { createdAt: T0 + i, metadata: { tag: "t" } })));
    expect(await storage.deleteCompletion(owner, "d2")).toBe(true);
    expect(await storage.getCompletion(owner, "d2")).toBeUndefined();
    expect(await idsOf(storage, owner)).toEqual(["d1", "d3"]);
    expect(await idsOf(storage, owner, { order: "desc" })).toEqual(["d3", "d1"]);
    expect(await idsOf(storage, owner, { model: "kit/alpha" })).toEqual(["d1", "d3"]);
    expect(await idsOf(storage, owner, { metadata: { tag: "t" } })).toEqual(["d1", "d3"]);
    expect(await storage.listCompletions(query({ after: "d2" }))).toBeUndefined();
    expect(await storage.updateMetadata(owner, "d2", { a: "b" })).toBeUndefined();
    expect(await storage.deleteCompletion(owner, "d2")).toBe(false);
    expect(await storage.deleteCompletion(owner, "never")).toBe(false);
    const page = await storage.listCompletions(query({ limit: 1 }));
    expect(page).toEqual({ data: [expect.objectContaining({ model: "kit/alpha" })], hasMore: true });
  });

  it("replaces a completion saved again under the same id", async () => {
    await saveAll(storage, [
      sample("r1", { createdAt: T0 + 1, model: "kit/alpha", metadata: { v: "1" } }),
      sample("r2", { createdAt: T0 + 2 }),
    ]);
    const again = sample("r1", { createdAt: T0 + 3, model: "kit/beta", metadata: { v: "2" }, text: "second" });
    await storage.saveCompletion(again);
    expect(await storage.getCompletion(owner, "r1")).toEqual(again);
    expect(await idsOf(storage, owner)).toEqual(["r2", "r1"]);
    expect(await idsOf(storage, owner, { model: "kit/alpha" })).toEqual(["r2"]);
    expect(await idsOf(storage, owner, { model: "kit/beta" })).toEqual(["r1"]);
    expect(await idsOf(storage, owner, { metadata: { v: "1" } })).toEqual([]);
    expect(await idsOf(storage, owner, { metadata: { v: "2" } })).toEqual(["r1"]);
  });

  it("keeps every one of many concurrent saves", async () => {
    const entries = Array.from({ length: 40 }, (_, i) => sample(`cc${String(i).padStart(2, "0")}`, { createdAt: T0 + i, metadata: { batch: "1" } }));
    await Promise.all(entries.map((entry) => storage.saveCompletion(entry)));
    const ids = entries.map((entry) => entry.completion.id);
    expect(await idsOf(storage, owner)).toEqual(ids);
    expect(await idsOf(storage, owner, { metadata: { batch: "1" } })).toEqual(ids);
    expect(await idsOf(storage, owner, { model: "kit/alpha", order: "desc" })).toEqual([...ids].reverse());
  });

  if (ttl) {
    it("forgets completions once `storage.ttl` has passed", async () => {
      const ttlMs = 400;
      const short = await ttl.create(ttlMs);
      kit.opened.push(short);
      const savedAt = Date.now();
      await short.saveCompletion(sample("ttl-1", { createdAt: savedAt, metadata: { k: "v" } }));
      if (Date.now() - savedAt < ttlMs / 2) {
        // Only checked when the machine is fast enough for the answer to be meaningful.
        expect(await short.getCompletion(owner, "ttl-1")).toBeDefined();
        expect(await idsOf(short, owner)).toEqual(["ttl-1"]);
      }
      const deadline = savedAt + ttlMs + 5_000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, savedAt + ttlMs + 50 - Date.now())));
      while ((await short.getCompletion(owner, "ttl-1")) !== undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await short.getCompletion(owner, "ttl-1")).toBeUndefined();
      expect(await idsOf(short, owner)).toEqual([]);
      expect(await idsOf(short, owner, { order: "desc" })).toEqual([]);
      expect(await idsOf(short, owner, { metadata: { k: "v" } })).toEqual([]);
      expect(await short.listCompletions(query({ after: "ttl-1" }))).toBeUndefined();
      expect(await short.deleteCompletion(owner, "ttl-1")).toBe(false);
    });
  }
}
