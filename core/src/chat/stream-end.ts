/**
 * When a chat stream is over once its answer is whole (README "Errors"): after every choice has
 * its finish reason, only the usage chunk, `[DONE]` and the body's end may follow. The core waits
 * for them a short while, not for the provider's `timeout`, so an upstream that keeps its
 * connection open (or ignores `stream_options` and sends no usage chunk) does not hold the client;
 * and a body that breaks off then has lost nothing.
 */

/**
 * How long the core waits for what may follow a whole answer: the usage chunk after the last
 * finish reason, and `[DONE]` and the body's end after the usage chunk. They usually come within
 * milliseconds.
 */
export const STREAM_END_GRACE_MS = 1000;

/** What `readWithin` gives when the time ran out first. */
export const GRACE_OVER: unique symbol = Symbol("grace over");

/**
 * `read`'s result, or `GRACE_OVER` when `ms` pass first. `read` is left running: a later
 * rejection of it is handled here, so the caller may let go of it.
 */
export async function readWithin<T>(read: Promise<T>, ms: number): Promise<T | typeof GRACE_OVER> {
  if (ms <= 0) {
    read.catch(ignore);
    return GRACE_OVER;
  }
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<typeof GRACE_OVER>((resolve) => (timer = setTimeout(resolve, ms, GRACE_OVER)));
  try {
    return await Promise.race([read, over]);
  } finally {
    clearTimeout(timer);
  }
}

function ignore(): void {}
