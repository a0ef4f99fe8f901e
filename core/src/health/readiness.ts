/**
 * Readiness (docs/interface.md, "Readiness"): whether the router's local backends answer now, for
 * `GET /readyz`. The plugins with a backend of their own, the storage and the rate limiter, are
 * asked through their optional `ready` hook (docs/plugins.md, "Readiness"), all at once, each
 * bounded by `READY_TIMEOUT_MS`, so a probe never waits on a backend that hangs. Providers are not
 * asked: their upstreams are remote, and a probe must not spend a provider's quota or fail a router
 * for one provider's outage (routing falls back around it).
 */
import type { ModelmuxConfig } from "../config/types.ts";
import { DEFAULT_RATE_LIMIT_PLUGIN } from "../config/resolve-rate-limits.ts";
import type { RateLimiter, Storage } from "../plugin.ts";

/** The longest one plugin's `ready` is waited for: less than common probe timeouts allow, more than a healthy backend needs. */
export const READY_TIMEOUT_MS = 2_000;

/** The longest reason kept of a plugin's error: the reply names the problem, it does not relay a dump. */
const REASON_LIMIT = 300;

/** A plugin whose backend is checked. */
export interface ReadinessTarget {
  /** The config section that set it up: `storage`, `rate_limit`. */
  section: string;
  /** The plugin as the config names it (`storage-unstorage`, `./my-limiter.ts`). */
  plugin: string;
  instance: { ready?(): Promise<void> | void };
}

/** What one plugin said: `reason` when it is not ready. */
export interface ReadinessResult {
  section: string;
  plugin: string;
  ready: boolean;
  reason?: string;
}

/** Asks every target; concurrent calls share one round of checks. */
export type CheckReadiness = () => Promise<ReadinessResult[]>;

/** The storage and the rate limiter of a config, those that are set up. */
export function readinessTargets(config: ModelmuxConfig, storage: Storage | undefined, limiter: RateLimiter | undefined): ReadinessTarget[] {
  const targets: ReadinessTarget[] = [];
  if (storage && config.storage) targets.push({ section: "storage", plugin: config.storage.plugin, instance: storage });
  if (limiter) targets.push({ section: "rate_limit", plugin: config.rate_limit?.plugin ?? DEFAULT_RATE_LIMIT_PLUGIN, instance: limiter });
  return targets;
}

function reasonOf(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim() || "not ready (no reason given)";
  return text.length > REASON_LIMIT ? `${text.slice(0, REASON_LIMIT)}…` : text;
}

/** `target.instance.ready()` within `timeoutMs`; a throw, a rejection or the time running out is its reason. */
async function check(target: ReadinessTarget, timeoutMs: number): Promise<ReadinessResult> {
  const { section, plugin } = target;
  if (!target.instance.ready) return { section, plugin, ready: true };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      // A hook written without `async` may throw instead of rejecting.
      new Promise<void>((resolve) => resolve(target.instance.ready!())),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
        timer.unref();
      }),
    ]);
    return { section, plugin, ready: true };
  } catch (error) {
    return { section, plugin, ready: false, reason: reasonOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The check `GET /readyz` runs. A probe carries no key, so anyone may call it: checks already
 * running are shared, and a flood of probes costs the backends one check at a time.
 * @example
 * const checkReadiness = createReadinessCheck(readinessTargets(config, storage, limiter));
 * (await checkReadiness()).every((result) => result.ready);
 */
export function createReadinessCheck(targets: readonly ReadinessTarget[], timeoutMs = READY_TIMEOUT_MS): CheckReadiness {
  let running: Promise<ReadinessResult[]> | undefined;
  return function checkReadiness() {
    running ??= Promise.all(targets.map((target) => check(target, timeoutMs))).finally(() => (running = undefined));
    return running;
  };
}
