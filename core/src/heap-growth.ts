/**
 * How far V8 lets the old generation grow past what its last full collection kept, in the process
 * `modelmux serve` runs in. A router's live heap is small (its code, its config and the requests in
 * flight: ~14 MB under the benchmark's 50 connections) and nearly all it allocates dies young, yet
 * V8 picks a growing factor of up to 4× when its collections are fast next to the program: under
 * load, full collections came at 61–68 MB of heap for 13 MB kept (`--trace-gc`), the rest garbage
 * that RSS carried. At 50% they come at ~20 MB: the peak RSS of the stream paths went from 126–135
 * to 120–123 MB in two alternating runs (160 → 125 MB on the Anthropic stream in another), for
 * more full collections of 2–7 ms each: the collector's share of a CPU profile under load went
 * from 3.7–3.9% to 4.5–5.8% (CPU per request stayed within the runs' spread). The flag is read at
 * each full collection, so setting it at start takes effect; it is process-wide, which is why
 * only the CLI sets it, never `createRouter`.
 */
import { setFlagsFromString } from "node:v8";

export const SERVE_HEAP_GROWING_PERCENT = 50;

/** `--heap-growing-percent` or `--heap_growing_percent`, as node and V8 both spell flags. */
const GIVEN = /(?:^|\s)--heap[-_]growing[-_]percent(?:[=\s]|$)/;

/**
 * Sets V8's heap growing percent for a serving process, unless the user gave one (on node's command
 * line or in NODE_OPTIONS), which wins. Returns whether it set it.
 */
export function limitHeapGrowth(nodeArgs: readonly string[] = [...process.execArgv, process.env.NODE_OPTIONS ?? ""], set: (flags: string) => void = setFlagsFromString): boolean {
  if (nodeArgs.some((arg) => GIVEN.test(arg))) return false;
  set(`--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`);
  return true;
}
