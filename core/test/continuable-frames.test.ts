/** A stream that may be continued, let go of while its read is pending: the read that broke starts no continuation. */
import { describe, expect, it } from "vitest";
import { withContinuation } from "../src/chat/continuation.ts";
import type { ChatRequestState } from "../src/chat/request-state.ts";
import type { OpenStream } from "../src/chat/stream-attempt.ts";
import { Transcript } from "../src/chat/transcript.ts";

describe("withContinuation", () => {
  it("ends a read that broke after the client let go, without asking any target to continue", async () => {
    let deliver!: (read: IteratorResult<string>) => void;
    let released = 0;
    const first = {
      frames: {
        next: () => new Promise<IteratorResult<string>>((resolve) => (deliver = resolve)),
        return: async () => {
          released++;
          return { done: true as const, value: undefined };
        },
      },
      failure: undefined as unknown,
      sent: { transcript: new Transcript(), assembler: undefined, model: "p/m" },
    } as unknown as OpenStream;
    // A continuation would read the request's state: none is given, so one would fail loudly.
    const frames = withContinuation({} as ChatRequestState, first);
    const pending = frames.next();
    await frames.return!();
    first.failure = new Error("the stream broke");
    deliver({ done: false, value: 'data: {"error":{"message":"broke"}}\n\n' });
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    expect(released).toBe(1);
  });
});
