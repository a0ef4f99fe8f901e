/**
 * A small async mutex per key. Index appends are read-modify-write on memory and fs, so two saves
 * touching the same index in one process must take turns or one append would be lost. (Redis needs
 * none: its index updates are single atomic commands.)
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` once every earlier task for `key` has settled; returns its result. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      // Only the last waiter removes the key, so the map holds busy keys only.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
