import { mkdtempSync, promises as fsp, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { sampleCompletion, testStorage } from "@modelmux/core/testing";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import { atomicFsDriver, createKvStorage } from "../src/index.ts";
import { countingDriver, fill, listAll, setupStorage, storageContext } from "./helpers.ts";

const dirs: string[] = [];
/** A fresh, empty directory under the OS temp dir, removed after the file's tests. */
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "modelmux-fs-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
afterEach(() => vi.restoreAllMocks());

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));

describe("storage-unstorage on fs", () => {
  test("every file is written to a temporary name in its directory, then renamed over the target", async () => {
    const base = freshDir();
    const writes = vi.spyOn(fsp, "writeFile");
    const renames = vi.spyOn(fsp, "rename");
    const storage = await setupStorage({ driver: "fs", base });
    await storage.saveCompletion(sampleCompletion("chatcmpl-a", { metadata: { k: "v" } }));
    await storage.updateMetadata("chatcmpl-a", { k: "w" });
    await storage.close?.();
    // A write into a directory not yet made is tried again once made: same temporary name.
    const written = [...new Set(writes.mock.calls.map(([path]) => String(path)))];
    expect(written.length).toBeGreaterThanOrEqual(6); // record, 3 indexes' segment and directory, update
    expect(renames.mock.calls.map(([from]) => String(from)).sort()).toEqual(written.sort());
    for (const [from, to] of renames.mock.calls.map(([a, b]) => [String(a), String(b)] as const)) {
      expect(from).toMatch(/\/\.\d+-\d+\.tmp$/);
      expect(join(from, "..")).toBe(join(to, ".."));
    }
    expect(filesUnder(base).filter((file) => file.endsWith(".tmp"))).toEqual([]);
    expect(filesUnder(base)).toContain(join("modelmux", "c", "chatcmpl-a"));
  });

  test("a write that dies before its rename leaves the previous file whole and no temporary file", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    const first = sampleCompletion("chatcmpl-b", { metadata: { v: "1" } });
    await storage.saveCompletion(first);
    // The crash hits the record's own file, which a save writes before its index files.
    const rename = fsp.rename.bind(fsp);
    let crashed = false;
    vi.spyOn(fsp, "rename").mockImplementation(async (from, to) => {
      if (!crashed && String(to).endsWith(join("c", "chatcmpl-b"))) {
        crashed = true;
        throw Object.assign(new Error("simulated crash"), { code: "EIO" });
      }
      return rename(from, to);
    });
    await expect(storage.saveCompletion(sampleCompletion("chatcmpl-b", { metadata: { v: "2" }, text: "x".repeat(100_000) }))).rejects.toThrow(
      /^\[storage:unstorage\] saveCompletion failed: simulated crash/,
    );
    expect(await storage.getCompletion("chatcmpl-b")).toEqual(first);
    await storage.close?.();
    expect(crashed).toBe(true);
    expect(filesUnder(base).filter((file) => file.endsWith(".tmp"))).toEqual([]);
  });

  test("lists running alongside saves never lose a completion from the lists", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    let saving = true;
    const pollers = Array.from({ length: 3 }, async () => {
      while (saving) {
        await storage.listCompletions({ limit: 100, order: "desc" });
        // Yield to the event loop between lists, as separate requests do.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    const ids = Array.from({ length: 120 }, (_, i) => `race-${i}`);
    for (let i = 0; i < ids.length; i += 10) {
      await Promise.all(ids.slice(i, i + 10).map((id) => storage.saveCompletion(sampleCompletion(id, { createdAt: Date.now() }))));
    }
    saving = false;
    await Promise.all(pollers);
    expect((await listAll(storage)).sort()).toEqual([...ids].sort());
    await storage.close?.();
  });

  test("a reader polling the file never sees a torn record while it is rewritten", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    await storage.saveCompletion(sampleCompletion("chatcmpl-big", { text: "y".repeat(2_000_000) }));
    const file = join(base, "modelmux", "c", "chatcmpl-big");
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        JSON.parse(await fsp.readFile(file, "utf8")); // throws on a partly written file
        reads += 1;
      }
    })();
    for (let i = 0; i < 20; i++) await storage.updateMetadata("chatcmpl-big", { round: String(i) });
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    await storage.close?.();
  });

  test("a new storage on the same directory sees the data of an earlier one (restart)", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    const ids = await fill(before, 40, 10);
    await before.deleteCompletion(ids[3]!);
    await before.updateMetadata(ids[4]!, { bucket: "x" });
    await before.close?.();

    const after = await setupStorage({ driver: "fs", base });
    const alive = ids.filter((_, i) => i !== 3);
    expect(await listAll(after, { limit: 7 })).toEqual(alive);
    expect(await listAll(after, { order: "desc" })).toEqual([...alive].reverse());
    expect(await listAll(after, { metadata: { bucket: "x" } })).toEqual([ids[4]]);
    expect(await after.getCompletion(ids[3]!)).toBeUndefined();
    await after.saveCompletion(sampleCompletion("later", { createdAt: Date.UTC(2030, 0, 1) }));
    expect((await listAll(after)).at(-1)).toBe("later");
    await after.close?.();
  });

  test("keys become safe file names: no `..`, no upper case, no separators from ids", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    for (const id of ["../escape", "Chat-X", "chat-x", "a/b:c", "123", "x".repeat(300)]) await storage.saveCompletion(sampleCompletion(id));
    await storage.close?.();
    const records = filesUnder(join(base, "modelmux", "c"));
    expect(records).toHaveLength(6);
    for (const name of records) expect(name).toMatch(/^[a-z0-9_-]{1,130}$/);
    expect(readdirSync(base)).toEqual(["modelmux"]);
    expect(readFileSync(join(base, "modelmux", "c", "123"), "utf8")).toContain('"id":"123"');
  });

  test("a page out of 2,000 stored completions reads a few files, not 2,000", async () => {
    const { driver, reads } = countingDriver(atomicFsDriver(freshDir()));
    const storage = createKvStorage({ driver, prefix: "modelmux", ttlMs: undefined, logger: storageContext().logger });
    const ids = await fill(storage, 2000, 100);
    for (const query of [{}, { order: "desc" as const, after: ids[1000] }, { metadata: { bucket: "5" } }]) {
      reads.reset();
      const page = await storage.listCompletions({ limit: 20, order: "asc", ...query });
      expect(page!.data).toHaveLength(20);
      expect(reads.records + reads.index).toBeLessThanOrEqual(30);
    }
    await storage.close?.();
  }, 60_000);
});

testStorage({
  name: "storage-unstorage (fs)",
  create: () => setupStorage({ driver: "fs", base: freshDir() }),
  ttl: { create: (ttlMs) => setupStorage({ driver: "fs", base: freshDir() }, ttlMs) },
});
