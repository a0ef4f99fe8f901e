/**
 * What a request cost (README, "Pricing"): `pricing` gives each `provider/model` its price in USD
 * per million input, cached input and output tokens, and a request's cost is its usage at the
 * price of the model that answered. A model without a price costs nothing known: no cost, never a
 * made-up one. The access log, the metrics, the usage counters and budgets all read it from here.
 */
import type { TokenUsage } from "../rate-limit/acquire.ts";

/** One model's price: USD per million tokens. */
export interface Price {
  input: number;
  /** Cached prompt tokens (OpenAI's `cached_tokens`); the input price when unset. */
  cached_input?: number;
  output: number;
}

/** The usage shapes of chat and the Responses API, with their cached-token details. */
export interface PricedUsage extends TokenUsage {
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  input_tokens_details?: { cached_tokens?: number | null } | null;
}

export interface Pricing {
  /** The price of a `provider/model`, if the config gives one. */
  priceOf(model: string): Price | undefined;
  /** The cost in USD of `usage` on `model`; undefined without a price or a usage. */
  costOf(model: string | undefined, usage: PricedUsage | null | undefined): number | undefined;
}

const PER_TOKEN = 1 / 1_000_000;

function count(value: number | null | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * The cost in USD of `usage` at `price` (cached prompt tokens at `cached_input`).
 * @example costAt({ input: 2.5, output: 10 }, { prompt_tokens: 1000, completion_tokens: 100 }) // 0.0035
 */
export function costAt(price: Price, usage: PricedUsage): number {
  const input = count(usage.prompt_tokens ?? usage.input_tokens);
  const cached = Math.min(input, count(usage.prompt_tokens_details?.cached_tokens ?? usage.input_tokens_details?.cached_tokens));
  const output = count(usage.completion_tokens ?? usage.output_tokens);
  return ((input - cached) * price.input + cached * (price.cached_input ?? price.input) + output * price.output) * PER_TOKEN;
}

/**
 * The pricing of a config's `pricing` block (checked by the config schema; keys are `provider/model`).
 * @example
 * createPricing({ "openai/gpt-4o": { input: 2.5, output: 10 } }).costOf("openai/gpt-4o", { prompt_tokens: 1000, completion_tokens: 100 }) // 0.0035
 */
export function createPricing(prices: Readonly<Record<string, Price>> | undefined): Pricing {
  const table = new Map(Object.entries(prices ?? {}));
  return {
    priceOf: (model) => table.get(model),
    costOf(model, usage) {
      if (model === undefined || !usage || table.size === 0) return undefined;
      const price = table.get(model);
      return price === undefined ? undefined : costAt(price, usage);
    },
  };
}
