import fs, { appendFileSync, existsSync, mkdtempSync, promises as fsp, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { sampleCompletion, testStorage } from "@modelmux/core/testing";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import plugin, { atomicFsDriver, createKvStorage } from "../src/index.ts";
import { countingDriver, fill, listAll, setupStorage, storageContext } from "./helpers.ts";
import { testKvLayout } from "./kv-layout.ts";

const T0 = Date.UTC(2025, 0, 1);

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
  test("every file is written to a temporary name in its directory, then renamed over the target; index lines are appended", async () => {
    const base = freshDir();
    const renames = vi.spyOn(fs, "rename");
    const opens = vi.spyOn(fs, "open");
    const storage = await setupStorage({ driver: "fs", base });
    await storage.saveCompletion(sampleCompletion("chatcmpl-a", { metadata: { k: "v" } }));
    await storage.updateMetadata("default", "chatcmpl-a", { k: "w" });
    await storage.close?.();
    // A write into a directory not yet made is tried again once made: same temporary name. A
    // temporary file may be opened ahead of its write (a spare), and removed unused on close.
    const openedAs = (flag: string) => [...new Set(opens.mock.calls.filter((call) => (call as unknown[])[1] === flag).map(([path]) => String(path)))];
    const temporaries = openedAs("w");
    const record = join(base, "modelmux", "c", "chatcmpl-a");
    expect(renames.mock.calls.map(([, to]) => String(to))).toEqual([record, record]); // saved, then updated
    for (const [from, to] of renames.mock.calls.map(([a, b]) => [String(a), String(b)] as const)) {
      expect(temporaries).toContain(from);
      expect(from).toMatch(/\/\.\d+-\d+\.tmp$/);
      expect(join(from, "..")).toBe(join(to, ".."));
    }
    // One line into segment 0 of each index: all, the model's two names, k=v, then k=w.
    const appended = openedAs("a").map((path) => relative(base, path));
    expect(appended.sort()).toEqual(["all/0", "m/alpha/0", "m/kit_2falpha/0", "md/k=v/0", "md/k=w/0"].map((path) => join("modelmux", "i", path)));
    expect(filesUnder(base).filter((file) => file.endsWith(".tmp"))).toEqual([]);
    expect(filesUnder(base)).toContain(join("modelmux", "c", "chatcmpl-a"));
    // An index of one segment has no directory file.
    expect(filesUnder(base).filter((file) => file.endsWith("dir"))).toEqual([]);
  });

  test("a write that dies before its rename leaves the previous file whole and no temporary file", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    const first = sampleCompletion("chatcmpl-b", { metadata: { v: "1" } });
    await storage.saveCompletion(first);
    // The crash hits the record's own file, which a save writes before its index files.
    const rename = fs.rename.bind(fs);
    let crashed = false;
    vi.spyOn(fs, "rename").mockImplementation(((from: string, to: string, done: (error: NodeJS.ErrnoException | null) => void) => {
      if (!crashed && String(to).endsWith(join("c", "chatcmpl-b"))) {
        crashed = true;
        return done(Object.assign(new Error("simulated crash"), { code: "EIO" }));
      }
      return rename(from, to, done);
    }) as typeof fs.rename);
    await expect(storage.saveCompletion(sampleCompletion("chatcmpl-b", { metadata: { v: "2" }, text: "x".repeat(100_000) }))).rejects.toThrow(
      /^\[storage:unstorage\] saveCompletion failed: simulated crash/,
    );
    expect(await storage.getCompletion("default", "chatcmpl-b")).toEqual(first);
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
        await storage.listCompletions({ owner: "default", limit: 100, order: "desc" });
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
    for (let i = 0; i < 20; i++) await storage.updateMetadata("default", "chatcmpl-big", { round: String(i) });
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    await storage.close?.();
  });

  test("a new storage on the same directory sees the data of an earlier one (restart)", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    const ids = await fill(before, 40, 10);
    await before.deleteCompletion("default", ids[3]!);
    await before.updateMetadata("default", ids[4]!, { bucket: "x" });
    await before.close?.();

    const after = await setupStorage({ driver: "fs", base });
    const alive = ids.filter((_, i) => i !== 3);
    expect(await listAll(after, { limit: 7 })).toEqual(alive);
    expect(await listAll(after, { order: "desc" })).toEqual([...alive].reverse());
    expect(await listAll(after, { metadata: { bucket: "x" } })).toEqual([ids[4]]);
    expect(await after.getCompletion("default", ids[3]!)).toBeUndefined();
    await after.saveCompletion(sampleCompletion("later", { createdAt: Date.UTC(2030, 0, 1) }));
    expect((await listAll(after)).at(-1)).toBe("later");
    await after.close?.();
  });

  test("a restart sees every completion: multi-segment indexes, one-segment indexes without a directory file, new saves after", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    const ids = await fill(before, 1300); // `all` and each model: 2-3 segments; each bucket: 130 entries, one segment
    await before.close?.();
    const bucket = join(base, "modelmux", "i", "md", "bucket=3");
    expect(readdirSync(bucket)).toEqual(["0"]);

    const after = await setupStorage({ driver: "fs", base });
    expect(await listAll(after)).toEqual(ids);
    expect(await listAll(after, { order: "desc", limit: 57 })).toEqual([...ids].reverse());
    expect(await listAll(after, { metadata: { bucket: "3" } })).toEqual(ids.filter((_, i) => i % 10 === 3));
    expect(await listAll(after, { model: "kit/odd" })).toEqual(ids.filter((_, i) => i % 2 === 1));
    // Inserts after the restart read the index state from disk first (nothing cached yet).
    const later = ["later-1", "later-2"];
    for (const id of later) await after.saveCompletion(sampleCompletion(id, { createdAt: Date.UTC(2030, 0, 1), model: "kit/odd", metadata: { bucket: "3" } }));
    expect(await listAll(after)).toEqual([...ids, ...later]);
    expect(await listAll(after, { metadata: { bucket: "3" }, model: "kit/odd" })).toEqual([...ids.filter((_, i) => i % 10 === 3 && i % 2 === 1), ...later]);
    await after.close?.();
  }, 60_000);

  test("a torn last line (a crash mid-append) is ignored, and compacting it never drops the whole entry", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    const ids = await fill(before, 40, 10);
    await before.close?.();
    const segment = join(base, "modelmux", "i", "all", "0");
    const lines = readFileSync(segment, "utf8").split("\n").filter(Boolean);
    const whole = lines.find((line) => line.endsWith(" bulk-00007"))!;
    // The crash left part of a copy of an existing entry (a shortened id), then garbage.
    appendFileSync(segment, `\n${whole.slice(0, -2)}\n0000173`);

    const after = await setupStorage({ driver: "fs", base });
    expect(await listAll(after)).toEqual(ids);
    await after.saveCompletion(sampleCompletion("after-crash", { createdAt: Date.UTC(2030, 0, 1) }));
    expect(await listAll(after)).toEqual([...ids, "after-crash"]);
    await after.close?.(); // waits for the compaction the lists started
    const text = readFileSync(segment, "utf8");
    expect(text.split("\n")).not.toContain(whole.slice(0, -2));
    expect(text.split("\n")).toContain(whole);
    const again = await setupStorage({ driver: "fs", base });
    expect(await listAll(again)).toEqual([...ids, "after-crash"]);
    await again.close?.();
  });

  test("segments in the earlier format (a JSON array) are read, appended to and compacted", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    const ids = await fill(before, 1100, 50);
    await before.close?.();
    // Rewrite the indexes as the earlier version wrote them: every segment a sorted JSON array,
    // every index with a directory file.
    const indexRoot = join(base, "modelmux", "i");
    for (const file of filesUnder(indexRoot)) {
      const path = join(indexRoot, file);
      if (file.endsWith("dir")) continue;
      const entries = readFileSync(path, "utf8").split("\n").filter(Boolean).sort();
      writeFileSync(path, JSON.stringify(entries));
      const dir = join(path, "..", "dir");
      if (!existsSync(dir)) writeFileSync(dir, JSON.stringify({ next: 1, segs: [[0, entries[0]]] }));
    }
    expect(readFileSync(join(indexRoot, "md", "bucket=3", "0"), "utf8")).toMatch(/^\["/);

    const after = await setupStorage({ driver: "fs", base });
    expect(await listAll(after)).toEqual(ids);
    expect(await listAll(after, { metadata: { bucket: "3" }, order: "desc" })).toEqual(ids.filter((_, i) => i % 10 === 3).reverse());
    const more = Array.from({ length: 5 }, (_, i) => `more-${i}`);
    for (const id of more) await after.saveCompletion(sampleCompletion(id, { createdAt: Date.UTC(2030, 0, 1), metadata: { bucket: "3" } }));
    expect(readFileSync(join(indexRoot, "md", "bucket=3", "0"), "utf8")).toMatch(/^\[".*\]\n/);
    expect(await listAll(after, { metadata: { bucket: "3" } })).toEqual([...ids.filter((_, i) => i % 10 === 3), ...more]);
    for (const id of ids.filter((_, i) => i % 10 === 3).slice(0, 20)) await after.deleteCompletion("default", id);
    expect(await listAll(after, { metadata: { bucket: "3" } })).toEqual([...ids.filter((_, i) => i % 10 === 3).slice(20), ...more]);
    await after.close?.();
    expect(readFileSync(join(indexRoot, "md", "bucket=3", "0"), "utf8")).toMatch(/^\n/); // compacted: lines now
    const again = await setupStorage({ driver: "fs", base });
    expect(await listAll(again, { metadata: { bucket: "3" } })).toEqual([...ids.filter((_, i) => i % 10 === 3).slice(20), ...more]);
    expect(await listAll(again)).toEqual([...ids.filter((_, i) => i % 10 !== 3 || i >= 200), ...more]);
    await again.close?.();
  }, 60_000);

  test("an id with a line break in it is one entry, not two", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    const ids = ["line\nbreak", "0000000000000000000000000000a x", "plain"];
    for (const [i, id] of ids.entries()) await storage.saveCompletion(sampleCompletion(id, { createdAt: T0 + i, metadata: { k: "v" } }));
    expect(await listAll(storage)).toEqual(ids);
    expect(await listAll(storage, { metadata: { k: "v" }, order: "desc" })).toEqual([...ids].reverse());
    await storage.close?.();
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

  test("another owner's files sit in `o/<owner>/`; the owner `default` keeps the folders from before owners", async () => {
    const base = freshDir();
    const storage = await setupStorage({ driver: "fs", base });
    await storage.saveCompletion(sampleCompletion("c1", { metadata: { k: "v" } }));
    await storage.saveCompletion(sampleCompletion("c1", { owner: "Team/A", metadata: { k: "v" } }));
    await storage.close?.();
    const files = filesUnder(join(base, "modelmux")).filter((file) => !file.endsWith(".tmp")).sort();
    const layout = ["c/c1", "i/all/0", "i/m/alpha/0", "i/m/kit_2falpha/0", "i/md/k=v/0"];
    expect(files).toEqual([...layout, ...layout.map((file) => `o/_54eam_2f_41/${file}`)].map((file) => join(...file.split("/"))).sort());
  });

  test("a record written before owners existed is the owner `default`'s, and only its, after a restart", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    await before.saveCompletion(sampleCompletion("old-1", { metadata: { k: "v" } }));
    await before.close?.();
    // The record as it was written before completions had owners: no `owner` in it.
    const file = join(base, "modelmux", "c", "old-1");
    const record = JSON.parse(readFileSync(file, "utf8")) as { entry: { owner?: string } };
    delete record.entry.owner;
    writeFileSync(file, JSON.stringify(record));
    const after = await setupStorage({ driver: "fs", base });
    expect(await after.getCompletion("default", "old-1")).toEqual(sampleCompletion("old-1", { metadata: { k: "v" } }));
    expect(await listAll(after, { metadata: { k: "v" } })).toEqual(["old-1"]);
    expect(await after.getCompletion("an-app", "old-1")).toBeUndefined();
    expect(await listAll(after, { owner: "an-app" })).toEqual([]);
    await after.close?.();
  });

  test("a page out of 2,000 stored completions reads a few files, not 2,000", async () => {
    const { driver, reads } = countingDriver(atomicFsDriver(freshDir()));
    const storage = createKvStorage({ driver, prefix: "modelmux", ttlMs: undefined, logger: storageContext().logger });
    const ids = await fill(storage, 2000, 100);
    for (const query of [{}, { order: "desc" as const, after: ids[1000] }, { metadata: { bucket: "5" } }]) {
      reads.reset();
      const page = await storage.listCompletions({ owner: "default", limit: 20, order: "asc", ...query });
      expect(page!.data).toHaveLength(20);
      expect(reads.records + reads.index).toBeLessThanOrEqual(30);
    }
    await storage.close?.();
  }, 60_000);
});

testStorage({
  name: "storage-unstorage (fs)",
  plugin,
  create: () => setupStorage({ driver: "fs", base: freshDir() }),
  ttl: { create: (ttlMs) => setupStorage({ driver: "fs", base: freshDir() }, ttlMs) },
});

testKvLayout("fs", () => setupStorage({ driver: "fs", base: freshDir() }));
