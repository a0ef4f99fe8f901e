/**
 * Capability defaults by model family (docs/plugins.md, "The provider kit"): a provider's
 * `capabilities(model)` from a table keyed by model-id prefix, so dated snapshots
 * (`gpt-4o-2024-08-06`) and sizes (`gpt-4.1-nano`) inherit their family's defaults. The longest
 * matching prefix wins, whatever the table's order; ids are matched in lower case. The core asks
 * once per configured model, at start, and layers the config's `capabilities` on top.
 */
import type { Capabilities } from "../capabilities.ts";

type CapabilityMap = Partial<Capabilities>;

/** A capability table. */
export interface CapabilityTableOptions {
  /** Capabilities by model-id prefix (lower case). */
  prefixes: Readonly<Record<string, Readonly<CapabilityMap>>>;
  /** For an id no prefix matches. */
  fallback: Readonly<CapabilityMap>;
  /**
   * Families a prefix cannot name (`image` anywhere in the id), tried in order before the prefixes.
   */
  patterns?: ReadonlyArray<readonly [RegExp, Readonly<CapabilityMap>]>;
  /** Rewrites the lower-cased id first, e.g. dropping a `models/` resource prefix. */
  normalize?(id: string): string;
}

/**
 * Makes `capabilities(model)`: a fresh copy of the defaults of the longest matching prefix (or a
 * pattern, or the fallback) each time, so a caller cannot change the table.
 * @example
 * const capabilities = capabilityTable({
 *   prefixes: { "gpt-4": LEGACY, "gpt-4o": GPT_CHAT, "gpt-4o-audio-preview": AUDIO },
 *   fallback: { chat: true, streaming: true },
 * });
 * capabilities("gpt-4o-mini") // GPT_CHAT's copy
 */
export function capabilityTable({ prefixes, fallback, patterns = [], normalize }: CapabilityTableOptions): (model: string) => CapabilityMap {
  const byLength = Object.entries(prefixes).sort(([a], [b]) => b.length - a.length);
  return function capabilities(model: string): CapabilityMap {
    const lower = model.toLowerCase();
    const id = normalize ? normalize(lower) : lower;
    for (const [pattern, capabilities] of patterns) if (pattern.test(id)) return { ...capabilities };
    for (const [prefix, capabilities] of byLength) if (id.startsWith(prefix)) return { ...capabilities };
    return { ...fallback };
  };
}
