/**
 * The storage conformance kit (contract §8, §10): the battery every storage plugin must pass,
 * against the `Storage` contract itself, with no router around it. Each case gets a fresh storage
 * from `create()` and closes it afterwards. A plugin's test file is a few lines:
 *
 * @example
 * import { testStorage } from "@modelmux/core/testing";
 * import { createMyStorage } from "../src/index.ts";
 *
 * testStorage({
 *   name: "my-storage (memory)",
 *   create: async () => createMyStorage({}),
 *   ttl: { create: async (ttlMs) => createMyStorage({ ttlMs }) },
 * });
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CompletionListQuery, Storage, StoredCompletion } from "../plugin.ts";

export interface StorageConformanceOptions {
  /** Shown in the describe block: `storage conformance: <name>`. */
  name: string;
  /** A fresh, empty storage; called once per case. */
  create(): Promise<Storage>;
  /** When given, the TTL case runs on a storage made with this `ttlMs` (`storage.ttl`). */
  ttl?: { create(ttlMs: number): Promise<Storage> };
  /** When set, every case is skipped and this says why (e.g. "Redis is not reachable"). */
  skip?: string;
}

const T0 = Date.UTC(2025, 0, 1);

/**
 * A complete stored completion for tests: a conversation with a system prompt, content parts, an
 * assistant tool call and a tool result, so a storage that drops a field fails `toEqual`.
 */
export function sampleCompletion(
  id: string,
  { createdAt = T0, model = "kit/alpha", metadata = {}, text = `reply ${id}` }: { createdAt?: number; model?: string; metadata?: Record<string, string>; text?: string } = {},
): StoredCompletion {
  return {
    completion: {
      id,
      object: "chat.completion",
      created: Math.floor(createdAt / 1000),
      model: model.slice(model.indexOf("/") + 1),
      choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: text } }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      system_fingerprint: null,
    },
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: '{"q":"a"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "a cat" },
    ],
    model,
    metadata,
    createdAt,
  };
}

const query = (q: Partial<CompletionListQuery> = {}): CompletionListQuery => ({ limit: 20, order: "asc", ...q });

/** Walks every page of `q` with `after`, returning the ids and each page's size and `hasMore`. */
async function walkPages(storage: Storage, q: Partial<CompletionListQuery>): Promise<{ ids: string[]; pages: Array<[number, boolean]> }> {
  const ids: string[] = [];
  const pages: Array<[number, boolean]> = [];
  for (let after: string | undefined; pages.length < 100; ) {
    const page = await storage.listCompletions(query({ ...q, after }));
    expect(page, "a page after an id the previous page returned").toBeDefined();
    pages.push([page!.data.length, page!.hasMore]);
    ids.push(...page!.data.map((entry) => entry.completion.id));
    if (!page!.hasMore) break;
    after = page!.data.at(-1)!.completion.id;
  }
  return { ids, pages };
}

const idsOf = async (storage: Storage, q: Partial<CompletionListQuery> = {}) =>
  (await storage.listCompletions(query({ limit: 100, ...q })))!.data.map((entry) => entry.completion.id);

