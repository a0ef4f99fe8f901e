/**
 * Latencies kept as counts in a small fixed histogram (README, "Status page"): bins whose upper
 * bounds grow by √2 from 0.25 ms to about 4.4 min, so a minute of traffic costs 42 counters
 * whatever its volume, histograms of several minutes add up bin by bin, and a percentile read from
 * them is off by less than one bin (at most ~41% of the value, usually far less with interpolation).
 */

/** The number of bins: 41 bounded ones and the last, for everything longer. */
export const LATENCY_BINS = 42;

const FIRST_BOUND_MS = 0.25;
/** Bin `i` (< LATENCY_BINS - 1) holds latencies up to `FIRST_BOUND_MS * √2^i`. */
const BOUNDS: readonly number[] = Array.from({ length: LATENCY_BINS - 1 }, (_, i) => FIRST_BOUND_MS * Math.SQRT2 ** i);

/** The bin of a latency in ms. */
export function latencyBin(ms: number): number {
  if (!(ms > FIRST_BOUND_MS)) return 0;
  // log base √2 of ms / FIRST_BOUND_MS, rounded up: the first bound that is ≥ ms.
  let bin = Math.ceil(2 * Math.log2(ms / FIRST_BOUND_MS));
  // Rounding in log2 can land one bin off next to a bound.
  if (bin > 0 && bin <= BOUNDS.length && BOUNDS[bin - 1]! >= ms) bin--;
  else if (bin < BOUNDS.length && BOUNDS[bin]! < ms) bin++;
  return bin < LATENCY_BINS ? bin : LATENCY_BINS - 1;
}

/** Adds the counts of `from` into `into`. */
export function addHistogram(into: Uint32Array | number[], from: Uint32Array | readonly number[]): void {
  for (let i = 0; i < LATENCY_BINS; i++) into[i]! += from[i]!;
}

/**
 * The latency (ms) below which a fraction `q` (0–1) of the counted requests fall, interpolated
 * within its bin; null when nothing is counted. The open last bin answers with its lower bound.
 * @example latencyPercentile(counts, 0.99)
 */
export function latencyPercentile(counts: Uint32Array | readonly number[], q: number): number | null {
  let total = 0;
  for (let i = 0; i < LATENCY_BINS; i++) total += counts[i]!;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < LATENCY_BINS; i++) {
    const n = counts[i]!;
    if (n === 0 || seen + n < rank) {
      seen += n;
      continue;
    }
    const lower = i === 0 ? 0 : BOUNDS[i - 1]!;
    if (i >= BOUNDS.length) return lower;
    return lower + ((BOUNDS[i]! - lower) * (rank - seen)) / n;
  }
  return BOUNDS[BOUNDS.length - 1]!;
}
