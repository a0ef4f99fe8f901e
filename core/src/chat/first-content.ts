/**
 * A stream attempt is the router's to retry, or to give to the next target, until the client has
 * content (docs/interface.md, "Routing and resilience"): the frames before the first one that
 * carries any (a role-only chunk, an empty delta) are held back, and a failure before it is thrown,
 * never sent. Once content is here, the held frames go first and the rest pass as they come. The
 * stream's chunk checks tell content (`chunk-check.ts`, `carriesContent`): each frame is made of
 * chunks already checked, so no frame's text is searched again.
 */

/** What the reader of an attempt's frames knows of them as it reads. */
export interface FramesState {
  /** The error behind an error event the frames ended with, when one did. */
  readonly failure: unknown;
  /** A chunk of the frames read so far carried content. */
  readonly hasContent: boolean;
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
 * Frames whose source saw content already while it opened (its first read had some) are returned
 * unread: the usual case costs no read and no held frames.
 * @param state what the frames' source has seen, read after each frame
 * @throws `state.failure` when it came before any content: nothing was sent, another attempt may be made
 */
export function untilContent(frames: AsyncIterator<string>, state: FramesState): AsyncIterator<string> | Promise<AsyncIterator<string>> {
  return state.hasContent ? new Unread(frames) : readUntilContent(frames, state);
}

/**
 * Frames not read yet, released whenever they are let go of. An async generator ended before its
 * first `next()` never runs its `finally`, which is where the relay and the framer let go of their
 * source: ended unread, it is read once (its first frame is already in memory) and then ended.
 */
class Unread implements AsyncIterator<string> {
  private started = false;

  constructor(private readonly frames: AsyncIterator<string>) {}

  next(): Promise<IteratorResult<string>> {
    this.started = true;
    return this.frames.next();
  }

  async return(): Promise<IteratorResult<string>> {
    if (!this.started) {
      this.started = true;
      await this.frames.next();
    }
    return this.frames.return ? this.frames.return() : { done: true, value: undefined };
  }
}

async function readUntilContent(frames: AsyncIterator<string>, state: FramesState): Promise<AsyncIterator<string>> {
  const held: string[] = [];
  for (;;) {
    const { done, value } = await frames.next();
    if (done) break;
    const failed = state.failure;
    if (failed !== undefined) {
      await frames.return?.();
      throw failed;
    }
    held.push(value);
    if (state.hasContent) break;
  }
  return new Replay(held, frames);
}
