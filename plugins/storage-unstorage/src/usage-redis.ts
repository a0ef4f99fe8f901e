/**
 * Usage counters on Redis (docs/plugins.md, "Usage counters"), shared by every router on the
 * Redis: one hash per UTC day, `<prefix>:usage:<YYYY-MM-DD>`, with one integer field per hour,
 * app, developer, model and counter: `<HH>|<app>|<developer>|<model>|<counter>`,
 * `%` and `|` in a label written `%25` and `%7C` (so a label's `|` never ends it), the counter one
 * letter: `r` requests, `e` errors, `i` input tokens, `o` output tokens, `c` cost in nano-dollars.
 *
 * A flush is one MULTI of `HINCRBY`s: atomic and integer, so two routers adding at once count
 * exactly. Each day's key expires `USAGE_RETENTION_DAYS` after its day (`EXPIREAT`, the same
 * instant whoever writes). A read is one pipeline of `HGETALL`, one per day of the range.
 */
import { USAGE_RETENTION_DAYS, usageDays, type UsageCounts, type UsageRow } from "@modelmux/core";
import type { Redis } from "ioredis";
import { execute } from "./redis-exec.ts";
import { splitHour, type UsageStorage } from "./usage-shape.ts";

/** Each counter's letter in a field name. */
const COUNTERS: ReadonlyArray<readonly [letter: string, counter: keyof UsageCounts]> = [
  ["r", "requests"],
  ["e", "errors"],
  ["i", "inputTokens"],
  ["o", "outputTokens"],
  ["c", "costNanoUsd"],
];
const COUNTER_OF = new Map(COUNTERS);

const DAY_SECONDS = 86_400;

const escapeLabel = (label: string) => label.replace(/[%|]/g, (char) => (char === "%" ? "%25" : "%7C"));
const unescapeLabel = (text: string) => text.replace(/%25|%7C/g, (code) => (code === "%25" ? "%" : "|"));

/** Counters in the Redis `redis()` answers, under `prefix`. */
export function redisUsage(redis: () => Redis, prefix: string): UsageStorage {
  const keyOf = (day: string) => `${prefix}:usage:${day}`;
  return {
    async addUsage(deltas) {
      if (deltas.length === 0) return;
      const multi = redis().multi();
      const days = new Set<string>();
      for (const delta of deltas) {
        const [day, hh] = splitHour(delta.hour);
        const field = `${hh}|${escapeLabel(delta.app)}|${escapeLabel(delta.developer)}|${escapeLabel(delta.model)}|`;
        for (const [letter, counter] of COUNTERS) if (delta[counter] !== 0) multi.hincrby(keyOf(day), field + letter, delta[counter]);
        days.add(day);
      }
      for (const day of days) multi.expireat(keyOf(day), Date.parse(`${day}T00:00:00Z`) / 1000 + USAGE_RETENTION_DAYS * DAY_SECONDS);
      await execute(multi);
    },

    async readUsage(range) {
      const days = usageDays(range);
      if (days.length === 0) return [];
      const pipeline = redis().pipeline();
      for (const day of days) pipeline.hgetall(keyOf(day));
      const hashes = (await execute(pipeline)) as Array<Record<string, string>>;
      const rows: UsageRow[] = [];
      days.forEach((day, i) => {
        const byKey = new Map<string, UsageRow>();
        for (const [field, value] of Object.entries(hashes[i] ?? {})) {
          const parts = field.split("|");
          const counter = COUNTER_OF.get(parts[4] ?? "");
          // A field of another shape is not ours: left alone.
          if (parts.length !== 5 || counter === undefined) continue;
          const rowKey = field.slice(0, -1);
          let row = byKey.get(rowKey);
          if (row === undefined) {
            const [hh, app, developer, model] = parts.map(unescapeLabel) as [string, string, string, string];
            row = { hour: `${day}T${hh}`, app, developer, model, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNanoUsd: 0 };
            byKey.set(rowKey, row);
          }
          row[counter] += Number(value);
        }
        rows.push(...byKey.values());
      });
      return rows;
    },
  };
}
