/**
 * The amounts one counter holds in its sliding window (tokens, or cost in whole nano-dollars): each
 * with its time, and a reservation's id until `settle` replaces it with the amount used. Amounts
 * are whole numbers, so the sum is exact however many are added and removed.
 */

interface AmountEntry {
  at: number;
  amount: number;
  /** The reservation's id, until `settle` replaces it with the amount used. */
  id: string | undefined;
}

/** Drops the first `head` items once they are most of the array: O(1) amortised per item. */
export function compact<T>(items: T[], head: number): number {
  if (head < 64 || head * 2 < items.length) return head;
  items.splice(0, head);
  return 0;
}

export class AmountLog {
  private entries: AmountEntry[] = [];
  private head = 0;
  /** The amounts in the window, reservations included. */
  sum = 0;
  private readonly reservations = new Map<string, AmountEntry>();

  /** Forgets the amounts counted at or before `cutoff`. */
  prune(cutoff: number): void {
    while (this.head < this.entries.length && this.entries[this.head]!.at <= cutoff) {
      const entry = this.entries[this.head++]!;
      this.sum -= entry.amount;
      if (entry.id !== undefined) this.reservations.delete(entry.id);
    }
    this.head = compact(this.entries, this.head);
  }

  get empty(): boolean {
    return this.head === this.entries.length;
  }

  /** Ms until `reserved` more fit under `limit`: enough of the oldest amounts must leave the window. */
  retry(limit: number, reserved: number, now: number, windowMs: number): number {
    const excess = Math.max(this.sum + reserved - limit, this.sum - limit + 1);
    if (excess <= 0) return 0;
    if (reserved > limit) return windowMs;
    let freed = 0;
    for (let i = this.head; i < this.entries.length; i++) {
      freed += this.entries[i]!.amount;
      if (freed >= excess) return this.entries[i]!.at + windowMs - now;
    }
    return windowMs;
  }

  /** When the oldest amount still counted was counted; undefined when none is. */
  oldestAt(): number | undefined {
    for (let i = this.head; i < this.entries.length; i++) if (this.entries[i]!.amount > 0) return this.entries[i]!.at;
    return undefined;
  }

  add(amount: number, now: number, id?: string): void {
    const entry: AmountEntry = { at: now, amount, id };
    this.entries.push(entry);
    this.sum += amount;
    if (id !== undefined) this.reservations.set(id, entry);
  }

  /** Removes reservation `id` when it is still in the window. */
  release(id: string): void {
    const entry = this.reservations.get(id);
    if (!entry) return;
    this.reservations.delete(id);
    this.sum -= entry.amount;
    entry.amount = 0;
    entry.id = undefined;
  }
}
