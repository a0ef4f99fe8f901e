/**
 * What a request could cost, held in its budgets from the decision until its reply's usage is
 * known (README, "Budgets"): its output tokens at most (its `max_*tokens`, or a default when it sets
 * none) at the target's output price, plus an estimate of its prompt at the input price.
 */
import type { Price } from "../operations/pricing.ts";
import type { TokenReservation } from "./acquire.ts";

/** Output tokens a budget reserves for a request that sets no `max_completion_tokens`, `max_tokens` or `max_output_tokens`. */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;

/** Bytes of a JSON request body per prompt token: the prompt's estimate (a token is about 4 characters of English). */
export const BODY_BYTES_PER_PROMPT_TOKEN = 4;

/** A target's model and its price, for budgets. */
export interface TargetPrice {
  /** The `provider/model`, named in a refusal. */
  model: string;
  price: Price;
}

/** A request's cost reservation, and what it was made of (for the refusal's message). */
export interface CostEstimate {
  usd: number;
  promptTokens: number;
  outputTokens: number;
}

/**
 * The most a request could cost at `price`: its reserved output tokens (or
 * `DEFAULT_RESERVED_OUTPUT_TOKENS`) at the output price, and its body's bytes / 4 at the input
 * price. The estimate of the prompt is generous for images sent inline (their base64 counts as
 * text); the settle replaces it with the real cost anyway.
 * @example costReservation({ input: 2, output: 8 }, { tokens: 100 }, 400).usd // (100 * 2 + 100 * 8) / 1e6
 */
export function costReservation(price: Price, reserve: TokenReservation, bodyBytes: number): CostEstimate {
  const promptTokens = Math.ceil(Math.max(0, bodyBytes) / BODY_BYTES_PER_PROMPT_TOKEN);
  const outputTokens = reserve.tokens > 0 ? reserve.tokens : DEFAULT_RESERVED_OUTPUT_TOKENS;
  return { usd: (promptTokens * price.input + outputTokens * price.output) / 1_000_000, promptTokens, outputTokens };
}
