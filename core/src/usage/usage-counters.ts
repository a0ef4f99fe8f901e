/**
 * The usage counters of this router (README, "Usage"): each ended request that has a caller and a
 * served model is added to a pending batch in memory (a few map operations, no await), and the
 * batch goes to the store off the request path, about once a second and on `router.close()`. The
 * store is the storage plugin when it keeps usage (`addUsage`, `readUsage`), so that every router
 * sharing its backend counts together; otherwise the core's memory (`memory-usage-store.ts`).
 */
import type { Logger } from "../logger.ts";
import type { Pricing } from "../operations/pricing.ts";
import { requestCost } from "../operations/request-cost.ts";
import type { Storage, UsageDelta, UsageRange, UsageRow } from "../plugins/storage-contract.ts";
import type { Exchange } from "../server/exchange.ts";
import { addCounts, createMemoryUsageStore, usageKey, type UsageStore } from "./memory-usage-store.ts";
import { HOUR_MS, hourOf, oldestUsageDay } from "./usage-days.ts";

/** How often the pending batch is written. */
export const USAGE_FLUSH_MS = 1_000;
/**
 * Identity-provider tokens may carry any app and developer claims: per router process, this many
 * distinct values of each are counted by name, the rest as `other` (README, "Usage"). API keys'
 * apps and developers come from the config and are always counted by name.
 */
export const TOKEN_APPS = 100;
export const TOKEN_DEVELOPERS = 1_000;
export const OTHER_LABEL = "other";

export interface UsageCounters {
  /** Counts one request whose reply has ended with `status` (the `usageCounters` middleware's end listener). */
  count(x: Exchange, status: number): void;
  /** The hourly rows of `range`, the requests of this router not yet written included. */
  read(range: UsageRange): Promise<UsageRow[]>;
  /** Writes what is pending; never rejects (a failed write is kept for the next). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is pending. */
  close(): Promise<void>;
}

export interface CreateUsageCountersOptions {
  store: UsageStore;
  pricing: Pricing;
  logger: Pick<Logger, "warn" | "info">;
  flushMs?: number;
}

/** A bounded set of label values: a value past the cap is `other`. */
function labelCap(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}

function tokens(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function createUsageCounters(options: CreateUsageCountersOptions): UsageCounters {
  const { store, pricing, logger, flushMs = USAGE_FLUSH_MS } = options;
  const tokenApp = labelCap(TOKEN_APPS);
  const tokenDeveloper = labelCap(TOKEN_DEVELOPERS);
  let pending = new Map<string, UsageDelta>();
  /** The current hour, formatted once per hour, not per request. */
  let hour = "";
  let hourEnds = 0;
  let running: Promise<void> | undefined;
  let failing = false;

  function pendingDelta(hourOfDelta: string, app: string, developer: string, model: string): UsageDelta {
    const key = usageKey(hourOfDelta, app, developer, model);
    let delta = pending.get(key);
    if (delta === undefined) {
      delta = { hour: hourOfDelta, app, developer, model, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNanoUsd: 0 };
      pending.set(key, delta);
    }
    return delta;
  }

  /** Puts a batch that could not be written back, for the next flush; days past the retention are let go. */
  function keep(batch: readonly UsageDelta[]): void {
    const oldest = oldestUsageDay();
    for (const delta of batch) {
      if (delta.hour.slice(0, 10) >= oldest) addCounts(pendingDelta(delta.hour, delta.app, delta.developer, delta.model), delta);
    }
  }

  async function writePending(): Promise<void> {
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending = new Map();
    try {
      await store.addUsage(batch);
      if (failing) logger.info("usage: counters are written to the storage again");
      failing = false;
    } catch (error) {
      keep(batch);
      // One line per outage, not one a second.
      const why = error instanceof Error ? error.message : String(error);
      if (!failing) logger.warn(`usage: could not write ${batch.length} counter row(s) to the storage; kept and tried again: ${why}`);
      failing = true;
    }
  }

  function flush(): Promise<void> {
    // One write at a time, each of what is pending when it starts: a flush resolves once every
    // request that ended before it was called is written (or kept after a failure).
    const run = (running ?? Promise.resolve()).then(writePending);
    running = run;
    void run.finally(() => {
      if (running === run) running = undefined;
    });
    return run;
  }

  const timer = setInterval(() => {
    if (running === undefined && pending.size > 0) void flush();
  }, flushMs);
  timer.unref();

  return {
    count(x, status) {
      const { model, principal } = x;
      if (model === undefined || principal === undefined) return;
      const now = Date.now();
      if (now >= hourEnds) {
        hour = hourOf(now);
        hourEnds = (Math.floor(now / HOUR_MS) + 1) * HOUR_MS;
      }
      const jwt = principal.scheme === "jwt";
      const delta = pendingDelta(hour, jwt ? tokenApp(principal.app) : principal.app, jwt ? tokenDeveloper(principal.developer) : principal.developer, model);
      delta.requests += 1;
      if (status >= 400 || x.failure !== undefined) delta.errors += 1;
      const usage = x.usage;
      if (usage) {
        delta.inputTokens += tokens(usage.prompt_tokens);
        delta.outputTokens += tokens(usage.completion_tokens);
        const cost = requestCost(pricing, x);
        if (cost !== undefined && cost > 0) delta.costNanoUsd += Math.round(cost * 1e9);
      }
    },

    async read(range) {
      await flush();
      const rows = [...(await store.readUsage(range))];
      // What is pending now was never handed to the store (a write that failed, or requests that
      // ended since): added here, it is counted once.
      for (const delta of pending.values()) {
        const day = delta.hour.slice(0, 10);
        if (day >= range.firstDay && day <= range.lastDay) rows.push({ ...delta });
      }
      return rows;
    },

    flush,

    async close() {
      clearInterval(timer);
      await flush();
      if (pending.size > 0) logger.warn(`usage: ${pending.size} counter row(s) could not be written to the storage before the stop, and are lost`);
    },
  };
}

/**
 * Where the counters go: the storage plugin when it has both `addUsage` and `readUsage`, else the
 * core's memory, saying so in one line when the plugin has a storage but no usage counters.
 */
export function usageStoreOf(storage: Storage | undefined, plugin: string | undefined, logger: Pick<Logger, "warn" | "info">): UsageStore {
  if (storage?.addUsage && storage.readUsage) return { addUsage: (deltas) => storage.addUsage!(deltas), readUsage: (range) => storage.readUsage!(range) };
  if (storage) {
    const has = storage.addUsage ? "addUsage without readUsage" : storage.readUsage ? "readUsage without addUsage" : "no usage counters";
    const line = `usage: the storage plugin '${plugin}' has ${has}: GET /v1/usage counts this router's requests only, in its memory, since it started`;
    if (storage.addUsage || storage.readUsage) logger.warn(line);
    else logger.info(line);
  }
  return createMemoryUsageStore();
}
