/**
 * The amounts one counter holds in its window (tokens, or cost in whole nano-dollars), summed in
 * fixed buckets of one hundredth of the window: however many requests a 30-day budget counts, it
 * holds at most `BUCKETS` sums, plus the reservations not yet settled. The window slides by
 * buckets, so an amount counts until its bucket leaves: between `window − bucket` and `window`
 * after it was counted (README "Budgets"). Amounts are whole numbers, so the sums are exact.
 */

/** How many buckets a window is cut into: the precision of the window for amounts. */
export const BUCKETS = 100;

interface Reservation {
  /** The start of the bucket it was added to. */
  start: number;
  amount: number;
}

export class AmountBuckets {
  /** Bucket start (ms) → the amount counted in it, never 0; in the order of the starts. */
  private readonly amounts = new Map<number, number>();
  /** Reservations until `settle` or until their bucket leaves; in the order of their buckets. */
  private readonly reservations = new Map<string, Reservation>();
  /** The amounts in the window, reservations included. */
  sum = 0;
  private width = 1;
  private count = 1;

  constructor(windowMs: number) {
    this.setWindow(windowMs);
  }

  /** A changed window (a config reload) moves each bucket into the one of the new width that holds its start. */
  setWindow(windowMs: number): void {
    const width = Math.max(1, Math.ceil(windowMs / BUCKETS));
    this.count = Math.ceil(windowMs / width);
    if (width === this.width) return;
    this.width = width;
    const moved = [...this.amounts];
    this.amounts.clear();
    for (const [start, amount] of moved) this.put(this.startOf(start), amount);
    for (const reservation of this.reservations.values()) reservation.start = this.startOf(reservation.start);
  }

  /** How many entries the counter holds: buckets and reservations (for tests of its bounds). */
  get size(): number {
    return this.amounts.size + this.reservations.size;
  }

  get empty(): boolean {
    return this.size === 0;
  }

  private startOf(at: number): number {
    return Math.floor(at / this.width) * this.width;
  }

  /** When the bucket starting at `start` leaves the window. */
  private endOf(start: number): number {
    return this.startOf(start) + this.count * this.width;
  }

  private put(start: number, amount: number): void {
    const total = (this.amounts.get(start) ?? 0) + amount;
    if (total === 0) this.amounts.delete(start);
    else this.amounts.set(start, total);
  }

  /** Forgets the buckets that left the window at `now`, and the reservations made in them. */
  prune(now: number): void {
    const edge = this.startOf(now) - (this.count - 1) * this.width;
    for (const [start, amount] of this.amounts) {
      if (start >= edge) break;
      this.amounts.delete(start);
      this.sum -= amount;
    }
    for (const [id, reservation] of this.reservations) {
      if (reservation.start >= edge) break;
      this.reservations.delete(id);
    }
  }

  /** Ms until `reserved` more fit under `limit`: enough of the oldest buckets must leave the window. */
  retry(limit: number, reserved: number, now: number, windowMs: number): number {
    const excess = Math.max(this.sum + reserved - limit, this.sum - limit + 1);
    if (excess <= 0) return 0;
    if (reserved > limit) return windowMs;
    let freed = 0;
    for (const [start, amount] of this.amounts) {
      freed += amount;
      if (freed >= excess) return this.endOf(start) - now;
    }
    return windowMs;
  }

  /** Ms until the oldest amount still counted leaves the window; 0 when none is. */
  resetMs(now: number): number {
    for (const start of this.amounts.keys()) return this.endOf(start) - now;
    return 0;
  }

  /** Counts `amount` in the bucket of `now`; a reservation's `id` remembers that bucket until settle. */
  add(amount: number, now: number, id?: string): void {
    const start = this.startOf(now);
    this.put(start, amount);
    this.sum += amount;
    if (id !== undefined) this.reservations.set(id, { start, amount });
  }

  /** Removes reservation `id` from its bucket when that bucket is still in the window. */
  release(id: string): void {
    const reservation = this.reservations.get(id);
    if (!reservation) return;
    this.reservations.delete(id);
    this.put(reservation.start, -reservation.amount);
    this.sum -= reservation.amount;
  }
}
