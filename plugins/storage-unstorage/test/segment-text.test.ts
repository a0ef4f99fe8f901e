import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { AppendHandles } from "../src/append-handles.ts";
import { indexEntry, nextOrderKey } from "../src/keys.ts";
import { LruMap } from "../src/lru-map.ts";
import { encodeSegment, entryLine, parseSegment } from "../src/segment-text.ts";

const entry = (id: string, at = Date.UTC(2025, 0, 1)) => indexEntry(nextOrderKey(at), id);

describe("index segment text", () => {
  test("lines in any order, repeated, come back sorted and distinct", () => {
    const [a, b, c] = [entry("a"), entry("b"), entry("c")];
    expect(parseSegment([c, a, b, a].map(entryLine).join(""))).toEqual([a, b, c]);
    expect(parseSegment(encodeSegment([a, b]))).toEqual([a, b]);
    expect(parseSegment("")).toEqual([]);
    expect(parseSegment(undefined)).toBeUndefined();
  });

  test("a torn line is skipped, or keeps a shortened id; malformed lines are skipped", () => {
    const [a, b] = [entry("chatcmpl-a"), entry("chatcmpl-b")];
    for (const torn of [b.slice(0, 10), b.slice(0, 29), b.slice(0, 30), JSON.stringify(entry("x\ny")).slice(0, -1), "garbage", "[", " "]) {
      expect(parseSegment(entryLine(a) + "\n" + torn)).toEqual([a]);
    }
    // Cut inside the id: an entry whose id names no record, so a list takes it for stale.
    expect(parseSegment(entryLine(a) + "\n" + b.slice(0, -3))).toEqual([a, b.slice(0, -3)].sort());
  });

  test("an id with a line break is written as a JSON string", () => {
    const odd = entry("line\nbreak");
    expect(entryLine(odd).split("\n")).toHaveLength(2);
    expect(parseSegment(encodeSegment([odd, entry("z")]))).toEqual([odd, expect.stringMatching(/ z$/)]);
  });

  test("a segment in the earlier format (a JSON array), with lines appended after it, is read", () => {
    const [a, b, c] = [entry("a"), entry("b"), entry("c")];
    expect(parseSegment(JSON.stringify([a, c]))).toEqual([a, c]);
    expect(parseSegment(JSON.stringify([a, c]) + entryLine(b) + entryLine(a))).toEqual([a, b, c]);
  });
});

describe("LruMap", () => {
  test("forgets the least recently used key beyond its limit", () => {
    const map = new LruMap<string, number>(2);
    map.set("a", 1);
    map.set("b", 2);
    map.get("a");
    map.set("c", 3);
    expect([map.get("a"), map.get("b"), map.get("c")]).toEqual([1, undefined, 3]);
  });
});

describe("AppendHandles", () => {
  const dir = mkdtempSync(join(tmpdir(), "modelmux-append-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("appends through an open descriptor; after `forget`, to the file now at the path", async () => {
    const handles = new AppendHandles(4);
    const path = join(dir, "new", "deeper", "0");
    handles.open(path); // creates the directories and an empty file
    await handles.append(path, "\na");
    await handles.append(path, "\nb");
    expect(readFileSync(path, "utf8")).toBe("\na\nb");
    handles.forget(path);
    writeFileSync(`${path}.tmp`, "\nx");
    renameSync(`${path}.tmp`, path);
    await handles.append(path, "\ny");
    expect(readFileSync(path, "utf8")).toBe("\nx\ny");
    await handles.closeAll();
  });

  test("keeps at most `limit` descriptors open and still appends to every file", async () => {
    const handles = new AppendHandles(2);
    const paths = Array.from({ length: 6 }, (_, i) => join(dir, `many-${i}`));
    for (let round = 0; round < 3; round++) await Promise.all(paths.map((path) => handles.append(path, `\n${round}`)));
    for (const path of paths) expect(readFileSync(path, "utf8")).toBe("\n0\n1\n2");
    await handles.closeAll();
  });
});
