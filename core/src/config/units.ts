/** Parsers for the config's sizes (`10mb`) and durations (`60s`, `30d`), checked by the schema first. */
import { ConfigError } from "./config-error.ts";

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `10mb` → bytes; a number is bytes. */
export function parseSize(value: number | string): number {
  if (typeof value === "number") return value;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new Error(`invalid size '${value}'`);
  return Math.floor(Number(match[1]) * SIZE_UNITS[(match[2] ?? "b").toLowerCase()]!);
}

/** `60s` → milliseconds (units `ms`, `s`, `m`, `h`, `d`); a number is seconds (as a YAML author would mean it). */
export function parseDuration(value: number | string): number {
  if (typeof value === "number") return value * 1000;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/i.exec(value.trim());
  if (!match) throw new Error(`invalid duration '${value}'`);
  return Math.round(Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase()]!);
}

/** The longest delay a Node.js timer takes (2^31 − 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration that a timer waits for (a timeout): parsed like {@link parseDuration}, and refused past
 * what a timer can hold, since Node.js would fire it after 1 ms instead.
 * @throws ConfigError naming `path`, e.g. `providers.openai.timeout: must be at most 24d`
 */
export function parseTimer(value: number | string, path: string): number {
  const ms = parseDuration(value);
  if (ms > MAX_TIMER_MS) throw new ConfigError(`${path}: must be at most 24d (the longest timer Node.js can set)`);
  return ms;
}
