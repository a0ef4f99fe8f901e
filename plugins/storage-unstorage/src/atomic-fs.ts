/**
 * unstorage's fs driver with atomic writes. Its `setItem` is `fs.writeFile(target)`, which
 * truncates the file and then writes it: a crash in between leaves a torn file. Here every write
 * goes to a temporary file in the same directory, which is then renamed over the target. A rename
 * within one file system is atomic, so a reader (or the next process) sees the old file or the new
 * one, never a part. Reads, deletes and the rest are the unstorage driver's own.
 *
 * The temporary file is not fsynced: that protects against a crashed process, the common case;
 * surviving a power cut would need an fsync per write, which costs milliseconds on most disks.
 */
import { promises as fsp } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Driver } from "unstorage";
import fsDriver from "unstorage/drivers/fs";

let temporaries = 0;

/** The temporary name a write to `target` goes through: hidden, same directory, unique. */
export function temporaryPath(target: string): string {
  temporaries += 1;
  return join(dirname(target), `.${process.pid}-${temporaries}.tmp`);
}

/** Writes `data` to `target` through a temporary file and a rename. */
export async function writeFileAtomic(target: string, data: string): Promise<void> {
  const temporary = temporaryPath(target);
  try {
    await fsp.writeFile(temporary, data, "utf8").catch(async (error: NodeJS.ErrnoException) => {
      // The first write into a new directory: create it, then try once more.
      if (error.code !== "ENOENT") throw error;
      await fsp.mkdir(dirname(target), { recursive: true });
      await fsp.writeFile(temporary, data, "utf8");
    });
    await fsp.rename(temporary, target);
  } catch (error) {
    await fsp.rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The fs driver rooted at `base` (resolved against the working directory), with atomic writes.
 * Keys map to paths the way the unstorage driver maps them: `a:b:c` is `<base>/a/b/c`.
 */
export function atomicFsDriver(base: string): Driver {
  const root = resolve(base);
  const inner = fsDriver({ base: root });
  const pathOf = (key: string) => join(root, ...key.split(":"));
  return {
    ...inner,
    name: "fs-atomic",
    setItem: (key, value) => writeFileAtomic(pathOf(key), value),
    setItemRaw: undefined,
  };
}
