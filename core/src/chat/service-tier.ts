/**
 * `service_tier` appears in a reply only when the request set it (docs/interface.md, "What the router changes"), while
 * OpenAI sends it in every reply and chunk. Removing it from JSON text (a chunk, a block of
 * events, a whole completion) saves parsing and serialising what is otherwise passed on as is.
 * Only a chat completion's or chunk's own key matches: inside a string its quotes are escaped, and
 * no nested object of these replies has the key.
 */

/** Before another key (where OpenAI puts it): found fast, the pattern starts with its literal. */
const BEFORE_KEY = /"service_tier"\s*:\s*(?:"[^"\\]*"|null)\s*,/g;
/** As the last key of its object. */
const LAST_KEY = /,\s*"service_tier"\s*:\s*(?:"[^"\\]*"|null)(?=\s*})/g;

/** `text` (JSON of chat completions or chunks) without their `service_tier` keys. */
export function removeServiceTier(text: string): string {
  // Searched without its quote: a search for a string that starts with `"` stops at every quote.
  if (text.indexOf("service_tier") < 0) return text;
  const stripped = text.replace(BEFORE_KEY, "");
  return stripped.indexOf("service_tier") < 0 ? stripped : stripped.replace(LAST_KEY, "");
}
