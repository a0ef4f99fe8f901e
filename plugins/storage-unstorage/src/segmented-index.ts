/**
 * Ordered id indexes on a plain key-value store (memory, fs), for lists that never scan.
 *
 * An index is a sorted list of entries (`<order key> <id>`) cut into segments of at most
 * `SEGMENT_SIZE`, each stored under its own key (`<name>:<n>`; a name is a key prefix such as
 * `i:all`) as lines (`segment-text.ts`), plus a directory (`<name>:dir`) listing the segments in
 * order with the lowest entry each one may hold. Finding a cursor is a binary search in the directory; a page reads one or two segments
 * and sorts each. Within a segment order does not matter, so an insert that fits is one append;
 * an index of a single segment 0 has no directory file at all until it grows a second segment.
 *
 * An insert needs the directory and the tail segment's entry count; both are kept in a bounded
 * write-through cache, changed only after the write it describes succeeded (and dropped when one
 * fails), so a save with every index cached writes one line per index and reads nothing. The
 * cache is only read and written under the index's mutex, like every write to the index.
 *
 * Segments are replaced copy-on-write whenever entries move between them (a split, a drop): the
 * new segments are written whole (temporary file and rename on fs), then the directory, then the
 * old segment is removed. A reader holding an older directory either reads the old segment whole
 * or finds it gone and looks again; it never sees entries missing. In-place changes only add
 * entries (appends) or take out dead ones (deleted, expired), which a reader would have skipped.
 */
import type { KvStore } from "./kv-store.ts";
import { LruMap } from "./lru-map.ts";
import { KeyedMutex } from "./mutex.ts";
import { encodeSegment, entryLine, parseSegment } from "./segment-text.ts";

export const SEGMENT_SIZE = 512;
/** Indexes whose directory and tail count are cached; the rest are read on their next insert. */
export const CACHED_INDEXES = 10_000;

/** `segs[i]` is `[segment number, lowest entry it may hold]`; `next` numbers new segments. */
export interface Directory {
  next: number;
  segs: Array<[number, string]>;
}

/** What an insert needs to know about an index: as on disk, once the last write succeeded. */
interface IndexState {
  dir: Directory;
  /** Whether `dir` is on disk; a lone segment 0 has none (`loneSegment`). */
  stored: boolean;
  /** Distinct entries in the tail segment when last read, plus lines appended since. */
  tail: number;
}

/** The state of an index nothing was ever added to. */
const newIndex = (): IndexState => ({ dir: { next: 0, segs: [] }, stored: false, tail: 0 });

/** The directory of an index that has a segment 0 and no directory file. */
const loneSegment = (): Directory => ({ next: 1, segs: [[0, ""]] });

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

/** The indexes of one storage: insert and remove entries, and walk them in either order. */
export class SegmentedIndexes {
  readonly #store: KvStore;
  readonly #mutex = new KeyedMutex();
  readonly #cache = new LruMap<string, IndexState>(CACHED_INDEXES);

  constructor(store: KvStore) {
    this.#store = store;
  }

  /** The directory of an index, or `undefined` when nothing was ever added to it. */
  async directory(name: string): Promise<Directory | undefined> {
    const text = await this.#store.get(`${name}:dir`);
    if (text !== undefined) return JSON.parse(text) as Directory;
    if ((await this.#store.get(this.#segmentKey(name, 0))) !== undefined) return loneSegment();
    // Segment 0 may have just been split: the new directory is written before it is removed.
    const again = await this.#store.get(`${name}:dir`);
    return again === undefined ? undefined : (JSON.parse(again) as Directory);
  }

  /**
   * Gets an index ready for an insert without adding anything: when its directory and tail count
   * are not cached, makes its folder (fs) and reads them, unless the folder was new, which means
   * the index is too; then opens the segment a new newest entry would be appended to (creating
   * it, empty, for a new index). Safe to run while the entry's record is being written.
   */
  prepare(name: string): Promise<void> {
    return this.#mutex.run(name, async () => {
      let state = this.#cache.get(name);
      if (!state) {
        // Every file of an index is in its own folder, and written under this mutex only.
        const isNew = await this.#store.prepareKey(this.#segmentKey(name, 0));
        state = isNew ? newIndex() : await this.#readState(name);
        this.#cache.set(name, state);
      }
      const { dir } = state;
      if (dir.segs.length === 0) this.#store.prepareAppend(this.#segmentKey(name, dir.next));
      else if (state.tail < SEGMENT_SIZE) this.#store.prepareAppend(this.#segmentKey(name, dir.segs.at(-1)![0]));
    });
  }

