/**
 * `pricing` (README, "Pricing"): the schema checked its shape; this checks that each key names a
 * model the config has, so a price never silently misses the model it was meant for.
 */
import { createPricing, type Pricing } from "../operations/pricing.ts";
import { appendKey } from "../validation/error-path.ts";
import { ConfigProblems } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";

/**
 * @throws ConfigError naming each key that is a `provider/model` no provider block lists
 */
export function resolvePricing(config: ModelmuxConfig): Pricing {
  const models = new Set(Object.entries(config.providers).flatMap(([name, block]) => block.models.map((m) => `${name}/${typeof m === "string" ? m : m.id}`)));
  const problems = new ConfigProblems();
  for (const key of Object.keys(config.pricing ?? {})) {
    if (!models.has(key)) {
      problems.add(`${appendKey("pricing", key)}: '${key}' is not a configured model (name one of providers.<name>.models as 'provider/model')`);
    }
  }
  problems.throwIfAny();
  return createPricing(config.pricing);
}
