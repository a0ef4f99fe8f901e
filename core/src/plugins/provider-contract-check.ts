/**
 * Whether the provider a plugin's `setup` returned has what the core calls (`Provider` in
 * `plugin.ts`, docs/plugins.md "Provider plugins"): `capabilities`, `chat`, and one way to stream,
 * `chatStream` (chunks the core frames) or `chatStreamEvents` (an OpenAI-format body it relays).
 * A plugin typed against `Provider` cannot miss the first two, but one in plain JavaScript can, and
 * the type cannot say "one of the two streams": without this check such a plugin would start and
 * fail the first request that needs the missing member, as a 500.
 */
import type { Provider } from "../plugin.ts";

const STREAMS =
  "chatStream(request, call), which yields chunks the core frames, or chatStreamEvents(request, call) for an upstream " +
  "that already streams OpenAI's chunks (docs/plugins.md, \"Provider plugins\")";

/** `undefined` when `provider` has every member the core calls; otherwise what is missing, in a few words. */
export function providerContractProblem(provider: unknown): string | undefined {
  if (typeof provider !== "object" || provider === null) return `setup returned ${provider === null ? "null" : typeof provider}, not a provider`;
  const members = provider as Partial<Record<keyof Provider, unknown>>;
  const missing = (["capabilities", "chat"] as const).filter((name) => typeof members[name] !== "function");
  if (missing.length > 0) return `its provider has no ${missing.join(" or ")} method`;
  if (typeof members.chatStream !== "function" && typeof members.chatStreamEvents !== "function") return `its provider has no way to stream: it needs ${STREAMS}`;
  return undefined;
}

/**
 * A note for a provider that still has `chatStreamBatches`, from the contract before streams had one
 * form: the core no longer calls it, and streams that provider through its `chatStream`, one item at
 * a time. The plugin still works; the note says how to keep its batches.
 */
export function retiredStreamNote(provider: object): string | undefined {
  if (!("chatStreamBatches" in provider)) return undefined;
  return "its provider's chatStreamBatches is no longer called (the core streams through chatStream): return the batches from chatStream, which may yield an array of items per upstream read";
}
