/**
 * Waiting in tests, always bounded: a pause, a condition polled until it holds, a promise given a
 * deadline.
 */

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves once `condition` holds (polled every `intervalMs`, 10 by default); rejects naming `what`
 * after `timeoutMs`. An async condition (one that makes a request) is awaited before the next poll.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Resolves with what `promise` resolves to, or with `undefined` if it has not settled within `ms`.
 * @example
 * const closed = await within(client.closed, 3000);
 * expect(closed, "the connection stayed open").toBeDefined();
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
