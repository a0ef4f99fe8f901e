/**
 * unstorage's fs driver with atomic writes. Its `setItem` is `fs.writeFile(target)`, which
 * truncates the file and then writes it: a crash in between leaves a torn file. Here every write
 * goes to a temporary file in the same directory, which is then renamed over the target. A rename
 * within one file system is atomic, so a reader (or the next process) sees the old file or the new
 * one, never a part. Reads, deletes and the rest are the unstorage driver's own.
 *
 * Index segments are appended to instead (`appendItem`, through descriptors kept open:
 * `append-handles.ts`); `segment-text.ts` says why a torn append is harmless there. Reads use
 * `fs.readFile`'s callback form too.
 *
 * Files are not fsynced: that protects against a crashed process, the common case; surviving a
 * power cut would need an fsync per write, which costs milliseconds on most disks.
 */
import fs from "node:fs";
import { dirname, join, resolve } from "node:path";
import fsDriver from "unstorage/drivers/fs";
import { AppendHandles } from "./append-handles.ts";
import type { AppendingDriver } from "./kv-store.ts";

// The callback API, not fs/promises: measured here, a write and a rename through callbacks cost
// about 0.15 ms against 0.19 ms, and a save makes several. Looked up on `fs` at each call (not
// destructured) so tests can spy on them.
const call = <T = void>(start: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value as T))));
const openFile = (path: string) => call<number>((done) => fs.open(path, "w", done));
const closeFile = (fd: number) => call((done) => fs.close(fd, done));
const rename = (from: string, to: string) => call((done) => fs.rename(from, to, done));
const makeDirectory = (path: string) => call((done) => fs.mkdir(path, { recursive: true }, (error) => done(error)));
const makeOneDirectory = (path: string) => call((done) => fs.mkdir(path, (error) => done(error)));

/** Makes `folder`; `true` when it did not exist before. */
async function makeFolder(folder: string): Promise<boolean> {
  try {
    await makeOneDirectory(folder);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "ENOENT") throw error;
    await makeDirectory(folder); // its parent is missing too, so it was
    return true;
  }
}
const removeFile = (path: string) => call((done) => fs.rm(path, { force: true }, done));

/** Writes all of `data` at the descriptor's position (a short write goes on from where it stopped). */
async function writeAll(fd: number, data: Buffer): Promise<void> {
  for (let from = 0; from < data.length; ) {
    from += await call<number>((done) => fs.write(fd, data, from, data.length - from, null, (error, written) => done(error, written)));
  }
}

let temporaries = 0;

/** The temporary name a write to `target` goes through: hidden, same directory, unique. */
export function temporaryPath(target: string): string {
  temporaries += 1;
  return join(dirname(target), `.${process.pid}-${temporaries}.tmp`);
}

interface Temporary {
  path: string;
  fd: Promise<number>;
}

function openTemporary(directory: string): Temporary {
  const path = temporaryPath(join(directory, "_"));
  const fd = openFile(path);
  fd.catch(() => {}); // used (and its failure seen) only by a later write, if any
  return { path, fd };
}

async function discard({ path, fd }: Temporary): Promise<void> {
  await fd.then(closeFile, () => undefined).catch(() => undefined);
  await removeFile(path).catch(() => undefined);
}

/** Directories that keep a spare temporary file: records' folder, plus a few index folders. */
const SPARE_DIRECTORIES = 4;

/**
 * Temporary files opened ahead of the write that will use them, one per directory written to
 * recently. Creating a file is the dearest step of an atomic write; with a spare in hand, a save's
 * record write starts at its `write`, and the next spare is created once the rename is done.
 * `dispose` closes and removes them; a killed process leaves them behind as empty hidden files.
 */
export class SpareTemporaries {
  readonly #spares = new Map<string, Temporary>();
  #closed = false;

  /** The spare temporary file of `directory`, if one was opened. */
  take(directory: string): Temporary | undefined {
    const spare = this.#spares.get(directory);
    this.#spares.delete(directory);
    return spare;
  }