/** Saves one after the other, so storing order is the array's order. */
async function saveAll(storage: Storage, entries: StoredCompletion[]): Promise<void> {
  for (const entry of entries) await storage.saveCompletion(entry);
}

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
    const opened: Storage[] = [];
    let storage: Storage;
    beforeEach(async () => {
      storage = await options.create();
      opened.push(storage);
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close?.()));
    });

    it("gets back exactly what was saved, messages and metadata included", async () => {
      const entry = sampleCompletion("chatcmpl-Kit1", { metadata: { user: "alice", n: "42", empty: "" } });
      await storage.saveCompletion(entry);
      expect(await storage.getCompletion("chatcmpl-Kit1")).toEqual(entry);
    });

    it("keeps ids and values that look like numbers as strings, and ids of any characters apart", async () => {
      const ids = ["123", "007", "1e3", "true", "a/b", "a:b", "../x", "Chat-X", "chat-x", "ünï code ✓"];
      await saveAll(storage, ids.map((id, i) => sampleCompletion(id, { createdAt: T0 + i, metadata: { n: "123" } })));
      for (const [i, id] of ids.entries()) expect(await storage.getCompletion(id)).toEqual(sampleCompletion(id, { createdAt: T0 + i, metadata: { n: "123" } }));
      expect(await idsOf(storage)).toEqual(ids);
      expect(await idsOf(storage, { metadata: { n: "123" } })).toEqual(ids);
    });

    it("answers undefined for an id never stored, and lists nothing when empty", async () => {
      expect(await storage.getCompletion("chatcmpl-missing")).toBeUndefined();
      expect(await storage.listCompletions(query())).toEqual({ data: [], hasMore: false });
    });

    it("lists by createdAt, then storing order; desc is the exact reverse", async () => {
      await saveAll(storage, [
        sampleCompletion("c", { createdAt: T0 + 3000 }),
        sampleCompletion("a", { createdAt: T0 + 1000 }),
        sampleCompletion("b1", { createdAt: T0 + 2000 }),
        sampleCompletion("b2", { createdAt: T0 + 2000 }),
        sampleCompletion("d", { createdAt: T0 + 4000 }),
      ]);
      expect(await idsOf(storage)).toEqual(["a", "b1", "b2", "c", "d"]);
      expect(await idsOf(storage, { order: "desc" })).toEqual(["d", "c", "b2", "b1", "a"]);
      const page = await storage.listCompletions(query({ limit: 5 }));
      expect(page!.hasMore).toBe(false);
    });

    it("pages with `after` across page boundaries in both orders (25 items, limit 10)", async () => {
      // Three items per createdAt, so ties straddle page boundaries.
      const all = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
      await saveAll(storage, all.map((id, i) => sampleCompletion(id, { createdAt: T0 + Math.floor(i / 3) * 1000 })));
      for (const order of ["asc", "desc"] as const) {
        const { ids, pages } = await walkPages(storage, { limit: 10, order });
        expect(pages).toEqual([[10, true], [10, true], [5, false]]);
        expect(ids).toEqual(order === "asc" ? all : [...all].reverse());
      }
      const first = await storage.listCompletions(query({ limit: 25 }));
      expect(first!.hasMore).toBe(false);
      expect((await storage.listCompletions(query({ after: "p24" })))!).toEqual({ data: [], hasMore: false });
      expect((await storage.listCompletions(query({ after: "p00", order: "desc" })))!).toEqual({ data: [], hasMore: false });
    });

    it("answers undefined when `after` names no stored completion", async () => {
      await storage.saveCompletion(sampleCompletion("x"));
      expect(await storage.listCompletions(query({ after: "chatcmpl-nope" }))).toBeUndefined();
      expect(await storage.listCompletions(query({ after: "chatcmpl-nope", model: "kit/alpha" }))).toBeUndefined();
    });

    it("filters by model, by one metadata pair, and by two pairs together", async () => {
      await saveAll(storage, [
        sampleCompletion("m1", { createdAt: T0 + 1, model: "kit/alpha", metadata: { team: "a", env: "prod" } }),
        sampleCompletion("m2", { createdAt: T0 + 2, model: "kit/beta", metadata: { team: "a", env: "dev" } }),
        sampleCompletion("m3", { createdAt: T0 + 3, model: "kit/alpha", metadata: { team: "b", env: "prod" } }),
        sampleCompletion("m4", { createdAt: T0 + 4, model: "kit/beta", metadata: { team: "a", env: "prod" } }),
      ]);
      expect(await idsOf(storage, { model: "kit/alpha" })).toEqual(["m1", "m3"]);
      expect(await idsOf(storage, { model: "kit/beta", order: "desc" })).toEqual(["m4", "m2"]);
      expect(await idsOf(storage, { model: "kit/gamma" })).toEqual([]);
      expect(await idsOf(storage, { metadata: { team: "a" } })).toEqual(["m1", "m2", "m4"]);
      expect(await idsOf(storage, { metadata: { team: "a", env: "prod" } })).toEqual(["m1", "m4"]);
      expect(await idsOf(storage, { metadata: { team: "a", env: "prod" }, model: "kit/beta" })).toEqual(["m4"]);
      expect(await idsOf(storage, { metadata: { team: "c" } })).toEqual([]);
      expect(await idsOf(storage, { metadata: { team: "a", env: "staging" } })).toEqual([]);
    });

    it("pages through filtered lists with `after` in both orders", async () => {
      const entries = Array.from({ length: 30 }, (_, i) =>
        sampleCompletion(`f${String(i).padStart(2, "0")}`, { createdAt: T0 + i * 10, model: i % 2 ? "kit/odd" : "kit/even", metadata: { third: String(i % 3 === 0) } }),
      );
      await saveAll(storage, entries);
      const want = entries.filter((_, i) => i % 2 === 0 && i % 3 === 0).map((e) => e.completion.id); // 0, 6, 12, 18, 24
      for (const order of ["asc", "desc"] as const) {
        const expected = order === "asc" ? want : [...want].reverse();
        const both = await walkPages(storage, { limit: 2, order, model: "kit/even", metadata: { third: "true" } });
        expect(both).toEqual({ ids: expected, pages: [[2, true], [2, true], [1, false]] });
        const byMeta = await walkPages(storage, { limit: 4, order, metadata: { third: "true" } });
        expect(byMeta.pages).toEqual([[4, true], [4, true], [2, false]]);
      }
    });

    it("replaces metadata on update, returns the record, and the filters follow", async () => {
      await saveAll(storage, [
        sampleCompletion("u1", { createdAt: T0 + 1, metadata: { stage: "new", keep: "x" } }),
        sampleCompletion("u2", { createdAt: T0 + 2, metadata: { stage: "done" } }),
      ]);
      const updated = await storage.updateMetadata("u1", { stage: "done" });
      expect(updated).toEqual(sampleCompletion("u1", { createdAt: T0 + 1, metadata: { stage: "done" } }));
      expect(await storage.getCompletion("u1")).toEqual(updated);
      expect(await idsOf(storage, { metadata: { stage: "new" } })).toEqual([]);
      expect(await idsOf(storage, { metadata: { keep: "x" } })).toEqual([]);
      // u1 keeps its place by createdAt in the index it joined late.
      expect(await idsOf(storage, { metadata: { stage: "done" } })).toEqual(["u1", "u2"]);
      expect(await idsOf(storage, { metadata: { stage: "done" }, order: "desc" })).toEqual(["u2", "u1"]);
      expect(await idsOf(storage)).toEqual(["u1", "u2"]);
      await storage.updateMetadata("u1", { stage: "new" });
      expect(await idsOf(storage, { metadata: { stage: "new" } })).toEqual(["u1"]);
      expect(await idsOf(storage, { metadata: { stage: "done" } })).toEqual(["u2"]);
      expect(await storage.updateMetadata("u1", {})).toEqual(sampleCompletion("u1", { createdAt: T0 + 1 }));
    });

    it("answers undefined when updating an id never stored", async () => {
      expect(await storage.updateMetadata("chatcmpl-missing", { a: "b" })).toBeUndefined();
      expect(await storage.getCompletion("chatcmpl-missing")).toBeUndefined();
    });

    it("deletes: true once, then gone from get, lists, filtered lists and cursors", async () => {
      await saveAll(storage, ["d1", "d2", "d3"].map((id, i) => sampleCompletion(id, { createdAt: T0 + i, metadata: { tag: "t" } })));
      expect(await storage.deleteCompletion("d2")).toBe(true);
      expect(await storage.getCompletion("d2")).toBeUndefined();
      expect(await idsOf(storage)).toEqual(["d1", "d3"]);
      expect(await idsOf(storage, { order: "desc" })).toEqual(["d3", "d1"]);
      expect(await idsOf(storage, { model: "kit/alpha" })).toEqual(["d1", "d3"]);
      expect(await idsOf(storage, { metadata: { tag: "t" } })).toEqual(["d1", "d3"]);
      expect(await storage.listCompletions(query({ after: "d2" }))).toBeUndefined();
      expect(await storage.updateMetadata("d2", { a: "b" })).toBeUndefined();
      expect(await storage.deleteCompletion("d2")).toBe(false);
      expect(await storage.deleteCompletion("never")).toBe(false);
      const page = await storage.listCompletions(query({ limit: 1 }));
      expect(page).toEqual({ data: [expect.objectContaining({ model: "kit/alpha" })], hasMore: true });
    });

    it("replaces a completion saved again under the same id", async () => {
      await saveAll(storage, [
        sampleCompletion("r1", { createdAt: T0 + 1, model: "kit/alpha", metadata: { v: "1" } }),
        sampleCompletion("r2", { createdAt: T0 + 2 }),
      ]);
      const again = sampleCompletion("r1", { createdAt: T0 + 3, model: "kit/beta", metadata: { v: "2" }, text: "second" });
      await storage.saveCompletion(again);
      expect(await storage.getCompletion("r1")).toEqual(again);
      expect(await idsOf(storage)).toEqual(["r2", "r1"]);
      expect(await idsOf(storage, { model: "kit/alpha" })).toEqual(["r2"]);
      expect(await idsOf(storage, { model: "kit/beta" })).toEqual(["r1"]);
      expect(await idsOf(storage, { metadata: { v: "1" } })).toEqual([]);
      expect(await idsOf(storage, { metadata: { v: "2" } })).toEqual(["r1"]);
    });

    it("keeps every one of many concurrent saves", async () => {
      const entries = Array.from({ length: 40 }, (_, i) => sampleCompletion(`cc${String(i).padStart(2, "0")}`, { createdAt: T0 + i, metadata: { batch: "1" } }));
      await Promise.all(entries.map((entry) => storage.saveCompletion(entry)));
      const ids = entries.map((entry) => entry.completion.id);
      expect(await idsOf(storage)).toEqual(ids);
      expect(await idsOf(storage, { metadata: { batch: "1" } })).toEqual(ids);
      expect(await idsOf(storage, { model: "kit/alpha", order: "desc" })).toEqual([...ids].reverse());
    });

    if (options.ttl) {
      const ttl = options.ttl;
      it("forgets completions once `storage.ttl` has passed", async () => {
        const ttlMs = 400;
        const short = await ttl.create(ttlMs);
        opened.push(short);
        const savedAt = Date.now();
        await short.saveCompletion(sampleCompletion("ttl-1", { createdAt: savedAt, metadata: { k: "v" } }));
        if (Date.now() - savedAt < ttlMs / 2) {
          // Only checked when the machine is fast enough for the answer to be meaningful.
          expect(await short.getCompletion("ttl-1")).toBeDefined();
          expect(await idsOf(short)).toEqual(["ttl-1"]);
        }
        const deadline = savedAt + ttlMs + 5_000;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, savedAt + ttlMs + 50 - Date.now())));
        while ((await short.getCompletion("ttl-1")) !== undefined && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(await short.getCompletion("ttl-1")).toBeUndefined();
        expect(await idsOf(short)).toEqual([]);
        expect(await idsOf(short, { order: "desc" })).toEqual([]);
        expect(await idsOf(short, { metadata: { k: "v" } })).toEqual([]);
        expect(await short.listCompletions(query({ after: "ttl-1" }))).toBeUndefined();
        expect(await short.deleteCompletion("ttl-1")).toBe(false);
      });
    }
  });
}
