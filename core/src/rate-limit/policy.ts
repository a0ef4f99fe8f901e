/**
 * The rate limits of a config, resolved once at start (README, "Rate limits"), and the rules one
 * request is counted against: its app's, its developer's and its provider's. The scope comes from
 * the principal (an API key's `app`/`developer`, or a JWT's claims) and the model's provider.
 */
import type { RateLimitRule, RateLimitSubject } from "../plugin.ts";

/** One limit with its window in ms: any of requests, tokens and cost (a budget, in USD). */
export interface LimitSpec {
  requests?: number;
  tokens?: number;
  cost?: number;
  windowMs: number;
}

export type RateLimitScope = "app" | "developer" | "provider";

export interface RateLimitPolicy {
  /** `rate_limit.app`: every app's own counter. */
  app?: LimitSpec;
  /** `rate_limit.developer`: every developer's own counter. */
  developer?: LimitSpec;
  /** `rate_limit.apps.<name>`: overrides; `null` means that app is not limited. */
  apps: ReadonlyMap<string, LimitSpec | null>;
  /** `rate_limit.developers.<name>`: overrides; `null` means that developer is not limited. */
  developers: ReadonlyMap<string, LimitSpec | null>;
  /** `providers.<name>.rate_limit`: one counter per provider, shared by every caller. */
  providers: ReadonlyMap<string, LimitSpec>;
}

/** A rule with what it limits, for the 429's message. */
export interface ScopedRule extends RateLimitRule {
  scope: RateLimitScope;
  /** The app's, developer's or provider's name. */
  name: string;
}

function limitOf(overrides: ReadonlyMap<string, LimitSpec | null>, name: string, fallback: LimitSpec | undefined): LimitSpec | undefined {
  const override = overrides.get(name);
  return override === undefined ? fallback : (override ?? undefined);
}

function rule(scope: RateLimitScope, name: string, limit: LimitSpec): ScopedRule {
  // The scope prefix keeps an app and a developer of the same name on separate counters.
  const scoped: ScopedRule = { key: `${scope}:${name}`, scope, name, windowMs: limit.windowMs };
  if (limit.requests !== undefined) scoped.requests = limit.requests;
  if (limit.tokens !== undefined) scoped.tokens = limit.tokens;
  if (limit.cost !== undefined) scoped.cost = limit.cost;
  return scoped;
}

/** The rules `subject` is counted against, in the order app, developer, provider; empty when none applies. */
export function rulesFor(policy: RateLimitPolicy, subject: RateLimitSubject): ScopedRule[] {
  const rules: ScopedRule[] = [];
  const app = limitOf(policy.apps, subject.app, policy.app);
  if (app) rules.push(rule("app", subject.app, app));
  const developer = limitOf(policy.developers, subject.developer, policy.developer);
  if (developer) rules.push(rule("developer", subject.developer, developer));
  const provider = policy.providers.get(subject.provider);
  if (provider) rules.push(rule("provider", subject.provider, provider));
  return rules;
}