  /** Opens a spare for `directory` (when it has none), for its next write. */
  refill(directory: string): void {
    if (this.#closed || this.#spares.has(directory)) return;
    this.#spares.set(directory, openTemporary(directory));
    for (const [oldest, spare] of this.#spares) {
      if (this.#spares.size <= SPARE_DIRECTORIES) break;
      this.#spares.delete(oldest);
      void discard(spare);
    }
  }

  async dispose(): Promise<void> {
    this.#closed = true;
    const spares = [...this.#spares.values()];
    this.#spares.clear();
    await Promise.all(spares.map(discard));
  }
}

/**
 * Writes `data` to `target` through a temporary file and a rename; with `spares`, through the
 * spare temporary file of its directory when there is one. The rename does not wait for the
 * descriptor's close (POSIX renames open files; Windows does not), which saves a round trip.
 */
export async function writeFileAtomic(target: string, data: string, spares?: SpareTemporaries): Promise<void> {
  const directory = dirname(target);
  const spare = spares?.take(directory);
  let fd = spare && (await spare.fd.catch(() => undefined));
  const temporary = fd === undefined ? temporaryPath(target) : spare!.path;
  try {
    fd ??= await openFile(temporary).catch(async (error: NodeJS.ErrnoException) => {
      // The first write into a new directory: create it, then try once more.
      if (error.code !== "ENOENT") throw error;
      await makeDirectory(directory);
      return openFile(temporary);
    });
    await writeAll(fd, Buffer.from(data, "utf8"));
    const open = fd;
    fd = undefined;
    if (process.platform === "win32") await closeFile(open).then(() => rename(temporary, target));
    else await Promise.all([rename(temporary, target), closeFile(open)]);
  } catch (error) {
    if (fd !== undefined) await closeFile(fd).catch(() => undefined);
    await removeFile(temporary);
    throw error;
  }
  spares?.refill(directory);
}

/** `target`'s text, or `null` when there is no such file (what unstorage's fs driver answers). */
function readText(target: string): Promise<string | null> {
  return new Promise((resolve, reject) =>
    fs.readFile(target, "utf8", (error, text) => {
      if (!error) resolve(text);
      else if (error.code === "ENOENT" || error.code === "EISDIR") resolve(null);
      else reject(error);
    }),
  );
}

/** Append-mode descriptors kept open at once: the hot indexes' tail segments fit many times over. */
const OPEN_FOR_APPEND = 128;

/**
 * The fs driver rooted at `base` (resolved against the working directory), with atomic writes and
 * an `appendItem` for index segments. Keys map to paths the way the unstorage driver maps them:
 * `a:b:c` is `<base>/a/b/c`.
 */
export function atomicFsDriver(base: string): AppendingDriver {
  const root = resolve(base);
  const inner = fsDriver({ base: root });
  const pathOf = (key: string) => join(root, ...key.split(":"));
  const appends = new AppendHandles(OPEN_FOR_APPEND);
  const spares = new SpareTemporaries();
  return {
    ...inner,
    name: "fs-atomic",
    getItem: (key) => readText(pathOf(key)),
    setItem(key, value) {
      // A descriptor open on the old file would append to it after the rename: close it first.
      appends.forget(pathOf(key));
      return writeFileAtomic(pathOf(key), value, spares);
    },
    setItemRaw: undefined,
    appendItem: (key, text) => appends.append(pathOf(key), text),
    prepareKey: (key) => makeFolder(dirname(pathOf(key))),
    prepareAppend: (key) => appends.open(pathOf(key)),
    async listFolder(key) {
      // Only the names directly in the folder: unstorage's getKeys would walk the whole tree.
      const names = await fs.promises.readdir(pathOf(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [] as string[];
        throw error;
      });
      return names.filter((name) => !name.startsWith("."));
    },
    removeItem(key, options) {
      appends.forget(pathOf(key));
      return inner.removeItem!(key, options);
    },
    async dispose() {
      await Promise.all([appends.closeAll(), spares.dispose()]);
      await inner.dispose?.();
    },
  };
}
