/** What both usage layouts (`usage-redis.ts`, `usage-kv.ts`) share: the methods, and the hour's shape. */
import type { UsageDelta, UsageRange, UsageRow } from "@modelmux/core";

export interface UsageStorage {
  addUsage(deltas: readonly UsageDelta[]): Promise<void>;
  readUsage(range: UsageRange): Promise<UsageRow[]>;
}

const HOUR = /^(\d{4}-\d{2}-\d{2})T(\d{2})$/;

/** The day and the two digits of a delta's `hour`; anything else is refused rather than made a key. */
export function splitHour(hour: string): [day: string, hh: string] {
  const match = HOUR.exec(hour);
  if (!match) throw new Error(`a usage hour must be YYYY-MM-DDTHH, got '${hour.slice(0, 40)}'`);
  return [match[1]!, match[2]!];
}
