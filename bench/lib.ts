/**
 * What every benchmark scenario shares: the shape `run.ts` expects of a scenario module, timing and
 * percentiles, and the plain-text table `run.ts` prints. Times are milliseconds from
 * `performance.now()`; percentiles are nearest-rank over the raw samples (no interpolation).
 */

/** One line of the printed table. Columns appear in the order their keys are first seen. */
export type Row = Record<string, string>;

/** What a scenario hands back: the table to print, and everything measured for the JSON file. */
export interface ScenarioReport {
  /** Rows with a target carry `target` and `result` (`PASS` or `FAIL`); `run.ts` counts the FAILs. */
  rows: Row[];
  /** Written as is to `bench/results/<scenario>-<date>.json`. */
  results: unknown;
}

/** The default export of a scenario module (`bench/<name>.ts`). */
export interface Scenario {
  /** One line for `npm run bench -- --help`. */
  description: string;
  run(): Promise<ScenarioReport>;
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles of `samples` (ms). */
export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  const mean = sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
  return { n: sorted.length, p50: at(50), p99: at(99), mean, min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN };
}

/** Runs `fn` once and returns how long it took, in ms. */
export async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Runs `fn(i)` for i in [0, count) with at most `concurrency` calls in flight. */
export async function pool(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** `1.23 ms`, `12.3 ms`, `123 ms`. */
export function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ms`;
}

/** A target row's verdict. */
export const verdict = (pass: boolean): string => (pass ? "PASS" : "FAIL");

/** The rows as an aligned text table. */
export function formatTable(rows: Row[]): string {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(columns), line(widths.map((width) => "-".repeat(width))), ...rows.map((row) => line(columns.map((column) => row[column] ?? "")))].join("\n");
}
