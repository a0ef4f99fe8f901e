/** Parsers for the config's sizes (`10mb`) and durations (`60s`), checked by the schema first. */

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `10mb` → bytes; a number is bytes. */
export function parseSize(value: number | string): number {
  if (typeof value === "number") return value;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new Error(`invalid size '${value}'`);
  return Math.floor(Number(match[1]) * SIZE_UNITS[(match[2] ?? "b").toLowerCase()]!);
}

/** `60s` → milliseconds; a number is seconds (as a YAML author would mean it). */
export function parseDuration(value: number | string): number {
  if (typeof value === "number") return value * 1000;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/i.exec(value.trim());
  if (!match) throw new Error(`invalid duration '${value}'`);
  return Math.round(Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase()]!);
}