  /**
   * Adds `entry` (a no-op when the segment it goes to was read and holds it already). With a TTL
   * `cutoff`, entries below it that this insert comes across are dropped on the way and returned,
   * so the caller can purge their records. Resolves once the entry is written.
   */
  insert(name: string, entry: string, cutoff?: string): Promise<string[]> {
    return this.#withState(name, async (state) => {
      const dropped = cutoff === undefined ? [] : await this.#dropExpiredSegments(name, state, cutoff);
      await this.#insert(name, state, entry, cutoff, dropped);
      return dropped;
    });
  }

  async #insert(name: string, state: IndexState, entry: string, cutoff: string | undefined, dropped: string[]): Promise<void> {
    const { dir } = state;
    if (dir.segs.length === 0) {
      // A new index: segment 0 alone, and no directory until a second segment is needed.
      await this.#store.append(this.#segmentKey(name, dir.next), entryLine(entry));
      dir.segs.push([dir.next, ""]);
      dir.next += 1;
      if (state.stored) await this.#writeDirectory(name, state);
      state.tail = 1;
      return;
    }
    const at = locate(dir, entry);
    const isTail = at === dir.segs.length - 1;
    const [number, first] = dir.segs[at]!;
    if (isTail && state.tail < SEGMENT_SIZE) {
      // The usual case: a new newest entry, and room for it. Nothing to read.
      await this.#store.append(this.#segmentKey(name, number), entryLine(entry));
      state.tail += 1;
      return;
    }
    let segment = parseSegment(await this.#store.get(this.#segmentKey(name, number))) ?? [];
    let trimmed = false;
    if (at === 0 && cutoff !== undefined) {
      // The head segment is in hand anyway: trim its expired entries for free.
      const alive = lowerBound(segment, cutoff);
      dropped.push(...segment.slice(0, alive));
      segment = segment.slice(alive);
      trimmed = alive > 0;
    }
    const position = lowerBound(segment, entry);
    const present = segment[position] === entry;
    if (present || segment.length < SEGMENT_SIZE) {
      if (!present) segment.splice(position, 0, entry);
      if (trimmed) await this.#writeSegment(name, number, segment);
      else if (!present) await this.#store.append(this.#segmentKey(name, number), entryLine(entry));
      if (isTail) state.tail = segment.length;
    } else if (isTail && position === segment.length) {
      // A full tail and a newer entry: start a new tail, keep the full one as it is. Its range
      // starts just above the old tail's last entry (the lowest string above it), so a save that
      // started earlier and finishes later still lands in the new tail, not in a split.
      await this.#writeSegment(name, dir.next, [entry]);
      dir.segs.push([dir.next, `${segment.at(-1)!}\u0000`]);
      dir.next += 1;
      await this.#writeDirectory(name, state);
      state.tail = 1;
    } else {
      segment.splice(position, 0, entry);
      const half = segment.length >> 1;
      const [left, right] = [dir.next, dir.next + 1];
      await this.#writeSegment(name, left, segment.slice(0, half));
      await this.#writeSegment(name, right, segment.slice(half));
      dir.segs.splice(at, 1, [left, first], [right, segment[half]!]);
      dir.next += 2;
      await this.#writeDirectory(name, state);
      await this.#store.remove(this.#segmentKey(name, number));
      if (isTail) state.tail = segment.length - half;
    }
  }

  /** Removes entries (stale ones, found by a list); a segment left empty leaves the directory. */
  remove(name: string, entries: string[], confirm?: (entries: string[]) => Promise<string[]>): Promise<void> {
    return this.#withState(name, async (state) => {
      const { dir } = state;
      if (dir.segs.length === 0) return;
      // Judged stale by a reader before this turn came: look again now that no insert can run
      // for this index, so an entry written back meanwhile (a record saved again) is kept.
      if (confirm) entries = await confirm(entries);
      if (entries.length === 0) return;
      const bySegment = new Map<number, string[]>();
      for (const entry of entries) {
        const at = locate(dir, entry);
        bySegment.set(at, [...(bySegment.get(at) ?? []), entry]);
      }
      const emptied: number[] = [];
      const tail = dir.segs.at(-1)![0];
      for (const [at, gone] of bySegment) {
        const number = dir.segs[at]![0];
        // Exact strings only: a reader that met a line cut short asks to remove that, never the
        // whole entry, which compares unequal to it.
        const segment = parseSegment(await this.#store.get(this.#segmentKey(name, number))) ?? [];
        const kept = segment.filter((entry) => !gone.includes(entry));
        if (kept.length === segment.length) continue;
        // The tail's count (or the new tail's, when it empties) is known again once the next
        // insert reads it: counting it as full makes that insert read it.
        if (number === tail) state.tail = SEGMENT_SIZE;
        if (kept.length === 0 && dir.segs.length - emptied.length > 1) emptied.push(number);
        else await this.#writeSegment(name, number, kept);
      }
      if (emptied.length === 0) return;
      dir.segs = dir.segs.filter(([number]) => !emptied.includes(number));
      await this.#writeDirectory(name, state);
      await Promise.all(emptied.map((number) => this.#store.remove(this.#segmentKey(name, number))));
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
      const segment = parseSegment(await this.#store.get(this.#segmentKey(name, current.segs[at]![0])));
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
  async #dropExpiredSegments(name: string, state: IndexState, cutoff: string): Promise<string[]> {
    const { dir } = state;
    const dropped: string[] = [];
    const gone: number[] = [];
    while (gone.length < 4 && dir.segs.length > 1 && dir.segs[1]![1] <= cutoff) {
      const [number] = dir.segs.shift()!;
      dropped.push(...(parseSegment(await this.#store.get(this.#segmentKey(name, number))) ?? []));
      gone.push(number);
    }
    if (gone.length === 0) return dropped;
    await this.#writeDirectory(name, state);
    await Promise.all(gone.map((number) => this.#store.remove(this.#segmentKey(name, number))));
    return dropped;
  }

  /**
   * Runs `task` under the index's mutex on a copy of its state (cached, or read from the store),
   * and caches the copy once `task` succeeded. A failed write may or may not have reached the
   * store, so a failure drops the cached state and the next call reads it again.
   */
  #withState<T>(name: string, task: (state: IndexState) => Promise<T>): Promise<T> {
    return this.#mutex.run(name, async () => {
      try {
        const cached = this.#cache.get(name);
        const state = cached ? { ...cached, dir: { next: cached.dir.next, segs: [...cached.dir.segs] } } : await this.#readState(name);
        const result = await task(state);
        this.#cache.set(name, state);
        return result;
      } catch (error) {
        this.#cache.delete(name);
        throw error;
      }
    });
  }

  async #readState(name: string): Promise<IndexState> {
    // Segment 0 is read along with the directory: for a new or one-segment index it is all there is.
    const [dirText, headText] = await Promise.all([this.#store.get(`${name}:dir`), this.#store.get(this.#segmentKey(name, 0))]);
    if (dirText === undefined) {
      const head = parseSegment(headText);
      return head === undefined ? newIndex() : { dir: loneSegment(), stored: false, tail: head.length };
    }
    const dir = JSON.parse(dirText) as Directory;
    const tail = dir.segs.at(-1)?.[0];
    const tailText = tail === 0 ? headText : tail === undefined ? undefined : await this.#store.get(this.#segmentKey(name, tail));
    return { dir, stored: true, tail: parseSegment(tailText)?.length ?? 0 };
  }

  #segmentKey(name: string, number: number): string {
    return `${name}:${number}`;
  }

  /** Replaces a whole segment (atomically on fs): `entries` sorted, as lines. */
  #writeSegment(name: string, number: number, entries: string[]): Promise<void> {
    return this.#store.set(this.#segmentKey(name, number), encodeSegment(entries));
  }

  async #writeDirectory(name: string, state: IndexState): Promise<void> {
    await this.#store.set(`${name}:dir`, JSON.stringify(state.dir));
    state.stored = true;
  }
}
