/**
 * A `Map` that keeps at most `limit` keys, forgetting the least recently used one first. A `Map`
 * iterates in insertion order, so a key is moved to the end each time it is read or written.
 */
export class LruMap<K, V> {
  readonly #limit: number;
  readonly #map = new Map<K, V>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#limit) this.#map.delete(this.#map.keys().next().value!);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }
}
