/**
 * Notices a Redis connection on which every answer comes too late, which ioredis's `socketTimeout`
 * cannot see (README, "Redis timeouts"). ioredis pairs replies with commands in order, and a
 * command that timed out keeps its place until its reply comes. A reply that never comes (bytes
 * lost on the way, not by TCP itself but by a proxy or middlebox in the path) shifts every later
 * reply onto the command before it: each command then times out while bytes keep arriving, so
 * the connection never looks silent. When storage calls have done nothing but time out for
 * `windowMs`, the connection is replaced; one call that succeeds in between (a slow Redis
 * answering again) ends the watch.
 */

/** What a storage call reports to the watch: it succeeded, or a Redis command of it timed out. */
export interface LateReplyWatch {
  succeeded(): void;
  timedOut(): void;
}

/** ioredis's message for a command that ran past `commandTimeout`. */
export function isCommandTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === "Command timed out";
}

/**
 * A watch that calls `replace` once calls have only timed out for `windowMs`, counted from when the
 * first of them was sent (`commandTimeoutMs` before it failed).
 */
export function watchLateReplies({ windowMs, commandTimeoutMs, replace }: { windowMs: number; commandTimeoutMs: number; replace: () => void }): LateReplyWatch {
  let failingSince: number | undefined;
  return {
    succeeded() {
      failingSince = undefined;
    },
    timedOut() {
      const now = Date.now();
      failingSince ??= now - commandTimeoutMs;
      if (now - failingSince < windowMs) return;
      failingSince = undefined;
      replace();
    },
  };
}
