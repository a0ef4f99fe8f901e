/**
 * The fs driver's readiness (`Storage.ready`, docs/plugins.md "Readiness"): its folder takes a
 * file. Made when missing (as the first save would make it), then a hidden file is written and
 * removed, so a read-only mount, a full disk or a path through a file says so before a save fails.
 */
import { promises as fsp } from "node:fs";
import { join, resolve } from "node:path";
import { storageError } from "./errors.ts";

/** Resolves when `base` (resolved against the working directory) takes a new file; throws why not. */
export async function folderReady(base: string): Promise<void> {
  const folder = resolve(base);
  // Hidden, like the atomic writes' temporaries: listings skip it should a crash leave it behind.
  const probe = join(folder, `.ready-${process.pid}.tmp`);
  try {
    await fsp.mkdir(folder, { recursive: true });
    await fsp.writeFile(probe, "");
    await fsp.rm(probe, { force: true });
  } catch (error) {
    throw storageError(`the folder ${folder} does not take files`, error);
  }
}
