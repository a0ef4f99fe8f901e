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

/**
 * Writes `data` to `target` through a temporary file and a rename. The rename does not wait for
 * the descriptor's close (POSIX renames open files; Windows does not), which saves a round trip.
 */
export async function writeFileAtomic(target: string, data: string): Promise<void> {
  const temporary = temporaryPath(target);
  let fd: number | undefined;
  try {
    fd = await openFile(temporary).catch(async (error: NodeJS.ErrnoException) => {
      // The first write into a new directory: create it, then try once more.
      if (error.code !== "ENOENT") throw error;
      await makeDirectory(dirname(target));
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
  return {
    ...inner,
    name: "fs-atomic",
    getItem: (key) => readText(pathOf(key)),
    setItem(key, value) {
      // A descriptor open on the old file would append to it after the rename: close it first.
      appends.forget(pathOf(key));
      return writeFileAtomic(pathOf(key), value);
    },
    setItemRaw: undefined,
    appendItem: (key, text) => appends.append(pathOf(key), text),
    prepareAppend: (key, isNew) => appends.open(pathOf(key), isNew),
    removeItem(key, options) {
      appends.forget(pathOf(key));
      return inner.removeItem!(key, options);
    },
    async dispose() {
      await appends.closeAll();
      await inner.dispose?.();
    },
  };
}
