// @ts-check
/**
 * One `dist/` build at a time per checkout, across processes: several `modelmux` commands (or test
 * files) started together on stale sources must not all rebuild and swap folders under each other.
 * The lock is a directory (`mkdir` is atomic) holding the owner's pid; a lock whose owner is gone,
 * or that is older than any build could take, is taken over.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const STALE_AFTER_MS = 120_000;
const POLL_MS = 50;

/** @param {string} lockDir */
function ownerIsGone(lockDir) {
  try {
    if (Date.now() - statSync(lockDir).mtimeMs > STALE_AFTER_MS) return true;
    const pid = Number(readFileSync(join(lockDir, "pid"), "utf8"));
    if (!Number.isInteger(pid) || pid <= 0) return false; // being created: its pid file comes next
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = /** @type {NodeJS.ErrnoException} */ (error).code;
    return code === "ESRCH"; // ENOENT: released meanwhile, or not written yet; EPERM: alive, not ours
  }
}

/**
 * Waits for the lock, then holds it. Throws when it is not free within `timeoutMs`, or when the
 * folder cannot be written (the caller falls back to running the sources).
 * @param {string} lockDir
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<() => void>} releases the lock
 */
export async function acquireBuildLock(lockDir, { timeoutMs = 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, "pid"), String(process.pid));
      return () => rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
    }
    if (ownerIsGone(lockDir)) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another process has held ${lockDir} for over ${timeoutMs / 1000} s`);
    await sleep(POLL_MS);
  }
}
