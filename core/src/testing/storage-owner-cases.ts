/**
 * The conformance cases about whose completions a call sees (`Storage`'s owner rule), about
 * metadata keys of any string, and about the `model` filter's two names. Registered by
 * `testStorage` inside its describe block.
 */
import { beforeEach, expect, it } from "vitest";
import type { CompletionOwner, Storage } from "../plugin.ts";
import { filterOf, idsOf, listQuery, sampleCompletion, saveAll, T0 } from "./storage-samples.ts";

/** The storage of the running case, and every storage to close after it. */
export interface KitContext {
  storage: Storage;
  opened: Storage[];
}

/** Owner names a key layout could run together: case, separators, path parts, the legacy scope, length. */
const LOOKALIKE_OWNERS: readonly CompletionOwner[] = [
  "default",
  "Default",
  "app",
  "App",
  "app:c",
  "app/c",
  "a:i:all",
  "..",
  "o",
  "ünï",
  "x".repeat(200),
  `${"x".repeat(199)}y`,
];

export function ownerCases(kit: KitContext): void {
  let storage: Storage;
  beforeEach(() => void (storage = kit.storage));

  it("another owner's completion is unknown to get, update, delete, every list and `after`", async () => {
    await saveAll(storage, [
      sampleCompletion("a1", { owner: "app-a", createdAt: T0 + 1, metadata: { team: "red" } }),
      sampleCompletion("a2", { owner: "app-a", createdAt: T0 + 2, metadata: { team: "red" } }),
      sampleCompletion("b1", { owner: "app-b", createdAt: T0 + 3, metadata: { team: "red" } }),
    ]);
    expect(await storage.getCompletion("app-b", "a1")).toBeUndefined();
    expect(await storage.getCompletion("default", "a1")).toBeUndefined();
    expect(await storage.updateMetadata("app-b", "a1", { team: "stolen" })).toBeUndefined();
    expect(await storage.deleteCompletion("app-b", "a1")).toBe(false);
    expect(await idsOf(storage, "app-b")).toEqual(["b1"]);
    expect(await idsOf(storage, "app-b", { order: "desc" })).toEqual(["b1"]);
    expect(await idsOf(storage, "app-b", { metadata: { team: "red" } })).toEqual(["b1"]);
    expect(await idsOf(storage, "app-b", { model: "kit/alpha" })).toEqual(["b1"]);
    expect(await idsOf(storage, "app-b", { model: "alpha" })).toEqual(["b1"]);
    expect(await idsOf(storage, "app-c")).toEqual([]);
    expect(await idsOf(storage, "app-c", { metadata: { team: "red" } })).toEqual([]);
    // One owner's completions neither show in nor count towards another's page.
    expect(await storage.listCompletions(listQuery("app-b", { limit: 1 }))).toMatchObject({ hasMore: false });
    expect(await storage.listCompletions(listQuery("app-b", { limit: 1, order: "desc", metadata: { team: "red" } }))).toMatchObject({ hasMore: false });
    for (const q of [{}, { metadata: { team: "red" } }, { model: "kit/alpha" }, { order: "desc" as const }]) {
      expect(await storage.listCompletions(listQuery("app-b", { ...q, after: "a1" }))).toBeUndefined();
    }
    // The owner's completions are as they were.
    expect(await idsOf(storage, "app-a")).toEqual(["a1", "a2"]);
    expect(await idsOf(storage, "app-a", { metadata: { team: "red" }, after: "a1" })).toEqual(["a2"]);
    expect(await storage.getCompletion("app-a", "a1")).toEqual(sampleCompletion("a1", { owner: "app-a", createdAt: T0 + 1, metadata: { team: "red" } }));
  });

  it("the same id saved by two owners is two completions", async () => {
    await saveAll(storage, [
      sampleCompletion("same", { owner: "app-a", createdAt: T0 + 1, model: "kit/alpha", metadata: { v: "a" }, text: "from a" }),
      sampleCompletion("same", { owner: "app-b", createdAt: T0 + 2, model: "kit/beta", metadata: { v: "b" }, text: "from b" }),
      sampleCompletion("same", { owner: "default", createdAt: T0 + 3, metadata: { v: "d" }, text: "from default" }),
    ]);
    expect((await storage.getCompletion("app-a", "same"))?.completion.choices[0]?.message.content).toBe("from a");
    expect((await storage.getCompletion("app-b", "same"))?.completion.choices[0]?.message.content).toBe("from b");
    expect((await storage.getCompletion("default", "same"))?.completion.choices[0]?.message.content).toBe("from default");
    expect(await idsOf(storage, "app-a", { metadata: { v: "a" } })).toEqual(["same"]);
    expect(await idsOf(storage, "app-a", { metadata: { v: "b" } })).toEqual([]);
    expect(await idsOf(storage, "app-b", { model: "kit/beta" })).toEqual(["same"]);
    expect(await idsOf(storage, "app-a", { model: "kit/beta" })).toEqual([]);

    expect(await storage.updateMetadata("app-a", "same", { v: "a2" })).toMatchObject({ owner: "app-a", metadata: { v: "a2" } });
    expect((await storage.getCompletion("app-b", "same"))?.metadata).toEqual({ v: "b" });
    expect(await idsOf(storage, "app-b", { metadata: { v: "b" } })).toEqual(["same"]);
    expect(await storage.deleteCompletion("app-a", "same")).toBe(true);
    expect(await storage.getCompletion("app-a", "same")).toBeUndefined();
    expect(await idsOf(storage, "app-a")).toEqual([]);
    expect(await idsOf(storage, "app-b")).toEqual(["same"]);
    expect(await idsOf(storage, "default", { metadata: { v: "d" } })).toEqual(["same"]);
    expect(await storage.listCompletions(listQuery("app-b", { after: "same" }))).toEqual({ data: [], hasMore: false });
    expect(await storage.listCompletions(listQuery("app-a", { after: "same" }))).toBeUndefined();

    // Saved again by one owner, it replaces only that owner's.
    await storage.saveCompletion(sampleCompletion("same", { owner: "app-b", createdAt: T0 + 4, text: "b again" }));
    expect((await storage.getCompletion("default", "same"))?.completion.choices[0]?.message.content).toBe("from default");
    expect(await idsOf(storage, "app-b")).toEqual(["same"]);
  });

  it("owner names that look alike, and ids that look like key parts, stay apart", async () => {
    const entries = LOOKALIKE_OWNERS.map((owner, i) => sampleCompletion("dup", { owner, createdAt: T0 + i, metadata: { who: owner } }));
    // An owner and an id that a naive `<owner>:c:<id>` key would join into the same text.
    entries.push(sampleCompletion("b:c:z", { owner: "a", createdAt: T0 + 100 }), sampleCompletion("z", { owner: "a:c:b", createdAt: T0 + 101 }));
    await saveAll(storage, entries);
    for (const [i, owner] of LOOKALIKE_OWNERS.entries()) {
      expect(await storage.getCompletion(owner, "dup"), owner).toEqual(entries[i]);
      expect(await idsOf(storage, owner), owner).toEqual(["dup"]);
      expect(await idsOf(storage, owner, { metadata: { who: owner } }), owner).toEqual(["dup"]);
      expect(await idsOf(storage, owner, { metadata: { who: "nobody" } }), owner).toEqual([]);
    }
    expect(await idsOf(storage, "a")).toEqual(["b:c:z"]);
    expect(await idsOf(storage, "a:c:b")).toEqual(["z"]);
    expect(await storage.getCompletion("a", "z")).toBeUndefined();
    expect(await storage.getCompletion("a:c:b", "b:c:z")).toBeUndefined();
    expect(await storage.deleteCompletion("Default", "dup")).toBe(true);
    expect(await idsOf(storage, "default")).toEqual(["dup"]);
    expect(await idsOf(storage, "Default")).toEqual([]);
  });

  it("the model filter matches the routed `provider/model` and the completion's own `model`", async () => {
    await saveAll(storage, [
      sampleCompletion("k1", { owner: "app-m", createdAt: T0 + 1, model: "kit/alpha" }), // shows "alpha"
      sampleCompletion("k2", { owner: "app-m", createdAt: T0 + 2, model: "kit/beta" }),
      sampleCompletion("k3", { owner: "app-m", createdAt: T0 + 3, model: "router/kit/alpha" }), // shows "kit/alpha"
      sampleCompletion("k4", { owner: "app-m", createdAt: T0 + 4, model: "kit/alpha", metadata: { tag: "t" } }),
      sampleCompletion("k5", { owner: "app-m", createdAt: T0 + 5, model: "same/same" }), // shows "same"
    ]);
    expect(await idsOf(storage, "app-m", { model: "alpha" })).toEqual(["k1", "k4"]);
    expect(await idsOf(storage, "app-m", { model: "alpha", order: "desc" })).toEqual(["k4", "k1"]);
    expect(await idsOf(storage, "app-m", { model: "kit/alpha" })).toEqual(["k1", "k3", "k4"]);
    expect(await idsOf(storage, "app-m", { model: "kit/alpha", after: "k1", limit: 1 })).toEqual(["k3"]);
    expect(await idsOf(storage, "app-m", { model: "router/kit/alpha" })).toEqual(["k3"]);
    expect(await idsOf(storage, "app-m", { model: "beta" })).toEqual(["k2"]);
    expect(await idsOf(storage, "app-m", { model: "alpha", metadata: { tag: "t" } })).toEqual(["k4"]);
    expect(await idsOf(storage, "app-m", { model: "same" })).toEqual(["k5"]);
    expect(await idsOf(storage, "app-m", { model: "same/same" })).toEqual(["k5"]);
    expect(await idsOf(storage, "app-m", { model: "kit" })).toEqual([]);
    expect(await storage.deleteCompletion("app-m", "k1")).toBe(true);
    expect(await idsOf(storage, "app-m", { model: "alpha" })).toEqual(["k4"]);
    expect(await idsOf(storage, "app-other", { model: "alpha" })).toEqual([]);
  });

  it("metadata keys of any string are stored and filter: __proto__, constructor, the empty key, a line break", async () => {
    const odd = JSON.parse('{"__proto__":"p","constructor":"c","":"empty","a\\nb":"nl","hasOwnProperty":"h","a=b":"c","a":"b=c"}') as Record<string, string>;
    const entry = sampleCompletion("odd", { owner: "app-o", createdAt: T0 + 1, metadata: odd });
    await saveAll(storage, [entry, sampleCompletion("plain", { owner: "app-o", createdAt: T0 + 2, metadata: { a: "b" } })]);
    const stored = await storage.getCompletion("app-o", "odd");
    expect(stored).toEqual(entry);
    expect(Object.keys(stored!.metadata).sort()).toEqual(Object.keys(odd).sort());
    expect(Object.hasOwn(stored!.metadata, "__proto__")).toBe(true);
    for (const [key, value] of Object.entries(odd)) {
      expect(await idsOf(storage, "app-o", { metadata: filterOf([[key, value]]) }), JSON.stringify(key)).toEqual(["odd"]);
      expect(await idsOf(storage, "app-o", { metadata: filterOf([[key, `${value}-not`]]) }), JSON.stringify(key)).toEqual([]);
    }
    expect(await idsOf(storage, "app-o", { metadata: filterOf(Object.entries(odd)) })).toEqual(["odd"]);
    // "a=b" → "c" is not "a" → "b=c", and "a" → "b" is neither.
    expect(await idsOf(storage, "app-o", { metadata: filterOf([["a", "b"]]) })).toEqual(["plain"]);
    expect(await idsOf(storage, "app-o", { metadata: filterOf([["__proto__", "p"], ["a", "b"]]) })).toEqual([]);

    const renamed = JSON.parse('{"__proto__":"q","":"e2","toString":"t"}') as Record<string, string>;
    expect((await storage.updateMetadata("app-o", "odd", renamed))?.metadata).toEqual(renamed);
    expect(await idsOf(storage, "app-o", { metadata: filterOf([["__proto__", "q"], ["toString", "t"]]) })).toEqual(["odd"]);
    expect(await idsOf(storage, "app-o", { metadata: filterOf([["__proto__", "p"]]) })).toEqual([]);
    expect(await idsOf(storage, "app-o", { metadata: filterOf([["a\nb", "nl"]]) })).toEqual([]);
    expect(await idsOf(storage, "app-other", { metadata: filterOf([["__proto__", "q"]]) })).toEqual([]);
  });
}
