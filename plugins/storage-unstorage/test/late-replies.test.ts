import { afterEach, describe, expect, test, vi } from "vitest";
import { isCommandTimeout, watchLateReplies } from "../src/late-replies.ts";

describe("the late-reply watch of a Redis connection", () => {
  afterEach(() => void vi.useRealTimers());

  test("replaces the connection once calls have only timed out for the window, counted from the first one's start", () => {
    vi.useFakeTimers();
    const replace = vi.fn();
    const watch = watchLateReplies({ windowMs: 3_000, commandTimeoutMs: 1_000, replace });
    watch.timedOut(); // sent 1 s ago
    vi.advanceTimersByTime(1_500);
    watch.timedOut();
    expect(replace).not.toHaveBeenCalled();
    vi.advanceTimersByTime(500);
    watch.timedOut(); // 3 s since the first was sent
    expect(replace).toHaveBeenCalledTimes(1);
    // A new watch starts with the new connection.
    watch.timedOut();
    expect(replace).toHaveBeenCalledTimes(1);
  });

  test("one call answered in time between the timeouts keeps the connection (a slow Redis, not a broken one)", () => {
    vi.useFakeTimers();
    const replace = vi.fn();
    const watch = watchLateReplies({ windowMs: 3_000, commandTimeoutMs: 1_000, replace });
    for (let i = 0; i < 10; i++) {
      watch.timedOut();
      vi.advanceTimersByTime(1_000);
      watch.succeeded();
    }
    expect(replace).not.toHaveBeenCalled();
  });

  test("knows ioredis's command timeout from other failures", () => {
    expect(isCommandTimeout(new Error("Command timed out"))).toBe(true);
    expect(isCommandTimeout(new Error("Connection is closed."))).toBe(false);
    expect(isCommandTimeout("Command timed out")).toBe(false);
  });
});
