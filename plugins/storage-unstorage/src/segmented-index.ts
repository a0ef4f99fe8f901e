/**
 * Ordered id indexes on a plain key-value store (memory, fs), for lists that never scan.
 *
 * An index is a sorted list of entries (`<order key> <id>`) cut into segments of at most
 * `SEGMENT_SIZE`, each stored under its own key (`i:<name>:<n>`), plus a directory
 * (`i:<name>:dir`) listing the segments in order with the first entry each one may hold. Finding
 * a cursor is a binary search in the directory and then in one segment; a page reads one or two
 * segments. Appending rewrites the tail segment only.
 *
 * Segments are replaced copy-on-write whenever entries move between them (a split, a drop): the
 * new segments are written, then the directory, then the old segment is removed. A reader holding
 * an older directory either reads the old segment whole or finds it gone and looks again; it never
 * sees entries missing. In-place rewrites only add entries or take out dead ones (deleted,
 * expired), which a reader would have skipped anyway.
 */
import type { KvStore } from "./kv-store.ts";
import { KeyedMutex } from "./mutex.ts";

export const SEGMENT_SIZE = 512;

/** `segs[i]` is `[segment number, lowest entry it may hold]`; `next` numbers new segments. */
export interface Directory {
  next: number;
  segs: Array<[number, string]>;
}

