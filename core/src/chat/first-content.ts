/**
 * A stream attempt is the router's to retry, or to give to the next target, until the client has
 * content (docs/interface.md, "Routing and resilience"): the frames before the first one that
 * carries any (a role-only chunk, an empty delta) are held back, and a failure before it is thrown,
 * never sent. Once content is here, the held frames go first and the rest pass as they come.
 */

/** Text, a refusal, reasoning, a tool call or a finish reason: what makes a chunk worth sending. */
const CONTENT = /"(?:content|refusal|reasoning_content|reasoning)"\s*:\s*"(?!")|"tool_calls"\s*:\s*\[|"finish_reason"\s*:\s*"/;

/** Whether an SSE frame (or a run of them) carries content. */
export function hasContent(frame: string): boolean {
  return CONTENT.test(frame);
}

/** The held frames, then the rest of `frames`: one call more per frame than `frames` alone. */
class Replay implements AsyncIterator<string> {
  private at = 0;

  constructor(
    private readonly held: string[],
    private readonly frames: AsyncIterator<string>,
  ) {}

  next(): Promise<IteratorResult<string>> {
    if (this.at < this.held.length) return Promise.resolve({ done: false, value: this.held[this.at++]! });
    return this.frames.next();
  }

  return(): Promise<IteratorResult<string>> {
    this.at = this.held.length;
    return this.frames.return ? this.frames.return() : Promise.resolve({ done: true, value: undefined });
  }
}

/**
 * Reads `frames` up to the first with content (or their end) and returns them all, unread again.
 * @param failure the error behind an error event the frames ended with, when one did (`onError`)
 * @throws that error when it came before any content: nothing was sent, another attempt may be made
 */
export async function untilContent(frames: AsyncIterator<string>, failure: () => unknown): Promise<AsyncIterator<string>> {
  const held: string[] = [];
  for (;;) {
    const { done, value } = await frames.next();
    if (done) break;
    const failed = failure();
    if (failed !== undefined) {
      await frames.return?.();
      throw failed;
    }
    held.push(value);
    if (hasContent(value)) break;
  }
  return new Replay(held, frames);
}