/** The last segment whose range starts at or below `entry` (the first one when none does). */
function locate(dir: Directory, entry: string): number {
  let lo = 0;
  let hi = dir.segs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (dir.segs[mid]![1] <= entry) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first position in the sorted `list` whose entry is not below `entry`. */
function lowerBound(list: string[], entry: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < entry) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const parseList = (text: string | undefined): string[] | undefined => (text === undefined ? undefined : (JSON.parse(text) as string[]));

/** The indexes of one storage: insert and remove entries, and walk them in either order. */
export class SegmentedIndexes {
  readonly #store: KvStore;
  readonly #mutex = new KeyedMutex();

  constructor(store: KvStore) {
    this.#store = store;
  }

  /** The directory of an index, or `undefined` when nothing was ever added to it. */
  async directory(name: string): Promise<Directory | undefined> {
    const text = await this.#store.get(`i:${name}:dir`);
    return text === undefined ? undefined : (JSON.parse(text) as Directory);
  }

  /**
   * Adds `entry` in order (a no-op when present). With a TTL `cutoff`, entries below it that this
   * insert comes across are dropped on the way and returned, so the caller can purge their records.
   */
  insert(name: string, entry: string, cutoff?: string): Promise<string[]> {
    return this.#mutex.run(name, async () => {
      const dir = (await this.directory(name)) ?? { next: 0, segs: [] };
      const dropped = cutoff === undefined ? [] : await this.#dropExpiredSegments(name, dir, cutoff);
      if (dir.segs.length === 0) {
        await this.#writeSegment(name, dir.next, [entry]);
        await this.#writeDirectory(name, { next: dir.next + 1, segs: [[dir.next, entry]] });
        return dropped;
      }
      const at = locate(dir, entry);
      const [number, first] = dir.segs[at]!;
      let segment = parseList(await this.#store.get(`i:${name}:${number}`)) ?? [];
      let trimmed = false;
      if (at === 0 && cutoff !== undefined) {
        // The head segment is in hand anyway: trim its expired entries for free.
        const alive = lowerBound(segment, cutoff);
        dropped.push(...segment.slice(0, alive));
        segment = segment.slice(alive);
        trimmed = alive > 0;
      }
      const position = lowerBound(segment, entry);
      if (segment[position] === entry) {
        if (trimmed) await this.#writeSegment(name, number, segment);
        return dropped;
      }
      const isAppend = position === segment.length && at === dir.segs.length - 1;
      if (segment.length < SEGMENT_SIZE) {
        segment.splice(position, 0, entry);
        await this.#writeSegment(name, number, segment);
      } else if (isAppend) {
        // The usual case, a new newest entry: start a new tail, keep the full one as it is.
        await this.#writeSegment(name, dir.next, [entry]);
        dir.segs.push([dir.next, entry]);
        dir.next += 1;
        await this.#writeDirectory(name, dir);
      } else {
        segment.splice(position, 0, entry);
        const half = segment.length >> 1;
        const [left, right] = [dir.next, dir.next + 1];
        await this.#writeSegment(name, left, segment.slice(0, half));
        await this.#writeSegment(name, right, segment.slice(half));
        dir.segs.splice(at, 1, [left, first], [right, segment[half]!]);
        dir.next += 2;
        await this.#writeDirectory(name, dir);
        await this.#store.remove(`i:${name}:${number}`);
      }
      return dropped;
    });
  }

  /** Removes entries (stale ones, found by a list); a segment left empty leaves the directory. */
  remove(name: string, entries: string[]): Promise<void> {
    return this.#mutex.run(name, async () => {
      const dir = await this.directory(name);
      if (!dir) return;
      const bySegment = new Map<number, string[]>();
      for (const entry of entries) {
        const at = locate(dir, entry);
        bySegment.set(at, [...(bySegment.get(at) ?? []), entry]);
      }
      const emptied: number[] = [];
      for (const [at, gone] of bySegment) {
        const number = dir.segs[at]![0];
        const segment = parseList(await this.#store.get(`i:${name}:${number}`)) ?? [];
        const kept = segment.filter((entry) => !gone.includes(entry));
        if (kept.length === segment.length) continue;
        if (kept.length === 0 && dir.segs.length > 1) emptied.push(number);
        else await this.#writeSegment(name, number, kept);
      }
      if (emptied.length === 0) return;
      dir.segs = dir.segs.filter(([number]) => !emptied.includes(number));
      await this.#writeDirectory(name, dir);
      await Promise.all(emptied.map((number) => this.#store.remove(`i:${name}:${number}`)));
    });
  }

  /**
   * Reads entries in list order, strictly after `after` (an entry) when given, and none below
   * `cutoff`. Each call returns up to `count` entries; an empty array once the index is exhausted.
   */
  walk(name: string, dir: Directory, order: "asc" | "desc", after?: string, cutoff?: string): (count: number) => Promise<string[]> {
    const asc = order === "asc";
    const buffer: string[] = [];
    let current = dir;
    let last = after; // the last entry buffered: the next ones must lie strictly beyond it
    let at = this.#startSegment(current, asc, last, cutoff);
    let done = false;
    let retries = 0;
    const beyond = (entry: string) => last === undefined || (asc ? entry > last : entry < last);

    const loadSegment = async (): Promise<void> => {
      if (at < 0 || at >= current.segs.length) return void (done = true);
      const segment = parseList(await this.#store.get(`i:${name}:${current.segs[at]![0]}`));
      if (segment === undefined) {
        // Replaced by a split or dropped since our directory was read: read it again, resume.
        if (++retries > 5) throw new Error(`index ${name} keeps changing under a reader`);
        const fresh = await this.directory(name);
        if (!fresh) return void (done = true);
        current = fresh;
        at = this.#startSegment(current, asc, last, cutoff);
        return;
      }
      const ordered = asc ? segment : segment.reverse();
      for (const entry of ordered) {
        if (cutoff !== undefined && entry < cutoff) {
          if (!asc) done = true; // descending: everything from here on has expired
          continue;
        }
        if (beyond(entry)) buffer.push((last = entry));
      }
      at += asc ? 1 : -1;
    };

    return async (count) => {
      while (buffer.length < count && !done) await loadSegment();
      return buffer.splice(0, count);
    };
  }

  #startSegment(dir: Directory, asc: boolean, after: string | undefined, cutoff: string | undefined): number {
    if (!asc) return after === undefined ? dir.segs.length - 1 : locate(dir, after);
    const from = after === undefined || (cutoff !== undefined && cutoff > after) ? cutoff : after;
    return from === undefined ? 0 : locate(dir, from);
  }

  /** Drops whole head segments that lie entirely below `cutoff` (a few per call); returns their entries. */
  async #dropExpiredSegments(name: string, dir: Directory, cutoff: string): Promise<string[]> {
    const dropped: string[] = [];
    const gone: number[] = [];
    while (gone.length < 4 && dir.segs.length > 1 && dir.segs[1]![1] <= cutoff) {
      const [number] = dir.segs.shift()!;
      dropped.push(...(parseList(await this.#store.get(`i:${name}:${number}`)) ?? []));
      gone.push(number);
    }
    if (gone.length === 0) return dropped;
    await this.#writeDirectory(name, dir);
    await Promise.all(gone.map((number) => this.#store.remove(`i:${name}:${number}`)));
    return dropped;
  }

  #writeSegment(name: string, number: number, entries: string[]): Promise<void> {
    return this.#store.set(`i:${name}:${number}`, JSON.stringify(entries));
  }

  #writeDirectory(name: string, dir: Directory): Promise<void> {
    return this.#store.set(`i:${name}:dir`, JSON.stringify(dir));
  }
}
